//! One colour per series name, the same in every figure of the book.
//!
//! A reader who has learnt that orange is `GraphCompiled` in one figure should find it
//! orange in the next. Figures label their lines directly, so a colour only has to tell
//! the lines of one panel apart; it no longer carries the name. Execution modes and the
//! crate's kernels therefore get colours from a fixed table, saturated enough to read as
//! text on white, and chosen so that the modes drawn together (the rungs of the ladder,
//! the four modes of a family, the "after" of each step) never share a hue.
//!
//! Only emphasised lines are drawn in these colours: context lines are grey, and
//! reference lines (a measured peak, PyTorch, cuBLAS) dashed in grey or black.
//!
//! Any other name (a chapter's own series, such as the access patterns of the memory
//! chapter) gets a colour of [`PALETTE`] picked by a stable hash of the name, so it is the
//! same wherever it appears, unless a series drawn before it in the same figure already
//! has that colour or one close to it: then it takes the next free colour of the palette.
//! Telling the lines of one figure apart matters more than the colour of a name that
//! appears in one figure only.

use plotters::style::RGBColor;

/// Execution modes (`galaxy::runner::ExecutionMode`, as `{:?}` writes them).
pub const MODE_COLOURS: [(&str, RGBColor); 14] = [
    ("Cpu", RGBColor(0x8c, 0x56, 0x4b)),
    ("CpuGraph", RGBColor(0x94, 0x67, 0xbd)),
    ("Immediate", RGBColor(0xe3, 0x77, 0xc2)),
    ("ImmediateCached", RGBColor(0xd6, 0x27, 0x28)),
    ("Graph", RGBColor(0x17, 0xbe, 0xcf)),
    ("GraphCached", RGBColor(0x1f, 0x77, 0xb4)),
    ("GraphFused", RGBColor(0xbc, 0xbd, 0x22)),
    ("GraphCachedFused", RGBColor(0x2c, 0xa0, 0x2c)),
    ("GraphLoop", RGBColor(0x8c, 0x6d, 0x31)),
    ("GraphLoopCached", RGBColor(0x39, 0x3b, 0x79)),
    ("GraphLoopFused", RGBColor(0x7b, 0x41, 0x73)),
    ("GraphLoopCachedFused", RGBColor(0x00, 0x9e, 0x8f)),
    ("OpCode", RGBColor(0x84, 0x3c, 0x39)),
    ("GraphCompiled", RGBColor(0xff, 0x7f, 0x0e)),
];

/// CPU linear variants, named after their functions, and the `matrixmultiply` yardstick.
pub const CPU_KERNEL_COLOURS: [(&str, RGBColor); 8] = [
    ("linear_naive", RGBColor(0xd6, 0x27, 0x28)),
    ("linear_local_accumulator", RGBColor(0xe3, 0x77, 0xc2)),
    ("linear_transposed_weights", RGBColor(0x94, 0x67, 0xbd)),
    ("linear_loop_order", RGBColor(0x1f, 0x77, 0xb4)),
    ("linear_blocked", RGBColor(0x17, 0xbe, 0xcf)),
    ("linear_register_blocked", RGBColor(0x2c, 0xa0, 0x2c)),
    ("linear_parallel", RGBColor(0xff, 0x7f, 0x0e)),
    ("matrixmultiply::sgemm", RGBColor(0x00, 0x00, 0x00)),
];

/// GPU linear kernels as `LinearStrategy` displays them (register-blocked tiles from the
/// largest, darkest green, to the smallest), the best of the register-blocked family at
/// each size, the chooser, the measured peak and cuBLAS. The naive kernel shares the hue
/// of `linear_naive`.
pub const GPU_KERNEL_COLOURS: [(&str, RGBColor); 13] = [
    ("naive", RGBColor(0xd6, 0x27, 0x28)),
    ("tiled 16×16", RGBColor(0x1f, 0x77, 0xb4)),
    ("register-blocked 128×128×8/8×8", RGBColor(0x00, 0x44, 0x1b)),
    ("register-blocked 128×64×8/8×8", RGBColor(0x00, 0x6d, 0x2c)),
    ("register-blocked 64×64×8/8×8", RGBColor(0x23, 0x8b, 0x45)),
    ("register-blocked 64×32×16/4×4", RGBColor(0x41, 0xab, 0x5d)),
    ("register-blocked 32×32×16/4×4", RGBColor(0x74, 0xc4, 0x76)),
    ("register-blocked 16×32×16/4×4", RGBColor(0xa1, 0xd9, 0x9b)),
    ("best register-blocked", RGBColor(0x2c, 0xa0, 0x2c)),
    ("chosen per shape", RGBColor(0xff, 0x7f, 0x0e)),
    (
        "fp32 peak (peak_fma, measured once)",
        RGBColor(0x55, 0x55, 0x55),
    ),
    ("measured fp32 peak", RGBColor(0x55, 0x55, 0x55)),
    ("cuBLAS (PyTorch)", RGBColor(0x00, 0x00, 0x00)),
];

/// Outside yardsticks drawn beside the execution modes: PyTorch on the same GPU
/// (`shared/tools/torch_mlp_anchor.py`), drawn as dashed reference lines.
pub const REFERENCE_COLOURS: [(&str, RGBColor); 2] = [
    ("PyTorch eager", RGBColor(0x99, 0x99, 0x99)),
    ("PyTorch CUDA graph", RGBColor(0x33, 0x33, 0x33)),
];

/// Reduction strategies (`galaxy::gpu::ReductionStrategy`).
pub const REDUCTION_COLOURS: [(&str, RGBColor); 2] = [
    ("WorkgroupMemory", RGBColor(0x1f, 0x77, 0xb4)),
    ("Subgroups", RGBColor(0xff, 0x7f, 0x0e)),
];

/// Chapter figures whose series come in pairs, the same method on two kinds of input:
/// one hue per method, dark for one kind and light for the other (ColorBrewer's "Paired"
/// scheme), so that the eye groups them by method first.
pub const HISTOGRAM_COLOURS: [(&str, RGBColor); 4] = [
    (
        "global atomics, spread over 256 bins",
        RGBColor(0xe3, 0x1a, 0x1c),
    ),
    ("global atomics, all in one bin", RGBColor(0xfb, 0x9a, 0x99)),
    (
        "workgroup sub-histograms, spread over 256 bins",
        RGBColor(0x1f, 0x78, 0xb4),
    ),
    (
        "workgroup sub-histograms, all in one bin",
        RGBColor(0xa6, 0xce, 0xe3),
    ),
];

/// See [`HISTOGRAM_COLOURS`]: a transposition row by row or in tiles, for n a power of
/// two (dark) and other n (light), and the plain copy.
pub const TRANSPOSE_COLOURS: [(&str, RGBColor); 5] = [
    ("row by row, n a power of two", RGBColor(0xff, 0x7f, 0x00)),
    ("row by row, other n", RGBColor(0xfd, 0xbf, 0x6f)),
    (
        "32 × 32 tiles, n a power of two",
        RGBColor(0x6a, 0x3d, 0x9a),
    ),
    ("32 × 32 tiles, other n", RGBColor(0xca, 0xb2, 0xd6)),
    ("copy, no transposition", RGBColor(0x33, 0xa0, 0x2c)),
];

/// See [`HISTOGRAM_COLOURS`]: a filter with a branch or without, on shuffled (dark) and
/// sorted (light) data.
pub const BRANCH_COLOURS: [(&str, RGBColor); 4] = [
    ("branch, shuffled data", RGBColor(0xe3, 0x1a, 0x1c)),
    ("branch, sorted data", RGBColor(0xfb, 0x9a, 0x99)),
    ("branchless, shuffled data", RGBColor(0x1f, 0x78, 0xb4)),
    ("branchless, sorted data", RGBColor(0xa6, 0xce, 0xe3)),
];

/// The colour of context lines: the series a figure shows for comparison, not for
/// discussion.
pub const CONTEXT_GREY: RGBColor = RGBColor(0xa8, 0xa8, 0xa8);

/// The colour of text that names a context line or a marker: darker than the line, so it
/// reads on white.
pub const CONTEXT_TEXT: RGBColor = RGBColor(0x6a, 0x6a, 0x6a);

/// The colour of reference lines without a colour of their own.
pub const REFERENCE_GREY: RGBColor = RGBColor(0x55, 0x55, 0x55);

/// The colour to write a line's label in: the line's colour, darkened where it is too
/// light to read as text on white (relative luminance above 0.3).
pub fn text_colour(line: RGBColor) -> RGBColor {
    let RGBColor(r, g, b) = line;
    let linear = |channel: u8| {
        let value = f64::from(channel) / 255.0;
        if value <= 0.04045 {
            value / 12.92
        } else {
            ((value + 0.055) / 1.055).powf(2.4)
        }
    };
    let luminance = 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
    if luminance <= 0.3 {
        return line;
    }
    let darker = |channel: u8| (f64::from(channel) * 0.7).round() as u8;
    RGBColor(darker(r), darker(g), darker(b))
}

/// The colours of a figure's series, in order: table colours for known names, palette
/// colours for the others, no two alike.
pub fn figure_colours<'name>(names: impl IntoIterator<Item = &'name str>) -> Vec<RGBColor> {
    let names: Vec<&str> = names.into_iter().collect();
    let mut colours: Vec<Option<RGBColor>> = names.iter().map(|name| table_colour(name)).collect();
    for index in 0..names.len() {
        if colours[index].is_some() {
            continue;
        }
        let taken: Vec<RGBColor> = colours.iter().flatten().copied().collect();
        let start = stable_hash(names[index]) as usize % PALETTE.len();
        let free = (0..PALETTE.len())
            .map(|step| PALETTE[(start + step) % PALETTE.len()])
            .find(|candidate| taken.iter().all(|used| distance(*used, *candidate) > CLOSE))
            // More series than the palette can separate: at least not the same colour.
            .or_else(|| {
                PALETTE
                    .iter()
                    .copied()
                    .find(|candidate| !taken.contains(candidate))
            })
            .unwrap_or(PALETTE[start]);
        colours[index] = Some(free);
    }
    colours.into_iter().flatten().collect()
}

/// The fixed colour of an execution mode, kernel or yardstick.
pub fn table_colour(name: &str) -> Option<RGBColor> {
    MODE_COLOURS
        .iter()
        .chain(&CPU_KERNEL_COLOURS)
        .chain(&GPU_KERNEL_COLOURS)
        .chain(&REDUCTION_COLOURS)
        .chain(&REFERENCE_COLOURS)
        .chain(&HISTOGRAM_COLOURS)
        .chain(&TRANSPOSE_COLOURS)
        .chain(&BRANCH_COLOURS)
        .find(|(known, _)| *known == name)
        .map(|&(_, colour)| colour)
}

/// Twenty colours that read well on white and apart from each other.
pub const PALETTE: [RGBColor; 20] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x7f, 0x7f, 0x7f),
    RGBColor(0xbc, 0xbd, 0x22),
    RGBColor(0x17, 0xbe, 0xcf),
    RGBColor(0x39, 0x3b, 0x79),
    RGBColor(0x63, 0x79, 0x39),
    RGBColor(0x8c, 0x6d, 0x31),
    RGBColor(0x84, 0x3c, 0x39),
    RGBColor(0x7b, 0x41, 0x73),
    RGBColor(0x00, 0x00, 0x00),
    RGBColor(0xe6, 0x55, 0x0d),
    RGBColor(0x31, 0xa3, 0x54),
    RGBColor(0x75, 0x6b, 0xb1),
    RGBColor(0xfd, 0x8d, 0x3c),
];

/// Colours closer than this (Euclidean distance in RGB, 0…441) are too alike for two
/// lines of one figure.
const CLOSE: f64 = 110.0;

fn distance(first: RGBColor, second: RGBColor) -> f64 {
    let RGBColor(r1, g1, b1) = first;
    let RGBColor(r2, g2, b2) = second;
    let square = |a: u8, b: u8| (f64::from(a) - f64::from(b)).powi(2);
    (square(r1, r2) + square(g1, g2) + square(b1, b2)).sqrt()
}

/// FNV-1a: the same on every platform and in every Rust version, unlike the standard
/// library's hasher.
fn stable_hash(name: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in name.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The colour of a series called `name` in a figure of its own.
    fn colour_for(name: &str) -> RGBColor {
        figure_colours([name])[0]
    }

    /// The series that share a figure (the modes and the PyTorch yardsticks; the CPU
    /// kernels; the GPU kernels; the reductions) never share a colour, and no name appears
    /// in two tables.
    #[test]
    fn every_mode_and_kernel_has_its_own_colour() {
        let modes_and_references: Vec<(&str, RGBColor)> = MODE_COLOURS
            .iter()
            .chain(&REFERENCE_COLOURS)
            .copied()
            .collect();
        let figures: [&[(&str, RGBColor)]; 7] = [
            &modes_and_references,
            &CPU_KERNEL_COLOURS,
            &GPU_KERNEL_COLOURS,
            &REDUCTION_COLOURS,
            &HISTOGRAM_COLOURS,
            &TRANSPOSE_COLOURS,
            &BRANCH_COLOURS,
        ];
        // The peak under its CSV name and under its label is one line: one colour.
        let same_line = |a: &str, b: &str| {
            let pair = [a, b];
            pair.contains(&"measured fp32 peak")
                && pair.contains(&"fp32 peak (peak_fma, measured once)")
        };
        for figure in figures {
            for (index, (name, colour)) in figure.iter().enumerate() {
                for (other_name, other_colour) in &figure[index + 1..] {
                    if !same_line(name, other_name) {
                        assert_ne!(colour, other_colour, "{name} and {other_name}");
                    }
                }
            }
        }
        let mut names: Vec<&str> = figures
            .iter()
            .flat_map(|figure| figure.iter().map(|(name, _)| *name))
            .collect();
        let count = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), count, "a name appears in two tables");
    }

    #[test]
    fn light_colours_are_darkened_for_text() {
        let navy = RGBColor(0x39, 0x3b, 0x79);
        assert_eq!(text_colour(navy), navy);
        let RGBColor(r, g, b) = text_colour(RGBColor(0xbc, 0xbd, 0x22));
        assert!(r < 0xbc && g < 0xbd && b < 0x22, "{r} {g} {b}");
    }

    #[test]
    fn a_mode_has_the_same_colour_in_every_figure() {
        let alone = colour_for("GraphCompiled");
        assert_eq!(alone, RGBColor(0xff, 0x7f, 0x0e));
        let with_others = figure_colours(["Cpu", "Immediate", "GraphCompiled"]);
        assert_eq!(with_others[2], alone);
        let names = ["Cpu", "GraphCompiled"];
        assert_eq!(figure_colours(names), figure_colours(names));
    }

    #[test]
    fn other_names_keep_their_colour_unless_it_would_clash() {
        let unknown = "register-blocked 256×128×8/16×8";
        assert_eq!(colour_for(unknown), colour_for(unknown));
        assert_eq!(
            figure_colours(["a series", unknown])[1],
            colour_for(unknown)
        );
        // Two names whose hashes land on close colours (they did, in the memory chapter's
        // allocation figure) still get colours far apart.
        let names = [
            "new Vec for every row",
            "one Vec, reused",
            "array on the stack",
            "new Box<[f32; N]> for every row",
        ];
        let colours = figure_colours(names);
        for (index, colour) in colours.iter().enumerate() {
            for other in &colours[index + 1..] {
                assert!(distance(*colour, *other) > CLOSE, "{colours:?}");
            }
        }
    }

    #[test]
    fn more_series_than_the_palette_still_differ() {
        let names: Vec<String> = (0..25).map(|index| format!("series {index}")).collect();
        let colours = figure_colours(names.iter().map(String::as_str));
        let mut unique = colours.clone();
        unique.sort_by_key(|RGBColor(r, g, b)| (*r, *g, *b));
        unique.dedup();
        assert_eq!(colours.len(), 25);
        assert!(unique.len() >= PALETTE.len(), "{unique:?}");
    }
}
