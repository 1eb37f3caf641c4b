//! What a second owner costs: cloning and dropping an `Rc` (a plain counter) against an
//! `Arc` (an atomic counter), on one thread and on several threads that share one `Arc`.
//!
//! Each function clones and drops the pointer `times` times and returns the largest count
//! it saw, so that the compiler must really do the counting.

use std::hint::black_box;
use std::rc::Rc;
use std::sync::Arc;

// ANCHOR: clone_and_drop
/// Clones and drops an `Rc` `times` times: an ordinary increment and decrement each.
#[inline(never)]
pub fn clone_and_drop_rc(shared: &Rc<Vec<f32>>, times: usize) -> usize {
    let mut largest = 0;
    for _ in 0..times {
        let second_owner = black_box(Rc::clone(shared));
        largest = largest.max(Rc::strong_count(&second_owner));
    }
    largest
}

/// Clones and drops an `Arc` `times` times: an atomic increment and decrement each.
#[inline(never)]
pub fn clone_and_drop_arc(shared: &Arc<Vec<f32>>, times: usize) -> usize {
    let mut largest = 0;
    for _ in 0..times {
        let second_owner = black_box(Arc::clone(shared));
        largest = largest.max(Arc::strong_count(&second_owner));
    }
    largest
}
// ANCHOR_END: clone_and_drop

// ANCHOR: on_threads
/// Runs `clone_and_drop_arc` on `threads` threads at once, each `times` times. With
/// `share_one` every thread clones the same `Arc`, so their atomic updates fight over one
/// cache line; otherwise each thread has its own `Arc` and its own line.
pub fn clone_and_drop_arc_on_threads(threads: usize, times: usize, share_one: bool) -> usize {
    let one = Arc::new(vec![0.0f32; 16]);
    let owners: Vec<Arc<Vec<f32>>> = (0..threads)
        .map(|_| {
            if share_one {
                Arc::clone(&one)
            } else {
                Arc::new(vec![0.0f32; 16])
            }
        })
        .collect();
    std::thread::scope(|scope| {
        let handles: Vec<_> = owners
            .iter()
            .map(|owner| scope.spawn(move || clone_and_drop_arc(owner, times)))
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().unwrap_or(0))
            .max()
            .unwrap_or(0)
    })
}
// ANCHOR_END: on_threads

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_clone_is_dropped_again() {
        let rc = Rc::new(vec![1.0]);
        assert_eq!(clone_and_drop_rc(&rc, 100), 2);
        assert_eq!(Rc::strong_count(&rc), 1);
        let arc = Arc::new(vec![1.0]);
        assert_eq!(clone_and_drop_arc(&arc, 100), 2);
        assert_eq!(Arc::strong_count(&arc), 1);
    }

    #[test]
    fn threads_sharing_one_arc_see_each_others_owners() {
        // Each thread holds one owner and briefly a second: two threads sharing one Arc
        // (plus the original) see three owners, four or five while they clone.
        let shared = clone_and_drop_arc_on_threads(2, 10_000, true);
        assert!((4..=5).contains(&shared), "{shared}");
        assert_eq!(clone_and_drop_arc_on_threads(2, 10_000, false), 2);
    }
}
