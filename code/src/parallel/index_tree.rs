//! A tree stored in one vector, children named by index: a binary search tree in an arena.
//!
//! With `Box` children a tree is a set of separate heap blocks; here every node is a
//! slot of one `Vec`, and a child is the `u32` index of its slot (`NONE` for no child).
//! Nodes sit close together in memory, the tree is dropped, cloned or written to a file
//! as one block, and walking it needs no recursion and no borrow juggling. The same idea
//! stores bounding-volume hierarchies and octrees for rendering and physics (see the
//! linearised octrees of the specialisations chapter).

// ANCHOR: index_tree
/// No child.
const NONE: u32 = u32::MAX;

#[derive(Debug, Clone, PartialEq)]
struct TreeNode<V> {
    key: u32,
    value: V,
    left: u32,
    right: u32,
}

/// A binary search tree whose nodes live in one vector.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexTree<V> {
    nodes: Vec<TreeNode<V>>,
    root: u32,
}

impl<V> Default for IndexTree<V> {
    fn default() -> Self {
        IndexTree {
            nodes: Vec::new(),
            root: NONE,
        }
    }
}

impl<V> IndexTree<V> {
    pub fn new() -> IndexTree<V> {
        IndexTree::default()
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Inserts `key` with `value`, or replaces the value of an existing `key` and returns
    /// the old one. Walks down from the root by index; a new node is pushed at the end of
    /// the vector and its index written into the parent's child slot.
    pub fn insert(&mut self, key: u32, value: V) -> Option<V> {
        let new_index = self.nodes.len() as u32;
        let mut slot = self.root;
        let mut parent: Option<(u32, bool)> = None; // (parent, is the left child)
        while slot != NONE {
            let node = &mut self.nodes[slot as usize];
            if key == node.key {
                return Some(std::mem::replace(&mut node.value, value));
            }
            let go_left = key < node.key;
            parent = Some((slot, go_left));
            slot = if go_left { node.left } else { node.right };
        }
        self.nodes.push(TreeNode {
            key,
            value,
            left: NONE,
            right: NONE,
        });
        match parent {
            None => self.root = new_index,
            Some((parent, true)) => self.nodes[parent as usize].left = new_index,
            Some((parent, false)) => self.nodes[parent as usize].right = new_index,
        }
        None
    }

    pub fn get(&self, key: u32) -> Option<&V> {
        let mut slot = self.root;
        while slot != NONE {
            let node = &self.nodes[slot as usize];
            if key == node.key {
                return Some(&node.value);
            }
            slot = if key < node.key {
                node.left
            } else {
                node.right
            };
        }
        None
    }
    // ANCHOR_END: index_tree

    // ANCHOR: in_order
    /// The keys in increasing order: an in-order walk with an explicit stack of indices.
    pub fn keys_in_order(&self) -> Vec<u32> {
        let mut keys = Vec::with_capacity(self.nodes.len());
        let mut stack: Vec<u32> = Vec::new();
        let mut slot = self.root;
        while slot != NONE || !stack.is_empty() {
            while slot != NONE {
                stack.push(slot);
                slot = self.nodes[slot as usize].left;
            }
            let index = stack.pop().expect("the loop condition");
            keys.push(self.nodes[index as usize].key);
            slot = self.nodes[index as usize].right;
        }
        keys
    }
    // ANCHOR_END: in_order

    /// The number of nodes on the longest path from the root (0 for an empty tree).
    pub fn height(&self) -> usize {
        let mut deepest = 0;
        let mut stack = vec![(self.root, 1)];
        while let Some((slot, depth)) = stack.pop() {
            if slot == NONE {
                continue;
            }
            deepest = deepest.max(depth);
            let node = &self.nodes[slot as usize];
            stack.push((node.left, depth + 1));
            stack.push((node.right, depth + 1));
        }
        deepest
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::collections::BTreeMap;

    #[test]
    fn behaves_like_a_btree_map_on_random_keys() {
        for seed in 0..20 {
            let mut generator = ChaCha8Rng::seed_from_u64(seed);
            let mut tree = IndexTree::new();
            let mut reference = BTreeMap::new();
            for step in 0..500u32 {
                let key = generator.random_range(0..300);
                assert_eq!(
                    tree.insert(key, step),
                    reference.insert(key, step),
                    "seed {seed}"
                );
            }
            assert_eq!(tree.len(), reference.len());
            let expected: Vec<u32> = reference.keys().copied().collect();
            assert_eq!(tree.keys_in_order(), expected);
            for key in 0..320 {
                assert_eq!(tree.get(key), reference.get(&key), "key {key}");
            }
        }
    }

    #[test]
    fn sorted_insertions_make_a_chain_and_a_deep_walk_does_not_overflow() {
        // A plain search tree does not rebalance: keys in order give a path of n nodes
        // (and n² / 2 steps to build, so n stays modest).
        let mut tree = IndexTree::new();
        for key in 0..10_000 {
            tree.insert(key, ());
        }
        assert_eq!(tree.height(), 10_000);
        assert_eq!(tree.keys_in_order().len(), 10_000);
    }

    #[test]
    fn an_empty_tree_has_nothing() {
        let tree: IndexTree<u8> = IndexTree::new();
        assert!(tree.is_empty());
        assert_eq!(tree.get(3), None);
        assert_eq!(tree.height(), 0);
        assert!(tree.keys_in_order().is_empty());
    }
}
