//! Module 5: real-time systems: a fixed-rate loop that runs a compiled graph on a stream of
//! inputs, and the frame-time statistics that say whether it kept its deadlines.

/// Immutable by default: a sum kept in a register under `&mut` against one through `Cell`s.
pub mod aliasing;
/// Keeping the hot loop hot: allocation per frame against a reused buffer.
pub mod allocation;
/// Rust has no implicit casts: `as`, `From` and `TryFrom`, and what `as` does silently.
pub mod casts;
/// Step 2 of the loop: its components named, each behind an interface and timed alone.
pub mod components;
/// Copies nobody needed: `memcpy`, and swapping frame buffers instead of copying them.
pub mod copies;
/// A type-safe enum instead of a string key, parsed once at the edge of the program.
pub mod enum_keys;
/// The fixed-rate loop: releases by deadline, sleep or spin, skip or catch up after a miss.
pub mod fixed_rate;
/// Frame records, nearest-rank percentiles, deadline misses, jitter and histograms.
pub mod frame_stats;
/// Hard-coded types: a type alias, a generic function, and where `f32` is right on purpose.
pub mod hard_coded_types;
/// The loop's input: a seeded sensor stream whose block `k` needs no blocks before it.
pub mod input_stream;
/// Logging in the hot loop: a line per frame (line-buffered, buffered) against a counter.
pub mod logging;
/// Step 4 of the loop: conditioning and model as a two-stage pipeline on two threads.
pub mod optimised;
/// Step 1 of the loop: the whole job in one function, with `sleep(period)` after it.
pub mod prototype;
/// Seeded random test inputs, and the seed in every failure message.
pub mod seeded_random;
/// Step 3 of the loop: a correct loop on one thread, the reference the tests hold.
pub mod single_threaded;
/// Stateless over stateful: a moving average as a function and as a streaming object.
pub mod stateless;
/// System calls in the hot loop: polling a file, a `write` per frame, and the cheap clock.
pub mod system_calls;
/// Validate before the loop: per-sample checks inside it against one pass and a loop
/// without error paths.
pub mod validation;
