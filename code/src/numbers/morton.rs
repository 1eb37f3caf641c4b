//! Morton codes (Z-order): a 2D position turned into one index by interleaving the bits of
//! x and y, `y₁x₁y₀x₀`. Neighbours in 2D mostly stay neighbours in memory, whichever way a
//! loop walks: a 4 × 4 block of 4-byte pixels is 64 bytes, one cache line, and a 32 × 32
//! block is one 4 KiB page. A row-major image keeps only horizontal neighbours close; walking it by
//! columns touches a new cache line (and soon a new page) at every step.
//!
//! GPUs store textures in a similar *tiled* or *swizzled* order for the same reason: a
//! triangle samples a small 2D footprint of the texture, in no particular direction.

// ANCHOR: interleave
/// Spreads the 16 low bits of `value` to the even bit positions of a `u32`
/// (`abcd` → `0a0b0c0d`), in four steps that each move half of the remaining groups.
pub fn spread_bits(value: u16) -> u32 {
    let mut bits = u32::from(value);
    bits = (bits | bits << 8) & 0x00ff_00ff;
    bits = (bits | bits << 4) & 0x0f0f_0f0f;
    bits = (bits | bits << 2) & 0x3333_3333;
    bits = (bits | bits << 1) & 0x5555_5555;
    bits
}

/// The inverse of [`spread_bits`]: gathers the even bits back together.
pub fn compact_bits(spread: u32) -> u16 {
    let mut bits = spread & 0x5555_5555;
    bits = (bits | bits >> 1) & 0x3333_3333;
    bits = (bits | bits >> 2) & 0x0f0f_0f0f;
    bits = (bits | bits >> 4) & 0x00ff_00ff;
    bits = (bits | bits >> 8) & 0x0000_ffff;
    bits as u16
}

/// The Morton code of `(x, y)`: x in the even bits, y in the odd bits.
pub fn morton_encode(x: u16, y: u16) -> u32 {
    spread_bits(x) | spread_bits(y) << 1
}

pub fn morton_decode(code: u32) -> (u16, u16) {
    (compact_bits(code), compact_bits(code >> 1))
}
// ANCHOR_END: interleave

/// A square image of 4-byte pixels (a packed RGBA colour, say) of side `side` (a power of
/// two, at most 2¹⁶) stored row-major and in Z-order, the same values in both.
#[derive(Debug, Clone)]
pub struct TwoLayouts {
    pub side: usize,
    pub row_major: Vec<u32>,
    pub z_order: Vec<u32>,
}

impl TwoLayouts {
    /// An image whose value at `(x, y)` is `x + side · y`, in both layouts; `None` when
    /// `side` is not a power of two of at most 2¹⁶.
    pub fn new(side: usize) -> Option<TwoLayouts> {
        if !side.is_power_of_two() || side > 1 << 16 {
            return None;
        }
        let row_major: Vec<u32> = (0..side * side).map(|index| index as u32).collect();
        let mut z_order = vec![0; side * side];
        for y in 0..side {
            for x in 0..side {
                z_order[morton_encode(x as u16, y as u16) as usize] = row_major[y * side + x];
            }
        }
        Some(TwoLayouts {
            side,
            row_major,
            z_order,
        })
    }
}

// ANCHOR: walks
/// Which way a loop walks the image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Walk {
    /// Along each row: x changes fastest.
    ByRows,
    /// Down each column: y changes fastest.
    ByColumns,
}

/// Sums the row-major image in the order `walk` says. The sum is the same whichever way;
/// only the order of the addresses differs. (An integer sum: one addition per cycle, so
/// that the time measures the memory, not a chain of floating-point additions.)
pub fn sum_row_major(image: &TwoLayouts, walk: Walk) -> u64 {
    let side = image.side;
    let mut sum = 0u64;
    for outer in 0..side {
        for inner in 0..side {
            let (x, y) = match walk {
                Walk::ByRows => (inner, outer),
                Walk::ByColumns => (outer, inner),
            };
            sum += u64::from(image.row_major[y * side + x]);
        }
    }
    sum
}

/// The even bits of a Morton code (x) and the odd bits (y).
const X_BITS: u32 = 0x5555_5555;
const Y_BITS: u32 = 0xaaaa_aaaa;

/// The same sum over the Z-order copy, in the same order of `(x, y)`. The code of the next
/// pixel along a row or a column is not computed from scratch: adding 1 to the x bits alone
/// is done by filling the y bits with ones, so that the carry jumps over them, adding 1, and
/// masking the y bits out again (and the same with the roles swapped for a column).
pub fn sum_z_order(image: &TwoLayouts, walk: Walk) -> u64 {
    let side = image.side;
    let mut sum = 0u64;
    for outer in 0..side {
        let (fixed, moving_mask) = match walk {
            Walk::ByRows => (spread_bits(outer as u16) << 1, X_BITS),
            Walk::ByColumns => (spread_bits(outer as u16), Y_BITS),
        };
        let mut moving = 0u32;
        for _ in 0..side {
            sum += u64::from(image.z_order[(fixed | moving) as usize]);
            moving = ((moving | !moving_mask).wrapping_add(1)) & moving_mask;
        }
    }
    sum
}
// ANCHOR_END: walks

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Interleaving one bit at a time: obviously right, slow.
    fn morton_by_loop(x: u16, y: u16) -> u32 {
        (0..16).fold(0, |code, bit| {
            code | (u32::from(x >> bit) & 1) << (2 * bit)
                | (u32::from(y >> bit) & 1) << (2 * bit + 1)
        })
    }

    #[test]
    fn the_first_codes_trace_the_z() {
        let order: Vec<(u16, u16)> = (0..8).map(morton_decode).collect();
        assert_eq!(
            order,
            [
                (0, 0),
                (1, 0),
                (0, 1),
                (1, 1),
                (2, 0),
                (3, 0),
                (2, 1),
                (3, 1)
            ]
        );
    }

    #[test]
    fn both_layouts_hold_the_same_image_and_every_walk_sums_the_same() {
        assert!(TwoLayouts::new(48).is_none());
        let image = TwoLayouts::new(64).unwrap();
        let expected = (0..64 * 64).sum::<u64>();
        for walk in [Walk::ByRows, Walk::ByColumns] {
            assert_eq!(sum_row_major(&image, walk), expected);
            assert_eq!(sum_z_order(&image, walk), expected);
        }
        // A 4 × 4 block is 16 consecutive values of the Z-order copy.
        let mut block: Vec<u32> = image.z_order[..16].to_vec();
        let mut expected_block: Vec<u32> = (0..4)
            .flat_map(|y| (0..4).map(move |x| x + 64 * y))
            .collect();
        expected_block.sort_unstable();
        block.sort_unstable();
        assert_eq!(block, expected_block);
    }

    proptest! {
        #[test]
        fn stepping_the_x_or_y_bits_is_adding_one(x in 0u16..u16::MAX, y in 0u16..u16::MAX) {
            let code = morton_encode(x, y);
            let step_x = ((code & X_BITS) | !X_BITS).wrapping_add(1) & X_BITS | (code & Y_BITS);
            prop_assert_eq!(step_x, morton_encode(x + 1, y));
            let step_y = ((code & Y_BITS) | !Y_BITS).wrapping_add(1) & Y_BITS | (code & X_BITS);
            prop_assert_eq!(step_y, morton_encode(x, y + 1));
        }

        #[test]
        fn the_magic_numbers_interleave_exactly(x: u16, y: u16) {
            prop_assert_eq!(morton_encode(x, y), morton_by_loop(x, y));
            prop_assert_eq!(morton_decode(morton_encode(x, y)), (x, y));
        }
    }
}
