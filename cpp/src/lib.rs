//! Calling the galaxy crate from C++ through cxx.
