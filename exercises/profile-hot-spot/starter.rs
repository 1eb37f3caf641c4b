//! Profile, find the hot spots, keep the results.
//!
//! `map_to_palette` turns an image into a palette image, as a GIF encoder or a retro
//! renderer does: every pixel is replaced by the index of the nearest colour of a small
//! palette, and every palette colour's pixels are counted.
//!
//! - *Nearest* means the smallest squared distance over the three channels,
//!   `(r₁ − r₂)² + (g₁ − g₂)² + (b₁ − b₂)²`. When two palette colours are equally near,
//!   the one with the **lower index** wins.
//! - `counts[i]` is the number of pixels mapped to palette colour `i`; it has one entry
//!   per palette colour, zeros included.
//! - A palette must hold between 1 and 256 colours (an index is a `u8`); any other length
//!   is an error, even for an image without pixels.
//!
//! This version is correct, and slow. Profile it (`cargo xtask profile
//! exercise:profile-hot-spot`), find where its time goes, and make it faster, keeping
//! every result exactly the same. The checker counts what a profiler shows: the requests
//! this function makes to the allocator, per pixel and per pixel and colour.

use std::collections::HashMap;
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
    // Pixels per colour, by the colour's name as a web page writes it ("#ff8000").
    let mut counts_by_name: HashMap<String, usize> = HashMap::new();
    for pixel in pixels {
        // Every candidate with its distance; the smallest (distance, index) pair wins, so
        // on equal distances the lower index does.
        let candidates: Vec<(u32, usize)> = palette
            .iter()
            .enumerate()
            .map(|(index, colour)| (squared_distance(pixel, colour), index))
            .collect();
        let (_, nearest) = *candidates.iter().min().expect("the palette is not empty");
        indices.push(nearest as u8);
        *counts_by_name
            .entry(colour_name(&palette[nearest]))
            .or_insert(0) += 1;
    }
    // Two palette entries may hold the same colour: then only the first is ever chosen,
    // and the count belongs to it alone.
    let mut counts = vec![0; palette.len()];
    for (index, colour) in palette.iter().enumerate() {
        let first = palette.iter().position(|other| other == colour);
        if first == Some(index) {
            counts[index] = counts_by_name
                .get(&colour_name(colour))
                .copied()
                .unwrap_or(0);
        }
    }
    Ok(PaletteMapping { indices, counts })
}

/// The squared distance between two colours.
fn squared_distance(first: &Rgb, second: &Rgb) -> u32 {
    let differences: Vec<i32> = first
        .iter()
        .zip(second)
        .map(|(&a, &b)| i32::from(a) - i32::from(b))
        .collect();
    differences
        .iter()
        .map(|difference| (difference * difference) as u32)
        .sum()
}

/// A colour's name as a web page writes it: `#` and two hexadecimal digits per channel.
fn colour_name(colour: &Rgb) -> String {
    format!("#{:02x}{:02x}{:02x}", colour[0], colour[1], colour[2])
}
