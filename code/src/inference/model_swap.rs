//! Training on one thread and answering requests on another: the trainer publishes each new
//! model as a whole, and the server picks up the newest one between two requests, without
//! ever stopping.
//!
//! The model lives in a [`ModelSlot`]: an `Arc` behind a `RwLock`. The lock guards only the
//! pointer, never the model, so it is held for the few nanoseconds it takes to copy or swap
//! an `Arc`: the server's [`ModelSlot::current`] clones the pointer and lets go, the
//! trainer's [`ModelSlot::publish`] swaps in a finished model. Training happens outside the
//! lock, on the trainer's own copy. Because a model is swapped as one pointer, a request is
//! always answered by all the layers of one version, and a version that the server has
//! picked up stays alive (the `Arc` counts its users) until its last request is answered,
//! however many newer versions arrive meanwhile.
//!
//! [`run_pipeline`] puts the three threads together: a client that sends test images at a
//! steady rate, the server ([`serve`]), and a trainer that runs one epoch at a time and
//! publishes every result.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use crate::inference::digits::{CLASSES, PIXELS, Split};
use crate::inference::training::{
    TrainedNetwork, TrainingConfig, TrainingError, continue_training,
};
use crate::tensor::Tensor2d;

// ANCHOR: model_slot
/// A model and the version number the slot gave it (the first model is version 0).
#[derive(Debug)]
pub struct Published<M> {
    pub version: u64,
    pub model: M,
}

/// The one place where the current model lives. Readers clone the `Arc` and answer with it
/// for as long as they like; a writer replaces the `Arc` as a whole.
#[derive(Debug)]
pub struct ModelSlot<M> {
    current: RwLock<Arc<Published<M>>>,
}

impl<M> ModelSlot<M> {
    pub fn new(first: M) -> Self {
        ModelSlot {
            current: RwLock::new(Arc::new(Published {
                version: 0,
                model: first,
            })),
        }
    }

    /// The newest published model. The read lock is held only while the `Arc` is cloned.
    pub fn current(&self) -> Arc<Published<M>> {
        // Nothing that can panic runs under this lock, so a poisoned lock still holds a
        // whole model: take it rather than stop serving.
        let guard = self.current.read().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(&guard)
    }

    /// Makes `model` the current one and returns its version. The write lock is held only
    /// for the swap of two pointers; the old model is freed after the lock is released (or
    /// later, by the last reader still answering with it).
    pub fn publish(&self, model: M) -> u64 {
        let mut guard = self.current.write().unwrap_or_else(PoisonError::into_inner);
        let version = guard.version + 1;
        let previous = std::mem::replace(&mut *guard, Arc::new(Published { version, model }));
        drop(guard);
        drop(previous);
        version
    }
}
// ANCHOR_END: model_slot

/// One inference request: classify test image `image`.
#[derive(Debug, Clone, Copy)]
pub struct Request {
    /// Requests are numbered 0, 1, 2, … in the order they are sent.
    pub id: u64,
    pub image: usize,
    pub sent: Instant,
}

/// The server's answer to one request.
#[derive(Debug, Clone, Copy)]
pub struct Answer {
    pub request: u64,
    pub image: usize,
    pub predicted: u8,
    /// The version of the model that computed the answer.
    pub version: u64,
    /// From sending the request to the answer being ready: waiting in the queue, plus the
    /// forward pass.
    pub latency: Duration,
}

// ANCHOR: serve
/// Answers every request in the order it arrives, each with the newest model at the moment
/// the request is taken from the queue, until the client hangs up. Returns early if nobody
/// listens for the answers any more.
pub fn serve(
    slot: &ModelSlot<TrainedNetwork>,
    images: &Tensor2d,
    requests: Receiver<Request>,
    answers: Sender<Answer>,
) {
    for request in requests {
        // One `Arc` per request: every layer used below belongs to this one version, even
        // if the trainer publishes a newer model while the forward pass runs.
        let published = slot.current();
        let image = Tensor2d::from_vec(1, PIXELS, images.row(request.image).to_vec())
            .expect("a row of the test images has PIXELS values");
        let predicted = published.model.predict(&image)[0];
        let answer = Answer {
            request: request.id,
            image: request.image,
            predicted,
            version: published.version,
            latency: request.sent.elapsed(),
        };
        if answers.send(answer).is_err() {
            return;
        }
    }
}
// ANCHOR_END: serve

/// What [`run_pipeline`] does.
#[derive(Debug, Clone)]
pub struct PipelineConfig {
    /// The training; its `epochs` is the number of versions published after the first.
    pub training: TrainingConfig,
    /// Train while serving; `false` serves the first model alone, for comparison.
    pub train_while_serving: bool,
    /// The first model: trained for this many epochs before serving starts (0: random
    /// weights, which answer about one request in ten correctly).
    pub warm_up_epochs: usize,
    /// One request every `request_interval`.
    pub request_interval: Duration,
    /// Requests sent after the last version is published (or, without training, in all).
    pub requests_after_training: usize,
    /// Seeds the order in which test images are requested.
    pub seed: u64,
}

impl Default for PipelineConfig {
    fn default() -> Self {
        PipelineConfig {
            training: TrainingConfig {
                epochs: 12,
                ..TrainingConfig::default()
            },
            train_while_serving: true,
            warm_up_epochs: 0,
            request_interval: Duration::from_micros(200),
            requests_after_training: 1000,
            seed: 7,
        }
    }
}

/// A version as the trainer published it.
#[derive(Debug, Clone, Copy)]
pub struct Publication {
    pub version: u64,
    /// The model's accuracy on the whole test set, measured by the trainer.
    pub test_accuracy: f32,
    /// Since serving started.
    pub at: Duration,
}

/// Everything one run of the pipeline recorded.
#[derive(Debug, Clone)]
pub struct PipelineRun {
    /// In request order: the server answers in the order requests arrive.
    pub answers: Vec<Answer>,
    /// Version 0 (the first model) first.
    pub publications: Vec<Publication>,
    /// The labels of the test images, to mark answers right or wrong.
    pub labels: Vec<u8>,
}

impl PipelineRun {
    /// Whether each answer is right, in request order.
    pub fn correct(&self) -> Vec<bool> {
        self.answers
            .iter()
            .map(|answer| answer.predicted == self.labels[answer.image])
            .collect()
    }
}

// ANCHOR: run_pipeline
/// Serves test images on one thread while another trains and publishes a new model after
/// every epoch; the calling thread is the client. Every request is answered exactly once.
pub fn run_pipeline(split: &Split, config: &PipelineConfig) -> Result<PipelineRun, TrainingError> {
    let one_epoch = |seed: u64| TrainingConfig {
        epochs: 1,
        seed,
        ..config.training.clone()
    };
    let mut first = TrainedNetwork::initialise(
        PIXELS,
        &config.training.hidden_sizes,
        CLASSES,
        config.training.seed,
    );
    for epoch in 0..config.warm_up_epochs {
        first = continue_training(
            first,
            None,
            &one_epoch(config.training.seed + epoch as u64),
            split,
        )?
        .0;
    }
    let first_accuracy = first.accuracy(&split.test);
    let slot = ModelSlot::new(first);
    let training_done = AtomicBool::new(!config.train_while_serving);
    let (request_sender, request_receiver) = channel();
    let (answer_sender, answer_receiver) = channel();
    let started = Instant::now();

    let publications = std::thread::scope(|scope| {
        let server =
            scope.spawn(|| serve(&slot, &split.test.images, request_receiver, answer_sender));
        let trainer = scope.spawn(|| -> Result<Vec<Publication>, TrainingError> {
            let mut publications = Vec::new();
            if config.train_while_serving {
                // The trainer's own copy: training never touches the model being served.
                let mut network = slot.current().model.clone();
                for epoch in 0..config.training.epochs {
                    let seed = config.training.seed + (config.warm_up_epochs + epoch) as u64;
                    let (trained, report) =
                        match continue_training(network, None, &one_epoch(seed), split) {
                            Ok(result) => result,
                            Err(error) => {
                                training_done.store(true, Ordering::Release);
                                return Err(error);
                            }
                        };
                    network = trained.clone();
                    let version = slot.publish(trained);
                    publications.push(Publication {
                        version,
                        test_accuracy: report.final_test_accuracy(),
                        at: started.elapsed(),
                    });
                }
            }
            training_done.store(true, Ordering::Release);
            Ok(publications)
        });

        // The client: one request every `request_interval`, on a fixed schedule (a late
        // request does not push the later ones back), in a shuffled order of the test set.
        let mut generator = ChaCha8Rng::seed_from_u64(config.seed);
        let mut order: Vec<usize> = (0..split.test.len()).collect();
        let mut id = 0u64;
        let mut remaining_after_training = config.requests_after_training;
        while remaining_after_training > 0 {
            if training_done.load(Ordering::Acquire) {
                remaining_after_training -= 1;
            }
            let position = id as usize % order.len();
            if position == 0 {
                order.shuffle(&mut generator);
            }
            let due = started + config.request_interval * id as u32;
            if let Some(wait) = due.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
            let request = Request {
                id,
                image: order[position],
                sent: Instant::now(),
            };
            if request_sender.send(request).is_err() {
                break; // the server stopped: it panicked, which join reports below
            }
            id += 1;
        }
        drop(request_sender);
        server
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        trainer
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })?;

    let mut all = vec![Publication {
        version: 0,
        test_accuracy: first_accuracy,
        at: Duration::ZERO,
    }];
    all.extend(publications);
    Ok(PipelineRun {
        answers: answer_receiver.into_iter().collect(),
        publications: all,
        labels: split.test.labels.clone(),
    })
}
// ANCHOR_END: run_pipeline

/// The `percent`-th percentile of `latencies` (nearest rank), or `None` when there are none.
pub fn percentile(latencies: &[Duration], percent: f64) -> Option<Duration> {
    if latencies.is_empty() {
        return None;
    }
    let mut sorted = latencies.to_vec();
    sorted.sort_unstable();
    let rank = ((percent / 100.0) * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inference::Digits;

    #[test]
    fn a_reader_keeps_its_version_while_newer_ones_are_published() {
        let slot = ModelSlot::new(vec![0u64; 4]);
        let held = slot.current();
        assert_eq!(slot.publish(vec![1; 4]), 1);
        assert_eq!(slot.publish(vec![2; 4]), 2);
        assert_eq!((held.version, held.model.as_slice()), (0, &[0u64; 4][..]));
        let newest = slot.current();
        assert_eq!(
            (newest.version, newest.model.as_slice()),
            (2, &[2u64; 4][..])
        );
    }

    /// Readers on other threads never see a model mixed from two versions, and the versions
    /// they see never go back.
    #[test]
    fn concurrent_readers_see_whole_models_in_order() {
        let slot = ModelSlot::new(vec![0u64; 64]);
        let finished = AtomicBool::new(false);
        std::thread::scope(|scope| {
            let readers: Vec<_> = (0..2)
                .map(|_| {
                    scope.spawn(|| {
                        let mut last = 0;
                        loop {
                            // A read that starts after the writer finished sees its last
                            // version; that read is the reader's last.
                            let writer_finished = finished.load(Ordering::Acquire);
                            let published = slot.current();
                            assert!(published.version >= last, "a version went back");
                            assert!(
                                published
                                    .model
                                    .iter()
                                    .all(|&value| value == published.version),
                                "a model mixed from two versions"
                            );
                            last = published.version;
                            if writer_finished {
                                break;
                            }
                        }
                        last
                    })
                })
                .collect();
            for version in 1..=2000u64 {
                assert_eq!(slot.publish(vec![version; 64]), version);
            }
            finished.store(true, Ordering::Release);
            for reader in readers {
                assert_eq!(reader.join().unwrap(), 2000);
            }
        });
    }

    #[test]
    fn every_request_is_answered_once_in_order_while_training_publishes() {
        // A few hundred training images keep the test quick in a debug build, where the
        // client would otherwise queue requests for as long as the training runs.
        let full = Digits::split(0.2, 1).unwrap();
        let first: Vec<usize> = (0..300).collect();
        let split = Split {
            training: full.training.select(&first),
            test: full.test,
        };
        let config = PipelineConfig {
            training: TrainingConfig {
                epochs: 3,
                ..TrainingConfig::default()
            },
            request_interval: Duration::from_micros(500),
            requests_after_training: 300,
            ..PipelineConfig::default()
        };
        let run = run_pipeline(&split, &config).unwrap();
        assert!(run.answers.len() >= 300);
        for (index, answer) in run.answers.iter().enumerate() {
            assert_eq!(
                answer.request, index as u64,
                "answers in request order, none lost"
            );
        }
        let versions: Vec<u64> = run.answers.iter().map(|answer| answer.version).collect();
        assert!(versions.windows(2).all(|pair| pair[0] <= pair[1]));
        // The last 300 requests were sent after the last publication: they see it.
        assert!(
            versions[versions.len() - 300..]
                .iter()
                .all(|&version| version == 3)
        );
        assert_eq!(run.publications.len(), 4);
        // Three epochs on 300 images beat random weights (about 30 of 300 right) by far.
        let correct = run.correct();
        let late = &correct[correct.len() - 300..];
        assert!(late.iter().filter(|&&right| right).count() > 150);
    }

    #[test]
    fn percentiles_by_nearest_rank() {
        let latencies: Vec<Duration> = (1..=100).map(Duration::from_micros).collect();
        assert_eq!(
            percentile(&latencies, 50.0),
            Some(Duration::from_micros(50))
        );
        assert_eq!(
            percentile(&latencies, 99.0),
            Some(Duration::from_micros(99))
        );
        assert_eq!(
            percentile(&latencies, 100.0),
            Some(Duration::from_micros(100))
        );
        assert_eq!(percentile(&[], 50.0), None);
    }
}
