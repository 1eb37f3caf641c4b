//! The register-blocked linear layer on every core: the output rows are cut into groups
//! and rayon's thread pool computes the groups at the same time.
//!
//! Rows are the natural unit to split: each output row depends on one input row and on
//! all the weights, so the groups share only data that is read (the input and the packed
//! weights) and write disjoint parts of the output. No locks, no atomics: rayon's
//! `par_chunks_mut` hands each task its own `&mut` slice of the output, and the borrow
//! checker proves that no two tasks write the same row.

use rayon::prelude::*;

use crate::cpu::linear::check_linear_shapes;
use crate::cpu::linear_register_blocked::{MicroKernel, PackedLinear};
use crate::tensor::{ShapeError, Tensor2d};

// ANCHOR: parallel_threshold
/// Below this many multiply-adds a linear layer runs on the calling thread alone.
///
/// Handing work to the pool costs microseconds (waking sleeping threads, moving the
/// tasks, waiting for the last one to finish), while the micro-kernel does some 20 to 60
/// multiply-adds per nanosecond. 2¹⁹ multiply-adds (a 64 × 64 × 128 layer) take around
/// 10–25 µs on one core; much below that, the hand-off would eat most of what a second
/// core could save, and on a busy machine it can cost more than it saves.
const PARALLEL_MINIMUM_MULTIPLY_ADDS: usize = 1 << 19;

/// Tasks per thread. More than one, so that a thread that finishes early (or whose core
/// is busy with another program) can take work from the others instead of waiting.
const TASKS_PER_THREAD: usize = 4;
// ANCHOR_END: parallel_threshold

// ANCHOR: linear_parallel
/// The linear layer on every core, into a fresh tensor.
pub fn linear_parallel(
    input: &Tensor2d,
    weights: &Tensor2d,
    bias: &Tensor2d,
) -> Result<Tensor2d, ShapeError> {
    let (rows, outputs) = check_linear_shapes(input, weights, bias)?;
    let mut output = Tensor2d::zeros(rows, outputs);
    linear_parallel_into(input, weights, bias, &mut output)?;
    Ok(output)
}

/// [`linear_parallel`] into a preallocated output of shape `rows × outputs`.
pub fn linear_parallel_into(
    input: &Tensor2d,
    weights: &Tensor2d,
    bias: &Tensor2d,
    output: &mut Tensor2d,
) -> Result<(), ShapeError> {
    linear_parallel_rows_into("linear_parallel_into", input, weights, bias, output, |_| {})
}
// ANCHOR_END: linear_parallel

// ANCHOR: linear_parallel_rows_into
/// The linear layer on every core, handing each block of finished output rows to
/// `finish_row` on the thread that computed it, while the block is still in that core's
/// cache. The fused operators apply ReLU (and softmax) there; [`linear_parallel_into`]
/// finishes nothing.
pub(crate) fn linear_parallel_rows_into(
    operation: &'static str,
    input: &Tensor2d,
    weights: &Tensor2d,
    bias: &Tensor2d,
    output: &mut Tensor2d,
    finish_row: impl Fn(&mut [f32]) + Sync,
) -> Result<(), ShapeError> {
    let kernel = MicroKernel::selected();
    // The weights are packed once, here, and shared read-only by every task.
    let linear = PackedLinear::new(operation, kernel, input, weights, bias, output)?;
    let (rows, outputs) = output.shape();
    let multiply_adds = rows * input.columns() * outputs;
    let rows_per_task = rows_per_task(rows, linear.task_rows(), rayon::current_num_threads());
    if multiply_adds < PARALLEL_MINIMUM_MULTIPLY_ADDS || rows_per_task >= rows {
        linear.compute_rows(0, output.as_mut_slice(), &mut Vec::new(), &finish_row);
        return Ok(());
    }
    output
        .as_mut_slice()
        .par_chunks_mut(rows_per_task * outputs)
        .enumerate()
        // Each of rayon's jobs gets its own scratch space for packed inputs, reused by
        // the tasks it runs one after another.
        .for_each_init(Vec::new, |packed_inputs, (task, output_rows)| {
            linear.compute_rows(
                task * rows_per_task,
                output_rows,
                packed_inputs,
                &finish_row,
            )
        });
    Ok(())
}

/// Rows per task: the rows shared out over `TASKS_PER_THREAD` tasks per thread, rounded
/// up to the micro-kernel's task step (whole tiles, or half tiles with AVX-512) so that
/// no task computes a mostly empty tile.
fn rows_per_task(rows: usize, task_rows: usize, threads: usize) -> usize {
    let tasks = (threads * TASKS_PER_THREAD).max(1);
    rows.div_ceil(tasks).max(1).next_multiple_of(task_rows)
}
// ANCHOR_END: linear_parallel_rows_into

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::{linear_naive, linear_register_blocked};
    use crate::tensor::Tolerance;

    #[test]
    fn tasks_hold_whole_tiles_and_cover_every_row() {
        assert_eq!(rows_per_task(256, 6, 2), 36);
        assert_eq!(rows_per_task(1, 6, 16), 6);
        assert_eq!(rows_per_task(0, 4, 2), 4);
        for rows in [1, 5, 6, 7, 97, 256, 1000] {
            let per_task = rows_per_task(rows, 6, 3);
            assert_eq!(per_task % 6, 0);
            assert!(rows.div_ceil(per_task) <= 3 * TASKS_PER_THREAD, "{rows}");
        }
    }

    #[test]
    fn a_layer_large_enough_to_split_matches_naive() {
        // 130 × 70 × 90 = 819 000 multiply-adds, above the threshold, so the rows are
        // really shared between threads; 130 rows end inside a tile.
        let (rows, inner_size, outputs) = (130, 70, 90);
        assert!(rows * inner_size * outputs >= PARALLEL_MINIMUM_MULTIPLY_ADDS);
        let input = Tensor2d::random(rows, inner_size, -1.0..=1.0, 21);
        let weights = Tensor2d::random(inner_size, outputs, -1.0..=1.0, 22);
        let bias = Tensor2d::random(1, outputs, -1.0..=1.0, 23);
        let expected = linear_naive(&input, &weights, &bias).unwrap();
        let mut output = Tensor2d::filled(rows, outputs, f32::NAN);
        linear_parallel_into(&input, &weights, &bias, &mut output).unwrap();
        let comparison = output
            .compare(&expected, Tolerance::new(1e-5, 1e-5))
            .unwrap();
        assert!(comparison.passed(), "{comparison}");
        // The threads compute each row with the same kernel and the same order of
        // additions as one thread does, so the results are identical, not just close.
        let single_threaded = linear_register_blocked(&input, &weights, &bias).unwrap();
        assert_eq!(output, single_threaded);
    }

    #[test]
    fn every_row_is_finished_exactly_once() {
        // Finishing adds one: a row finished twice, or never, shows up as off by one.
        let (rows, inner_size, outputs) = (200, 64, 64);
        let input = Tensor2d::random(rows, inner_size, -1.0..=1.0, 24);
        let weights = Tensor2d::random(inner_size, outputs, -1.0..=1.0, 25);
        let bias = Tensor2d::random(1, outputs, -1.0..=1.0, 26);
        let mut finished = Tensor2d::filled(rows, outputs, f32::NAN);
        let add_one = |row: &mut [f32]| row.iter_mut().for_each(|value| *value += 1.0);
        linear_parallel_rows_into("test", &input, &weights, &bias, &mut finished, add_one).unwrap();
        let plain = linear_parallel(&input, &weights, &bias).unwrap();
        for (index, (&finished, &plain)) in
            finished.as_slice().iter().zip(plain.as_slice()).enumerate()
        {
            assert_eq!(finished, plain + 1.0, "element {index}");
        }
    }

    #[test]
    fn shape_errors_are_typed() {
        let input = Tensor2d::zeros(2, 3);
        let weights = Tensor2d::zeros(4, 5);
        let bias = Tensor2d::zeros(1, 5);
        assert_eq!(
            linear_parallel(&input, &weights, &bias),
            Err(check_linear_shapes(&input, &weights, &bias).unwrap_err())
        );
        let weights = Tensor2d::zeros(3, 5);
        let mut output = Tensor2d::zeros(5, 2);
        assert!(matches!(
            linear_parallel_into(&input, &weights, &bias, &mut output),
            Err(ShapeError::Incompatible {
                operation: "linear_parallel_into",
                right_name: "output",
                ..
            })
        ));
    }
}
