// alternative: an atomic pointer swapped with compare-and-exchange, old models freed by crossbeam-epoch
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, Sender};

use crossbeam::epoch::{self, Atomic, Owned, Shared};

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
/// An atomic pointer to the current `Arc<Model>`, swapped with compare-and-exchange; the
/// crossbeam-epoch collector frees a replaced pointer once no reader can still be reading it.
pub struct ModelSlot {
    current: Atomic<Arc<Model>>,
}

impl ModelSlot {
    /// A slot whose current model is `first`.
    pub fn new(first: Model) -> ModelSlot {
        ModelSlot {
            current: Atomic::new(Arc::new(first)),
        }
    }

    /// The newest model, whole, without a lock.
    pub fn current(&self) -> Arc<Model> {
        let guard = epoch::pin();
        let shared = self.current.load(Ordering::Acquire, &guard);
        // Never null: the slot always holds a model.
        Arc::clone(unsafe { shared.deref() })
    }

    /// Makes `model` the current model, unless the current one is as new or newer.
    pub fn publish(&self, model: Model) {
        let guard = epoch::pin();
        let mut new = Owned::new(Arc::new(model));
        let mut current = self.current.load(Ordering::Acquire, &guard);
        loop {
            // Never null: the slot always holds a model.
            if new.version <= unsafe { current.deref() }.version {
                return;
            }
            match self.current.compare_exchange(
                current,
                new,
                Ordering::AcqRel,
                Ordering::Acquire,
                &guard,
            ) {
                Ok(_) => {
                    // Freed once every thread pinned now has let go.
                    unsafe { guard.defer_destroy(current) };
                    return;
                }
                Err(failure) => {
                    current = failure.current;
                    new = failure.new;
                }
            }
        }
    }

    /// Trains the next version from the current model with `train`, which takes long,
    /// and publishes the result.
    pub fn train_and_publish(&self, train: impl FnOnce(&Model) -> Model) {
        let start_from = self.current();
        let trained = train(&start_from);
        self.publish(trained);
    }
}

impl Drop for ModelSlot {
    fn drop(&mut self) {
        // No other thread can hold the slot any more.
        let guard = unsafe { epoch::unprotected() };
        let current = self.current.swap(Shared::null(), Ordering::AcqRel, guard);
        if !current.is_null() {
            drop(unsafe { current.into_owned() });
        }
    }
}

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
