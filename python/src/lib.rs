//! Python bindings for the galaxy crate's graph runner, built with PyO3 and maturin.
//!
//! The Python module is called `galaxy`:
//!
//! ```python
//! import galaxy
//! network = galaxy.random_mlp(size=64, depth=8, seed=1)
//! output = network.run(network.workload_input, mode="CpuGraph")   # a NumPy array
//! ```
//!
//! This file declares the module: its exceptions, its functions and its one class,
//! [`network::Network`]. The conversions between NumPy arrays and the crate's tensors live
//! in `network.rs`.

pub mod network;

use galaxy::gpu::GpuContext;
use galaxy::graph::GraphError;
use galaxy::runner::{ExecutionMode, RunError};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

// ANCHOR: exceptions
/// The exceptions Python sees. Every error the crate reports reaches Python as one of these,
/// carrying the crate's own message.
pub mod exceptions {
    use pyo3::create_exception;
    use pyo3::exceptions::PyException;

    create_exception!(
        galaxy,
        GalaxyError,
        PyException,
        "Base class of the errors the galaxy crate reports."
    );
    create_exception!(
        galaxy,
        GraphError,
        GalaxyError,
        "The network is not a valid graph: shapes that do not fit, an empty network."
    );
    create_exception!(
        galaxy,
        RunError,
        GalaxyError,
        "The network could not be prepared or run: a wrong input shape, no GPU, a failed kernel."
    );
}

/// The Python exception for an invalid graph, with the crate's message.
pub fn graph_error(error: GraphError) -> PyErr {
    exceptions::GraphError::new_err(error.to_string())
}

/// The Python exception for a failed run; an invalid graph found while preparing a mode
/// is still a `GraphError`.
pub fn run_error(error: RunError) -> PyErr {
    match error {
        RunError::Graph(error) => graph_error(error),
        other => exceptions::RunError::new_err(other.to_string()),
    }
}
// ANCHOR_END: exceptions

/// The execution mode named `name`, spelt as in Rust (`"CpuGraph"`, `"GraphCompiled"`).
pub fn parse_mode(name: &str) -> PyResult<ExecutionMode> {
    ExecutionMode::ALL
        .into_iter()
        .find(|mode| format!("{mode:?}") == name)
        .ok_or_else(|| {
            PyValueError::new_err(format!(
                "unknown execution mode {name:?}; the modes are {}",
                mode_names().join(", ")
            ))
        })
}

/// The names of every execution mode, in the order the crate lists them.
#[pyfunction]
fn execution_modes() -> Vec<String> {
    mode_names()
}

fn mode_names() -> Vec<String> {
    ExecutionMode::ALL
        .iter()
        .map(|mode| format!("{mode:?}"))
        .collect()
}

/// Whether the mode named `name` runs on the GPU.
#[pyfunction]
fn uses_gpu(name: &str) -> PyResult<bool> {
    Ok(parse_mode(name)?.uses_gpu())
}

/// The GPU adapter the GPU modes run on (its name, driver and backend), or a `RunError`
/// saying why there is none.
#[pyfunction]
fn gpu_adapter() -> PyResult<String> {
    let context = GpuContext::shared().map_err(|error| run_error(RunError::Gpu(error)))?;
    Ok(context.describe())
}

/// Does nothing: calling it from Python measures what crossing into Rust costs.
#[pyfunction]
fn do_nothing() {}

// ANCHOR: module
/// The module Python imports as `galaxy`.
#[pymodule(name = "galaxy")]
fn galaxy_module(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let python = module.py();
    module.add("GalaxyError", python.get_type::<exceptions::GalaxyError>())?;
    module.add("GraphError", python.get_type::<exceptions::GraphError>())?;
    module.add("RunError", python.get_type::<exceptions::RunError>())?;
    module.add_class::<network::Network>()?;
    module.add_function(wrap_pyfunction!(network::random_mlp, module)?)?;
    module.add_function(wrap_pyfunction!(execution_modes, module)?)?;
    module.add_function(wrap_pyfunction!(uses_gpu, module)?)?;
    module.add_function(wrap_pyfunction!(gpu_adapter, module)?)?;
    module.add_function(wrap_pyfunction!(do_nothing, module)?)?;
    Ok(())
}
// ANCHOR_END: module

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mode_is_found_by_its_rust_name() {
        for mode in ExecutionMode::ALL {
            assert_eq!(parse_mode(&format!("{mode:?}")).unwrap(), mode);
        }
        assert_eq!(mode_names().len(), ExecutionMode::ALL.len());
    }

    #[test]
    fn an_unknown_mode_is_an_error_naming_the_modes() {
        Python::initialize();
        let error = parse_mode("Fastest").unwrap_err();
        let message = Python::attach(|python| error.value(python).to_string());
        assert!(
            message.contains("unknown execution mode \"Fastest\""),
            "{message}"
        );
        assert!(message.contains("CpuGraph, Immediate"), "{message}");
    }
}
