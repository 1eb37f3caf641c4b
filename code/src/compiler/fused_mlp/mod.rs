//! The fully fused MLP pass: recognise the chain of row-wise operators that produces the
//! graph's result, and decide whether to run it as one kernel.
//!
//! Every operator of the standard workload treats the rows of its input independently:
//! row r of `x · W + b`, of `relu(x)` and of a row-wise softmax depends on row r of `x` and
//! on nothing else of it. A chain of such operators can therefore run as one kernel in
//! which a workgroup owns a block of rows from the first layer to the last
//! (`gpu::fused_mlp`). This pass finds the chain, describes it as a
//! [`FusedChainShape`], lays out a workgroup that fits the device, and asks the
//! [`cost`] model whether the one kernel beats one kernel per layer. The result is a
//! [`FusedMlpPlan`], which prints what was fused and why.
//!
//! No operator of the graph combines two computed tensors (a linear layer reads one
//! computed input and two constants), so exactly one path leads from the input to the
//! result. Nodes off that path compute tensors nothing reads on the way to the result; the
//! fused kernel leaves them out, and the plan says so.

pub mod cost;

use std::fmt;

use crate::gpu::fused_mlp::{FusedChainShape, FusedLayerShape, FusedMlpConfig};
use crate::gpu::register_blocked_linear::KernelLimits;
use crate::graph::{Operator, TensorId, ValidGraph};

pub use cost::{FusedEstimate, FusionCostModel, LARGE_GPU, SOFTWARE_RASTERISER};

// ANCHOR: fusion_request
/// Whether the compiled mode runs the fully fused kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum FusionChoice {
    /// When the chain fits the device and the cost model expects it to be faster.
    #[default]
    WhenCheaper,
    /// Whenever the chain fits the device (for tests and benchmarks); an error otherwise.
    Always,
    /// Never: one kernel per layer.
    Never,
}

/// What the pass is asked: the choice, and optionally a workgroup layout to use instead
/// of the cost model's (for benchmarks that tune it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct FusionRequest {
    pub choice: FusionChoice,
    pub rows_per_workgroup: Option<u32>,
    pub rows_per_invocation: Option<u32>,
    pub steps_in_flight: Option<u32>,
    /// Split the inner dimension this many ways (see `FusedMlpConfig::inner_slices`).
    pub inner_slices: Option<u32>,
}

impl FusionRequest {
    pub fn new(choice: FusionChoice) -> FusionRequest {
        FusionRequest {
            choice,
            ..FusionRequest::default()
        }
    }
}
// ANCHOR_END: fusion_request

/// The chain that produces a graph's result, as the fused kernel runs it.
#[derive(Debug, Clone, PartialEq)]
pub struct FusedChain {
    pub shape: FusedChainShape,
    /// The weights and the bias of every layer, in order.
    pub parameters: Vec<(TensorId, TensorId)>,
    /// Nodes of the chain, from the first after the input to the result.
    pub nodes: Vec<TensorId>,
    /// Computed nodes off the chain: nothing on the way to the result reads them.
    pub unused_nodes: usize,
}

// ANCHOR: find_chain
/// The chain of row-wise operators from the graph's input to its result, or why there is
/// none the fused kernel can run.
pub fn find_chain(graph: &ValidGraph) -> Result<FusedChain, String> {
    let nodes = &graph.graph().nodes;
    // Walk back from the result along the one computed input of every node.
    let mut path = Vec::new();
    let mut id = graph.result();
    loop {
        match &nodes[id.0].operator {
            Operator::Input { .. } => break,
            Operator::Constant(_) => return Err("the result is a constant".to_string()),
            _ => {
                path.push(id);
                id = nodes[id.0].inputs[0];
            }
        }
    }
    path.reverse();
    let (rows, input_columns) = graph.shape(graph.input());
    let mut shape = FusedChainShape {
        rows,
        input_columns,
        input_relu: false,
        layers: Vec::new(),
        softmax: false,
    };
    let mut parameters = Vec::new();
    for &id in &path {
        let node = &nodes[id.0];
        let (relu, softmax) = match node.operator {
            Operator::Relu | Operator::ReluInPlace => (true, false),
            Operator::Softmax => (false, true),
            Operator::Linear | Operator::LinearRelu | Operator::LinearReluSoftmax => {
                let (inner, columns) = graph.shape(node.inputs[1]);
                shape.layers.push(FusedLayerShape {
                    inner,
                    columns,
                    relu: false,
                });
                parameters.push((node.inputs[1], node.inputs[2]));
                let relu = node.operator != Operator::Linear;
                (relu, node.operator == Operator::LinearReluSoftmax)
            }
            ref other => {
                return Err(format!(
                    "node {} ({}) is not an operator the fused kernel runs",
                    id.0,
                    other.name()
                ));
            }
        };
        // A ReLU belongs to the layer before it, or to the input if none came yet.
        if relu {
            match shape.layers.last_mut() {
                Some(layer) => layer.relu = true,
                None => shape.input_relu = true,
            }
        }
        shape.softmax |= softmax;
    }
    if shape.layers.is_empty() {
        return Err("the chain has no linear layer: there is nothing to fuse".to_string());
    }
    let computed = nodes
        .iter()
        .filter(|node| {
            !(matches!(node.operator, Operator::Input { .. } | Operator::Output)
                || node.operator.is_constant())
        })
        .count();
    Ok(FusedChain {
        shape,
        parameters,
        unused_nodes: computed - path.len(),
        nodes: path,
    })
}
// ANCHOR_END: find_chain

/// What the plan decided.
#[derive(Debug, Clone, PartialEq)]
pub enum FusionDecision {
    /// One dispatch of the fused kernel with this layout.
    Fused {
        config: FusedMlpConfig,
        estimate: FusedEstimate,
    },
    /// One kernel per layer, for this reason.
    PerLayer { reason: String },
}

/// The pass's result: the chain (if there is one), the decision and the numbers behind it.
#[derive(Debug, Clone, PartialEq)]
pub struct FusedMlpPlan {
    pub chain: Result<FusedChain, String>,
    pub decision: FusionDecision,
    /// The best layout that fits the device, with its estimate, whatever the decision.
    pub best_layout: Option<(FusedMlpConfig, FusedEstimate)>,
    /// The per-layer estimate, when there is a chain.
    pub per_layer_seconds: Option<f64>,
    pub limits: KernelLimits,
    pub model: FusionCostModel,
    pub choice: FusionChoice,
}

impl FusedMlpPlan {
    pub fn is_fused(&self) -> bool {
        matches!(self.decision, FusionDecision::Fused { .. })
    }

    /// The layout, when the plan fuses.
    pub fn config(&self) -> Option<FusedMlpConfig> {
        match self.decision {
            FusionDecision::Fused { config, .. } => Some(config),
            FusionDecision::PerLayer { .. } => None,
        }
    }
}

/// The rows per workgroup the pass tries: powers of two up to 64, and not beyond the rows.
fn row_candidates(rows: usize) -> impl Iterator<Item = u32> {
    let most = (rows.next_power_of_two() as u32).min(64);
    (0..7)
        .map(|power| 1u32 << power)
        .filter(move |&r| r <= most)
}

/// The most rows per workgroup the planner tries when the layout splits the inner dimension.
const MOST_ROWS_WHEN_SPLIT: u32 = 4;

// ANCHOR: plan_fused_mlp
/// Plans the graph: find the chain, lay out the fastest workgroup that fits `limits`
/// according to `model`, and decide as `request` asks.
pub fn plan_fused_mlp(
    graph: &ValidGraph,
    limits: &KernelLimits,
    model: &FusionCostModel,
    request: FusionRequest,
) -> FusedMlpPlan {
    let chain = find_chain(graph);
    let mut plan = FusedMlpPlan {
        chain: chain.clone(),
        decision: FusionDecision::PerLayer {
            reason: String::new(),
        },
        best_layout: None,
        per_layer_seconds: None,
        limits: *limits,
        model: *model,
        choice: request.choice,
    };
    let chain = match chain {
        Ok(chain) => chain,
        Err(reason) => {
            plan.decision = FusionDecision::PerLayer { reason };
            return plan;
        }
    };
    let shape = &chain.shape;
    plan.per_layer_seconds = Some(model.per_layer(shape));
    // Every layout that fits, with its estimate; the fastest wins, and between equals the
    // one with fewer workgroups (less traffic for the same time).
    let layout = |rows: u32| {
        let mut config = FusedMlpConfig::for_rows(shape, rows);
        if let Some(inner_slices) = request.inner_slices {
            config = config.with_inner_slices(inner_slices);
        }
        if let Some(rows_per_invocation) = request.rows_per_invocation {
            config.rows_per_invocation = rows_per_invocation;
            // Fewer rows per invocation than the workgroup holds means row groups, which a
            // split inner dimension cannot have: a requested row split turns the default
            // split off unless the request asks for both.
            if request.inner_slices.is_none() && rows_per_invocation < config.rows_per_workgroup {
                config.inner_slices = 1;
            }
        }
        if let Some(steps_in_flight) = request.steps_in_flight {
            config.steps_in_flight = steps_in_flight;
        }
        config
    };
    let candidates: Vec<u32> = match request.rows_per_workgroup {
        Some(rows) => vec![rows],
        // With the inner dimension split, the layouts measured on an H100 were fastest at
        // two to four rows per workgroup (figures/data/h100-2026-11-24/fused-mlp/); the
        // model, fitted before the split existed, would pick more rows than were measured.
        None => row_candidates(shape.rows)
            .filter(|&rows| rows <= MOST_ROWS_WHEN_SPLIT || layout(rows).inner_slices <= 1)
            .collect(),
    };
    let mut refusals = Vec::new();
    for rows in candidates {
        let config = layout(rows);
        if let Err(error) = config.check(shape, limits) {
            refusals.push(error.to_string());
            continue;
        }
        let estimate = model.fused(shape, &config);
        let better = plan.best_layout.is_none_or(|(best, best_estimate)| {
            (estimate.seconds, config.workgroups(shape))
                < (best_estimate.seconds, best.workgroups(shape))
        });
        if better {
            plan.best_layout = Some((config, estimate));
        }
    }
    plan.decision = match (request.choice, plan.best_layout) {
        (FusionChoice::Never, _) => FusionDecision::PerLayer {
            reason: "fusion was turned off".to_string(),
        },
        (_, None) => FusionDecision::PerLayer {
            reason: format!(
                "no layout fits the device: {}",
                refusals.last().cloned().unwrap_or_default()
            ),
        },
        (FusionChoice::Always, Some((config, estimate))) => {
            FusionDecision::Fused { config, estimate }
        }
        (FusionChoice::WhenCheaper, Some((config, estimate))) => {
            let per_layer = model.per_layer(shape);
            if estimate.seconds < per_layer {
                FusionDecision::Fused { config, estimate }
            } else {
                FusionDecision::PerLayer {
                    reason: format!(
                        "the model expects per-layer kernels to be faster ({} against {} fused)",
                        milliseconds(per_layer),
                        milliseconds(estimate.seconds),
                    ),
                }
            }
        }
    };
    plan
}
// ANCHOR_END: plan_fused_mlp

fn milliseconds(seconds: f64) -> String {
    format!("{:.3} ms", seconds * 1e3)
}

fn bytes(count: f64) -> String {
    if count >= 1024.0 * 1024.0 * 1024.0 {
        format!("{:.1} GiB", count / (1024.0 * 1024.0 * 1024.0))
    } else if count >= 1024.0 * 1024.0 {
        format!("{:.1} MiB", count / (1024.0 * 1024.0))
    } else {
        format!("{:.1} KiB", count / 1024.0)
    }
}

// ANCHOR: plan_display
impl fmt::Display for FusedMlpPlan {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let chain = match &self.chain {
            Ok(chain) => chain,
            Err(reason) => {
                return write!(formatter, "not fused: {reason}");
            }
        };
        let shape = &chain.shape;
        let relus = shape.layers.iter().filter(|layer| layer.relu).count();
        writeln!(
            formatter,
            "chain: {} rows × {} columns in, {}{} linear layers (widest {} columns), {} followed \
             by a ReLU{}; every operator treats rows independently",
            shape.rows,
            shape.input_columns,
            if shape.input_relu { "a ReLU, " } else { "" },
            shape.layers.len(),
            shape.widest_columns(),
            relus,
            if shape.softmax {
                ", then a row-wise softmax"
            } else {
                ""
            },
        )?;
        if chain.unused_nodes > 0 {
            writeln!(
                formatter,
                "left out: nodes off the chain, which nothing on the way to the result reads: {}",
                chain.unused_nodes
            )?;
        }
        writeln!(
            formatter,
            "device: {} bytes of workgroup memory, {} invocations per workgroup",
            self.limits.max_workgroup_storage_bytes,
            self.limits
                .max_invocations_per_workgroup
                .min(self.limits.max_workgroup_size_x)
        )?;
        if let Some((config, estimate)) = &self.best_layout {
            writeln!(
                formatter,
                "layout: {config}; workgroups {}, workgroup memory {} bytes",
                config.workgroups(shape),
                config.workgroup_memory_bytes(shape)
            )?;
            match config.weight_stream(shape) {
                Ok(stream) => writeln!(
                    formatter,
                    "weights: {} steps per invocation and layer, the next layer's loaded before \
                     this layer's are used (across the barrier between them)",
                    stream.slice_steps
                )?,
                Err(reason) => writeln!(
                    formatter,
                    "weights: loaded chunk by chunk, each when it is needed ({reason})"
                )?,
            }
            writeln!(
                formatter,
                "model of {}: fused {} (arithmetic {}, loading {} of weights {}), per layer {}",
                self.model.name,
                milliseconds(estimate.seconds),
                milliseconds(estimate.compute_seconds),
                bytes(estimate.loaded_bytes),
                milliseconds(estimate.load_seconds),
                milliseconds(self.per_layer_seconds.unwrap_or(f64::NAN)),
            )?;
        }
        match &self.decision {
            FusionDecision::Fused { config, .. } => write!(
                formatter,
                "decision: fused, one dispatch ({} workgroups, rows per workgroup {}) instead of one per \
                 layer",
                config.workgroups(shape),
                config.rows_per_workgroup
            ),
            FusionDecision::PerLayer { reason } => {
                write!(
                    formatter,
                    "decision: one kernel per layer, because {reason}"
                )
            }
        }
    }
}
// ANCHOR_END: plan_display

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{ChainBuilder, GraphBuilder, random_mlp};
    use crate::tensor::Tensor2d;

    const LAVAPIPE: KernelLimits = KernelLimits {
        max_invocations_per_workgroup: 1024,
        max_workgroup_size_x: 1024,
        max_workgroup_storage_bytes: 32 * 1024,
    };

    #[test]
    fn the_standard_workload_is_one_chain() {
        let workload = random_mlp(16, 5, 3).unwrap();
        let chain = find_chain(&workload.graph).unwrap();
        assert_eq!(chain.shape.layers.len(), 5);
        assert!(chain.shape.softmax && !chain.shape.input_relu);
        // The last layer is always followed by a ReLU.
        assert!(chain.shape.layers[4].relu);
        assert_eq!(chain.unused_nodes, 0);
        let relus = workload.layers().iter().filter(|layer| layer.relu).count();
        let fused_relus = chain.shape.layers.iter().filter(|l| l.relu).count();
        // `layers` counts the ReLU before the softmax as the last layer's, as the chain does.
        assert_eq!(fused_relus, relus);
    }

    #[test]
    fn a_relu_before_the_first_layer_belongs_to_the_input() {
        let graph = ChainBuilder::input(2, 3)
            .relu()
            .linear(Tensor2d::zeros(3, 4), Tensor2d::zeros(1, 4))
            .output()
            .unwrap();
        let chain = find_chain(&graph).unwrap();
        assert!(chain.shape.input_relu);
        assert!(!chain.shape.layers[0].relu && !chain.shape.softmax);
    }

    #[test]
    fn branches_off_the_chain_are_left_out_and_counted() {
        let mut builder = GraphBuilder::new();
        let input = builder.input(4, 4);
        let first = builder.linear(input, Tensor2d::zeros(4, 8), Tensor2d::zeros(1, 8));
        // A second reader of `first` that nothing uses.
        let _unused = builder.relu(first);
        let second = builder.linear(first, Tensor2d::zeros(8, 2), Tensor2d::zeros(1, 2));
        let result = builder.softmax(second);
        builder.output(result);
        let graph = builder.build().unwrap();
        let chain = find_chain(&graph).unwrap();
        assert_eq!(chain.unused_nodes, 1);
        assert_eq!(chain.shape.layers.len(), 2);
        assert!(
            !chain.shape.layers[0].relu,
            "the unused ReLU is not on the chain"
        );
    }

    #[test]
    fn a_chain_without_layers_is_not_fused() {
        let graph = ChainBuilder::input(2, 3).relu().softmax().output().unwrap();
        let plan = plan_fused_mlp(&graph, &LAVAPIPE, &LARGE_GPU, FusionRequest::default());
        assert!(!plan.is_fused());
        assert!(plan.to_string().contains("no linear layer"), "{plan}");
    }

    #[test]
    fn the_plan_fuses_small_networks_and_explains_wide_ones() {
        let plan = |size: usize, limits: &KernelLimits| {
            let workload = random_mlp(size, 4, 1).unwrap();
            plan_fused_mlp(
                &workload.graph,
                limits,
                &LARGE_GPU,
                FusionRequest::default(),
            )
        };
        let small = plan(16, &LAVAPIPE);
        assert!(small.is_fused(), "{small}");
        assert!(small.to_string().contains("decision: fused"), "{small}");
        // Every workgroup would stream 16 MiB of weights, hundreds of times over.
        let wide = plan(1024, &LAVAPIPE);
        assert!(!wide.is_fused(), "{wide}");
        assert!(
            wide.to_string().contains("per-layer kernels to be faster"),
            "{wide}"
        );
        // Two blocks of one row of 1024 floats are 8 KiB: more than this device has.
        let tiny_device = KernelLimits {
            max_workgroup_storage_bytes: 8 * 1024,
            ..LAVAPIPE
        };
        let too_wide = plan(1024, &tiny_device);
        assert!(!too_wide.is_fused(), "{too_wide}");
        assert!(
            too_wide.to_string().contains("no layout fits"),
            "{too_wide}"
        );
        let never = plan_fused_mlp(
            &random_mlp(16, 4, 1).unwrap().graph,
            &LAVAPIPE,
            &LARGE_GPU,
            FusionRequest::new(FusionChoice::Never),
        );
        assert!(!never.is_fused());
        assert!(never.to_string().contains("turned off"), "{never}");
    }

    #[test]
    fn a_requested_layout_is_used_or_refused() {
        let workload = random_mlp(64, 2, 1).unwrap();
        let request = FusionRequest {
            choice: FusionChoice::Always,
            rows_per_workgroup: Some(16),
            rows_per_invocation: Some(4),
            steps_in_flight: Some(2),
            inner_slices: None,
        };
        let plan = plan_fused_mlp(&workload.graph, &LAVAPIPE, &LARGE_GPU, request);
        let config = plan.config().unwrap();
        assert_eq!(
            (config.rows_per_workgroup, config.rows_per_invocation),
            (16, 4)
        );
        let impossible = FusionRequest {
            rows_per_workgroup: Some(3),
            ..request
        };
        let plan = plan_fused_mlp(&workload.graph, &LAVAPIPE, &LARGE_GPU, impossible);
        assert!(!plan.is_fused());
        assert!(plan.to_string().contains("powers of two"), "{plan}");
    }
}
