//! A chain of layers run one block of rows at a time, every layer on the block before the
//! next block starts: the CPU counterpart of the fully fused GPU kernel.
//!
//! Every operator of an MLP works row by row: row `i` of a layer's output depends on row
//! `i` of its input only (and on weights every row shares). So a block of rows can go
//! through the *whole* network on its own. Its activations, two buffers of
//! `block rows × width` floats, stay in the core's L2 cache from the first layer to the
//! last; only the weights stream in from L3 or memory. Run layer after layer over all
//! rows instead, and every layer writes its whole output to memory and reads it back.
//!
//! The same property decides how threads share the work: each thread takes its own rows
//! and runs every layer on them, so the threads meet once per run, at the end, instead
//! of once per layer. Whether a second thread pays at all, and how many pieces to cut
//! the rows into, is decided by measuring the candidates when the stack is prepared
//! ([`LayerStack::choose_split`]), not by a fixed threshold: the cost of waking a thread
//! depends on the machine and on what else it is running.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::cpu::fast_exp::softmax_row_fast;
use crate::cpu::prepacked::PrepackedLinear;
use crate::cpu::relu::relu_values_in_place;
use crate::tensor::ShapeError;

/// An operation applied to each row on its own, after a stage's linear layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowOperation {
    Relu,
    Softmax,
}

/// One step of the chain: an optional linear layer, then row operations in order.
pub struct Stage {
    pub linear: Option<PrepackedLinear>,
    pub row_operations: Vec<RowOperation>,
}

/// A stage ready to run: a ReLU right after the linear layer moves into the layer's
/// epilogue, where it costs nothing.
struct PreparedStage {
    linear: Option<PrepackedLinear>,
    relu_in_epilogue: bool,
    /// What is left to apply row by row.
    row_operations: Vec<RowOperation>,
    inputs: usize,
    outputs: usize,
}

// ANCHOR: thread_split
/// How the rows of a run are shared out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThreadSplit {
    /// Everything on the calling thread: no hand-off at all.
    OneThread,
    /// The rows cut into this many tasks (in steps of the micro-kernel's tiles, or of its
    /// half tiles), the first run by the calling thread, the others by rayon's pool; each
    /// task runs every layer on its rows.
    Tasks(usize),
}
// ANCHOR_END: thread_split

/// Scratch space of one task: two activation buffers, used in turn, and the micro-kernel's
/// packed inputs. Allocated once, reused by every run.
#[derive(Default)]
struct Scratch {
    ping: Vec<f32>,
    pong: Vec<f32>,
    packed_inputs: Vec<f32>,
}

// ANCHOR: activation_bytes
/// How much memory the two activation buffers of a block may take: 4 MiB, more than a
/// core's L2 cache (1–2 MiB on cores of the last years).
///
/// Every block streams every weight of the network once, so a block half as large streams
/// the weights twice as often. Keeping the activations in L2 is worth less than that: the
/// micro-kernel reads the rows it works on (`ROW_BLOCK` of them) from L2 either way, and
/// the rest of a block waits in L3. On the 2-core Xeon (2 MiB of L2 per core), blocks of
/// 512 KiB ran the standard workload at 512 × 64 in 69–70 ms and at 1024 × 64 in 656–659
/// ms, blocks of 4 MiB in 59–60 and 482–500 ms (`cpu_anchor_point`, two runs each).
const ACTIVATION_BYTES: usize = 4 * 1024 * 1024;
// ANCHOR_END: activation_bytes

/// Floating-point operations the split measurement runs per try: about a millisecond on
/// one core. Stacks smaller than this are measured whole.
const TRIAL_OPERATIONS: usize = 100_000_000;

/// The longest the calling thread waits for the other tasks of a run by checking rather
/// than sleeping (see `run_into`).
const SPIN_LIMIT: Duration = Duration::from_micros(500);

/// Timed tries per candidate split, after one untimed try each; the fastest counts, so a
/// try that another program interrupted does not decide.
const TRIAL_ROUNDS: usize = 5;

/// How much slower than the fastest candidate a split with fewer tasks may be and still
/// be chosen (5 %): closer than this, the trial cannot tell them apart on a machine that
/// runs anything else, and fewer tasks read the weights fewer times.
const TIE_MARGIN: f64 = 0.05;

/// A chain of stages prepared for inputs of a fixed number of rows.
pub struct LayerStack {
    stages: Vec<PreparedStage>,
    rows: usize,
    input_width: usize,
    output_width: usize,
    /// Rows that go through every layer together (whole tiles).
    block_rows: usize,
    /// Rows are shared between tasks in multiples of this (see `PrepackedLinear::task_rows`).
    task_rows: usize,
    split: ThreadSplit,
    scratch: Vec<Scratch>,
}

impl LayerStack {
    /// Prepares `stages` for inputs of `rows × input_width`. Each stage's linear layer
    /// must take the width the previous stage produced. Starts on one thread: call [`LayerStack::choose_split`] to measure.
    pub fn new(
        rows: usize,
        input_width: usize,
        stages: Vec<Stage>,
    ) -> Result<LayerStack, ShapeError> {
        let mut prepared = Vec::with_capacity(stages.len().max(1));
        let mut width = input_width;
        let mut task_rows = 1;
        for stage in stages {
            let inputs = width;
            if let Some(linear) = &stage.linear {
                if linear.inputs() != width {
                    return Err(ShapeError::Incompatible {
                        operation: "LayerStack::new",
                        expectation: "each linear layer must take the width the previous stage produces",
                        left_name: "rows so far",
                        left: (rows, width),
                        right_name: "weights",
                        right: (linear.inputs(), linear.outputs()),
                    });
                }
                width = linear.outputs();
                task_rows = linear.task_rows();
            }
            let mut row_operations = stage.row_operations;
            let relu_in_epilogue =
                stage.linear.is_some() && row_operations.first() == Some(&RowOperation::Relu);
            if relu_in_epilogue {
                row_operations.remove(0);
            }
            prepared.push(PreparedStage {
                linear: stage.linear,
                relu_in_epilogue,
                row_operations,
                inputs,
                outputs: width,
            });
        }
        if prepared.is_empty() {
            // Nothing to compute: one stage that copies.
            prepared.push(PreparedStage {
                linear: None,
                relu_in_epilogue: false,
                row_operations: Vec::new(),
                inputs: width,
                outputs: width,
            });
        }
        let widest = prepared
            .iter()
            .map(|stage| stage.outputs)
            .max()
            .unwrap_or(0)
            .max(1);
        let block_rows = (ACTIVATION_BYTES / (2 * widest * size_of::<f32>()))
            .max(task_rows)
            .next_multiple_of(task_rows);
        let mut stack = LayerStack {
            stages: prepared,
            rows,
            input_width,
            output_width: width,
            block_rows: block_rows.max(1),
            task_rows,
            split: ThreadSplit::OneThread,
            scratch: Vec::new(),
        };
        stack.set_split(ThreadSplit::OneThread);
        Ok(stack)
    }

    pub fn output_width(&self) -> usize {
        self.output_width
    }

    pub fn split(&self) -> ThreadSplit {
        self.split
    }

    /// Rows per task for a split: a multiple of `task_rows` (whole tiles, or half tiles for
    /// the kernel that has them), so that no tile straddles two tasks.
    fn rows_per_task(&self, split: ThreadSplit) -> usize {
        match split {
            ThreadSplit::OneThread => self.rows.max(1),
            ThreadSplit::Tasks(tasks) => self
                .rows
                .div_ceil(tasks.max(1))
                .max(1)
                .next_multiple_of(self.task_rows),
        }
    }

    /// Uses `split` from now on, allocating each task's scratch space now rather than
    /// during a run. Scratch space is only ever added, never freed: switching back and
    /// forth between splits (as [`LayerStack::choose_split`] does) then costs nothing.
    pub fn set_split(&mut self, split: ThreadSplit) {
        self.split = split;
        let rows_per_task = self.rows_per_task(split).min(self.rows);
        let tasks = self.rows.div_ceil(rows_per_task.max(1)).max(1);
        let last_task_rows = self.rows - (tasks - 1) * rows_per_task;
        let rows = [rows_per_task, last_task_rows]
            .map(|task_rows| even_block_rows(task_rows, self.block_rows, self.task_rows))
            .into_iter()
            .max()
            .unwrap_or(1);
        let widest = self
            .stages
            .iter()
            .map(|stage| stage.outputs)
            .max()
            .unwrap_or(0);
        if self.scratch.len() < tasks {
            self.scratch.resize_with(tasks, Scratch::default);
        }
        for scratch in &mut self.scratch {
            if scratch.ping.len() < rows * widest {
                scratch.ping.resize(rows * widest, 0.0);
                scratch.pong.resize(rows * widest, 0.0);
            }
        }
    }

    // ANCHOR: run_into
    /// Runs every stage on `input` (`rows × input_width`, flat) into `output`
    /// (`rows × output_width`), with the current split; an error if either length is not
    /// what the stack was prepared for.
    pub fn run_into(&mut self, input: &[f32], output: &mut [f32]) -> Result<(), ShapeError> {
        for (name, length, width) in [
            ("input of length", input.len(), self.input_width),
            ("output of length", output.len(), self.output_width),
        ] {
            if length != self.rows * width {
                return Err(ShapeError::Incompatible {
                    operation: "LayerStack::run_into",
                    expectation: "the input and output must hold whole rows of the widths the \
                                  stack was prepared for",
                    left_name: "stack prepared for rows × width",
                    left: (self.rows, width),
                    right_name: name,
                    right: (length, 1),
                });
            }
        }
        self.run_checked(input, output);
        Ok(())
    }
    // ANCHOR_END: run_into

    /// [`LayerStack::run_into`] once the lengths are known to be right.
    fn run_checked(&mut self, input: &[f32], output: &mut [f32]) {
        let stages = &self.stages[..];
        let (block_rows, task_rows) = (self.block_rows, self.task_rows);
        let (input_width, output_width) = (self.input_width, self.output_width);
        match self.split {
            ThreadSplit::OneThread => run_rows(
                stages,
                input,
                output,
                input_width,
                even_block_rows(self.rows, block_rows, task_rows),
                &mut self.scratch[0],
            ),
            split @ ThreadSplit::Tasks(_) => {
                let rows_per_task = self.rows_per_task(split);
                let mut tasks = output
                    .chunks_mut((rows_per_task * output_width).max(1))
                    .zip(self.scratch.iter_mut())
                    .enumerate();
                let run_task = |task: usize, output_rows: &mut [f32], scratch: &mut Scratch| {
                    let rows = output_rows.len() / output_width.max(1);
                    let first = task * rows_per_task * input_width;
                    let input_rows = &input[first..][..rows * input_width];
                    let block = even_block_rows(rows, block_rows, task_rows);
                    run_rows(stages, input_rows, output_rows, input_width, block, scratch);
                };
                let first_task = tasks.next();
                let others_left = AtomicUsize::new(0);
                rayon::in_place_scope(|scope| {
                    // Every task but the first goes to rayon's pool ...
                    for (task, (output_rows, scratch)) in tasks {
                        others_left.fetch_add(1, Ordering::Relaxed);
                        let (run_task, others_left) = (&run_task, &others_left);
                        scope.spawn(move |_| {
                            run_task(task, output_rows, scratch);
                            others_left.fetch_sub(1, Ordering::Release);
                        });
                    }
                    // ... and the calling thread runs the first itself, instead of handing
                    // it over and sleeping: each hand-over to a sleeping thread costs a
                    // wake-up of tens of microseconds.
                    if let Some((task, (output_rows, scratch))) = first_task {
                        run_task(task, output_rows, scratch);
                    }
                    // Then it waits for the others by checking, not sleeping, for a
                    // little while: the scope's end then finds them done and does not
                    // put this thread to sleep (another wake-up).
                    let start = Instant::now();
                    while others_left.load(Ordering::Acquire) > 0 && start.elapsed() < SPIN_LIMIT {
                        std::hint::spin_loop();
                    }
                });
            }
        }
    }

    // ANCHOR: choose_split
    /// Measures one thread against the rows cut into one task per thread of rayon's pool
    /// (and half as many), and keeps the fastest. Returns every candidate with its best
    /// time.
    ///
    /// A try runs the first stages of the stack, about [`TRIAL_OPERATIONS`] worth (all of
    /// a small stack), on an input of zeros: the values do not change the time, the
    /// shapes do. The candidates take turns for [`TRIAL_ROUNDS`] rounds; in each, a
    /// candidate runs an untimed try right before its timed one, so that the timed try
    /// pays for nothing a program running the network again and again would not (freshly
    /// allocated scratch memory mapped on first touch, rayon's threads waking up after
    /// the other candidates left them idle). Each candidate's fastest timed try counts.
    pub fn choose_split(&mut self) -> Vec<(ThreadSplit, Duration)> {
        let threads = rayon::current_num_threads();
        let mut candidates = vec![ThreadSplit::OneThread];
        // One task per core, or half as many (fewer cores can pay on a shared machine).
        // More tasks than cores would make the calling thread, which runs one task
        // itself, compete with the pool's threads for a core.
        for tasks in [threads / 2, threads] {
            let split = ThreadSplit::Tasks(tasks);
            let distinct_tasks = self.rows.div_ceil(self.rows_per_task(split));
            if tasks > 1 && distinct_tasks > 1 && !candidates.contains(&split) {
                candidates.push(split);
            }
        }
        if candidates.len() == 1 {
            self.set_split(ThreadSplit::OneThread);
            return vec![(ThreadSplit::OneThread, Duration::ZERO)];
        }
        let mut operations = 0;
        let trial_stages = self
            .stages
            .iter()
            .take_while(|stage| {
                let before = operations;
                operations += 2 * self.rows * stage.inputs * stage.outputs;
                before < TRIAL_OPERATIONS
            })
            .count()
            .max(1);
        let trial_width = self.stages[trial_stages - 1].outputs;
        let input = vec![0.0; self.rows * self.input_width];
        let mut output = vec![0.0; self.rows * trial_width];
        let mut best = vec![Duration::MAX; candidates.len()];
        for _ in 0..TRIAL_ROUNDS {
            for (candidate, best) in candidates.iter().zip(&mut best) {
                self.set_split(*candidate);
                // The untimed try right before the timed one wakes the pool's threads,
                // which fell asleep while the other candidates ran on fewer of them.
                self.run_prefix(trial_stages, &input, &mut output);
                let start = Instant::now();
                self.run_prefix(trial_stages, &input, &mut output);
                *best = (*best).min(start.elapsed());
            }
        }
        // Candidates are in order of more tasks. Every task streams all the weights, so
        // a task more costs memory traffic that a trial on the first layers, whose
        // weights stay in cache, does not see: the fewest tasks within
        // `TIE_MARGIN` of the fastest try win.
        self.set_split(candidates[fewest_tasks_within_margin(&best)]);
        candidates.into_iter().zip(best).collect()
    }
    // ANCHOR_END: choose_split

    /// The first `stages` stages alone, with the current split (for the measurement).
    fn run_prefix(&mut self, stages: usize, input: &[f32], output: &mut [f32]) {
        let all = std::mem::take(&mut self.stages);
        let rest_width = self.output_width;
        let mut prefix = all;
        let rest = prefix.split_off(stages);
        self.output_width = prefix
            .last()
            .map_or(self.input_width, |stage| stage.outputs);
        self.stages = prefix;
        self.run_checked(input, output);
        self.stages.extend(rest);
        self.output_width = rest_width;
    }
}

/// The index of the first time within [`TIE_MARGIN`] of the fastest: with the candidates
/// in order of more tasks, the fewest tasks that are as good as the best.
fn fewest_tasks_within_margin(best: &[Duration]) -> usize {
    let fastest = best.iter().min().copied().unwrap_or(Duration::ZERO);
    let limit = fastest.as_secs_f64() * (1.0 + TIE_MARGIN);
    best.iter()
        .position(|time| time.as_secs_f64() <= limit)
        .unwrap_or(0)
}

/// Rows per block for a task of `rows` rows: about `block_rows`, with the task cut into
/// blocks of equal size (in steps of `task_rows`). Cutting 258 rows into blocks of 132
/// would leave a last block of 126, but into blocks of 128 a last block of 2 rows, which
/// streams every weight of the network once more for two rows.
fn even_block_rows(rows: usize, block_rows: usize, task_rows: usize) -> usize {
    let block_rows = block_rows.max(1);
    let blocks = ((rows + block_rows / 2) / block_rows).max(1);
    rows.div_ceil(blocks)
        .max(1)
        .next_multiple_of(task_rows.max(1))
}

// ANCHOR: run_rows
/// Runs every stage on some rows, `block_rows` at a time: a block goes through the whole
/// chain, its activations alternating between the two scratch buffers, before the next
/// block starts.
fn run_rows(
    stages: &[PreparedStage],
    input_rows: &[f32],
    output_rows: &mut [f32],
    input_width: usize,
    block_rows: usize,
    scratch: &mut Scratch,
) {
    let output_width = stages.last().map_or(input_width, |stage| stage.outputs);
    let rows = output_rows
        .len()
        .checked_div(output_width)
        .unwrap_or(input_rows.len() / input_width.max(1));
    let Scratch {
        ping,
        pong,
        packed_inputs,
    } = scratch;
    for first_row in (0..rows).step_by(block_rows.max(1)) {
        let block = block_rows.min(rows - first_row);
        let input_block = &input_rows[first_row * input_width..][..block * input_width];
        let output_block = &mut output_rows[first_row * output_width..][..block * output_width];
        let (mut next, mut previous) = (&mut *ping, &mut *pong);
        let mut reading_input = true;
        for (index, stage) in stages.iter().enumerate() {
            let last = index + 1 == stages.len();
            let source: &[f32] = if reading_input {
                input_block
            } else {
                &previous[..block * stage.inputs]
            };
            let destination: &mut [f32] = if last {
                &mut *output_block
            } else {
                &mut next[..block * stage.outputs]
            };
            match &stage.linear {
                Some(linear) => {
                    linear.compute_rows(source, destination, stage.relu_in_epilogue, packed_inputs)
                }
                None => destination.copy_from_slice(source),
            }
            if stage.outputs > 0 {
                for row in destination.chunks_exact_mut(stage.outputs) {
                    for operation in &stage.row_operations {
                        match operation {
                            RowOperation::Relu => relu_values_in_place(row),
                            RowOperation::Softmax => softmax_row_fast(row),
                        }
                    }
                }
            }
            std::mem::swap(&mut next, &mut previous);
            reading_input = false;
        }
    }
}
// ANCHOR_END: run_rows

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::{linear_naive, relu, softmax};
    use crate::tensor::{Tensor2d, Tolerance};

    fn layer(inputs: usize, outputs: usize, seed: u64) -> (Tensor2d, Tensor2d) {
        let limit = (3.0 / inputs.max(1) as f32).sqrt();
        (
            Tensor2d::random(inputs, outputs, -limit..=limit, seed),
            Tensor2d::random(1, outputs, -0.5..=0.5, seed + 1),
        )
    }

    /// A stack of `widths.len() - 1` layers, each followed by ReLU, then a softmax; and
    /// the same computed with the plain operators.
    fn stack_and_expected(rows: usize, widths: &[usize]) -> (LayerStack, Tensor2d, Tensor2d) {
        let input = Tensor2d::random(rows, widths[0], -1.0..=1.0, 5);
        let mut expected = input.clone();
        let mut stages = Vec::new();
        for (index, pair) in widths.windows(2).enumerate() {
            let (weights, bias) = layer(pair[0], pair[1], 10 + 2 * index as u64);
            expected = relu(&linear_naive(&expected, &weights, &bias).unwrap());
            let last = index + 2 == widths.len();
            let mut row_operations = vec![RowOperation::Relu];
            if last {
                row_operations.push(RowOperation::Softmax);
            }
            stages.push(Stage {
                linear: Some(PrepackedLinear::new(&weights, &bias).unwrap()),
                row_operations,
            });
        }
        let expected = softmax(&expected).unwrap();
        let stack = LayerStack::new(rows, widths[0], stages).unwrap();
        (stack, input, expected)
    }

    #[test]
    fn every_split_gives_the_plain_operators_result() {
        // 300 rows in blocks of about 60 (more than one block per task), tasks that end
        // inside a tile; widths that end inside a panel of the micro-kernel.
        for (rows, widths) in [
            (300, vec![7, 600, 33, 5]),
            (1, vec![1, 1]),
            (13, vec![40, 3]),
        ] {
            let (mut stack, input, expected) = stack_and_expected(rows, &widths);
            stack.block_rows = 60;
            for split in [
                ThreadSplit::OneThread,
                ThreadSplit::Tasks(2),
                ThreadSplit::Tasks(7),
            ] {
                stack.set_split(split);
                let mut output = vec![f32::NAN; rows * stack.output_width()];
                stack.run_into(input.as_slice(), &mut output).unwrap();
                let output = Tensor2d::from_vec(rows, stack.output_width(), output).unwrap();
                let comparison = output
                    .compare(&expected, Tolerance::new(1e-4, 1e-6))
                    .unwrap();
                assert!(comparison.passed(), "{split:?}, {widths:?}: {comparison}");
            }
        }
    }

    #[test]
    fn the_measured_split_is_one_of_the_candidates_and_is_kept() {
        let (mut stack, input, expected) = stack_and_expected(64, &[32, 32, 32]);
        let timings = stack.choose_split();
        assert!(timings.iter().any(|&(split, _)| split == stack.split()));
        let mut output = vec![f32::NAN; 64 * 32];
        stack.run_into(input.as_slice(), &mut output).unwrap();
        let output = Tensor2d::from_vec(64, 32, output).unwrap();
        assert!(
            output
                .compare(&expected, Tolerance::new(1e-4, 1e-6))
                .unwrap()
                .passed()
        );
        // One row cannot be split: the only candidate is one thread.
        let (mut single_row, _, _) = stack_and_expected(1, &[8, 8]);
        assert_eq!(
            single_row.choose_split(),
            [(ThreadSplit::OneThread, Duration::ZERO)]
        );
    }

    #[test]
    fn more_tasks_must_be_clearly_faster_to_be_chosen() {
        let milliseconds = |values: &[f64]| -> Vec<Duration> {
            values
                .iter()
                .map(|&value| Duration::from_secs_f64(value / 1e3))
                .collect()
        };
        // Two, four and eight tasks within 5 % of each other: two tasks, the fewest.
        assert_eq!(
            fewest_tasks_within_margin(&milliseconds(&[1.03, 0.58, 0.57, 0.56])),
            1
        );
        // Four tasks clearly ahead (two were slowed down, say): four.
        assert_eq!(
            fewest_tasks_within_margin(&milliseconds(&[1.03, 0.92, 0.58, 1.06])),
            2
        );
        // One thread within the margin of the best: one thread.
        assert_eq!(
            fewest_tasks_within_margin(&milliseconds(&[0.037, 0.053, 0.036])),
            0
        );
    }

    #[test]
    fn switching_splits_keeps_the_scratch_space_of_the_largest() {
        let (mut stack, input, expected) = stack_and_expected(64, &[32, 32, 32]);
        stack.set_split(ThreadSplit::Tasks(4));
        let tasks = stack.scratch.len();
        assert!(tasks > 1);
        stack.set_split(ThreadSplit::OneThread);
        assert_eq!(stack.scratch.len(), tasks, "scratch space was freed");
        // Still right with more scratch space than tasks.
        let mut output = vec![f32::NAN; 64 * 32];
        stack.run_into(input.as_slice(), &mut output).unwrap();
        let output = Tensor2d::from_vec(64, 32, output).unwrap();
        assert!(
            output
                .compare(&expected, Tolerance::new(1e-4, 1e-6))
                .unwrap()
                .passed()
        );
    }

    #[test]
    fn blocks_are_even_and_none_is_a_small_remainder() {
        // 258 rows in blocks of about 132: two blocks, not 132 + 126 or 128 + 128 + 2.
        assert_eq!(even_block_rows(258, 132, 6), 132);
        assert_eq!(even_block_rows(258, 128, 6), 132);
        // Fewer rows than one block: one block of all of them, in whole steps.
        assert_eq!(even_block_rows(20, 132, 6), 24);
        // Many blocks: each close to the target, the last never tiny.
        let rows = 516;
        let block = even_block_rows(rows, 66, 6);
        let last = rows - (rows.div_ceil(block) - 1) * block;
        assert!((60..=72).contains(&block), "{block}");
        assert!(
            last * 2 >= block,
            "last block of {last} rows after blocks of {block}"
        );
    }

    #[test]
    fn a_stack_without_layers_copies_and_applies_its_row_operations() {
        let stages = vec![Stage {
            linear: None,
            row_operations: vec![RowOperation::Relu, RowOperation::Softmax],
        }];
        let mut stack = LayerStack::new(2, 2, stages).unwrap();
        let mut output = vec![f32::NAN; 4];
        stack
            .run_into(&[-1.0, -2.0, 0.0, 3.0_f32.ln()], &mut output)
            .unwrap();
        assert_eq!(output[..2], [0.5, 0.5]);
        assert!((output[2] - 0.25).abs() < 1e-6 && (output[3] - 0.75).abs() < 1e-6);
        let mut empty = LayerStack::new(2, 3, Vec::new()).unwrap();
        let mut copy = vec![f32::NAN; 6];
        empty
            .run_into(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &mut copy)
            .unwrap();
        assert_eq!(copy, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    }

    #[test]
    fn inputs_and_outputs_of_the_wrong_length_are_an_error_not_a_panic() {
        let (mut stack, input, _) = stack_and_expected(4, &[3, 5]);
        let mut output = vec![f32::NAN; 4 * 5];
        let short_input = &input.as_slice()[..11];
        let error = stack.run_into(short_input, &mut output).unwrap_err();
        assert!(error.to_string().contains("input of length"), "{error}");
        let error = stack
            .run_into(input.as_slice(), &mut output[..19])
            .unwrap_err();
        assert!(error.to_string().contains("output of length"), "{error}");
        assert!(output.iter().all(|value| value.is_nan()), "nothing written");
    }

    #[test]
    fn mismatched_widths_are_an_error() {
        let (weights, bias) = layer(4, 3, 1);
        let stages = vec![Stage {
            linear: Some(PrepackedLinear::new(&weights, &bias).unwrap()),
            row_operations: Vec::new(),
        }];
        assert!(matches!(
            LayerStack::new(2, 5, stages),
            Err(ShapeError::Incompatible { right: (4, 3), .. })
        ));
    }
}
