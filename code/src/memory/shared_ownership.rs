//! Shared ownership with reference counting: `Rc` and `Weak`.
//!
//! A `Box` has exactly one owner. Some data has several: the weights of a layer used twice
//! in one network, or the nodes of a tree that point both down to their children and up
//! to their parent. `Rc<T>` ("reference counted") keeps, next to the value on the heap, a
//! count of the `Rc`s pointing at it; cloning an `Rc` adds one and copies a pointer,
//! dropping one subtracts one, and the value is freed when the count reaches zero.
//!
//! Counting fails on cycles: two values holding an `Rc` to each other keep each other's
//! count above zero forever. A garbage collector would find them unreachable and free
//! them; Rust does not have one, so the programmer breaks the cycle with a `Weak`, a
//! pointer that does not count as an owner. [`TreeNode`] owns its children with `Rc` and
//! knows its parent through a `Weak`.
//!
//! (`Arc` is the same idea with an atomic count, for values shared between threads.)

use std::cell::RefCell;
use std::rc::{Rc, Weak};

// ANCHOR: tree_node
/// A node of a tree of values: children are owned, the parent is only known.
pub struct TreeNode {
    pub value: f32,
    parent: RefCell<Weak<TreeNode>>,
    children: RefCell<Vec<Rc<TreeNode>>>,
}

impl TreeNode {
    /// A node with no parent and no children.
    pub fn new(value: f32) -> Rc<TreeNode> {
        Rc::new(TreeNode {
            value,
            parent: RefCell::new(Weak::new()),
            children: RefCell::new(Vec::new()),
        })
    }

    /// Creates a child of `parent`. The parent holds a strong `Rc` to the child; the child
    /// holds a `Weak` to the parent, so the two do not keep each other alive.
    pub fn add_child(parent: &Rc<TreeNode>, value: f32) -> Rc<TreeNode> {
        let child = TreeNode::new(value);
        *child.parent.borrow_mut() = Rc::downgrade(parent);
        parent.children.borrow_mut().push(Rc::clone(&child));
        child
    }

    /// The parent, if it has one and it is still alive.
    pub fn parent(&self) -> Option<Rc<TreeNode>> {
        self.parent.borrow().upgrade()
    }
    // ANCHOR_END: tree_node

    /// The sum of this node's value and all its descendants' values.
    pub fn sum(&self) -> f32 {
        self.value
            + self
                .children
                .borrow()
                .iter()
                .map(|child| child.sum())
                .sum::<f32>()
    }

    pub fn child_count(&self) -> usize {
        self.children.borrow().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn children_know_their_parent_without_owning_it() {
        let root = TreeNode::new(1.0);
        let left = TreeNode::add_child(&root, 2.0);
        let right = TreeNode::add_child(&root, 3.0);
        TreeNode::add_child(&left, 4.0);
        assert_eq!(root.sum(), 10.0);
        assert_eq!(root.child_count(), 2);
        assert!(Rc::ptr_eq(&left.parent().unwrap(), &root));
        assert!(root.parent().is_none());
        // One owner of the root (this test); two of `right` (the root and this test).
        assert_eq!(Rc::strong_count(&root), 1);
        assert_eq!(Rc::strong_count(&right), 2);
        assert_eq!(Rc::weak_count(&root), 2);
    }

    #[test]
    fn dropping_the_root_frees_it_even_though_children_point_back() {
        let root = TreeNode::new(1.0);
        let child = TreeNode::add_child(&root, 2.0);
        drop(root);
        // Only a weak pointer to the root remained, so the root is gone.
        assert!(child.parent().is_none());
        // The child is still alive: this test holds an `Rc` to it.
        assert_eq!(child.sum(), 2.0);
    }

    // ANCHOR: reference_cycle
    #[test]
    fn a_cycle_of_strong_pointers_is_never_freed() {
        // Two values that own each other, the mistake that `Weak` avoids.
        struct Owner {
            other: RefCell<Option<Rc<Owner>>>,
        }
        let first = Rc::new(Owner {
            other: RefCell::new(None),
        });
        let second = Rc::new(Owner {
            other: RefCell::new(Some(Rc::clone(&first))),
        });
        *first.other.borrow_mut() = Some(Rc::clone(&second));
        let watch_first = Rc::downgrade(&first);
        drop(first);
        drop(second);
        // Nothing outside the cycle points at it any more, yet its counts never reached
        // zero: the memory is leaked. A tracing garbage collector would have freed it.
        let leaked = watch_first.upgrade().expect("the cycle keeps itself alive");
        assert_eq!(Rc::strong_count(&leaked), 2); // `second.other` and `leaked`
        // ANCHOR_END: reference_cycle
        // Break the cycle by hand so the test itself does not leak.
        let second = leaked.other.borrow_mut().take().unwrap();
        drop(leaked);
        second.other.borrow_mut().take();
        drop(second);
        assert!(watch_first.upgrade().is_none());
    }
}
