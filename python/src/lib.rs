//! Python bindings for the galaxy crate's graph runner.
