//! Integer keys instead of strings: the same counting job done with a `HashMap<String, _>`,
//! with strings *interned* once into small integer ids, and with an enum.
//!
//! Looking a string up in a hash table hashes every byte of it, then compares it byte by
//! byte with the key it finds, and the key itself lives in a separate heap allocation. An
//! interned id is four bytes: hashing it is a few instructions, comparing it is one, and
//! when the ids are dense (0, 1, 2, …) the table can become a plain `Vec` indexed by the
//! id, with no hashing at all. An enum is the same idea decided at compile time: the set of
//! keys is fixed, the compiler checks every use, and the enum is its own index.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

// ANCHOR: interner
/// Gives every distinct string a small integer id, in order of first appearance, and
/// remembers the string of every id.
#[derive(Debug, Default, Clone)]
pub struct Interner {
    ids: HashMap<String, u32>,
    names: Vec<String>,
}

impl Interner {
    /// The id of `name`, handing out the next one the first time a name is seen.
    pub fn intern(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = self.names.len() as u32;
        self.ids.insert(name.to_string(), id);
        self.names.push(name.to_string());
        id
    }

    /// The string behind `id`, if it was handed out.
    pub fn name(&self, id: u32) -> Option<&str> {
        self.names.get(id as usize).map(String::as_str)
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}
// ANCHOR_END: interner

// ANCHOR: multiplicative_hasher
/// A hasher for integer keys: one multiplication by a large odd constant spreads the bits
/// of the key over the word (the same idea as rustc's `FxHasher`). It is fast, and it is
/// *not* safe against keys chosen by an attacker: the standard `HashMap` uses SipHash,
/// which is slower for the very reason that it is.
#[derive(Debug, Default, Clone, Copy)]
pub struct MultiplicativeHasher {
    state: u64,
}

impl Hasher for MultiplicativeHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.write_u64(u64::from(byte));
        }
    }

    fn write_u32(&mut self, value: u32) {
        self.write_u64(u64::from(value));
    }

    fn write_u64(&mut self, value: u64) {
        self.state = (self.state.rotate_left(5) ^ value).wrapping_mul(0x517c_c1b7_2722_0a95);
    }

    fn finish(&self) -> u64 {
        self.state
    }
}

/// A `HashMap` that hashes its keys with [`MultiplicativeHasher`].
pub type FastIntegerMap<V> = HashMap<u32, V, BuildHasherDefault<MultiplicativeHasher>>;
// ANCHOR_END: multiplicative_hasher

// ANCHOR: counting
/// Counts how often each name occurs, keyed by the names themselves.
pub fn count_by_string(events: &[&str]) -> HashMap<String, u64> {
    let mut counts: HashMap<String, u64> = HashMap::new();
    for &name in events {
        // Look up by `&str` first: `entry` would need an owned `String` for every event.
        match counts.get_mut(name) {
            Some(count) => *count += 1,
            None => {
                counts.insert(name.to_string(), 1);
            }
        }
    }
    counts
}

/// The same count keyed by interned ids, in the standard (SipHash) `HashMap`.
pub fn count_by_id(events: &[u32]) -> HashMap<u32, u64> {
    let mut counts = HashMap::new();
    for &id in events {
        *counts.entry(id).or_insert(0) += 1;
    }
    counts
}

/// The same count keyed by interned ids with the multiplicative hasher.
pub fn count_by_id_fast_hash(events: &[u32]) -> FastIntegerMap<u64> {
    let mut counts = FastIntegerMap::default();
    for &id in events {
        *counts.entry(id).or_insert(0) += 1;
    }
    counts
}

/// Dense ids need no hash table: the id is the index.
pub fn count_by_index(events: &[u32], distinct: usize) -> Vec<u64> {
    let mut counts = vec![0; distinct];
    for &id in events {
        counts[id as usize] += 1;
    }
    counts
}
// ANCHOR_END: counting

// ANCHOR: enum_key
/// A fixed set of keys known when the program is written: an enum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventKind {
    KeyDown,
    KeyUp,
    MouseMove,
    MouseDown,
    MouseUp,
    Scroll,
    Resize,
    Redraw,
}

impl EventKind {
    pub const ALL: [EventKind; 8] = [
        EventKind::KeyDown,
        EventKind::KeyUp,
        EventKind::MouseMove,
        EventKind::MouseDown,
        EventKind::MouseUp,
        EventKind::Scroll,
        EventKind::Resize,
        EventKind::Redraw,
    ];

    /// The name a string-keyed program would have used.
    pub fn name(self) -> &'static str {
        match self {
            EventKind::KeyDown => "key-down",
            EventKind::KeyUp => "key-up",
            EventKind::MouseMove => "mouse-move",
            EventKind::MouseDown => "mouse-down",
            EventKind::MouseUp => "mouse-up",
            EventKind::Scroll => "scroll",
            EventKind::Resize => "resize",
            EventKind::Redraw => "redraw",
        }
    }
}

/// Counting by enum: the discriminant is the index into a fixed-size array.
pub fn count_by_enum(events: &[EventKind]) -> [u64; 8] {
    let mut counts = [0; 8];
    for &kind in events {
        counts[kind as usize] += 1;
    }
    counts
}
// ANCHOR_END: enum_key

/// `count` names of the kind a program builds at run time (`layer-000042/weight`), each a
/// separate heap allocation, and a stream of `events` drawn uniformly from them with a
/// fixed seed: the input of the measurements.
pub fn names_and_events(count: usize, events: usize, seed: u64) -> (Vec<String>, Vec<usize>) {
    use rand::{RngExt, SeedableRng};
    let names = (0..count)
        .map(|index| format!("layer-{index:06}/weight"))
        .collect();
    let mut random = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let stream = (0..events)
        .map(|_| random.random_range(0..count.max(1)))
        .collect();
    (names, stream)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_way_of_counting_gives_the_same_counts() {
        let (names, stream) = names_and_events(100, 10_000, 3);
        let events: Vec<&str> = stream.iter().map(|&index| names[index].as_str()).collect();
        let by_string = count_by_string(&events);

        let mut interner = Interner::default();
        let ids: Vec<u32> = events.iter().map(|name| interner.intern(name)).collect();
        assert!(interner.len() <= 100 && !interner.is_empty());
        let by_id = count_by_id(&ids);
        let by_fast_hash = count_by_id_fast_hash(&ids);
        let by_index = count_by_index(&ids, interner.len());

        assert_eq!(by_string.values().sum::<u64>(), 10_000);
        for (name, &count) in &by_string {
            let id = interner.intern(name);
            assert_eq!(interner.name(id), Some(name.as_str()));
            assert_eq!(by_id[&id], count, "{name}");
            assert_eq!(by_fast_hash[&id], count, "{name}");
            assert_eq!(by_index[id as usize], count, "{name}");
        }
    }

    #[test]
    fn interning_gives_dense_ids_in_order_of_first_appearance() {
        let mut interner = Interner::default();
        assert_eq!(interner.intern("relu"), 0);
        assert_eq!(interner.intern("linear"), 1);
        assert_eq!(interner.intern("relu"), 0);
        assert_eq!(interner.name(1), Some("linear"));
        assert_eq!(interner.name(2), None);
    }

    #[test]
    fn enum_counts_match_string_counts() {
        let events: Vec<EventKind> = (0..1000)
            .map(|index| EventKind::ALL[(index * 7 + index / 3) % 8])
            .collect();
        let names: Vec<&str> = events.iter().map(|kind| kind.name()).collect();
        let by_string = count_by_string(&names);
        let by_enum = count_by_enum(&events);
        for kind in EventKind::ALL {
            assert_eq!(by_enum[kind as usize], by_string[kind.name()], "{kind:?}");
        }
    }

    #[test]
    fn the_multiplicative_hasher_sends_consecutive_ids_to_distinct_buckets() {
        // A table of 64 buckets indexes with the low 6 bits of the hash. Multiplying by an
        // odd constant permutes the low bits, so 64 consecutive ids fill all 64 buckets.
        let buckets: std::collections::HashSet<u64> = (0u32..64)
            .map(|id| {
                let mut hasher = MultiplicativeHasher::default();
                hasher.write_u32(id + 1000);
                hasher.finish() & 63
            })
            .collect();
        assert_eq!(buckets.len(), 64);
    }
}
