// mutant: hot-spot — keeps the starter's loop (a vector of candidates and of differences per pixel) and spreads the pixels over two threads, whose allocations the calling thread's counter does not see
// expect: the code starts threads
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
    let mut counts = vec![0; palette.len()];
    // Two threads, half of the pixels each.
    let half = pixels.len() / 2;
    let (first, second) = pixels.split_at(half);
    let nearest_of = |part: &[Rgb]| -> Vec<usize> {
        part.iter()
            .map(|pixel| nearest_colour(pixel, palette))
            .collect()
    };
    let (first, second) = std::thread::scope(|scope| {
        let first = scope.spawn(|| nearest_of(first));
        let second = scope.spawn(|| nearest_of(second));
        (
            first.join().expect("no panic"),
            second.join().expect("no panic"),
        )
    });
    for nearest in first.into_iter().chain(second) {
        indices.push(nearest as u8);
        counts[nearest] += 1;
    }
    Ok(PaletteMapping { indices, counts })
}

/// The index of the palette colour nearest to `pixel`, the lowest on a tie.
fn nearest_colour(pixel: &Rgb, palette: &[Rgb]) -> usize {
    let candidates: Vec<(u32, usize)> = palette
        .iter()
        .enumerate()
        .map(|(index, colour)| (squared_distance(pixel, colour), index))
        .collect();
    candidates.iter().min().expect("the palette is not empty").1
}

/// The squared distance between two colours: at most 3 × 255², which fits a `u32`.
fn squared_distance(first: &Rgb, second: &Rgb) -> u32 {
    let differences: Vec<i32> = first
        .iter()
        .zip(second)
        .map(|(&a, &b)| i32::from(a) - i32::from(b))
        .collect();
    differences
        .iter()
        .map(|difference| (difference * difference) as u32)
        .sum::<u32>()
}
