//! Profile, find the hot spots, keep the results (`map_to_palette(pixels, palette)`).
//!
//! The checker times nothing: a time depends on the machine and on what else it runs.
//! It judges what a profile of the starter shows and what can be counted exactly.
//!
//! Four parts. **Results**: random images and palettes of many sizes, palettes with
//! repeated colours, pixels equally near two palette colours, colours at the ends of the
//! range, the same pixels mapped to two palettes one after the other, and refused palettes
//! (empty, 257 colours); every index and every count is
//! compared exactly with the checker's own reference, and a wrong pixel is named with
//! both colours and both distances. **No allocation per pixel and palette colour** and
//! **no allocation per pixel**: the requests to the allocator on this thread (see
//! [`crate::allocations`]) are counted for three image and palette sizes, and split into
//! a part per pixel and colour, a part per pixel and a part per call. A few allocations
//! per call or per palette colour (the results, a table, a map that grows by doubling)
//! are fine: what a profile shows as a hot spot is one per pixel, or per pixel and colour.
//! **No text made, one thread**, read from the source (see [`crate::rust_form`]): the
//! counter cannot see a colour's name formatted into one reused buffer for every pixel
//! (formatting and hashing without a request for memory), nor allocations on threads the
//! function starts, so words that make text outside the error's message (`format`,
//! `write`, `to_string`, `String`, …) and words that start threads are reported with their
//! lines. Reading words is not reading what the code does: a key built byte by byte gets
//! past it, and only a profile shows that.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::allocations::allocations_during;
use crate::report::{PartReport, Verdict, catching_panics};
use crate::rust_form::{Place, RustSource};
use crate::submission::{Submission, Variant};

/// A colour: red, green, blue.
pub type Rgb = [u8; 3];

/// The indices and the counts, or the error's message.
pub type Mapping = Result<(Vec<u8>, Vec<usize>), String>;

/// The exercise's function, its result turned into the checker's types.
pub type MapToPalette = fn(&[Rgb], &[Rgb]) -> Mapping;

pub fn function_of(variant: Variant) -> MapToPalette {
    crate::rust_exercises::with_rust_module!(profile_hot_spot, variant, |code| {
        let function: MapToPalette = |pixels, palette| {
            code::map_to_palette(pixels, palette)
                .map(|mapping| (mapping.indices, mapping.counts))
                .map_err(|error| error.to_string())
        };
        function
    })
}

/// The squared distance of two colours.
fn squared_distance(first: Rgb, second: Rgb) -> u32 {
    first
        .iter()
        .zip(second)
        .map(|(&a, b)| (i32::from(a) - i32::from(b)).unsigned_abs().pow(2))
        .sum()
}

/// The checker's own reference, written independently of the exercise files; `None` for
/// a palette the exercise must refuse.
pub fn reference(pixels: &[Rgb], palette: &[Rgb]) -> Option<(Vec<u8>, Vec<usize>)> {
    if palette.is_empty() || palette.len() > 256 {
        return None;
    }
    let mut counts = vec![0; palette.len()];
    let indices = pixels
        .iter()
        .map(|&pixel| {
            // `min_by_key` keeps the first of equal keys: the lowest index on a tie.
            let (nearest, _) = palette
                .iter()
                .enumerate()
                .min_by_key(|&(_, &colour)| squared_distance(pixel, colour))
                .expect("the palette is not empty");
            counts[nearest] += 1;
            nearest as u8
        })
        .collect();
    Some((indices, counts))
}

/// How the colours of a case are drawn.
#[derive(Clone, Copy)]
enum Colours {
    /// Every channel from 0 to 255.
    Any,
    /// The palette is a few colours, each repeated in several places.
    RepeatedInPalette,
    /// Channels on a coarse grid (palette: 0, 64, 128, 192, 255; pixels also halfway),
    /// so that many pixels are equally near two or more palette colours.
    Ties,
    /// Channels 0 or 255 only: distances up to 3 × 255², more than 16 bits hold.
    Extremes,
}

/// (pixels, palette colours, colours, description) of every case with a valid palette.
const CASES: [(usize, usize, Colours, &str); 12] = [
    (0, 1, Colours::Any, "no pixels, one colour"),
    (0, 7, Colours::Any, "no pixels, 7 colours"),
    (1, 1, Colours::Any, "one pixel, one colour"),
    (1, 5, Colours::Any, "one pixel, 5 colours"),
    (9, 2, Colours::Any, "9 pixels, 2 colours"),
    (1000, 16, Colours::Any, "1000 pixels, 16 colours"),
    (4099, 64, Colours::Any, "4099 pixels, 64 colours"),
    (777, 256, Colours::Any, "777 pixels, 256 colours (the most)"),
    (
        2000,
        12,
        Colours::RepeatedInPalette,
        "2000 pixels, a palette with repeated colours",
    ),
    (
        3000,
        20,
        Colours::Ties,
        "3000 pixels, many equally near two colours",
    ),
    (500, 3, Colours::Ties, "500 pixels, 3 colours, many ties"),
    (
        1500,
        6,
        Colours::Extremes,
        "1500 pixels, channels 0 or 255 only",
    ),
];

/// A random image and palette.
pub fn random_case(pixels: usize, colours: usize, kind_seed: u64) -> (Vec<Rgb>, Vec<Rgb>) {
    case_colours(pixels, colours, Colours::Any, kind_seed)
}

fn case_colours(pixels: usize, colours: usize, kind: Colours, seed: u64) -> (Vec<Rgb>, Vec<Rgb>) {
    let mut generator = ChaCha8Rng::seed_from_u64(seed);
    let mut colour = |channel: &dyn Fn(&mut ChaCha8Rng) -> u8| -> Rgb {
        [
            channel(&mut generator),
            channel(&mut generator),
            channel(&mut generator),
        ]
    };
    let any = |generator: &mut ChaCha8Rng| generator.random_range(0..=255u8);
    let grid = |generator: &mut ChaCha8Rng| [0, 64, 128, 192, 255][generator.random_range(0..5)];
    let halfway = |generator: &mut ChaCha8Rng| generator.random_range(0..=8u8).saturating_mul(32);
    let extreme = |generator: &mut ChaCha8Rng| if generator.random_bool(0.5) { 255 } else { 0 };
    let (palette, image): (Vec<Rgb>, Vec<Rgb>) = match kind {
        Colours::Any => (
            (0..colours).map(|_| colour(&any)).collect(),
            (0..pixels).map(|_| colour(&any)).collect(),
        ),
        Colours::RepeatedInPalette => {
            let distinct: Vec<Rgb> = (0..3).map(|_| colour(&any)).collect();
            (
                (0..colours).map(|index| distinct[index % 3]).collect(),
                (0..pixels).map(|_| colour(&any)).collect(),
            )
        }
        Colours::Ties => (
            (0..colours).map(|_| colour(&grid)).collect(),
            (0..pixels).map(|_| colour(&halfway)).collect(),
        ),
        Colours::Extremes => (
            (0..colours).map(|_| colour(&extreme)).collect(),
            (0..pixels).map(|_| colour(&extreme)).collect(),
        ),
    };
    (image, palette)
}

pub fn check(submission: &Submission) -> Vec<PartReport> {
    let function = function_of(submission.rust);
    let allocations = allocation_parts(function);
    let mut parts = vec![results(function)];
    parts.extend(allocations);
    parts.push(form(submission.rust));
    parts
}

fn results(function: MapToPalette) -> PartReport {
    let mut part = PartReport::new("results");
    for (case, &(pixels, colours, kind, description)) in CASES.iter().enumerate() {
        let (image, palette) = case_colours(pixels, colours, kind, 7000 + case as u64);
        part.push(description, verdict(function, &image, &palette));
    }
    // The same pixels twice, with two palettes: nothing may carry over from one call to
    // the next (a memory of colours already seen must belong to one call, or one palette).
    let (image, first_palette) = random_case(1000, 16, 7300);
    let (_, second_palette) = random_case(0, 16, 7301);
    part.push(
        "1000 pixels, a first palette of 16 colours",
        verdict(function, &image, &first_palette),
    );
    part.push(
        "the same 1000 pixels again, with another palette",
        verdict(function, &image, &second_palette),
    );
    let (image, _) = random_case(3, 1, 7100);
    part.push("an empty palette, no pixels", verdict(function, &[], &[]));
    part.push("an empty palette, 3 pixels", verdict(function, &image, &[]));
    let (image, palette) = random_case(10, 257, 7101);
    part.push("257 colours", verdict(function, &image, &palette));
    part
}

/// Runs one case and compares it with the reference.
fn verdict(function: MapToPalette, pixels: &[Rgb], palette: &[Rgb]) -> Verdict {
    let expected = reference(pixels, palette);
    let actual = match catching_panics(|| function(pixels, palette)) {
        Ok(actual) => actual,
        Err(panicked) => return panicked,
    };
    match (actual, expected) {
        (Err(message), None) => Verdict::Pass(format!("refused: {message}")),
        (Ok(_), None) if palette.is_empty() => Verdict::Unmet(
            "returned a mapping for an empty palette: no pixel has a nearest colour there, \
             so it must be refused with an error"
                .to_string(),
        ),
        (Ok(_), None) => Verdict::Unmet(format!(
            "returned a mapping for a palette of {} colours: an index of one byte names at \
             most 256, so it must be refused with an error",
            palette.len()
        )),
        (Err(message), Some(_)) => Verdict::Unmet(format!(
            "refused a valid palette of {} colours: {message}",
            palette.len()
        )),
        (Ok((indices, counts)), Some((expected_indices, expected_counts))) => compare_mapping(
            pixels,
            palette,
            (&indices, &counts),
            (&expected_indices, &expected_counts),
        ),
    }
}

fn compare_mapping(
    pixels: &[Rgb],
    palette: &[Rgb],
    (indices, counts): (&[u8], &[usize]),
    (expected_indices, expected_counts): (&[u8], &[usize]),
) -> Verdict {
    if indices.len() != pixels.len() {
        return Verdict::Unmet(format!(
            "returned {} indices for {} pixels: one index per pixel",
            indices.len(),
            pixels.len()
        ));
    }
    let wrong: Vec<usize> = (0..pixels.len())
        .filter(|&pixel| indices[pixel] != expected_indices[pixel])
        .collect();
    if let Some(&first) = wrong.first() {
        let pixel = pixels[first];
        let given = usize::from(indices[first]);
        let nearest = usize::from(expected_indices[first]);
        let describe = |index: usize| match palette.get(index) {
            Some(&colour) => format!(
                "palette colour {index} {} (squared distance {})",
                shown(colour),
                squared_distance(pixel, colour)
            ),
            None => format!("index {index}, past the end of the palette"),
        };
        let tie = palette.get(given).is_some_and(|&colour| {
            squared_distance(pixel, colour) == squared_distance(pixel, palette[nearest])
        });
        let why = if tie {
            ": they are equally near, and on a tie the lower index wins"
        } else {
            ""
        };
        return Verdict::Unmet(format!(
            "{} of {} pixels differ; the first, pixel {first} {}, got {}, but the nearest is {}{why}",
            wrong.len(),
            pixels.len(),
            shown(pixel),
            describe(given),
            describe(nearest)
        ));
    }
    if counts.len() != palette.len() {
        return Verdict::Unmet(format!(
            "the counts have {} entries for a palette of {} colours: one per palette colour, \
             zeros included",
            counts.len(),
            palette.len()
        ));
    }
    if let Some(index) = (0..palette.len()).find(|&index| counts[index] != expected_counts[index]) {
        return Verdict::Unmet(format!(
            "the indices are right, but the count of palette colour {index} {} is {}, while \
             {} pixels were mapped to it",
            shown(palette[index]),
            counts[index],
            expected_counts[index]
        ));
    }
    Verdict::Pass(format!(
        "{} indices and {} counts equal",
        pixels.len(),
        palette.len()
    ))
}

fn shown(colour: Rgb) -> String {
    format!("({}, {}, {})", colour[0], colour[1], colour[2])
}

/// Allocations of one call on a random image; the error of a panic or a refusal.
fn allocations_of(function: MapToPalette, pixels: usize, colours: usize) -> Result<usize, Verdict> {
    let (image, palette) = random_case(pixels, colours, 7200);
    match catching_panics(|| allocations_during(|| function(&image, &palette))) {
        Err(panicked) => Err(panicked),
        Ok((Err(message), _)) => Err(Verdict::Error(format!(
            "refused a valid palette of {colours} colours: {message}"
        ))),
        Ok((Ok(_), count)) => Ok(count),
    }
}

/// What may grow with the size without being a hot spot: vectors and maps that grow by
/// doubling (a few dozen reallocations for these sizes at most).
const ALLOWED_GROWTH: usize = 16;

/// Allocations per palette colour and call that are not a hot spot: a map keyed by the
/// palette's colours allocates a key per colour and grows by doubling.
const ALLOWED_PER_COLOUR: usize = 4;

/// The two allocation parts, from calls on (1024, 4), (4096, 4) and (4096, 64) pixels
/// and colours.
fn allocation_parts(function: MapToPalette) -> Vec<PartReport> {
    let mut per_pair = PartReport::new("no allocation per pixel and palette colour");
    let mut per_pixel = PartReport::new("no allocation per pixel");
    let counts = [(1024, 4), (4096, 4), (4096, 64)]
        .map(|(pixels, colours)| allocations_of(function, pixels, colours));
    let [few_pixels, many_pixels, many_colours] = match counts {
        [Ok(a), Ok(b), Ok(c)] => [a, b, c],
        [first, second, third] => {
            let problem = [first, second, third]
                .into_iter()
                .find_map(Result::err)
                .expect("one of the three failed");
            per_pair.push(
                "setup",
                Verdict::Error("the function did not return a mapping".into()),
            );
            per_pixel.push("4096 pixels", problem);
            return vec![per_pair, per_pixel];
        }
    };
    let measured = format!(
        "{few_pixels} allocations for 1024 pixels and 4 colours, {many_pixels} for 4096 \
         pixels and 4 colours, {many_colours} for 4096 pixels and 64 colours"
    );
    // 60 more colours for each of 4096 pixels. A few allocations per palette colour (a
    // table of the palette, a map keyed by colour) are not per pixel: they are allowed.
    let colour_growth = many_colours.saturating_sub(many_pixels);
    let allows_per_colour = colour_growth <= ALLOWED_PER_COLOUR * 60 + ALLOWED_GROWTH;
    let per_pixel_and_colour = if allows_per_colour {
        0.0
    } else {
        colour_growth as f64 / (4096.0 * 60.0)
    };
    per_pair.push(
        "4096 pixels, 4 and 64 colours",
        if allows_per_colour {
            Verdict::Pass(measured.clone())
        } else {
            Verdict::Unmet(format!(
                "{measured}: about {per_pixel_and_colour:.2} allocations per pixel and palette \
                 colour. Something in the loop over the palette asks the allocator for memory \
                 (a `collect`, `to_vec`, `vec!` or `format!` in the distance?)"
            ))
        },
    );
    // 3072 more pixels, minus what their 4 colours each explain.
    let pixel_growth = (many_pixels.saturating_sub(few_pixels) as f64
        - 3072.0 * 4.0 * per_pixel_and_colour)
        .max(0.0);
    per_pixel.push(
        "1024 and 4096 pixels, 4 colours",
        if pixel_growth <= ALLOWED_GROWTH as f64 {
            Verdict::Pass(measured)
        } else {
            Verdict::Unmet(format!(
                "{measured}: about {:.2} allocations per pixel besides those per colour. \
                 Something in the loop over the pixels asks the allocator for memory (a vector \
                 of candidates collected, a `String` key made with `format!` or `to_string`, a \
                 clone?)",
                pixel_growth / 3072.0
            ))
        },
    );
    vec![per_pair, per_pixel]
}

/// Words that make text: a key formatted from a colour's name, even into one reused
/// buffer, costs formatting and hashing per pixel without asking for memory.
const TEXT_WORDS: [&str; 6] = [
    "format",
    "format_args",
    "write",
    "writeln",
    "to_string",
    "String",
];

/// Words that move work to other threads, whose requests to the allocator the counter (per
/// thread) does not see.
const THREAD_WORDS: [&str; 3] = ["thread", "spawn", "rayon"];

/// What the allocation counter cannot see, read from the source: text made outside the
/// error's message (`fn fmt`), and work moved to other threads.
fn form(variant: Variant) -> PartReport {
    let mut part = PartReport::new("no text made, one thread (read from the source)");
    let source = match crate::rust_form::source_of("profile-hot-spot", variant) {
        Ok(source) => source,
        Err(error) => {
            part.push("reading the source", Verdict::Error(error.to_string()));
            return part;
        }
    };
    let (text, threads) = form_findings(&source);
    let listed = |places: &[Place]| {
        places
            .iter()
            .map(Place::to_string)
            .collect::<Vec<_>>()
            .join("; ")
    };
    part.push(
        format!("text outside the error's message in {}", source.shown()),
        if text.is_empty() {
            Verdict::Pass("none".to_string())
        } else {
            Verdict::Unmet(format!(
                "the code formats text: {}. Counting pixels needs no names: a key formatted for \
                 every pixel costs formatting and hashing even when it reuses one buffer and so \
                 asks for no memory. Count by the palette index",
                listed(&text)
            ))
        },
    );
    part.push(
        "work on the calling thread",
        if threads.is_empty() {
            Verdict::Pass("no thread started".to_string())
        } else {
            Verdict::Unmet(format!(
                "the code starts threads: {}. The checker counts the requests to the allocator \
                 of the calling thread only, so it cannot judge work done on others: keep this \
                 exercise on one thread (module 2 is about threads)",
                listed(&threads)
            ))
        },
    );
    part
}

/// The places that make text (outside every `fn fmt`) and those that use threads.
fn form_findings(source: &RustSource) -> (Vec<Place>, Vec<Place>) {
    let whole = source.whole();
    // Lines inside the error's message, where `write!` belongs.
    let message_lines: Vec<usize> = source
        .function_body("fmt")
        .map(|body| {
            TEXT_WORDS
                .iter()
                .flat_map(|word| source.word_in(body, word))
                .map(|place| place.line)
                .collect()
        })
        .unwrap_or_default();
    let outside_message = |place: &Place| !message_lines.contains(&place.line);
    let found = |words: &[&str], keep: &dyn Fn(&Place) -> bool| {
        let mut places: Vec<Place> = words
            .iter()
            .flat_map(|word| source.word_in(whole, word))
            .filter(|place| keep(place))
            .collect();
        places.sort_by_key(|place| place.line);
        places.dedup();
        places
    };
    (
        found(&TEXT_WORDS, &outside_message),
        found(&THREAD_WORDS, &|_| true),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_takes_the_lower_index_on_a_tie_and_counts_repeats_once() {
        let palette = [[0, 0, 0], [2, 2, 2], [0, 0, 0]];
        let (indices, counts) = reference(&[[1, 1, 1], [0, 0, 1], [9, 9, 9]], &palette).unwrap();
        assert_eq!(indices, [0, 0, 1]);
        assert_eq!(counts, [2, 1, 0]);
        assert_eq!(reference(&[], &[]), None);
        assert_eq!(reference(&[], &[[0; 3]; 257]), None);
        assert_eq!(reference(&[], &[[0; 3]; 256]), Some((vec![], vec![0; 256])));
    }

    #[test]
    fn the_source_check_spares_the_error_message_and_finds_names_and_threads() {
        let read =
            |text: &str| RustSource::from_text(std::path::Path::new("work.rs"), text.to_string());
        let message = "impl fmt::Display for E {\n    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {\n        write!(f, \"String\")\n    }\n}\n";
        assert_eq!(form_findings(&read(message)), (vec![], vec![]));
        let named = format!(
            "{message}fn name(c: u8, s: &mut String) {{\n    write!(s, \"{{c}}\").unwrap();\n}}\n"
        );
        let (text, threads) = form_findings(&read(&named));
        assert_eq!(
            text.iter().map(|place| place.line).collect::<Vec<_>>(),
            [6, 7]
        );
        assert!(threads.is_empty());
        let (text, threads) =
            form_findings(&read("fn f() {\n    std::thread::scope(|s| {});\n}\n"));
        assert!(text.is_empty());
        assert_eq!(threads.len(), 1);
    }

    #[test]
    fn the_tie_cases_hold_many_ties_and_the_extreme_cases_large_distances() {
        let ties = |pixels, palette: &[Rgb]| {
            let pixels: &[Rgb] = pixels;
            pixels
                .iter()
                .filter(|&&pixel| {
                    let mut distances: Vec<u32> = palette
                        .iter()
                        .map(|&colour| squared_distance(pixel, colour))
                        .collect();
                    distances.sort();
                    distances[0] == distances[1]
                })
                .count()
        };
        let (image, palette) = case_colours(3000, 20, Colours::Ties, 1);
        let tied = ties(&image, &palette);
        assert!(tied > 300, "{tied} ties");
        let (image, palette) = case_colours(1500, 6, Colours::Extremes, 2);
        let largest = image
            .iter()
            .flat_map(|&pixel| {
                palette
                    .iter()
                    .map(move |&colour| squared_distance(pixel, colour))
            })
            .max()
            .unwrap();
        assert!(largest > u32::from(u16::MAX), "{largest}");
    }
}
