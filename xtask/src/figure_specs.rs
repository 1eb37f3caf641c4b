//! Which figures the book draws from which CSV file, and what each one shows.
//!
//! A figure makes one point, so it shows at most [`MAX_SERIES_PER_PANEL`] lines in a panel,
//! and the lines the text discusses stand out. The table in [`figure_specs`] says, for every
//! figure that needs more than "every series of the file, all alike":
//!
//! - its id (the SVG's name) and the CSV file it is drawn from; several figures may be
//!   drawn from one file (the ladder and the steps both select from `modes-by-size-*`);
//! - its panels (small multiples on shared axes), each with its lines;
//! - the role of each line: **emphasised** (its own colour, thick), **context** (thin and
//!   grey: there for comparison), or **reference** (dashed: a measured peak, PyTorch,
//!   cuBLAS);
//! - optionally a title, a subtitle, notes for the caption, and vertical markers (cache
//!   sizes) that apply to one machine only.
//!
//! A CSV file that no entry names is drawn as one panel of all its series, every one
//! emphasised; it must then have six series or fewer.

mod cpu_anchors;
mod detector;
mod fused_mlp;
mod hot_loop;
mod inference_batch;
mod inference_quantised;
mod inference_sparse;
mod inference_steps;
mod model_swap;
mod multi_device;
mod numbers;
mod parallel;
mod parallel_data;
mod parallel_graphs;
mod parallel_irregular;
mod path_tracer;
mod point_cloud;
mod profiling;
mod realtime;
mod rust_basics;
mod tensor_cores;

/// The most lines one panel of a figure may draw.
pub const MAX_SERIES_PER_PANEL: usize = 6;

/// How a line is drawn, and why it is there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A series the text discusses: its own colour, a thick line, labelled in colour.
    Emphasised,
    /// A series shown for comparison: thin, grey, labelled in grey.
    Context,
    /// A yardstick from outside the comparison (a measured peak, PyTorch, cuBLAS): dashed.
    Reference,
}

/// Where the points of a line come from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// The series of this name in the figure's CSV file.
    Series(String),
    /// At every x, the highest y among the file's series whose names start with this
    /// prefix: the best member of a family of kernels (the y axis is a throughput).
    BestOf(String),
    /// The `CSV,sgemm,…` lines of the PyTorch yardstick's raw output, a file relative to
    /// `figures/data/`: cuBLAS's fp32 matrix multiplication, in GFLOP/s. Only its sizes
    /// within the x range of the figure's own data are drawn.
    SgemmYardstick(String),
}

/// One line of a panel.
#[derive(Debug, Clone, PartialEq)]
pub struct LineSpec {
    pub source: Source,
    /// The direct label; the series name when `None`.
    pub label: Option<String>,
    pub role: Role,
    /// For a context line: the label of the emphasised line of the same panel it pairs
    /// with (the "before" of an "after"). It is then drawn in a light tint of that line's
    /// colour instead of grey, so that the eye pairs the two.
    pub tint_of: Option<String>,
}

/// One panel of a figure.
#[derive(Debug, Clone, PartialEq)]
pub struct PanelSpec {
    pub title: Option<String>,
    pub lines: Vec<LineSpec>,
}

/// A vertical line at `x` with a short label, such as a cache size on a byte axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Marker {
    pub x: f64,
    pub label: String,
}

/// Everything that decides how one figure looks, apart from its data.
#[derive(Debug, Clone, PartialEq)]
pub struct FigureSpec {
    /// The figure's id: `figures/<id>.svg`.
    pub id: String,
    /// The CSV file's id: `figures/data/<source>.csv`.
    pub source: String,
    /// The file may not exist yet (its sweep is new): then the figure is skipped, not an
    /// error.
    pub optional: bool,
    /// Replaces the CSV file's title.
    pub title: Option<String>,
    /// A line under the title, saying how to read the figure.
    pub subtitle: Option<String>,
    /// Empty: one panel with every series of the file, all emphasised.
    pub panels: Vec<PanelSpec>,
    /// Panels per row.
    pub columns: usize,
    /// Sentences added to the caption after the hardware.
    pub notes: Vec<String>,
    /// Vertical markers, drawn only when the file's hardware line contains
    /// `markers_hardware` (cache sizes belong to one machine).
    pub markers: Vec<Marker>,
    pub markers_hardware: String,
    /// Write a time axis in µs even where some values pass 1 ms (the text of the figure
    /// speaks in µs). Without it a ms axis turns to µs only when every value is below 1 ms.
    pub microseconds: bool,
}

impl FigureSpec {
    /// A figure `id` drawn from `figures/data/<source>.csv`, one panel of every series.
    pub fn new(id: &str, source: &str) -> FigureSpec {
        FigureSpec {
            id: id.to_string(),
            source: source.to_string(),
            optional: false,
            title: None,
            subtitle: None,
            panels: Vec::new(),
            columns: 1,
            notes: Vec::new(),
            markers: Vec::new(),
            markers_hardware: String::new(),
            microseconds: false,
        }
    }

    /// The figure drawn for a CSV file that no entry of the table names.
    pub fn every_series(id: &str) -> FigureSpec {
        FigureSpec::new(id, id)
    }

    fn title(mut self, title: &str) -> FigureSpec {
        self.title = Some(title.to_string());
        self
    }

    fn subtitle(mut self, subtitle: &str) -> FigureSpec {
        self.subtitle = Some(subtitle.to_string());
        self
    }

    fn panel(mut self, title: Option<&str>, lines: Vec<LineSpec>) -> FigureSpec {
        self.panels.push(PanelSpec {
            title: title.map(str::to_string),
            lines,
        });
        self
    }

    fn note(mut self, note: &str) -> FigureSpec {
        self.notes.push(note.to_string());
        self
    }

    fn optional(mut self) -> FigureSpec {
        self.optional = true;
        self
    }

    fn microseconds(mut self) -> FigureSpec {
        self.microseconds = true;
        self
    }

    fn markers(mut self, hardware: &str, markers: &[(f64, &str)]) -> FigureSpec {
        self.markers_hardware = hardware.to_string();
        self.markers = markers
            .iter()
            .map(|(x, label)| Marker {
                x: *x,
                label: label.to_string(),
            })
            .collect();
        self
    }
}

fn line(role: Role, name: &str) -> LineSpec {
    LineSpec {
        source: Source::Series(name.to_string()),
        label: None,
        role,
        tint_of: None,
    }
}

fn emphasised(name: &str) -> LineSpec {
    line(Role::Emphasised, name)
}

fn context(name: &str) -> LineSpec {
    line(Role::Context, name)
}

fn reference(name: &str) -> LineSpec {
    line(Role::Reference, name)
}

/// A context line that pairs with the emphasised line `after`: the same series before a
/// step of the ladder.
fn before(name: &str, after: &str) -> LineSpec {
    LineSpec {
        tint_of: Some(after.to_string()),
        ..context(name)
    }
}

fn labelled(mut spec: LineSpec, label: &str) -> LineSpec {
    spec.label = Some(label.to_string());
    spec
}

/// The PyTorch series of the execution-mode files, measured on the H100 only.
fn pytorch(on_gpu: bool) -> Vec<LineSpec> {
    if on_gpu {
        vec![reference("PyTorch eager"), reference("PyTorch CUDA graph")]
    } else {
        Vec::new()
    }
}

/// The cache sizes of the 2-core Xeon the memory figures were measured on (48 KiB of L1
/// data cache and 2 MiB of L2 per core), and the start of its hardware line.
const XEON: &str = "Intel(R) Xeon(R) Processor (x86_64, 2 cores";
const XEON_CACHES: [(f64, &str); 2] = [(48.0 * 1024.0, "L1d 48 KiB"), (2097152.0, "L2 2 MiB")];

/// cuBLAS's SGEMM, measured by the PyTorch anchor on the H100 of the book's GPU figures.
const H100_YARDSTICK: &str = "h100-2026-11-24/pytorch/pytorch-sgemm.csv";

// ANCHOR: figure_specs
/// Every figure drawn differently from "all series of its file": see the module
/// documentation. `-gpu` files come from an NVIDIA H100, `-software` files from lavapipe.
pub fn figure_specs() -> Vec<FigureSpec> {
    let mut specs = Vec::new();
    for hardware in ["gpu", "software"] {
        let on_gpu = hardware == "gpu";
        let yardsticks = if on_gpu {
            "Dashed: PyTorch on the same GPU, eager and replaying a CUDA graph."
        } else {
            "One representative mode per rung, from the CPU graph runner to the compiled graph."
        };
        for (sweep, by) in [
            ("size", "by size (depth 64)"),
            ("depth", "by depth (size 256)"),
        ] {
            let source = format!("modes-by-{sweep}-{hardware}");
            // The ladder: one representative per rung, and PyTorch beside it.
            let mut rungs = vec![
                emphasised("CpuGraph"),
                emphasised("ImmediateCached"),
                emphasised("GraphCachedFused"),
                emphasised("GraphCompiled"),
            ];
            rungs.extend(pytorch(on_gpu));
            specs.push(
                FigureSpec::new(&format!("modes-ladder-by-{sweep}-{hardware}"), &source)
                    .title(&format!("The ladder of execution modes, {by}"))
                    .subtitle(yardsticks)
                    .panel(None, rungs),
            );
        }
        // What each step of the ladder changes, at depth 64 by size.
        specs.push(
            FigureSpec::new(
                &format!("modes-steps-{hardware}"),
                &format!("modes-by-size-{hardware}"),
            )
            .title("What caching, fusion and looping each change, by size (depth 64)")
            .subtitle(
                "In each panel, thin and light: a mode before the step; thick, in the same \
                 hue: the same mode after it.",
            )
            .panel(
                Some("Caching: compiled pipelines reused from run to run"),
                vec![
                    before("Immediate", "ImmediateCached"),
                    emphasised("ImmediateCached"),
                    before("Graph", "GraphCached"),
                    emphasised("GraphCached"),
                ],
            )
            .panel(
                Some("Fusion: the fused graph, fewer and larger kernels"),
                vec![
                    before("GraphCached", "GraphCachedFused"),
                    emphasised("GraphCachedFused"),
                ],
            )
            .panel(
                Some("Looping: iterations recorded back to back into one submission"),
                vec![
                    before("GraphCached", "GraphLoopCached"),
                    emphasised("GraphLoopCached"),
                    before("GraphCachedFused", "GraphLoopCachedFused"),
                    emphasised("GraphLoopCachedFused"),
                ],
            ),
        );
        // GPU linear kernels: the best of each family against the peak.
        let id = format!("linear-kernels-{hardware}");
        let mut kernels = vec![
            emphasised("naive"),
            emphasised("tiled 16×16"),
            LineSpec {
                source: Source::BestOf("register-blocked".to_string()),
                label: Some("best register-blocked".to_string()),
                role: Role::Emphasised,
                tint_of: None,
            },
            context("chosen per shape"),
            labelled(
                reference("fp32 peak (peak_fma, measured once)"),
                "measured fp32 peak",
            ),
        ];
        if on_gpu {
            kernels.push(LineSpec {
                source: Source::SgemmYardstick(H100_YARDSTICK.to_string()),
                label: Some("cuBLAS (PyTorch)".to_string()),
                role: Role::Reference,
                tint_of: None,
            });
        }
        let mut linear = FigureSpec::new(&id, &id)
            .title("GPU linear kernels: the best of each family against the peak")
            .subtitle(
                "Best register-blocked: the fastest tile shape at each size. \
                 Grey: the kernel the chooser picks for the shape.",
            )
            .panel(None, kernels);
        if on_gpu {
            linear = linear.note(
                "cuBLAS: PyTorch's fp32 a @ b (TF32 off) on the same H100, \
                 from figures/data/h100-2026-11-24/pytorch/pytorch-sgemm.csv.",
            );
        }
        specs.push(linear);
        // Device-memory bandwidth: drawn once its sweep has written the file.
        let id = format!("gpu-copy-bandwidth-{hardware}");
        specs.push(FigureSpec::new(&id, &id).optional());
    }
    specs.push(
        FigureSpec::new("cpu-linear", "cpu-linear")
            .title("CPU linear layers on square matrices")
            .subtitle("Grey: the other variants, for comparison.")
            .panel(
                Some("The teaching variants, one core: the order of the loops"),
                vec![
                    emphasised("linear_naive"),
                    context("linear_local_accumulator"),
                    context("linear_transposed_weights"),
                    emphasised("linear_loop_order"),
                    context("linear_blocked"),
                ],
            )
            .panel(
                Some("The fast kernel against the matrixmultiply crate"),
                vec![
                    context("linear_loop_order"),
                    emphasised("linear_register_blocked"),
                    emphasised("linear_parallel"),
                    emphasised("matrixmultiply::sgemm"),
                ],
            ),
    );
    for id in ["memory-access-patterns", "memory-inlining"] {
        specs.push(FigureSpec::every_series(id).markers(XEON, &XEON_CACHES));
    }
    // The text of the H100 histogram speaks in µs, up to 1.3 ms.
    specs.push(FigureSpec::every_series("exercise-histogram-gpu").microseconds());
    // Each later part of the book keeps its figures in its own file.
    specs.extend(rust_basics::specs());
    specs.extend(parallel::specs());
    specs.extend(parallel_data::specs());
    specs.extend(parallel_irregular::specs());
    specs.extend(parallel_graphs::specs());
    specs.extend(realtime::specs());
    specs.extend(hot_loop::specs());
    specs.extend(numbers::specs());
    specs.extend(cpu_anchors::specs());
    specs.extend(fused_mlp::specs());
    specs.extend(inference_quantised::specs());
    specs.extend(inference_sparse::specs());
    specs.extend(tensor_cores::specs());
    specs.extend(inference_batch::specs());
    specs.extend(model_swap::specs());
    specs.extend(path_tracer::specs());
    specs.extend(point_cloud::specs());
    specs.extend(profiling::specs());
    specs.extend(detector::specs());
    specs.extend(inference_steps::specs());
    specs.extend(multi_device::specs());
    specs
}
// ANCHOR_END: figure_specs

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_spec_draws_more_than_six_lines_in_a_panel() {
        for spec in figure_specs() {
            for panel in &spec.panels {
                assert!(
                    panel.lines.len() <= MAX_SERIES_PER_PANEL,
                    "{} has a panel of {} lines",
                    spec.id,
                    panel.lines.len()
                );
            }
        }
    }

    #[test]
    fn ids_are_unique_and_every_agreed_id_is_there() {
        let specs = figure_specs();
        let mut ids: Vec<&str> = specs.iter().map(|spec| spec.id.as_str()).collect();
        for agreed in [
            "modes-ladder-by-size-gpu",
            "modes-ladder-by-size-software",
            "modes-ladder-by-depth-gpu",
            "modes-ladder-by-depth-software",
            "modes-steps-gpu",
            "modes-steps-software",
            "linear-kernels-gpu",
            "linear-kernels-software",
            "cpu-linear",
            "gpu-copy-bandwidth-gpu",
            "gpu-copy-bandwidth-software",
        ] {
            assert!(ids.contains(&agreed), "no spec for {agreed}");
        }
        let count = ids.len();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), count, "two specs share an id");
    }

    #[test]
    fn every_panel_emphasises_something_and_the_steps_pair_before_with_after() {
        for spec in figure_specs() {
            for panel in &spec.panels {
                assert!(
                    panel.lines.iter().any(|l| l.role == Role::Emphasised),
                    "{}: a panel with nothing emphasised",
                    spec.id
                );
            }
        }
        let steps = figure_specs()
            .into_iter()
            .find(|spec| spec.id == "modes-steps-gpu")
            .unwrap();
        assert_eq!(steps.panels.len(), 3);
        for panel in &steps.panels {
            let count = |role| panel.lines.iter().filter(|l| l.role == role).count();
            assert_eq!(count(Role::Context), count(Role::Emphasised));
            // Every "before" pairs with an "after" of its panel.
            for line in &panel.lines {
                if let Some(after) = &line.tint_of {
                    assert!(panel.lines.iter().any(|other| {
                        other.role == Role::Emphasised
                            && other.source == Source::Series(after.clone())
                    }));
                }
            }
        }
    }
}
