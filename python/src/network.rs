//! The `galaxy.Network` class: a graph prepared once per execution mode and run on NumPy
//! arrays.
//!
//! Crossing the boundary copies: an input array is copied into a [`Tensor2d`] the crate
//! owns (and converted to `float32` first if it is not), and the output `Vec<f32>` becomes
//! the memory of the returned NumPy array without a second copy.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::Mutex;
use std::time::Instant;

use galaxy::gpu::GpuContext;
use galaxy::graph::{ChainBuilder, ValidGraph};
use galaxy::runner::{Execution, ExecutionMode, RunError};
use galaxy::tensor::Tensor2d;
use numpy::{AllowTypeChange, PyArray1, PyArray2, PyArrayLike1, PyArrayLike2, PyArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::{graph_error, parse_mode, run_error};

/// One linear layer as Python passes it and reads it back: `x @ weights + bias`, then a
/// ReLU when `relu` is true.
#[derive(Clone)]
struct Layer {
    weights: Tensor2d,
    bias: Tensor2d,
    relu: bool,
}

/// A layer as Python passes it: `(weights, bias, relu)`, arrays of any float dtype.
type LayerArguments<'py> = (
    PyArrayLike2<'py, f32, AllowTypeChange>,
    PyArrayLike1<'py, f32, AllowTypeChange>,
    bool,
);

/// A layer as Python reads it back: `(weights, bias, relu)` as float32 arrays.
type LayerArrays<'py> = (Bound<'py, PyArray2<f32>>, Bound<'py, PyArray1<f32>>, bool);

// ANCHOR: network
/// A network of linear layers, each optionally followed by a ReLU, then (optionally) a
/// row-wise softmax; prepared once per execution mode, the first time that mode runs.
#[pyclass(module = "galaxy", frozen)]
pub struct Network {
    graph: ValidGraph,
    layers: Vec<Layer>,
    softmax: bool,
    /// The standard workload's input, for networks made by `random_mlp`.
    workload_input: Option<Tensor2d>,
    /// Preparing a mode compiles shaders, packs weights or measures kernels: done once.
    /// GPU modes borrow the process-wide `GpuContext::shared()`, hence `'static`.
    prepared: Mutex<HashMap<ExecutionMode, Execution<'static>>>,
}
// ANCHOR_END: network

// ANCHOR: random_mlp
/// The standard workload: `depth` layers of `size × size` weights on a `size × size` input,
/// each followed by a ReLU with probability ½, a ReLU after the last one, then a row-wise
/// softmax. The same arguments give the same network as in Rust.
#[pyfunction]
#[pyo3(signature = (size, depth, seed))]
pub fn random_mlp(size: usize, depth: usize, seed: u64) -> PyResult<Network> {
    let workload = galaxy::graph::random_mlp(size, depth, seed).map_err(graph_error)?;
    let layers = workload
        .layers()
        .into_iter()
        .map(|layer| Layer {
            weights: layer.weights.clone(),
            bias: layer.bias.clone(),
            relu: layer.relu,
        })
        .collect();
    Ok(Network::new(
        workload.graph,
        layers,
        true,
        Some(workload.input),
    ))
}
// ANCHOR_END: random_mlp

#[pymethods]
impl Network {
    /// A network from weights you pass: `layers` is a list of `(weights, bias, relu)` with
    /// `weights` of shape `(inputs, outputs)`, `bias` of length `outputs`, and `relu` a bool;
    /// it runs on inputs of shape `(rows, inputs of the first layer)`. Arrays of another
    /// dtype are converted to float32.
    #[new]
    #[pyo3(signature = (layers, rows, softmax = true))]
    fn from_layers(
        layers: Vec<LayerArguments<'_>>,
        rows: usize,
        softmax: bool,
    ) -> PyResult<Network> {
        let layers: Vec<Layer> = layers
            .into_iter()
            .map(|(weights, bias, relu)| {
                let bias = bias.as_array().to_vec();
                Ok(Layer {
                    weights: tensor_from_array(&weights)?,
                    bias: Tensor2d::from_vec(1, bias.len(), bias)
                        .map_err(|error| PyValueError::new_err(error.to_string()))?,
                    relu,
                })
            })
            .collect::<PyResult<_>>()?;
        let inputs = layers.first().map_or(0, |layer| layer.weights.rows());
        let mut chain = ChainBuilder::input(rows, inputs);
        for layer in &layers {
            chain = chain.linear(layer.weights.clone(), layer.bias.clone());
            if layer.relu {
                chain = chain.relu();
            }
        }
        if softmax {
            chain = chain.softmax();
        }
        let graph = chain.output().map_err(graph_error)?;
        Ok(Network::new(graph, layers, softmax, None))
    }

    // ANCHOR: run
    /// Runs the network on `input` (shape `(rows, inputs)`) in the execution mode named
    /// `mode` and returns the output, read back from the GPU for GPU modes.
    #[pyo3(signature = (input, mode = "CpuGraph"))]
    fn run<'py>(
        &self,
        python: Python<'py>,
        input: PyArrayLike2<'py, f32, AllowTypeChange>,
        mode: &str,
    ) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let mode = parse_mode(mode)?;
        let input = tensor_from_array(&input)?;
        // The run releases Python's interpreter lock: other Python threads go on meanwhile.
        let output = python
            .detach(|| self.run_prepared(mode, &input, 1))
            .map_err(run_error)?
            .pop()
            .expect("one iteration gives one output");
        let (rows, columns) = output.shape();
        // The Vec becomes the array's memory: no copy on the way out.
        PyArray1::from_vec(python, output.into_vec()).reshape([rows, columns])
    }
    // ANCHOR_END: run

    /// Runs the network `runs` times in Rust and returns the mean seconds per run, timed in
    /// Rust: beside a Python loop over `run`, it shows what crossing the boundary costs.
    #[pyo3(signature = (input, mode, runs))]
    fn seconds_per_run_in_rust(
        &self,
        python: Python<'_>,
        input: PyArrayLike2<'_, f32, AllowTypeChange>,
        mode: &str,
        runs: usize,
    ) -> PyResult<f64> {
        if runs == 0 {
            return Err(PyValueError::new_err("runs must be at least 1"));
        }
        let mode = parse_mode(mode)?;
        let input = tensor_from_array(&input)?;
        python
            .detach(|| {
                // Prepare (and warm up) outside the timed loop, as the Python loop does.
                self.run_prepared(mode, &input, 1)?;
                let start = Instant::now();
                for _ in 0..runs {
                    self.run_prepared(mode, &input, 1)?;
                }
                Ok(start.elapsed().as_secs_f64() / runs as f64)
            })
            .map_err(run_error)
    }

    /// The standard workload's input, for networks made by `random_mlp`; otherwise None.
    #[getter]
    fn workload_input<'py>(&self, python: Python<'py>) -> Option<Bound<'py, PyArray2<f32>>> {
        self.workload_input
            .as_ref()
            .map(|tensor| array_from_tensor(python, tensor))
    }

    /// The layers as `(weights, bias, relu)` tuples of NumPy arrays: enough to run the same
    /// network in NumPy.
    #[getter]
    fn layers<'py>(&self, python: Python<'py>) -> Vec<LayerArrays<'py>> {
        self.layers
            .iter()
            .map(|layer| {
                let bias = PyArray1::from_slice(python, layer.bias.as_slice());
                (array_from_tensor(python, &layer.weights), bias, layer.relu)
            })
            .collect()
    }

    /// Whether a row-wise softmax follows the last layer.
    #[getter]
    fn softmax(&self) -> bool {
        self.softmax
    }

    /// The shape `(rows, columns)` of the inputs the network runs on.
    #[getter]
    fn input_shape(&self) -> (usize, usize) {
        self.graph.shape(self.graph.input())
    }

    fn __repr__(&self) -> String {
        let (rows, columns) = self.graph.shape(self.graph.input());
        format!(
            "<galaxy.Network: {} layers, input {rows}×{columns}{}>",
            self.layers.len(),
            if self.softmax { ", softmax" } else { "" }
        )
    }
}

impl Network {
    fn new(
        graph: ValidGraph,
        layers: Vec<Layer>,
        softmax: bool,
        workload_input: Option<Tensor2d>,
    ) -> Network {
        Network {
            graph,
            layers,
            softmax,
            workload_input,
            prepared: Mutex::new(HashMap::new()),
        }
    }

    /// Runs `iterations` times in `mode`, preparing the mode on its first use.
    fn run_prepared(
        &self,
        mode: ExecutionMode,
        input: &Tensor2d,
        iterations: usize,
    ) -> Result<Vec<Tensor2d>, RunError> {
        // A run that panicked leaves the lock poisoned; the prepared modes are still usable.
        let mut prepared = self
            .prepared
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let execution = match prepared.entry(mode) {
            Entry::Occupied(entry) => entry.into_mut(),
            Entry::Vacant(entry) => {
                let context = if mode.uses_gpu() {
                    Some(GpuContext::shared()?)
                } else {
                    None
                };
                entry.insert(mode.prepare(&self.graph, context)?)
            }
        };
        execution.run(input, iterations)
    }
}

// ANCHOR: conversion
/// Copies a 2-D array (any memory layout) into a row-major tensor the crate owns.
fn tensor_from_array(array: &PyArrayLike2<'_, f32, AllowTypeChange>) -> PyResult<Tensor2d> {
    let view = array.as_array();
    let (rows, columns) = view.dim();
    // `iter` walks in row-major order whatever the strides: a transposed view copies right.
    let values: Vec<f32> = match view.as_slice() {
        Some(contiguous) => contiguous.to_vec(),
        None => view.iter().copied().collect(),
    };
    Tensor2d::from_vec(rows, columns, values)
        .map_err(|error| PyValueError::new_err(error.to_string()))
}

/// Copies a tensor into a new 2-D NumPy array.
fn array_from_tensor<'py>(python: Python<'py>, tensor: &Tensor2d) -> Bound<'py, PyArray2<f32>> {
    let (rows, columns) = tensor.shape();
    PyArray1::from_slice(python, tensor.as_slice())
        .reshape([rows, columns])
        .expect("rows × columns values fill a rows × columns array")
}
// ANCHOR_END: conversion
