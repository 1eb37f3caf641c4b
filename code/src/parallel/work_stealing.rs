//! Data parallelism with work stealing: rayon's `par_iter`.
//!
//! Rayon turns an iterator over a slice into a tree of tasks. `par_iter_mut().zip(…)`
//! describes the whole range of items; a thread that runs it splits the range in two,
//! keeps one half and pushes the other onto its own *deque* (a double-ended queue), then
//! splits again, and so on until the pieces are small. Each worker thread owns one deque:
//!
//! - the owner pushes and pops at the **back** (last in, first out), so it works on the
//!   piece it split most recently, whose data is still warm in its cache;
//! - an idle thread *steals* from the **front** of another thread's deque, taking the
//!   oldest, and therefore largest, piece that is waiting there.
//!
//! Nobody decides in advance who does what. A thread that finishes its cheap items early
//! steals a large piece of someone else's expensive ones, so an uneven workload ends up
//! evenly spread without anyone measuring it. The price is small: an owner touches only
//! its own end of its deque, and threads only contend when one steals.
//!
//! Rayon also splits *adaptively*: a piece is split again only while it might be
//! stolen. When no thread is idle, pieces stop being split, which keeps the overhead of
//! a long, balanced loop near that of a plain loop.

use crate::parallel::workloads::{
    DataParallelError, Workload, check_output, check_same_length, process_item,
};
use rayon::prelude::*;

// ANCHOR: process_with_rayon
/// Every item on rayon's global thread pool (one worker per core by default).
pub fn process_with_rayon(
    workload: &Workload,
    output: &mut [f32],
) -> Result<(), DataParallelError> {
    check_output(workload, output, "process_with_rayon")?;
    output
        .par_iter_mut()
        .zip(&workload.seeds)
        .zip(&workload.steps)
        .for_each(|((result, &seed), &steps)| *result = process_item(seed, steps));
    Ok(())
}
// ANCHOR_END: process_with_rayon

// ANCHOR: rayon_pool
/// A rayon thread pool with exactly `threads` workers, so that a sweep can compare one
/// thread count with another. (The global pool has one worker per core; build a pool of
/// your own only when you need another number, as building it starts the threads.)
pub fn rayon_pool(threads: usize) -> Result<rayon::ThreadPool, DataParallelError> {
    if threads == 0 {
        return Err(DataParallelError::NoThreads {
            operation: "rayon_pool",
        });
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        // Building fails only when the operating system refuses to start a thread.
        .map_err(|_| DataParallelError::NoThreads {
            operation: "rayon_pool (the operating system refused to start the threads)",
        })
}

/// [`process_with_rayon`] on `pool` instead of the global pool.
pub fn process_with_rayon_in(
    pool: &rayon::ThreadPool,
    workload: &Workload,
    output: &mut [f32],
) -> Result<(), DataParallelError> {
    pool.install(|| process_with_rayon(workload, output))
}
// ANCHOR_END: rayon_pool

// ANCHOR: work_per_worker
/// How many items, and how many steps, each worker of `pool` processed: the visible trace
/// of stealing. On the balanced workload the counts come out about equal; on the ramp the
/// worker that ends up with the expensive end processes fewer items, the others steal more
/// of the cheap ones, and the steps still come out about equal.
pub fn work_per_worker(
    pool: &rayon::ThreadPool,
    workload: &Workload,
) -> Result<Vec<WorkerShare>, DataParallelError> {
    check_same_length(
        "work_per_worker",
        "the seeds",
        workload.seeds.len(),
        "the step counts",
        workload.steps.len(),
    )?;
    let mut worker_of_item = vec![usize::MAX; workload.len()];
    pool.install(|| {
        worker_of_item
            .par_iter_mut()
            .zip(&workload.seeds)
            .zip(&workload.steps)
            .for_each(|((worker, &seed), &steps)| {
                std::hint::black_box(process_item(seed, steps));
                // Inside `install`, every closure runs on one of the pool's workers.
                *worker = rayon::current_thread_index().unwrap_or(usize::MAX);
            });
    });
    let mut shares = vec![WorkerShare::default(); pool.current_num_threads()];
    for (worker, &steps) in worker_of_item.into_iter().zip(&workload.steps) {
        if let Some(share) = shares.get_mut(worker) {
            share.items += 1;
            share.steps += u64::from(steps);
        }
    }
    Ok(shares)
}

/// What one worker processed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WorkerShare {
    pub items: usize,
    pub steps: u64,
}
// ANCHOR_END: work_per_worker

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parallel::workloads::{Balance, process_sequential};

    #[test]
    fn rayon_gives_the_same_bits_as_the_sequential_loop() {
        for balance in [Balance::Balanced, Balance::Unbalanced] {
            for items in [0, 1, 2, 3, 17, 1000, 10_007] {
                let workload = Workload::new(balance, items, 20, items as u64);
                let mut expected = vec![f32::NAN; items];
                process_sequential(&workload, &mut expected).unwrap();
                let mut output = vec![f32::NAN; items];
                process_with_rayon(&workload, &mut output).unwrap();
                assert_eq!(output, expected, "{balance:?}, {items} items");
                for threads in [1, 2, 3, 5] {
                    let pool = rayon_pool(threads).unwrap();
                    let mut output = vec![f32::NAN; items];
                    process_with_rayon_in(&pool, &workload, &mut output).unwrap();
                    assert_eq!(output, expected, "{balance:?}, {items} items, {threads}");
                }
            }
        }
    }

    #[test]
    fn every_item_is_counted_once_by_exactly_one_worker() {
        let pool = rayon_pool(3).unwrap();
        let workload = Workload::new(Balance::Unbalanced, 5000, 10, 4);
        let shares = work_per_worker(&pool, &workload).unwrap();
        assert_eq!(shares.len(), 3);
        assert_eq!(shares.iter().map(|share| share.items).sum::<usize>(), 5000);
        let steps: u64 = shares.iter().map(|share| share.steps).sum();
        assert_eq!(steps, workload.total_steps());
    }

    #[test]
    fn bad_arguments_are_errors() {
        assert!(matches!(
            rayon_pool(0),
            Err(DataParallelError::NoThreads { .. })
        ));
        let workload = Workload::new(Balance::Balanced, 4, 1, 0);
        let mut output = vec![0.0; 5];
        assert!(matches!(
            process_with_rayon(&workload, &mut output),
            Err(DataParallelError::LengthMismatch { .. })
        ));
    }
}
