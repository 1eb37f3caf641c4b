//! Counting heap allocations, so that a checker can judge what a clone costs.
//!
//! An exercise about needless clones cannot be judged by its results: a loop that clones
//! its whole state every step computes exactly the same numbers as one that does not. What
//! differs is how often it asks the allocator for memory. This module wraps the system
//! allocator and counts every request made **on the current thread**, so the count of one
//! call is not disturbed by tests or GPU work running on other threads at the same time.
//!
//! The crate installs [`CountingAllocator`] as its global allocator (see `lib.rs`); every
//! binary that links the crate (the checker, its tests, the benchmarks) counts. Counting
//! costs one thread-local addition per allocation.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

thread_local! {
    /// Allocations (and reallocations) made by this thread since it started.
    /// A `const` initialiser without a destructor: reading it never allocates itself.
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

/// The system allocator, with every allocation counted per thread.
pub struct CountingAllocator;

fn count_one() {
    // `try_with` fails only while the thread is being torn down; an allocation then is
    // not one any checker is measuring.
    let _ = ALLOCATIONS.try_with(|count| count.set(count.get() + 1));
}

// SAFETY: every method forwards to `System` with the arguments it was given, so the
// contract of `GlobalAlloc` is the system allocator's; counting touches only a
// thread-local integer and never allocates.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: the caller upholds `alloc`'s contract; we pass it on unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, pointer: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // Growing a vector asks for new memory too: it counts as an allocation.
        count_one();
        // SAFETY: the caller upholds `realloc`'s contract; we pass it on unchanged.
        unsafe { System.realloc(pointer, layout, new_size) }
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        // SAFETY: the caller upholds `dealloc`'s contract; we pass it on unchanged.
        unsafe { System.dealloc(pointer, layout) }
    }
}

/// Runs `work` and returns its result with the number of allocations (and
/// reallocations) it made on this thread.
pub fn allocations_during<T>(work: impl FnOnce() -> T) -> (T, usize) {
    let before = ALLOCATIONS.with(Cell::get);
    let result = work();
    let after = ALLOCATIONS.with(Cell::get);
    (result, after - before)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vector_counts_and_arithmetic_does_not() {
        let (_, none) = allocations_during(|| (0..1000u64).sum::<u64>());
        assert_eq!(none, 0);
        let (vector, one) = allocations_during(|| vec![0.0f32; 1000]);
        assert_eq!(one, 1);
        let (_, cloned) = allocations_during(|| {
            for _ in 0..10 {
                std::hint::black_box(vector.clone());
            }
        });
        assert_eq!(cloned, 10);
    }

    #[test]
    fn other_threads_are_not_counted() {
        // Spawning a thread allocates on this thread (its handle), but a vector made on
        // the other thread is not ours. The first spawn may set up things once.
        let spawn = |make_vector: bool| {
            allocations_during(|| {
                std::thread::scope(|scope| {
                    scope.spawn(move || make_vector.then(|| std::hint::black_box(vec![1u8; 64])));
                });
            })
            .1
        };
        spawn(false);
        assert_eq!(spawn(true), spawn(false));
    }
}
