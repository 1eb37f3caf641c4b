//! From radiance to a PNG file, with nothing but the standard library.
//!
//! A pixel's radiance has no upper limit (the lamp is twelve times brighter than white),
//! so it is first squeezed into [0, 1] (Reinhard's `x / (1 + x)`), then gamma-encoded for
//! the screen, then rounded to a byte. The PNG format wraps the bytes in zlib's format;
//! zlib allows "stored" blocks that are not compressed at all, which keeps this writer to
//! a page: the file is as large as the pixels (3 bytes each) plus a few bytes per row.

use super::PathTracerError;

/// 8-bit sRGB-ish bytes, three per pixel, from radiance.
pub fn to_bytes(radiance: &[f32]) -> Vec<u8> {
    radiance
        .iter()
        .map(|&value| {
            let value = if value.is_finite() {
                value.max(0.0)
            } else {
                0.0
            };
            let squeezed = value / (1.0 + value);
            (squeezed.powf(1.0 / 2.2) * 255.0).round() as u8
        })
        .collect()
}

/// A PNG file of `width × height` RGB pixels, three bytes each, row after row.
pub fn png(width: u32, height: u32, rgb: &[u8]) -> Result<Vec<u8>, PathTracerError> {
    if rgb.len() != 3 * width as usize * height as usize || rgb.is_empty() {
        return Err(PathTracerError::ImageBytes {
            width,
            height,
            bytes: rgb.len(),
        });
    }
    // Each row starts with a filter byte: 0, no filter.
    let mut raw = Vec::with_capacity(rgb.len() + height as usize);
    for row in rgb.chunks_exact((3 * width as usize).max(1)) {
        raw.push(0);
        raw.extend_from_slice(row);
    }
    let mut header = Vec::new();
    header.extend_from_slice(&width.to_be_bytes());
    header.extend_from_slice(&height.to_be_bytes());
    // 8 bits per channel, colour type 2 (RGB), deflate, adaptive filters, no interlacing.
    header.extend_from_slice(&[8, 2, 0, 0, 0]);
    let mut file = b"\x89PNG\r\n\x1a\n".to_vec();
    chunk(&mut file, b"IHDR", &header);
    chunk(&mut file, b"IDAT", &zlib_stored(&raw));
    chunk(&mut file, b"IEND", &[]);
    Ok(file)
}

/// One chunk: length, type, data, and the CRC of type and data.
fn chunk(file: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    file.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = file.len();
    file.extend_from_slice(kind);
    file.extend_from_slice(data);
    let crc = crc32(&file[start..]);
    file.extend_from_slice(&crc.to_be_bytes());
}

/// zlib's format with deflate's stored blocks (at most 65 535 bytes each).
fn zlib_stored(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0x78, 0x01];
    let blocks: Vec<&[u8]> = data.chunks(65_535).collect();
    for (index, block) in blocks.iter().enumerate() {
        out.push(u8::from(index + 1 == blocks.len()));
        let length = block.len() as u16;
        out.extend_from_slice(&length.to_le_bytes());
        out.extend_from_slice(&(!length).to_le_bytes());
        out.extend_from_slice(block);
    }
    if blocks.is_empty() {
        out.extend_from_slice(&[1, 0, 0, 0xFF, 0xFF]);
    }
    let (mut a, mut b) = (1_u32, 0_u32);
    for &byte in data {
        a = (a + u32::from(byte)) % 65_521;
        b = (b + a) % 65_521;
    }
    out.extend_from_slice(&((b << 16) | a).to_be_bytes());
    out
}

/// The CRC-32 of PNG and zlib (polynomial 0xEDB88320, bit by bit: small, not fast).
fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFF_u32;
    for &byte in data {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checksums_match_their_published_check_values() {
        // The standard check value of CRC-32 over "123456789".
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        // Adler-32 of "Wikipedia" is 0x11E60398.
        let stored = zlib_stored(b"Wikipedia");
        assert_eq!(&stored[stored.len() - 4..], &0x11E6_0398_u32.to_be_bytes());
    }

    #[test]
    fn a_png_holds_its_size_and_every_byte() {
        let rgb: Vec<u8> = (0..3 * 5 * 4).map(|index| index as u8).collect();
        let file = png(5, 4, &rgb).unwrap();
        assert!(png(5, 3, &rgb).unwrap_err().to_string().contains("5 × 3"));
        assert_eq!(&file[..8], b"\x89PNG\r\n\x1a\n");
        assert_eq!(&file[16..24], &[0, 0, 0, 5, 0, 0, 0, 4]);
        // The stored block holds the rows as they are, each after a 0 filter byte.
        let row = &rgb[15..30];
        assert!(
            file.windows(16)
                .any(|window| window[0] == 0 && &window[1..] == row)
        );
        assert!(file.ends_with(&[0xAE, 0x42, 0x60, 0x82]), "IEND's CRC");
    }

    #[test]
    fn radiance_maps_to_bytes_monotonically() {
        let bytes = to_bytes(&[0.0, 0.5, 1.0, 12.0, f32::NAN, -1.0]);
        assert_eq!(bytes[0], 0);
        assert!(bytes[1] < bytes[2] && bytes[2] < bytes[3]);
        assert_eq!(bytes[4], 0);
        assert_eq!(bytes[5], 0);
    }
}
