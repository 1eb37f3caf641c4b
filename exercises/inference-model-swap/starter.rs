//! Training on one thread, serving on another.
//!
//! A server answers a stream of inference requests while a trainer keeps improving the
//! model and publishes each new version. Your task: write the slot that hands the newest
//! model from the trainer to the server (`ModelSlot`) and the server's loop (`serve`).
//!
//! - Every request is answered exactly once, in the order the requests arrive: none is
//!   dropped while a new model comes in, none is answered twice.
//! - Every answer comes from one whole model: all of its layers of one version, never some
//!   layers of the old model and some of the new.
//! - The server never waits for training: while `train_and_publish` trains (which takes
//!   long), requests keep being answered with the model of the moment.
//! - A request sent after `publish` returned is answered by that model or a newer one, and
//!   the versions the server answers with never go back. Several trainers may publish at
//!   once: a model older than the current one (a smaller `version`) is ignored.
//!
//! Choose how: an `Arc<Model>` behind a `RwLock` or a `Mutex`, a channel the server
//! drains, an atomic pointer. The types `Layer`, `Model`, `Request` and `Answer` and the
//! method `Model::answer` are part of the task's interface: keep them.

use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender};

/// One layer of a model: its weights, and the version of the model it was trained for.
#[derive(Debug, Clone, PartialEq)]
pub struct Layer {
    pub version: u64,
    pub weights: Vec<f32>,
}

/// A model: a stack of layers. Every layer of the model of version `v` has `version: v`.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    pub version: u64,
    pub layers: Vec<Layer>,
}

/// One inference request. Requests are numbered 0, 1, 2, … in the order they are sent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Request {
    pub id: u64,
    pub input: f32,
}

/// The answer to one request, with the version of the model and of each layer that
/// computed it.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub request: u64,
    pub version: u64,
    pub layer_versions: Vec<u64>,
    pub output: f32,
}

impl Model {
    /// The model's answer to `request`: a stand-in for a forward pass, in which the input
    /// passes through every layer in turn and each layer adds the mean of its weights.
    pub fn answer(&self, request: &Request) -> Answer {
        let mut output = request.input;
        let mut layer_versions = Vec::with_capacity(self.layers.len());
        for layer in &self.layers {
            output += layer.weights.iter().sum::<f32>() / layer.weights.len().max(1) as f32;
            layer_versions.push(layer.version);
        }
        Answer {
            request: request.id,
            version: self.version,
            layer_versions,
            output,
        }
    }
}

/// Where the current model lives, shared by the server and the trainers.
pub struct ModelSlot {
    // Your fields.
}

impl ModelSlot {
    /// A slot whose current model is `first`.
    pub fn new(first: Model) -> ModelSlot {
        todo!("keep `first` as the current model")
    }

    /// The newest model, whole. It must not wait for a training step.
    pub fn current(&self) -> Arc<Model> {
        todo!("return the current model")
    }

    /// Makes `model` the current model, unless the current one is as new or newer.
    pub fn publish(&self, model: Model) {
        todo!("swap in `model` if it is newer")
    }

    /// Trains the next version from the current model with `train`, which takes long,
    /// and publishes the result. The server goes on answering with the current model while
    /// `train` runs.
    pub fn train_and_publish(&self, train: impl FnOnce(&Model) -> Model) {
        todo!("train from the current model, then publish")
    }
}

/// Answers every request in the order it arrives, each with the current model at the
/// moment the request is taken from the queue, until the sender of the requests hangs up.
/// Stops early when nobody receives the answers any more.
pub fn serve(slot: &ModelSlot, requests: Receiver<Request>, answers: Sender<Answer>) {
    todo!("answer every request with the current model")
}
