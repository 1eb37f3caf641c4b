// mutant: blocking — train_and_publish keeps a read guard while the model trains
// expect: blocked
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, PoisonError, RwLock};

// ANCHOR: given
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
// ANCHOR_END: given

// ANCHOR: slot
/// Where the current model lives, shared by the server and the trainers.
pub struct ModelSlot {
    current: RwLock<Arc<Model>>,
}

impl ModelSlot {
    /// A slot whose current model is `first`.
    pub fn new(first: Model) -> ModelSlot {
        ModelSlot {
            current: RwLock::new(Arc::new(first)),
        }
    }

    /// The newest model, whole. The read lock is held only while the `Arc` is cloned.
    pub fn current(&self) -> Arc<Model> {
        // Only a pointer copy or swap runs under the lock: a poisoned lock still holds a
        // whole model.
        Arc::clone(&self.current.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Makes `model` the current model, unless the current one is as new or newer.
    pub fn publish(&self, model: Model) {
        let model = Arc::new(model);
        let mut current = self.current.write().unwrap_or_else(PoisonError::into_inner);
        if model.version > current.version {
            // The old model is freed when its last reader lets go of it: here, after the
            // lock is released (`replace` hands it back), or later, by a reader.
            let _previous = std::mem::replace(&mut *current, model);
            drop(current);
        }
    }

    /// Trains the next version from the current model with `train`, which takes long,
    /// and publishes the result. The server goes on answering with the current model while
    /// `train` runs.
    pub fn train_and_publish(&self, train: impl FnOnce(&Model) -> Model) {
        // A read guard kept while training, "so that the model cannot change meanwhile":
        // readers are not blocked by it, but a trainer that publishes meanwhile waits for the
        // write lock, and the server's readers then queue behind that writer.
        let guard = self.current.read().unwrap_or_else(PoisonError::into_inner);
        let trained = train(&guard);
        drop(guard);
        self.publish(trained);
    }
}
// ANCHOR_END: slot

// ANCHOR: serve
/// Answers every request in the order it arrives, each with the current model at the
/// moment the request is taken from the queue, until the sender of the requests hangs up.
/// Stops early when nobody receives the answers any more.
pub fn serve(slot: &ModelSlot, requests: Receiver<Request>, answers: Sender<Answer>) {
    for request in requests {
        let model = slot.current();
        if answers.send(model.answer(&request)).is_err() {
            return;
        }
    }
}
// ANCHOR_END: serve
