//! Training on one thread, serving on another (`ModelSlot` and `serve`).
//!
//! The checker's models carry their version in every layer (and as the value of every
//! weight), so an answer computed from a model mixed of two versions names both. Three
//! parts, each made of threaded stress runs:
//!
//! - **Answers while models arrive**: `serve` answers thousands of requests while a trainer
//!   publishes a hundred versions. Every request must be answered exactly once and in
//!   order; every answer must come from one whole model whose output matches its version;
//!   the versions must never go back; and a request sent after `publish` returned must be
//!   answered by that version or a newer one.
//! - **The slot under stress**: two trainers publish versions `2r - 1` and `2r` at the same
//!   moment, round after round, while a reader calls `current` in a loop: no torn model,
//!   no version going back, and after every round the newer of the two is the one left in
//!   the slot.
//! - **Serving during a long training**: `train_and_publish` trains for
//!   [`TRAINING_STEP`] while a client sends a request every millisecond, and another trainer
//!   publishes a version in the middle of it; most of the requests must be answered before
//!   the training ends.
//!
//! Every run has a time limit: threads that wait for each other forever are reported as a
//! deadlock (and left behind, asleep), never a hang.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::{Duration, Instant};

use crate::report::{PartReport, Verdict, catching_panics};
use crate::submission::Submission;

/// How long `train` takes in the long-training part.
pub const TRAINING_STEP: Duration = Duration::from_millis(400);

/// In the long-training part, another trainer publishes version [`INTERLOPER_VERSION`] this
/// long after `train` started: a `train_and_publish` that keeps any lock (even a read guard)
/// while training makes that publish wait, and the server's reads queue behind it.
const INTERLOPER_AFTER: Duration = Duration::from_millis(50);
const INTERLOPER_VERSION: u64 = 5;
/// The version that `train` returns in the long-training part (newer than the interloper's).
const TRAINED_VERSION: u64 = 10;

/// How long one run may take before it counts as a deadlock. A correct run takes well under
/// a second, even on two busy cores.
const TIME_LIMIT: Duration = Duration::from_secs(15);

/// What the checker reads of a model: its version and the version of every layer.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelSeen {
    pub version: u64,
    pub layer_versions: Vec<u64>,
}

/// What the checker reads of an answer.
#[derive(Debug, Clone, PartialEq)]
pub struct AnswerSeen {
    pub request: u64,
    pub version: u64,
    pub layer_versions: Vec<u64>,
    pub output: f32,
}

/// The exercise's code, whichever file it comes from: the checker builds its models and
/// requests through this, and reads its models and answers back.
pub trait SwapCode: 'static {
    type Slot: Send + Sync + 'static;
    type Model: Send + 'static;
    type Request: Send + 'static;
    type Answer: Send + 'static;
    /// The model of `version`: `layers` layers of `width` weights, each weight `version`.
    fn model(version: u64, layers: usize, width: usize) -> Self::Model;
    fn new_slot(first: Self::Model) -> Self::Slot;
    fn current(slot: &Self::Slot) -> ModelSeen;
    fn publish(slot: &Self::Slot, model: Self::Model);
    /// `train` gets the version of the model it starts from.
    fn train_and_publish(slot: &Self::Slot, train: &mut dyn FnMut(u64) -> Self::Model);
    fn request(id: u64, input: f32) -> Self::Request;
    fn answer(answer: Self::Answer) -> AnswerSeen;
    fn serve(slot: &Self::Slot, requests: Receiver<Self::Request>, answers: Sender<Self::Answer>);
}

pub fn check(submission: &Submission) -> Vec<PartReport> {
    crate::rust_exercises::with_rust_module!(inference_model_swap, submission.rust, |code| {
        struct Code;
        impl SwapCode for Code {
            type Slot = code::ModelSlot;
            type Model = code::Model;
            type Request = code::Request;
            type Answer = code::Answer;
            fn model(version: u64, layers: usize, width: usize) -> code::Model {
                code::Model {
                    version,
                    layers: (0..layers)
                        .map(|_| code::Layer {
                            version,
                            weights: vec![version as f32; width],
                        })
                        .collect(),
                }
            }
            fn new_slot(first: code::Model) -> code::ModelSlot {
                code::ModelSlot::new(first)
            }
            fn current(slot: &code::ModelSlot) -> ModelSeen {
                let model = slot.current();
                ModelSeen {
                    version: model.version,
                    layer_versions: model.layers.iter().map(|layer| layer.version).collect(),
                }
            }
            fn publish(slot: &code::ModelSlot, model: code::Model) {
                slot.publish(model)
            }
            fn train_and_publish(
                slot: &code::ModelSlot,
                train: &mut dyn FnMut(u64) -> code::Model,
            ) {
                slot.train_and_publish(|model| train(model.version))
            }
            fn request(id: u64, input: f32) -> code::Request {
                code::Request { id, input }
            }
            fn answer(answer: code::Answer) -> AnswerSeen {
                AnswerSeen {
                    request: answer.request,
                    version: answer.version,
                    layer_versions: answer.layer_versions,
                    output: answer.output,
                }
            }
            fn serve(
                slot: &code::ModelSlot,
                requests: Receiver<code::Request>,
                answers: Sender<code::Answer>,
            ) {
                code::serve(slot, requests, answers)
            }
        }
        check_code::<Code>()
    })
}

/// The three parts, each a few runs; after a run that did not finish, the later parts are
/// not run (their threads would wait on the same mistake).
pub fn check_code<C: SwapCode>() -> Vec<PartReport> {
    let mut parts = Vec::new();
    let mut deadlocked = false;
    let mut part = PartReport::new("answers while models arrive");
    for run in 0..4u64 {
        let verdict = within_time_limit(move || answers_while_models_arrive::<C>(run));
        deadlocked |= is_deadlock(&verdict);
        let stop = !verdict.passed();
        part.push(
            format!(
                "run {}: 3000 requests, 100 versions published meanwhile",
                run + 1
            ),
            verdict,
        );
        if stop {
            break;
        }
    }
    parts.push(part);

    let mut part = PartReport::new("the slot under stress");
    for run in 0..3u64 {
        let verdict = if deadlocked {
            not_run()
        } else {
            within_time_limit(move || slot_under_stress::<C>(run))
        };
        deadlocked |= is_deadlock(&verdict);
        let stop = !verdict.passed();
        part.push(
            format!(
                "run {}: 2 trainers publish versions 1 to {STRESS_VERSIONS} in racing pairs, a reader calls current()",
                run + 1
            ),
            verdict,
        );
        if stop {
            break;
        }
    }
    parts.push(part);

    let mut part = PartReport::new("serving during a long training");
    let verdict = if deadlocked {
        not_run()
    } else {
        within_time_limit(serving_during_a_long_training::<C>)
    };
    part.push(
        format!(
            "a request every millisecond while train_and_publish trains for {} ms (another \
             trainer publishes {} ms into it)",
            TRAINING_STEP.as_millis(),
            INTERLOPER_AFTER.as_millis()
        ),
        verdict,
    );
    parts.push(part);
    parts
}

fn not_run() -> Verdict {
    Verdict::Unmet("not run: an earlier run did not finish (see above)".to_string())
}

fn is_deadlock(verdict: &Verdict) -> bool {
    matches!(verdict, Verdict::Unmet(text) if text.contains("deadlock"))
}

/// Runs `work` on a thread of its own and waits at most [`TIME_LIMIT`] for its verdict.
/// A run that does not finish is left behind: its threads wait on each other and cost
/// nothing but their memory.
fn within_time_limit(work: impl FnOnce() -> Verdict + Send + 'static) -> Verdict {
    let (sender, receiver) = channel();
    let spawned = std::thread::Builder::new()
        .name("model-swap check".to_string())
        .spawn(move || {
            let verdict = catching_panics(work).unwrap_or_else(|panicked| panicked);
            let _ = sender.send(verdict);
        });
    if let Err(error) = spawned {
        return Verdict::Error(format!("could not start a thread for the run: {error}"));
    }
    match receiver.recv_timeout(TIME_LIMIT) {
        Ok(verdict) => verdict,
        Err(_) => Verdict::Unmet(format!(
            "the run did not finish within {} s: its threads wait for each other forever, a \
             deadlock (for example a lock that one thread takes twice, such as a read guard \
             still held while the same thread asks for the write lock)",
            TIME_LIMIT.as_secs()
        )),
    }
}

/// Joins a thread of a run; a panic in the exercise's code becomes its verdict.
fn joined<T>(handle: std::thread::ScopedJoinHandle<'_, Result<T, Verdict>>) -> Result<T, Verdict> {
    match handle.join() {
        Ok(result) => result,
        Err(payload) => Err(Verdict::Panicked(
            payload
                .downcast_ref::<&str>()
                .map(|text| text.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".to_string()),
        )),
    }
}

/// The output the model of `version` must give for `input`: every layer adds the mean of
/// its weights, which is the version.
fn expected_output(input: f32, version: u64, layers: usize) -> f32 {
    let mut output = input;
    for _ in 0..layers {
        output += version as f32;
    }
    output
}

/// "versions 4 and 5", "versions 3, 4 and 5".
fn versions_listed(versions: &[u64]) -> String {
    let mut distinct = versions.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    match distinct.as_slice() {
        [] => "no layer at all".to_string(),
        [one] => format!("version {one}"),
        [first @ .., last] => format!(
            "versions {} and {last}",
            first
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A model read whole: every layer of its version.
fn torn(seen_version: u64, layer_versions: &[u64], layers: usize) -> Option<String> {
    if layer_versions.len() != layers {
        return Some(format!(
            "has {} layers, but every published model has {layers}",
            layer_versions.len()
        ));
    }
    if layer_versions
        .iter()
        .all(|&version| version == seen_version)
    {
        return None;
    }
    Some(format!(
        "is a torn model: it says version {seen_version}, but its layers come from {}: it was \
         read while it was being replaced layer by layer. Publish a new model as a whole (swap \
         one pointer, such as an Arc) instead of changing the layers of the current one",
        versions_listed(layer_versions)
    ))
}

/// Layers and weights per layer of the models of the first part.
const ANSWER_LAYERS: usize = 8;
const ANSWER_WIDTH: usize = 16;
const REQUESTS: u64 = 3000;
const VERSIONS: u64 = 100;

fn answers_while_models_arrive<C: SwapCode>(run: u64) -> Verdict {
    let slot = C::new_slot(C::model(0, ANSWER_LAYERS, ANSWER_WIDTH));
    // The newest version whose publish has returned.
    let published = AtomicU64::new(0);
    let (request_sender, request_receiver) = channel();
    let (answer_sender, answer_receiver) = channel();
    let outcome: Result<Vec<u64>, Verdict> = std::thread::scope(|scope| {
        let server =
            scope.spawn(|| catching_panics(|| C::serve(&slot, request_receiver, answer_sender)));
        let trainer = scope.spawn(|| {
            catching_panics(|| {
                for version in 1..=VERSIONS {
                    C::publish(&slot, C::model(version, ANSWER_LAYERS, ANSWER_WIDTH));
                    published.store(version, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_micros(1000 + 250 * run));
                }
            })
        });
        // The client: for each request, the newest version published before it was sent.
        let mut floors = Vec::with_capacity(REQUESTS as usize);
        let mut hung_up = None;
        for id in 0..REQUESTS {
            floors.push(published.load(Ordering::SeqCst));
            if request_sender.send(C::request(id, id as f32)).is_err() {
                // The server dropped its receiver: it has returned, or panicked.
                hung_up = Some(id);
                break;
            }
            if id % 4 == 0 {
                std::thread::sleep(Duration::from_micros(250));
            }
        }
        drop(request_sender);
        joined(server)?;
        joined(trainer)?;
        if let Some(id) = hung_up {
            return Err(Verdict::Unmet(format!(
                "serve returned while requests were still coming: request {id} of {REQUESTS} \
                 could not be sent, so it and the ones after it were never answered. Keep \
                 taking requests until the sender hangs up (`for request in requests` waits \
                 while the queue is empty; `try_recv` does not)"
            )));
        }
        Ok(floors)
    });
    let floors = match outcome {
        Ok(floors) => floors,
        Err(verdict) => return verdict,
    };
    let answers: Vec<AnswerSeen> = answer_receiver.into_iter().map(C::answer).collect();
    judge_answers(&answers, &floors)
}

/// Every request answered once and in order, each by one whole model whose output fits
/// its version, versions never going back, and none older than the request's floor.
fn judge_answers(answers: &[AnswerSeen], floors: &[u64]) -> Verdict {
    let requests = floors.len() as u64;
    let mut answered = vec![0u32; floors.len()];
    let mut strangers = Vec::new();
    for answer in answers {
        match answered.get_mut(answer.request as usize) {
            Some(count) => *count += 1,
            None => strangers.push(answer.request),
        }
    }
    if let Some(&stranger) = strangers.first() {
        return Verdict::Unmet(format!(
            "an answer names request {stranger}, but only requests 0 to {} were sent",
            requests - 1
        ));
    }
    let missing: Vec<usize> = (0..answered.len())
        .filter(|&id| answered[id] == 0)
        .collect();
    if !missing.is_empty() {
        let shown: Vec<String> = missing.iter().take(5).map(usize::to_string).collect();
        return Verdict::Unmet(format!(
            "{} of {requests} requests were never answered (the first: {}): a request was \
             dropped, perhaps the one that arrived as a new model came in. Answer every \
             request, whatever happens to the model",
            missing.len(),
            shown.join(", ")
        ));
    }
    if let Some(twice) = (0..answered.len()).find(|&id| answered[id] > 1) {
        return Verdict::Unmet(format!(
            "request {twice} was answered {} times; every request is answered exactly once",
            answered[twice]
        ));
    }
    if let Some((position, answer)) = answers
        .iter()
        .enumerate()
        .find(|(position, answer)| answer.request != *position as u64)
    {
        return Verdict::Unmet(format!(
            "the answers are out of order: answer {position} is for request {}; the server \
             answers requests in the order they arrive",
            answer.request
        ));
    }
    for answer in answers {
        if let Some(problem) = torn(answer.version, &answer.layer_versions, ANSWER_LAYERS) {
            return Verdict::Unmet(format!(
                "the model that answered request {} {problem}",
                answer.request
            ));
        }
        let expected = expected_output(answer.request as f32, answer.version, ANSWER_LAYERS);
        if (answer.output - expected).abs() > 1e-3 * expected.abs().max(1.0) {
            return Verdict::Unmet(format!(
                "the answer to request {} is {}, but the model of version {} gives {expected}: \
                 the answer was not computed by the model it names (use Model::answer of one \
                 model)",
                answer.request, answer.output, answer.version
            ));
        }
    }
    if let Some(pair) = answers
        .windows(2)
        .find(|pair| pair[1].version < pair[0].version)
    {
        return Verdict::Unmet(format!(
            "the version went back: request {} was answered by version {}, the next one by \
             version {}",
            pair[0].request, pair[0].version, pair[1].version
        ));
    }
    if let Some(answer) = answers
        .iter()
        .find(|answer| answer.version < floors[answer.request as usize])
    {
        let floor = floors[answer.request as usize];
        let last = answers.last().map_or(0, |answer| answer.version);
        return Verdict::Unmet(format!(
            "request {} was sent after version {floor} had been published, but was answered \
             by version {} (the last request by version {last}): the server answers with an old \
             model. Take the current model from the slot for every request",
            answer.request, answer.version
        ));
    }
    let last = answers.last().map_or(0, |answer| answer.version);
    Verdict::Pass(format!(
        "all {requests} requests answered once, in order, by whole models; versions 0 to \
         {last}, never going back"
    ))
}

/// Layers and weights per layer of the models of the stress part: large enough that
/// copying a model layer by layer takes a while.
const STRESS_LAYERS: usize = 32;
const STRESS_WIDTH: usize = 64;
/// Rounds of the two racing trainers: in round `r` they publish versions `2r - 1` and `2r`
/// at the same moment.
const ROUNDS: u64 = 500;
const STRESS_VERSIONS: u64 = 2 * ROUNDS;
/// Threads calling `current` in a loop while the trainers race.
const READERS: usize = 1;

fn slot_under_stress<C: SwapCode>(run: u64) -> Verdict {
    let slot = C::new_slot(C::model(0, STRESS_LAYERS, STRESS_WIDTH));
    let trainers_done = AtomicBool::new(false);
    // Round r: the coordinator waits until both trainers have published round r - 1 and
    // checks the slot, then sets `started` to r; both publish at once.
    let started = AtomicU64::new(0);
    let arrived = AtomicU64::new(0);
    let finished = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let problem: Mutex<Option<Verdict>> = Mutex::new(None);
    let outcome: Result<ModelSeen, Verdict> = std::thread::scope(|scope| {
        let readers: Vec<_> = (0..READERS)
            .map(|_| {
                scope.spawn(|| {
                    catching_panics(|| {
                        let mut last = 0;
                        let mut reads = 0u64;
                        while reads < 100 || !trainers_done.load(Ordering::SeqCst) {
                            let seen = C::current(&slot);
                            if let Some(problem) =
                                torn(seen.version, &seen.layer_versions, STRESS_LAYERS)
                            {
                                return Err(format!("a model read by current() {problem}"));
                            }
                            if seen.version < last {
                                return Err(format!(
                                    "the version went back: current() returned version {last}, \
                                     then version {}. With several trainers, a model may arrive \
                                     after a newer one: publish must then leave the newer one \
                                     in place, deciding and swapping under one lock (or one \
                                     compare-and-exchange)",
                                    seen.version
                                ));
                            }
                            last = seen.version;
                            reads += 1;
                            // Leave the cores to the trainers now and then: on two cores,
                            // readers that never yield make every round wait for a time slice.
                            std::thread::yield_now();
                        }
                        Ok(())
                    })
                })
            })
            .collect();
        let trainers: Vec<_> = [true, false]
            .into_iter()
            .map(|coordinator| {
                let (slot, started, arrived, finished, stop, problem) =
                    (&slot, &started, &arrived, &finished, &stop, &problem);
                scope.spawn(move || {
                    let fail = |verdict: Verdict| {
                        problem.lock().unwrap().get_or_insert(verdict);
                        stop.store(true, Ordering::SeqCst);
                    };
                    for round in 1..=ROUNDS + 1 {
                        // The two trainers swap roles from run to run and round to round.
                        let version = if coordinator ^ (round % 2 == run % 2) {
                            2 * round
                        } else {
                            2 * round - 1
                        };
                        // Built before the round starts, so that only `publish` races.
                        let model = C::model(version, STRESS_LAYERS, STRESS_WIDTH);
                        if coordinator {
                            // Both publications of the previous round are done: check them,
                            // then start the next round.
                            spin_until(|| {
                                finished.load(Ordering::SeqCst) >= 2 * (round - 1)
                                    || stop.load(Ordering::SeqCst)
                            });
                            if round > 1 && !stop.load(Ordering::SeqCst) {
                                match catching_panics(|| C::current(slot)) {
                                    Err(panicked) => fail(panicked),
                                    Ok(seen) if seen.version != 2 * (round - 1) => {
                                        fail(Verdict::Unmet(format!(
                                            "the version went back: two trainers published \
                                             versions {} and {} at the same moment, and \
                                             afterwards current() returned version {}. publish \
                                             must leave a newer model in place, deciding and \
                                             swapping under one lock (or one \
                                             compare-and-exchange)",
                                            2 * round - 3,
                                            2 * round - 2,
                                            seen.version
                                        )))
                                    }
                                    Ok(_) => {}
                                }
                            }
                            if round > ROUNDS || stop.load(Ordering::SeqCst) {
                                stop.store(true, Ordering::SeqCst);
                                break;
                            }
                            started.store(round, Ordering::SeqCst);
                            spin_until(|| {
                                arrived.load(Ordering::SeqCst) >= round
                                    || stop.load(Ordering::SeqCst)
                            });
                        } else {
                            // Spinning, not sleeping: both trainers call publish within
                            // nanoseconds of each other.
                            spin_until(|| {
                                started.load(Ordering::SeqCst) >= round
                                    || stop.load(Ordering::SeqCst)
                            });
                            if stop.load(Ordering::SeqCst) {
                                break;
                            }
                            arrived.store(round, Ordering::SeqCst);
                        }
                        // A few pauses of a varying count, so that either trainer may reach
                        // any line of `publish` first.
                        let pauses = (round * 2654435761 + u64::from(coordinator) * 40503) % 32;
                        for _ in 0..pauses {
                            std::hint::spin_loop();
                        }
                        let published = catching_panics(|| C::publish(slot, model));
                        if let Err(panicked) = published {
                            fail(panicked);
                        }
                        finished.fetch_add(1, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        // Both trainers are joined and the readers told to stop before anything is passed
        // on: readers still waiting for the trainers would never finish.
        let trained: Vec<bool> = trainers
            .into_iter()
            .map(|trainer| trainer.join().is_ok())
            .collect();
        trainers_done.store(true, Ordering::SeqCst);
        if let Some(verdict) = problem.lock().unwrap().take() {
            return Err(verdict);
        }
        if trained.contains(&false) {
            return Err(Verdict::Error(
                "a trainer thread of the checker failed".to_string(),
            ));
        }
        for reader in readers {
            if let Err(problem) = joined(reader)? {
                return Err(Verdict::Unmet(problem));
            }
        }
        catching_panics(|| C::current(&slot))
    });
    let last = match outcome {
        Ok(last) => last,
        Err(verdict) => return verdict,
    };
    if let Some(problem) = torn(last.version, &last.layer_versions, STRESS_LAYERS) {
        return Verdict::Unmet(format!(
            "after every trainer finished, the model in the slot {problem}"
        ));
    }
    if last.version != STRESS_VERSIONS {
        return Verdict::Unmet(format!(
            "the version went back: after every trainer finished, current() returns version {}, \
             but version {STRESS_VERSIONS} was published; an older model replaced a newer one. \
             publish must ignore a model older than the current one, deciding and swapping \
             under one lock (or one compare-and-exchange)",
            last.version
        ));
    }
    Verdict::Pass(format!(
        "no torn model, no version going back; version {STRESS_VERSIONS} left in the slot"
    ))
}

/// Waits until `condition` holds, spinning for a while before it lets other threads run.
fn spin_until(condition: impl Fn() -> bool) {
    let mut spins = 0u32;
    while !condition() {
        spins += 1;
        if spins.is_multiple_of(4096) {
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }
}

/// Times of one request of the long-training part.
struct Timed {
    sent: Instant,
    answered: Option<Instant>,
    version: u64,
}

fn serving_during_a_long_training<C: SwapCode>() -> Verdict {
    const LAYERS: usize = 4;
    const WIDTH: usize = 8;
    let slot = C::new_slot(C::model(0, LAYERS, WIDTH));
    let requests = 800usize;
    let timed: Mutex<Vec<Timed>> = Mutex::new(Vec::with_capacity(requests));
    let training: Mutex<Option<(Instant, Instant)>> = Mutex::new(None);
    let started_from = AtomicU64::new(u64::MAX);
    let trainer_done = AtomicBool::new(false);
    let (request_sender, request_receiver) = channel();
    let (answer_sender, answer_receiver) = channel::<C::Answer>();
    let outcome: Result<(u64, Instant), Verdict> = std::thread::scope(|scope| {
        let server =
            scope.spawn(|| catching_panics(|| C::serve(&slot, request_receiver, answer_sender)));
        let collector = scope.spawn(|| {
            catching_panics(|| {
                for answer in answer_receiver {
                    let now = Instant::now();
                    let answer = C::answer(answer);
                    let mut timed = timed.lock().unwrap();
                    if let Some(entry) = timed.get_mut(answer.request as usize) {
                        entry.answered = Some(now);
                        entry.version = answer.version;
                    }
                }
            })
        });
        let trainer = scope.spawn(|| {
            catching_panics(|| {
                std::thread::sleep(Duration::from_millis(150));
                let mut train = |version: u64| {
                    started_from.store(version, Ordering::SeqCst);
                    let start = Instant::now();
                    std::thread::sleep(TRAINING_STEP);
                    *training.lock().unwrap() = Some((start, Instant::now()));
                    C::model(TRAINED_VERSION, LAYERS, WIDTH)
                };
                C::train_and_publish(&slot, &mut train);
                trainer_done.store(true, Ordering::SeqCst);
                let after = C::current(&slot);
                (after.version, Instant::now())
            })
        });
        // Another trainer, which publishes a version while `train` runs.
        let interloper = scope.spawn(|| {
            catching_panics(|| {
                while started_from.load(Ordering::SeqCst) == u64::MAX {
                    if trainer_done.load(Ordering::SeqCst) {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
                std::thread::sleep(INTERLOPER_AFTER);
                C::publish(&slot, C::model(INTERLOPER_VERSION, LAYERS, WIDTH));
            })
        });
        let start = Instant::now();
        for id in 0..requests {
            let due = start + Duration::from_millis(id as u64);
            if let Some(wait) = due.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
            timed.lock().unwrap().push(Timed {
                sent: Instant::now(),
                answered: None,
                version: u64::MAX,
            });
            if request_sender.send(C::request(id as u64, 0.0)).is_err() {
                break;
            }
        }
        drop(request_sender);
        joined(server)?;
        joined(collector)?;
        joined(interloper)?;
        joined(trainer)
    });
    let (version_after, returned) = match outcome {
        Ok(result) => result,
        Err(verdict) => return verdict,
    };
    let Some((training_start, training_end)) = *training.lock().unwrap() else {
        return Verdict::Unmet(
            "train_and_publish returned without calling `train`: it must train the next \
             version with it"
                .to_string(),
        );
    };
    if started_from.load(Ordering::SeqCst) != 0 {
        return Verdict::Unmet(format!(
            "train was handed the model of version {}, but the current model was version 0",
            started_from.load(Ordering::SeqCst)
        ));
    }
    if version_after != TRAINED_VERSION {
        return Verdict::Unmet(format!(
            "after train_and_publish returned, current() gave version {version_after}, not the \
             trained version {TRAINED_VERSION}: publish the model `train` returns"
        ));
    }
    let timed = timed.into_inner().unwrap();
    if let Some(id) = timed.iter().position(|entry| entry.answered.is_none()) {
        return Verdict::Unmet(format!(
            "request {id} was never answered while a model was being trained"
        ));
    }
    // The requests sent while `train` ran, and how long each waited for its answer.
    let during: Vec<&Timed> = timed
        .iter()
        .filter(|entry| entry.sent >= training_start && entry.sent < training_end)
        .collect();
    let answered_in_time = during
        .iter()
        .filter(|entry| entry.answered.is_some_and(|at| at < training_end))
        .count();
    let longest = during
        .iter()
        .filter_map(|entry| entry.answered.map(|at| at - entry.sent))
        .max()
        .unwrap_or_default();
    let during_count = during.len();
    if during_count < 50 {
        return Verdict::Error(format!(
            "only {during_count} requests could be sent during the {} ms of training: the \
             machine is too busy to measure; run the check again",
            TRAINING_STEP.as_millis()
        ));
    }
    if answered_in_time * 4 < during_count {
        return Verdict::Unmet(format!(
            "the server was blocked while the model trained: of the {during_count} requests sent \
             during the {} ms that `train` ran, only {answered_in_time} were answered before it \
             finished, and one waited {} ms (another trainer published a version {} ms into the \
             training). Keep no lock (not even a read guard: a publish waiting for the write \
             lock makes the server's reads wait too) and nothing the server needs while `train` \
             runs: train from the Arc that current() returns, then publish",
            TRAINING_STEP.as_millis(),
            longest.as_millis(),
            INTERLOPER_AFTER.as_millis()
        ));
    }
    let stale_after = timed
        .iter()
        .enumerate()
        .find(|(_, entry)| entry.sent > returned && entry.version < TRAINED_VERSION);
    if let Some((id, entry)) = stale_after {
        return Verdict::Unmet(format!(
            "request {id} was sent after train_and_publish had returned, but was answered by \
             version {}: the server answers with an old model",
            entry.version
        ));
    }
    Verdict::Pass(format!(
        "{answered_in_time} of the {during_count} requests sent during training answered before \
         it ended (the longest wait {:.1} ms)",
        longest.as_secs_f64() * 1000.0
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(request: u64, version: u64, layer_versions: Vec<u64>) -> AnswerSeen {
        AnswerSeen {
            request,
            version,
            output: expected_output(request as f32, version, layer_versions.len()),
            layer_versions,
        }
    }

    #[test]
    fn a_torn_answer_names_both_versions() {
        let mut layers = vec![3; ANSWER_LAYERS];
        layers[5] = 4;
        let answers = vec![answer(0, 3, vec![3; ANSWER_LAYERS]), answer(1, 3, layers)];
        let text = judge_answers(&answers, &[0, 0]).to_string();
        assert!(text.contains("torn"), "{text}");
        assert!(text.contains("versions 3 and 4"), "{text}");
    }

    #[test]
    fn a_dropped_request_is_named() {
        let answers = vec![
            answer(0, 0, vec![0; ANSWER_LAYERS]),
            answer(2, 0, vec![0; ANSWER_LAYERS]),
        ];
        let text = judge_answers(&answers, &[0, 0, 0]).to_string();
        assert!(text.contains("never answered (the first: 1)"), "{text}");
    }

    #[test]
    fn an_answer_from_before_the_floor_is_an_old_model() {
        let answers = vec![
            answer(0, 0, vec![0; ANSWER_LAYERS]),
            answer(1, 0, vec![0; ANSWER_LAYERS]),
        ];
        let text = judge_answers(&answers, &[0, 2]).to_string();
        assert!(text.contains("old model"), "{text}");
        let verdict = judge_answers(&answers, &[0, 0]);
        assert!(verdict.passed(), "{verdict}");
    }
}
