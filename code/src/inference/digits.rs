//! The 8 × 8 handwritten digits (UCI "Optical Recognition of Handwritten Digits", CC BY 4.0;
//! see `code/data/digits/README.md` for the source and licence).
//!
//! The file is compiled into the crate, so an example or a binary copied to another machine
//! needs nothing beside it. Each line holds 64 pixel counts (0–16) and a label (0–9); the
//! loader scales the pixels to 0–1, because weights initialised for inputs of that size keep
//! the first layer's activations in the range the training expects.

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use thiserror::Error;

use crate::tensor::Tensor2d;

/// Pixels per image (8 × 8).
pub const PIXELS: usize = 64;
/// Classes: the digits 0 to 9.
pub const CLASSES: usize = 10;
/// The largest pixel count in the file: each pixel counts the set pixels of a 4 × 4 block.
pub const LARGEST_PIXEL: u32 = 16;

/// The dataset as shipped with the crate.
const DIGITS_CSV: &str = include_str!("../../data/digits/optdigits-1797.csv");

/// A malformed line in a digits file, with the line number a person can look up.
#[derive(Debug, Error, PartialEq)]
pub enum DatasetError {
    #[error(
        "line {line}: expected {expected} comma-separated values (64 pixels and a label), found {found}"
    )]
    WrongFieldCount {
        line: usize,
        expected: usize,
        found: usize,
    },
    #[error("line {line}, value {field}: '{text}' is not a whole number")]
    NotANumber {
        line: usize,
        field: usize,
        text: String,
    },
    #[error(
        "line {line}: pixel {field} is {value}, but pixels count set pixels of a 4 × 4 block and lie in 0..=16"
    )]
    PixelOutOfRange {
        line: usize,
        field: usize,
        value: u32,
    },
    #[error("line {line}: the label is {value}, but labels are digits 0..=9")]
    LabelOutOfRange { line: usize, value: u32 },
    #[error("the file holds no images")]
    Empty,
    #[error(
        "a test fraction of {0} leaves no image for training or none for testing; choose a value between 0 and 1 that leaves at least one of each"
    )]
    BadTestFraction(f32),
}

/// Images (one per row, pixels scaled to 0–1) and their labels.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    /// `images.rows()` images of [`PIXELS`] values each.
    pub images: Tensor2d,
    /// One label per image, 0–9.
    pub labels: Vec<u8>,
}

impl Dataset {
    /// The number of images.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// True when there are no images.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// The images and labels at `indices`, in that order.
    pub fn select(&self, indices: &[usize]) -> Dataset {
        let mut pixels = Vec::with_capacity(indices.len() * PIXELS);
        let mut labels = Vec::with_capacity(indices.len());
        for &index in indices {
            pixels.extend_from_slice(self.images.row(index));
            labels.push(self.labels[index]);
        }
        Dataset {
            images: Tensor2d::from_vec(indices.len(), PIXELS, pixels)
                .expect("rows of PIXELS values each"),
            labels,
        }
    }
}

/// A training set and a test set that share no image.
#[derive(Debug, Clone, PartialEq)]
pub struct Split {
    pub training: Dataset,
    pub test: Dataset,
}

/// The digits shipped with the crate.
pub struct Digits;

impl Digits {
    /// All 1797 images of the shipped file.
    pub fn load() -> Dataset {
        parse(DIGITS_CSV).expect("the shipped digits file is well formed (a unit test checks it)")
    }

    /// The shipped digits, shuffled with `seed` and split so that `test_fraction` of them
    /// (rounded to the nearest image) form the test set. The same seed gives the same split.
    pub fn split(test_fraction: f32, seed: u64) -> Result<Split, DatasetError> {
        split(&Digits::load(), test_fraction, seed)
    }
}

// ANCHOR: parse
/// Reads a digits file: per line 64 pixel counts (0–16) and a label (0–9). Blank lines are
/// skipped; anything else that is not a valid image is an error naming the line.
pub fn parse(text: &str) -> Result<Dataset, DatasetError> {
    let mut pixels = Vec::new();
    let mut labels = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line_number = index + 1;
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(',').collect();
        if fields.len() != PIXELS + 1 {
            return Err(DatasetError::WrongFieldCount {
                line: line_number,
                expected: PIXELS + 1,
                found: fields.len(),
            });
        }
        for (field, text) in fields.iter().enumerate() {
            let value: u32 = text.trim().parse().map_err(|_| DatasetError::NotANumber {
                line: line_number,
                field: field + 1,
                text: text.trim().to_string(),
            })?;
            if field < PIXELS {
                if value > LARGEST_PIXEL {
                    return Err(DatasetError::PixelOutOfRange {
                        line: line_number,
                        field: field + 1,
                        value,
                    });
                }
                pixels.push(value as f32 / LARGEST_PIXEL as f32);
            } else if value as usize >= CLASSES {
                return Err(DatasetError::LabelOutOfRange {
                    line: line_number,
                    value,
                });
            } else {
                labels.push(value as u8);
            }
        }
    }
    if labels.is_empty() {
        return Err(DatasetError::Empty);
    }
    let images = Tensor2d::from_vec(labels.len(), PIXELS, pixels).expect("64 pixels per label");
    Ok(Dataset { images, labels })
}
// ANCHOR_END: parse

/// Shuffles the images with `seed` and keeps `test_fraction` of them apart for testing.
pub fn split(dataset: &Dataset, test_fraction: f32, seed: u64) -> Result<Split, DatasetError> {
    let test_count = (dataset.len() as f32 * test_fraction).round();
    if !(test_fraction > 0.0 && test_fraction < 1.0)
        || test_count < 1.0
        || test_count as usize >= dataset.len()
    {
        return Err(DatasetError::BadTestFraction(test_fraction));
    }
    let mut order: Vec<usize> = (0..dataset.len()).collect();
    order.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
    let (test, training) = order.split_at(test_count as usize);
    Ok(Split {
        training: dataset.select(training),
        test: dataset.select(test),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_file_has_1797_images_of_every_digit() {
        let digits = Digits::load();
        assert_eq!(digits.len(), 1797);
        assert_eq!(digits.images.shape(), (1797, PIXELS));
        for digit in 0..CLASSES as u8 {
            let count = digits
                .labels
                .iter()
                .filter(|&&label| label == digit)
                .count();
            assert!(
                (170..=190).contains(&count),
                "digit {digit} appears {count} times"
            );
        }
        let pixels = digits.images.as_slice();
        assert!(pixels.iter().all(|&value| (0.0..=1.0).contains(&value)));
        assert!(pixels.contains(&1.0), "some pixel is fully set");
        // The first image of the file is a zero.
        assert_eq!(digits.labels[0], 0);
        assert_eq!(digits.images.get(0, 2), 5.0 / 16.0);
    }

    #[test]
    fn a_split_is_reproducible_disjoint_and_complete() {
        let first = Digits::split(0.2, 7).unwrap();
        let again = Digits::split(0.2, 7).unwrap();
        let other = Digits::split(0.2, 8).unwrap();
        assert_eq!(first, again);
        assert_ne!(first.test.labels, other.test.labels);
        assert_eq!(first.test.len(), 359);
        assert_eq!(first.training.len() + first.test.len(), 1797);
        // Every image of the file lands in exactly one of the two sets: compare the
        // multisets of rows.
        let mut all: Vec<Vec<u32>> = Digits::load()
            .images
            .as_slice()
            .chunks(PIXELS)
            .map(|row| row.iter().map(|value| value.to_bits()).collect())
            .collect();
        let mut split_rows: Vec<Vec<u32>> = first
            .training
            .images
            .as_slice()
            .chunks(PIXELS)
            .chain(first.test.images.as_slice().chunks(PIXELS))
            .map(|row| row.iter().map(|value| value.to_bits()).collect())
            .collect();
        all.sort();
        split_rows.sort();
        assert_eq!(all, split_rows);
    }

    #[test]
    fn malformed_lines_are_errors_that_name_the_line() {
        let good = format!("{}0", "1,".repeat(PIXELS));
        assert!(parse(&good).is_ok());
        let short = "1,2,3";
        assert_eq!(
            parse(short),
            Err(DatasetError::WrongFieldCount {
                line: 1,
                expected: 65,
                found: 3
            })
        );
        let text = format!("{good}\n{}x", "1,".repeat(PIXELS));
        assert!(matches!(
            parse(&text),
            Err(DatasetError::NotANumber {
                line: 2,
                field: 65,
                ..
            })
        ));
        let pixel = format!("17,{}3", "0,".repeat(PIXELS - 1));
        assert_eq!(
            parse(&pixel),
            Err(DatasetError::PixelOutOfRange {
                line: 1,
                field: 1,
                value: 17
            })
        );
        let label = format!("{}10", "0,".repeat(PIXELS));
        assert_eq!(
            parse(&label),
            Err(DatasetError::LabelOutOfRange { line: 1, value: 10 })
        );
        assert_eq!(parse("\n\n"), Err(DatasetError::Empty));
        let message = parse(&pixel).unwrap_err().to_string();
        assert!(
            message.contains("line 1") && message.contains("0..=16"),
            "{message}"
        );
    }

    #[test]
    fn test_fractions_that_leave_a_set_empty_are_rejected() {
        for fraction in [0.0, 1.0, -0.5, 1.5, f32::NAN, 0.0001, 0.99999] {
            assert!(
                matches!(
                    Digits::split(fraction, 1),
                    Err(DatasetError::BadTestFraction(_))
                ),
                "fraction {fraction}"
            );
        }
    }
}
