//! A singly linked list of `Box`ed nodes: pointers in their purest form.
//!
//! Each node is its own heap allocation holding one value and an owning pointer to the
//! next node. Walking the list is a chain of dependent loads, like
//! [`Cycle::follow`](crate::memory::access_patterns::Cycle::follow): the address of the next
//! node is only known once the current one has arrived. Whether that is fast depends
//! entirely on where the allocator put the nodes.
//!
//! The list also shows two things about ownership in Rust. A `Box` owns what it points
//! to, so dropping the first node drops the whole list. And that drop, left to the
//! compiler, would recurse once per node and overflow the stack for a long list, so
//! [`LinkedList`] implements `Drop` with a loop.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

// ANCHOR: node
/// One node: a value and the rest of the list, if any. `Option<Box<Node>>` is exactly
/// one pointer wide: Rust uses the null address for `None`.
struct Node {
    value: f32,
    next: Option<Box<Node>>,
}

/// A list of values, each in its own heap allocation.
pub struct LinkedList {
    head: Option<Box<Node>>,
    length: usize,
}
// ANCHOR_END: node

impl LinkedList {
    /// A list of `values`, in order, whose nodes are allocated one after another, from
    /// the last value to the first.
    pub fn from_values(values: &[f32]) -> Self {
        let mut head = None;
        for &value in values.iter().rev() {
            head = Some(Box::new(Node { value, next: head }));
        }
        Self {
            head,
            length: values.len(),
        }
    }

    /// A list of the same values in the same order, but with its nodes allocated in a
    /// random order, so that consecutive nodes usually lie far apart in memory: what a
    /// list looks like after a long life of insertions and removals.
    pub fn from_values_scattered(values: &[f32], seed: u64) -> Self {
        // Allocate the nodes in a shuffled order, parked in slots by their position...
        let mut allocation_order: Vec<usize> = (0..values.len()).collect();
        let mut generator = ChaCha8Rng::seed_from_u64(seed);
        for last in (1..allocation_order.len()).rev() {
            allocation_order.swap(last, generator.random_range(0..=last));
        }
        let mut slots: Vec<Option<Box<Node>>> = (0..values.len()).map(|_| None).collect();
        for position in allocation_order {
            slots[position] = Some(Box::new(Node {
                value: values[position],
                next: None,
            }));
        }
        // ...then link them in list order, moving each box (not its contents) into place.
        let mut head = None;
        for slot in slots.into_iter().rev() {
            let mut node = slot.expect("every position was allocated above");
            node.next = head;
            head = Some(node);
        }
        Self {
            head,
            length: values.len(),
        }
    }

    pub fn len(&self) -> usize {
        self.length
    }

    pub fn is_empty(&self) -> bool {
        self.length == 0
    }

    // ANCHOR: sum
    /// The sum of the values, in list order.
    pub fn sum(&self) -> f32 {
        let mut total = 0.0;
        let mut current = self.head.as_deref();
        while let Some(node) = current {
            total += node.value;
            current = node.next.as_deref(); // the next address comes from this node
        }
        total
    }
    // ANCHOR_END: sum

    /// The values, in list order.
    pub fn to_vec(&self) -> Vec<f32> {
        let mut values = Vec::with_capacity(self.length);
        let mut current = self.head.as_deref();
        while let Some(node) = current {
            values.push(node.value);
            current = node.next.as_deref();
        }
        values
    }
}

// ANCHOR: drop
impl Drop for LinkedList {
    /// Frees the nodes one by one. The compiler's own drop would free a node by first
    /// dropping its `next`, which drops *its* `next`, and so on: one stack frame per node,
    /// enough to overflow the stack for a list of a few hundred thousand nodes.
    fn drop(&mut self) {
        let mut current = self.head.take();
        while let Some(mut node) = current {
            current = node.next.take(); // detach the rest, so `node` drops alone
        }
    }
}
// ANCHOR_END: drop

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_lists_hold_the_values_in_order() {
        for length in [0, 1, 2, 17, 1000] {
            let values: Vec<f32> = (0..length).map(|index| index as f32 * 0.5 - 3.0).collect();
            let expected_sum: f32 = values.iter().sum();
            for list in [
                LinkedList::from_values(&values),
                LinkedList::from_values_scattered(&values, 4),
            ] {
                assert_eq!(list.len(), length);
                assert_eq!(list.is_empty(), length == 0);
                assert_eq!(list.to_vec(), values);
                // Same values, same order of additions: the same sum as the slice.
                assert_eq!(list.sum(), expected_sum);
            }
        }
    }

    #[test]
    fn a_long_list_is_dropped_without_overflowing_the_stack() {
        // Test threads have a 2 MiB stack; a recursive drop of a million nodes needs far
        // more than that, so this test would crash without the loop in `Drop`.
        let list = LinkedList::from_values(&vec![1.0; 1_000_000]);
        assert_eq!(list.sum(), 1_000_000.0);
        drop(list);
    }
}
