// mutant: out-of-bounds — counts in a fixed `[usize; 255]`, taking 255 (`u8::MAX`) for the number of colours a byte can name
// expect: the len is 255
//! Profile, find the hot spots, keep the results.
//! The reference solution with the one change named in the first line.

use std::fmt;

/// A colour: red, green and blue, 0 to 255 each.
pub type Rgb = [u8; 3];

/// The palette image and how often each palette colour was used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaletteMapping {
    /// For every pixel, in order, the index of its palette colour.
    pub indices: Vec<u8>,
    /// For every palette colour, in palette order, the number of pixels mapped to it.
    pub counts: Vec<usize>,
}

/// Why a palette was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PaletteError {
    /// No colour to map to.
    Empty,
    /// More colours than a `u8` index can name.
    TooManyColours { colours: usize },
}

impl fmt::Display for PaletteError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PaletteError::Empty => write!(
                formatter,
                "the palette is empty: it needs at least one colour"
            ),
            PaletteError::TooManyColours { colours } => write!(
                formatter,
                "the palette has {colours} colours, but an index of one byte names at most 256"
            ),
        }
    }
}

impl std::error::Error for PaletteError {}

/// Maps every pixel to the index of its nearest palette colour, and counts the pixels of
/// each palette colour.
pub fn map_to_palette(pixels: &[Rgb], palette: &[Rgb]) -> Result<PaletteMapping, PaletteError> {
    if palette.is_empty() {
        return Err(PaletteError::Empty);
    }
    if palette.len() > 256 {
        return Err(PaletteError::TooManyColours {
            colours: palette.len(),
        });
    }
    let mut indices = Vec::with_capacity(pixels.len());
    let mut counts = [0usize; 255];
    for pixel in pixels {
        let nearest = nearest_colour(pixel, palette);
        // At most 256 colours: the index fits in a byte.
        indices.push(nearest as u8);
        counts[nearest] += 1;
    }
    Ok(PaletteMapping {
        indices,
        counts: counts[..palette.len()].to_vec(),
    })
}

/// The index of the palette colour nearest to `pixel`, the lowest on a tie.
fn nearest_colour(pixel: &Rgb, palette: &[Rgb]) -> usize {
    let mut nearest = 0;
    let mut nearest_distance = u32::MAX;
    for (index, colour) in palette.iter().enumerate() {
        let distance = squared_distance(pixel, colour);
        // Strictly smaller: an equally near colour later in the palette does not win.
        if distance < nearest_distance {
            nearest = index;
            nearest_distance = distance;
        }
    }
    nearest
}

/// The squared distance between two colours: at most 3 × 255², which fits a `u32`.
fn squared_distance(first: &Rgb, second: &Rgb) -> u32 {
    let channel = |channel: usize| {
        let difference = i32::from(first[channel]) - i32::from(second[channel]);
        (difference * difference) as u32
    };
    channel(0) + channel(1) + channel(2)
}
