//! Logging and printing in a hot loop: a line per frame, written three ways, against a
//! counter that is logged once.
//!
//! `println!` locks standard output, formats the line, and hands it to a `LineWriter`,
//! which makes a `write` system call at every newline, whatever the output is (a terminal,
//! a file, a pipe). The functions here take the writer as a parameter so that the
//! benchmark and the tests can give them a file or a `Vec<u8>`; `print_every_frame` is the
//! one that really uses `println!`.

use std::io::{self, Write};

/// The root mean square of a frame: its loudness.
fn level(frame: &[f32]) -> f32 {
    let sum_of_squares: f32 = frame.iter().map(|sample| sample * sample).sum();
    (sum_of_squares / frame.len().max(1) as f32).sqrt()
}

// ANCHOR: print_every_frame
/// Prints each frame's level to standard output and returns how many frames were louder
/// than `threshold`. One formatted line, one lock and one `write` system call per frame.
pub fn print_every_frame(frames: &[f32], frame_length: usize, threshold: f32) -> usize {
    let mut loud = 0;
    for (index, frame) in frames.chunks_exact(frame_length.max(1)).enumerate() {
        let level = level(frame);
        println!("frame {index}: level {level:.4}");
        if level > threshold {
            loud += 1;
        }
    }
    loud
}
// ANCHOR_END: print_every_frame

// ANCHOR: log_every_frame
/// The same lines written to `output`. Given a `LineWriter` (what `println!` uses) it makes
/// one system call per frame; given a `BufWriter` it fills 8 KiB in memory first and makes
/// one system call per 8 KiB; the formatting is paid for in both.
pub fn log_every_frame(
    output: &mut impl Write,
    frames: &[f32],
    frame_length: usize,
    threshold: f32,
) -> io::Result<usize> {
    let mut loud = 0;
    for (index, frame) in frames.chunks_exact(frame_length.max(1)).enumerate() {
        let level = level(frame);
        writeln!(output, "frame {index}: level {level:.4}")?;
        if level > threshold {
            loud += 1;
        }
    }
    output.flush()?;
    Ok(loud)
}
// ANCHOR_END: log_every_frame

// ANCHOR: count_then_log_once
/// Counts the loud frames in the loop and writes one line after it: what the loop needs to
/// report, without formatting or writing anything per frame.
pub fn count_then_log_once(
    output: &mut impl Write,
    frames: &[f32],
    frame_length: usize,
    threshold: f32,
) -> io::Result<usize> {
    let frame_length = frame_length.max(1);
    let loud = frames
        .chunks_exact(frame_length)
        .filter(|frame| level(frame) > threshold)
        .count();
    let total = frames.len() / frame_length;
    writeln!(output, "{loud} of {total} frames above level {threshold}")?;
    output.flush()?;
    Ok(loud)
}
// ANCHOR_END: count_then_log_once

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufWriter, LineWriter};

    fn frames() -> Vec<f32> {
        // Frame k holds the value k/10 everywhere, so its level is k/10.
        (0..20)
            .flat_map(|frame| std::iter::repeat_n(frame as f32 / 10.0, 8))
            .collect()
    }

    #[test]
    fn every_writer_gets_the_same_lines_and_the_same_count() {
        let frames = frames();
        let mut unbuffered = LineWriter::new(Vec::new());
        let loud = log_every_frame(&mut unbuffered, &frames, 8, 1.25).unwrap();
        let mut buffered = BufWriter::new(Vec::new());
        let loud_buffered = log_every_frame(&mut buffered, &frames, 8, 1.25).unwrap();
        let unbuffered = unbuffered.into_inner().unwrap();
        assert_eq!(unbuffered, buffered.into_inner().unwrap());
        assert_eq!(loud, loud_buffered);
        let text = String::from_utf8(unbuffered).unwrap();
        assert_eq!(text.lines().count(), 20);
        assert_eq!(text.lines().nth(3), Some("frame 3: level 0.3000"));
        // Levels 1.3 to 1.9 are above 1.25: seven frames.
        assert_eq!(loud, 7);
    }

    #[test]
    fn counting_reports_the_same_number_in_one_line() {
        let frames = frames();
        let mut output = Vec::new();
        let loud = count_then_log_once(&mut output, &frames, 8, 1.25).unwrap();
        assert_eq!(loud, 7);
        assert_eq!(
            String::from_utf8(output).unwrap(),
            "7 of 20 frames above level 1.25\n"
        );
    }

    #[test]
    fn printing_counts_like_logging() {
        // A handful of frames only: the lines go to the test's captured output.
        let frames = &frames()[..5 * 8];
        let mut sink = Vec::new();
        assert_eq!(
            print_every_frame(frames, 8, 0.25),
            log_every_frame(&mut sink, frames, 8, 0.25).unwrap()
        );
    }
}
