//! Module 0: the Rust idioms a reader who makes code fast needs, each one measured.
