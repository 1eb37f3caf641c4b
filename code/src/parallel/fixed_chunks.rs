//! Data parallelism without work stealing: the items cut into equal contiguous chunks
//! up front, one chunk per thread, on scoped threads.
//!
//! This is the simplest parallel loop there is, and on a balanced workload it is as good
//! as any: every thread gets the same work, starts at once, and never talks to the others.
//! Its weakness is the decision made before anything runs. On the unbalanced ramp of
//! [`crate::parallel::workloads`] the last chunk holds the most expensive items, the other
//! threads finish early and sit idle, and the loop takes as long as its slowest chunk.
//!
//! A *scoped* thread may borrow from the function that starts it, because the scope
//! waits for every thread it started before it returns: the chunks of `output` can be
//! handed out as `&mut` slices, with no `Arc`, no `Mutex` and no copying.
//! Before Rust 1.0 the standard library had a scoped-thread API that was removed as unsound;
//! `crossbeam::scope` offered a sound one for years after, and the standard library has had
//! `std::thread::scope` again since Rust 1.63, and [`process_in_fixed_chunks_std`] shows it.
//!
//! [`process_with_shared_counter`] is the middle way: still no stealing and no deques,
//! just one shared queue of small blocks (crossbeam's lock-free `ArrayQueue`, in effect an
//! atomic counter over the blocks) from which every thread takes the next block when it
//! is ready for more. Fast threads simply take more blocks.

use crossbeam::queue::ArrayQueue;

use crate::parallel::workloads::{DataParallelError, Workload, check_output, process_item};

/// Items a thread takes from the shared queue at a time: enough that the queue is
/// touched rarely (one atomic update per block), few enough that the last blocks even out
/// the finish.
pub const SHARED_COUNTER_BLOCK: usize = 256;

fn check_threads(threads: usize, operation: &'static str) -> Result<(), DataParallelError> {
    if threads == 0 {
        Err(DataParallelError::NoThreads { operation })
    } else {
        Ok(())
    }
}

/// Items per chunk when `items` are cut into `threads` contiguous chunks: rounded up, so
/// that `threads` chunks cover everything (the last one may be shorter, or missing).
fn chunk_length(items: usize, threads: usize) -> usize {
    items.div_ceil(threads).max(1)
}

// ANCHOR: process_in_fixed_chunks
/// The items in `threads` equal contiguous chunks, one scoped crossbeam thread each.
pub fn process_in_fixed_chunks(
    workload: &Workload,
    output: &mut [f32],
    threads: usize,
) -> Result<(), DataParallelError> {
    check_output(workload, output, "process_in_fixed_chunks")?;
    check_threads(threads, "process_in_fixed_chunks")?;
    let length = chunk_length(output.len(), threads);
    let chunks = output
        .chunks_mut(length)
        .zip(workload.seeds.chunks(length))
        .zip(workload.steps.chunks(length));
    crossbeam::scope(|scope| {
        for ((output_chunk, seeds), steps) in chunks {
            scope.spawn(move |_| {
                for ((result, &seed), &steps) in output_chunk.iter_mut().zip(seeds).zip(steps) {
                    *result = process_item(seed, steps);
                }
            });
        }
    })
    // `scope` returns an error only if a thread panicked; `process_item` cannot panic.
    .expect("a worker thread panicked");
    Ok(())
}
// ANCHOR_END: process_in_fixed_chunks

/// The steps each thread of [`process_in_fixed_chunks`] runs: the sum over its chunk,
/// fixed before anything runs. (The threads' share of the work, for the figures.)
pub fn steps_per_fixed_chunk(workload: &Workload, threads: usize) -> Vec<u64> {
    let length = chunk_length(workload.len(), threads.max(1));
    let mut steps: Vec<u64> = workload
        .steps
        .chunks(length)
        .map(|chunk| chunk.iter().map(|&count| u64::from(count)).sum())
        .collect();
    // Threads beyond the number of chunks got nothing.
    steps.resize(threads.max(steps.len()), 0);
    steps
}

// ANCHOR: process_in_fixed_chunks_std
/// The same split on the standard library's scoped threads.
pub fn process_in_fixed_chunks_std(
    workload: &Workload,
    output: &mut [f32],
    threads: usize,
) -> Result<(), DataParallelError> {
    check_output(workload, output, "process_in_fixed_chunks_std")?;
    check_threads(threads, "process_in_fixed_chunks_std")?;
    let length = chunk_length(output.len(), threads);
    std::thread::scope(|scope| {
        let chunks = output
            .chunks_mut(length)
            .zip(workload.seeds.chunks(length))
            .zip(workload.steps.chunks(length));
        for ((output_chunk, seeds), steps) in chunks {
            scope.spawn(move || {
                for ((result, &seed), &steps) in output_chunk.iter_mut().zip(seeds).zip(steps) {
                    *result = process_item(seed, steps);
                }
            });
        }
    });
    Ok(())
}
// ANCHOR_END: process_in_fixed_chunks_std

// ANCHOR: process_with_shared_counter
/// `threads` scoped threads that each take the next block of [`SHARED_COUNTER_BLOCK`]
/// items from one shared queue until it is empty. Returns how many steps each thread ran,
/// so that tests and the figures can see how evenly the work was shared.
pub fn process_with_shared_counter(
    workload: &Workload,
    output: &mut [f32],
    threads: usize,
) -> Result<Vec<u64>, DataParallelError> {
    check_output(workload, output, "process_with_shared_counter")?;
    check_threads(threads, "process_with_shared_counter")?;
    // The blocks of the output, each a separate `&mut` slice with its first index, in a
    // lock-free queue: `pop` is one atomic update of the queue's head, so the queue is
    // the shared counter, and whoever pops a block owns it.
    let blocks = ArrayQueue::new(output.len().div_ceil(SHARED_COUNTER_BLOCK).max(1));
    for (index, block) in output.chunks_mut(SHARED_COUNTER_BLOCK).enumerate() {
        // The queue was made with room for every block.
        let _ = blocks.push((index * SHARED_COUNTER_BLOCK, block));
    }
    let steps_per_thread = crossbeam::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|_| {
                    let mut steps_run = 0;
                    while let Some((start, results)) = blocks.pop() {
                        let seeds = &workload.seeds[start..start + results.len()];
                        let steps = &workload.steps[start..start + results.len()];
                        for ((result, &seed), &steps) in results.iter_mut().zip(seeds).zip(steps) {
                            *result = process_item(seed, steps);
                            steps_run += u64::from(steps);
                        }
                    }
                    steps_run
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().expect("a worker thread panicked"))
            .collect()
    })
    .expect("a worker thread panicked");
    Ok(steps_per_thread)
}
// ANCHOR_END: process_with_shared_counter

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parallel::workloads::{Balance, process_sequential};

    #[test]
    fn every_split_gives_the_same_bits_as_the_sequential_loop() {
        for balance in [Balance::Balanced, Balance::Unbalanced] {
            for items in [0, 1, 2, 3, 255, 256, 257, 1000, 10_007] {
                let workload = Workload::new(balance, items, 15, 7 + items as u64);
                let mut expected = vec![f32::NAN; items];
                process_sequential(&workload, &mut expected).unwrap();
                // More threads than items included: the extra threads get no chunk.
                for threads in [1, 2, 3, 4, 7, 64] {
                    let mut output = vec![f32::NAN; items];
                    process_in_fixed_chunks(&workload, &mut output, threads).unwrap();
                    assert_eq!(output, expected, "crossbeam {balance:?} {items} {threads}");
                    let mut output = vec![f32::NAN; items];
                    process_in_fixed_chunks_std(&workload, &mut output, threads).unwrap();
                    assert_eq!(output, expected, "std {balance:?} {items} {threads}");
                    let mut output = vec![f32::NAN; items];
                    let steps =
                        process_with_shared_counter(&workload, &mut output, threads).unwrap();
                    assert_eq!(output, expected, "counter {balance:?} {items} {threads}");
                    assert_eq!(steps.len(), threads);
                    assert_eq!(steps.iter().sum::<u64>(), workload.total_steps());
                    let fixed = steps_per_fixed_chunk(&workload, threads);
                    assert_eq!(fixed.len(), threads);
                    assert_eq!(fixed.iter().sum::<u64>(), workload.total_steps());
                }
            }
        }
    }

    #[test]
    fn the_last_of_two_chunks_of_the_ramp_holds_three_quarters_of_the_work() {
        let workload = Workload::new(Balance::Unbalanced, 100_000, 64, 1);
        let steps = steps_per_fixed_chunk(&workload, 2);
        let share = steps[1] as f64 / workload.total_steps() as f64;
        // Three quarters, give or take the steps lost to rounding that the ramp hands to its
        // last items.
        assert!((0.745..0.755).contains(&share), "{share}");
    }

    #[test]
    fn chunks_cover_every_item_exactly_once() {
        for items in 0..50 {
            for threads in 1..10 {
                let length = chunk_length(items, threads);
                let chunks = items.div_ceil(length);
                assert!(chunks <= threads, "{items} {threads}");
                assert!(length * chunks >= items);
            }
        }
    }

    #[test]
    fn zero_threads_and_wrong_lengths_are_errors() {
        let workload = Workload::new(Balance::Balanced, 8, 1, 0);
        let mut output = vec![0.0; 8];
        for result in [
            process_in_fixed_chunks(&workload, &mut output, 0),
            process_in_fixed_chunks_std(&workload, &mut output, 0),
            process_with_shared_counter(&workload, &mut output, 0).map(|_| ()),
        ] {
            assert!(matches!(result, Err(DataParallelError::NoThreads { .. })));
        }
        let mut short = vec![0.0; 7];
        assert!(matches!(
            process_in_fixed_chunks(&workload, &mut short, 2),
            Err(DataParallelError::LengthMismatch { .. })
        ));
    }
}
