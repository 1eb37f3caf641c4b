//! Builds the C++ half of the bridge: cxx-build reads the `#[cxx::bridge]` module in
//! `src/bridge.rs`, writes the C++ glue for it, and compiles that glue together with
//! `src/summary.cc` into a static library that is linked into this crate.

use std::env;
use std::process::Command;

fn main() {
    // The C++ compiler cc (and so cxx-build) will use: `CXX` if set, otherwise `c++`. The
    // `cxx` crate compiles C++ in its own build script too, so without a compiler the
    // workspace cannot build this crate at all; say what to install rather than leave
    // only a linker or "tool not found" message.
    let compiler = env::var("CXX").unwrap_or_else(|_| "c++".to_string());
    let found = Command::new(&compiler)
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success());
    if !found {
        panic!(
            "galaxy-cpp compiles C++ but found no C++ compiler ({compiler:?} does not run): \
             install one (Debian and Ubuntu: `apt-get install g++`) or set CXX to its path; \
             `cargo test --workspace --exclude galaxy-cpp` tests everything else"
        );
    }

    // ANCHOR: cxx_build
    cxx_build::bridge("src/bridge.rs")
        .file("src/summary.cc")
        .std("c++17")
        .compile("galaxy_cpp_bridge");
    // ANCHOR_END: cxx_build
    println!("cargo::rerun-if-changed=src/bridge.rs");
    println!("cargo::rerun-if-changed=src/summary.cc");
    println!("cargo::rerun-if-changed=include/summary.h");
    println!("cargo::rerun-if-env-changed=CXX");
}
