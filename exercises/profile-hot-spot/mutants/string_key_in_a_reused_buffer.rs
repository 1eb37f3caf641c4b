// mutant: hot-spot — counts in a hash map keyed by the colour's name, formatted for every pixel into one reused `String`: no allocation per pixel, but formatting and hashing per pixel
// expect: the code formats text
//! Profile, find the hot spots, keep the results.
//! The reference solution with the one change named in the first line.

use std::collections::HashMap;
use std::fmt;
use std::fmt::Write;

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
    // Pixels per colour name; the name of each pixel's colour is written into one buffer,
    // so that no pixel asks for memory.
    let mut counts_by_name: HashMap<String, usize> = HashMap::new();
    let mut name = String::with_capacity(7);
    for pixel in pixels {
        let nearest = nearest_colour(pixel, palette);
        indices.push(nearest as u8);
        let colour = palette[nearest];
        name.clear();
        write!(name, "#{:02x}{:02x}{:02x}", colour[0], colour[1], colour[2])
            .expect("writing into a String cannot fail");
        match counts_by_name.get_mut(name.as_str()) {
            Some(count) => *count += 1,
            None => {
                counts_by_name.insert(name.clone(), 1);
            }
        }
    }
    // A repeated colour is only ever chosen at its first place.
    let mut counts = vec![0; palette.len()];
    for (index, colour) in palette.iter().enumerate() {
        if palette.iter().position(|other| other == colour) == Some(index) {
            name.clear();
            write!(name, "#{:02x}{:02x}{:02x}", colour[0], colour[1], colour[2])
                .expect("writing into a String cannot fail");
            counts[index] = counts_by_name.get(name.as_str()).copied().unwrap_or(0);
        }
    }
    Ok(PaletteMapping { indices, counts })
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
