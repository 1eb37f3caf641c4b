//! What a type is, in bytes: its size, its alignment, the padding between its fields, and
//! the spare bit patterns (*niches*) that let `Option` cost nothing.
//!
//! Everything here is standard Rust and printed by `std::mem::size_of` and `align_of`, so
//! the snippets the book shows run unchanged on the Rust playground.

// ANCHOR: layout_of
/// The size and alignment of one type, as the compiler lays it out on this target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    pub name: &'static str,
    /// Bytes one value occupies, padding included: the distance between two neighbours
    /// in an array.
    pub size: usize,
    /// The value's address is always a multiple of this many bytes.
    pub align: usize,
}

/// The layout of `T`, labelled with a name for printing.
pub fn layout_of<T>(name: &'static str) -> Layout {
    Layout {
        name,
        size: std::mem::size_of::<T>(),
        align: std::mem::align_of::<T>(),
    }
}
// ANCHOR_END: layout_of

// ANCHOR: padding
/// A sample from a sensor: a one-byte flag, an eight-byte reading and a two-byte channel.
/// Rust may reorder the fields, and puts the widest first: 8 + 2 + 1 bytes, padded to 16
/// so that the next value in an array starts on a multiple of 8.
#[allow(dead_code)]
pub struct SampleReordered {
    pub valid: bool,
    pub reading: f64,
    pub channel: u16,
}

/// The same fields in C's layout: declared order, each field aligned in place. The flag
/// is followed by 7 bytes of padding before the reading, and the channel by 6 after it.
#[allow(dead_code)]
#[repr(C)]
pub struct SampleInDeclaredOrder {
    pub valid: bool,
    pub reading: f64,
    pub channel: u16,
}
// ANCHOR_END: padding

// ANCHOR: table
/// The layouts the chapter prints: scalars, the containers behind every tensor, the two
/// sample structs, and what `Option` adds to each.
pub fn layout_table() -> Vec<Layout> {
    vec![
        layout_of::<u8>("u8"),
        layout_of::<f32>("f32"),
        layout_of::<f64>("f64"),
        layout_of::<usize>("usize"),
        layout_of::<&f32>("&f32"),
        layout_of::<&[f32]>("&[f32]"),
        layout_of::<Box<f32>>("Box<f32>"),
        layout_of::<Vec<f32>>("Vec<f32>"),
        layout_of::<String>("String"),
        layout_of::<SampleReordered>("SampleReordered"),
        layout_of::<SampleInDeclaredOrder>("SampleInDeclaredOrder"),
        layout_of::<Option<u32>>("Option<u32>"),
        layout_of::<Option<std::num::NonZeroU32>>("Option<NonZeroU32>"),
        layout_of::<Option<Box<f32>>>("Option<Box<f32>>"),
        layout_of::<Option<Vec<f32>>>("Option<Vec<f32>>"),
        layout_of::<Option<f32>>("Option<f32>"),
    ]
}
// ANCHOR_END: table

#[cfg(test)]
mod tests {
    use super::*;

    fn find(name: &str) -> Layout {
        layout_table()
            .into_iter()
            .find(|layout| layout.name == name)
            .unwrap_or_else(|| panic!("{name} is not in the table"))
    }

    #[test]
    fn a_pointer_is_one_word_and_a_slice_reference_two() {
        let word = std::mem::size_of::<usize>();
        assert_eq!(find("&f32").size, word);
        assert_eq!(find("Box<f32>").size, word);
        assert_eq!(find("&[f32]").size, 2 * word);
        assert_eq!(find("Vec<f32>").size, 3 * word);
    }

    #[test]
    fn reordering_the_fields_saves_the_padding_that_declared_order_needs() {
        assert_eq!(find("SampleReordered").size, 16);
        assert_eq!(find("SampleInDeclaredOrder").size, 24);
        assert_eq!(find("SampleReordered").align, 8);
    }

    #[test]
    fn option_is_free_where_the_type_has_a_niche_and_costs_a_tag_where_not() {
        assert_eq!(find("Option<Box<f32>>").size, find("Box<f32>").size);
        assert_eq!(find("Option<Vec<f32>>").size, find("Vec<f32>").size);
        assert_eq!(find("Option<NonZeroU32>").size, 4);
        // Every bit pattern of a u32 or an f32 is a valid value, so None needs a tag.
        assert_eq!(find("Option<u32>").size, 8);
        assert_eq!(find("Option<f32>").size, 8);
    }

    #[test]
    fn every_size_is_a_multiple_of_its_alignment() {
        for layout in layout_table() {
            assert_eq!(layout.size % layout.align, 0, "{}", layout.name);
        }
    }
}
