// C++ code that uses the galaxy crate: it calls the Rust function run_standard_workload
// (declared in src/bridge.rs) and reads the output it returns.
#include "galaxy-cpp/include/summary.h"
#include "galaxy-cpp/src/bridge.rs.h"

#include <algorithm>
#include <cstddef>
#include <stdexcept>

namespace galaxy {

// ANCHOR: summarize
OutputSummary summarize_standard_workload(std::size_t size, std::size_t depth, std::uint64_t seed) {
    // A rust::Vec<float>: the Rust vector itself, handed over without a copy.
    rust::Vec<float> output = run_standard_workload(size, depth, seed);

    if (output.empty()) {
        // cxx turns this into the Err of the Rust call, with this message.
        throw std::runtime_error("the workload's output is empty");
    }
    OutputSummary summary;
    summary.rows = size;
    summary.columns = size;
    // Sum in double, front to back, as the Rust test does: the two sums are then equal.
    summary.sum = 0.0;
    for (float value : output) {
        summary.sum += value;
    }
    summary.largest = *std::max_element(output.begin(), output.end());
    const std::size_t shown = std::min<std::size_t>(output.size(), 4);
    for (std::size_t index = 0; index < shown; ++index) {
        summary.first_values.push_back(output[index]);
    }
    return summary;
}
// ANCHOR_END: summarize

}  // namespace galaxy
