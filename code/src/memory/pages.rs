//! Virtual memory, felt from a program: the first touch of a page costs a page fault.
//!
//! When a program asks for a large block of memory, the operating system only reserves a
//! range of *virtual* addresses; no physical memory backs it yet. The first write to each
//! page traps into the kernel (a *page fault*), which finds a free physical page, fills it
//! with zeros and records the mapping in the page table. Every later access to the page
//! goes straight through, translated by the TLB.
//!
//! [`touch_every_page`] writes one byte per page, so timing it on a fresh buffer and then
//! again on the same buffer separates the price of the faults from the price of the
//! writes.

/// The page size this module assumes: 4 KiB, the base page size on x86-64 and on most
/// ARM Linux systems. (Apple's ARM processors use 16 KiB pages; touching every 4 KiB
/// then touches each page four times, which only the first of them pays for.)
pub const PAGE_SIZE: usize = 4096;

// ANCHOR: touch_every_page
/// Adds one to the first byte of every `PAGE_SIZE` bytes of `buffer` and returns how many
/// bytes it wrote.
pub fn touch_every_page(buffer: &mut [u8]) -> usize {
    let mut touched = 0;
    for byte in buffer.iter_mut().step_by(PAGE_SIZE) {
        *byte = byte.wrapping_add(1);
        touched += 1;
    }
    touched
}
// ANCHOR_END: touch_every_page

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_byte_per_page_is_touched() {
        let mut buffer = vec![0_u8; 3 * PAGE_SIZE + 10];
        assert_eq!(touch_every_page(&mut buffer), 4);
        assert_eq!(touch_every_page(&mut buffer), 4);
        for (index, &byte) in buffer.iter().enumerate() {
            let expected = if index % PAGE_SIZE == 0 { 2 } else { 0 };
            assert_eq!(byte, expected, "byte {index}");
        }
        assert_eq!(touch_every_page(&mut []), 0);
    }
}
