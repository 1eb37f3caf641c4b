// The C++ half of the bridge in src/bridge.rs: a function that runs the galaxy crate's
// standard workload (through Rust) and summarises its output in C++.
#pragma once

#include <cstddef>
#include <cstdint>

#include "rust/cxx.h"

namespace galaxy {

// Declared by the bridge (src/bridge.rs); its definition is in the generated header.
struct OutputSummary;

// ANCHOR: declaration
// Runs random_mlp(size, depth, seed) through Rust and returns the output's shape, sum,
// largest value and first values. A Rust error arrives here as a rust::Error exception
// and goes back to Rust, unchanged, as the Err of the call.
OutputSummary summarize_standard_workload(std::size_t size, std::size_t depth, std::uint64_t seed);
// ANCHOR_END: declaration

}  // namespace galaxy
