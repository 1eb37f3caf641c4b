//! Module 5: real-time systems: a fixed-rate loop that runs a compiled graph on a stream of
//! inputs, and the frame-time statistics that say whether it kept its deadlines.
