// mutant: stale-state — remembers the nearest colour of every colour seen in a map kept from one call to the next, keyed by the colour alone, so a later call with another palette gets answers meant for the old one
// expect: of 1000 pixels differ
//! Profile, find the hot spots, keep the results.
//! The reference solution with the one change named in the first line.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;

thread_local! {
    /// The nearest palette index of every colour seen so far, kept between calls.
    static SEEN: RefCell<HashMap<Rgb, usize>> = RefCell::new(HashMap::new());
}

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
    let mut counts = vec![0; palette.len()];
    // Images repeat colours, and so do the images of one program: remember the answer for
    // every colour already seen, from one call to the next.
    let mut nearest_of = Vec::with_capacity(pixels.len());
    SEEN.with(|seen| {
        let mut seen = seen.borrow_mut();
        for pixel in pixels {
            nearest_of.push(
                *seen
                    .entry(*pixel)
                    .or_insert_with(|| nearest_colour(pixel, palette)),
            );
        }
    });
    for nearest in nearest_of {
        // At most 256 colours: the index fits in a byte.
        indices.push(nearest as u8);
        counts[nearest] += 1;
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
