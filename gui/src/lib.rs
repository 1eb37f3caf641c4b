//! Module 2's GUI: an egui application that shares one wgpu device between drawing and the
//! galaxy crate's compute.
