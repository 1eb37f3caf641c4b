//! The `sparsify` pass: a linear layer whose constant weights are mostly zeros becomes a
//! sparse layer (`SparseConstant` weights in CSR, read by a `LinearSparse` node).
//!
//! Why a threshold: a sparse layer multiplies only the non-zero weights, but pays for
//! every one of them with an index to read and a place to add into that depends on the
//! data, and it cannot keep a tile of outputs in registers the way the dense kernel does.
//! So it wins only when few enough weights are left, and the pass rewrites a layer only at
//! or below [`SPARSE_DENSITY_THRESHOLD`], the density measured as the crossover.

use crate::compiler::weight_rewrite::{Replacement, rewrite_linear_weights};
use crate::cpu::sparse::CsrMatrix;
use crate::graph::{GraphError, Operator, ValidGraph};

// ANCHOR: threshold
/// The largest fraction of non-zero weights at which the pass stores a layer sparse.
///
/// Measured with `cargo run --release -p galaxy --example sparse_threshold` (figure
/// `inference-sparsity-epyc`, 2026-11-24, median of 7): one linear layer and its ReLU, a
/// batch of 64 rows, run by the `CpuGraph` mode dense and sparse on the 2-core AMD EPYC.
/// At 3 % of the weights kept the sparse layer takes 0.90× the dense time at 256 × 256 and
/// 0.55× at 1024 × 1024; at 5 % it takes 1.10× and 1.55×. So the crossover lies between
/// 3 % and 5 %, and the pass stays on the side where sparse still wins. The crossover is
/// the machine's: on the 16-core Intel Xeon host of the NVIDIA H100 (`inference-sparsity-h100`)
/// sparse wins only at 1 % (0.91× and 0.71×; 1.08× and 1.01× at 2 %), because 16 cores speed
/// the dense kernel up more than the sparse one, whose blocks of sixteen rows give a batch
/// of 64 rows to at most four cores.
pub const SPARSE_DENSITY_THRESHOLD: f64 = 0.03;
// ANCHOR_END: threshold

// ANCHOR: sparsify
/// Rewrites every linear layer whose constant weights have at most `maximum_density`
/// non-zeros (a fraction of all weights) into a sparse layer. Pass
/// [`SPARSE_DENSITY_THRESHOLD`] unless a measurement on the machine says otherwise.
pub fn sparsify(graph: &ValidGraph, maximum_density: f64) -> Result<ValidGraph, GraphError> {
    rewrite_linear_weights(graph, |_, weights| {
        let non_zeros = weights.as_slice().iter().filter(|&&w| w != 0.0).count();
        let density = non_zeros as f64 / weights.len().max(1) as f64;
        if density > maximum_density {
            return Ok(None);
        }
        // A constant may hold NaN (validation checks shapes, not values), and CSR refuses
        // NaN, so such a layer simply stays dense.
        let Ok(sparse) = CsrMatrix::from_dense(weights, 0.0) else {
            return Ok(None);
        };
        Ok(Some(Replacement {
            weights: Operator::SparseConstant(sparse),
            layer: |relu| Operator::LinearSparse { relu },
        }))
    })
}
// ANCHOR_END: sparsify

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::sparse::random_sparse_dense;
    use crate::graph::ChainBuilder;
    use crate::tensor::Tensor2d;

    #[test]
    fn only_layers_at_or_below_the_density_become_sparse() {
        let graph = ChainBuilder::input(3, 40)
            .linear(random_sparse_dense(40, 30, 0.05, 1), Tensor2d::zeros(1, 30))
            .relu()
            .linear(random_sparse_dense(30, 20, 0.9, 2), Tensor2d::zeros(1, 20))
            .output()
            .unwrap();
        let sparse = sparsify(&graph, 0.2).unwrap();
        let kinds: Vec<&'static str> = sparse
            .graph()
            .nodes
            .iter()
            .map(|node| node.operator.name())
            .filter(|name| name.starts_with("linear"))
            .collect();
        assert_eq!(kinds, ["linear_sparse", "linear"]);
        // Nothing is sparse enough at a threshold of 0.
        assert_eq!(sparsify(&graph, 0.0).unwrap(), graph);
    }
}
