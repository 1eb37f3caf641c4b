//! A parallel schedule for a graph's branches (`schedule_waves(inputs)`).
//!
//! Two parts. **Schedules**: the function runs on many graphs: random DAGs whose nodes
//! are numbered in a shuffled order (so an input may have a larger number than its
//! reader), with several nodes that read nothing, nodes that read one input twice, wide
//! and deep shapes, an empty graph, and the crate's own graphs (the standard workload and
//! the branching workload). Every schedule is checked from first principles: no empty
//! wave, every node in exactly one wave, every node in a later wave than each of its
//! inputs, and as many waves as the longest chain of dependencies has nodes (the
//! checker's own count). **Errors**: inputs that are not nodes and graphs with cycles
//! (a node that reads itself, two nodes that read each other, a cycle with nodes hanging
//! off it, two separate cycles) must give the right error, naming exactly the nodes that
//! can never run, never a schedule and never a panic.

use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use galaxy::graph::{BranchShape, ValidGraph, random_branches, random_mlp};

use crate::report::{PartReport, Verdict, catching_panics};
use crate::submission::{Submission, Variant};

/// The checker's copy of the exercise's error type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScheduleError {
    UnknownInput { node: usize, input: usize },
    Cycle { nodes: Vec<usize> },
}

impl std::fmt::Display for ScheduleError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScheduleError::UnknownInput { node, input } => {
                write!(
                    formatter,
                    "node {node} reads node {input}, which does not exist"
                )
            }
            ScheduleError::Cycle { nodes } => {
                write!(formatter, "nodes {nodes:?} wait on a cycle")
            }
        }
    }
}

pub type ScheduleWaves = fn(&[Vec<usize>]) -> Result<Vec<Vec<usize>>, ScheduleError>;

pub fn function_of(variant: Variant) -> ScheduleWaves {
    crate::rust_exercises::with_rust_module!(parallel_graph_schedule, variant, |code| {
        fn converted(inputs: &[Vec<usize>]) -> Result<Vec<Vec<usize>>, ScheduleError> {
            code::schedule_waves(inputs).map_err(|error| match error {
                code::ScheduleError::UnknownInput { node, input } => {
                    ScheduleError::UnknownInput { node, input }
                }
                code::ScheduleError::Cycle { nodes } => ScheduleError::Cycle { nodes },
            })
        }
        converted
    })
}

pub fn check(submission: &Submission) -> Vec<PartReport> {
    let function = function_of(submission.rust);
    vec![schedules(function), errors(function)]
}

/// For every node, the nodes it reads: the dependencies of one of the crate's graphs.
fn graph_inputs(graph: &ValidGraph) -> Vec<Vec<usize>> {
    let nodes = &graph.graph().nodes;
    nodes
        .iter()
        .map(|node| node.inputs.iter().map(|input| input.0).collect())
        .collect()
}

/// A random DAG of `count` nodes: every node reads up to `most_inputs` nodes made before
/// it (sometimes one of them twice), then the numbering is shuffled so that nothing can
/// be learned from the numbers.
fn random_dag(count: usize, most_inputs: usize, seed: u64) -> Vec<Vec<usize>> {
    let mut generator = ChaCha8Rng::seed_from_u64(seed);
    let mut made: Vec<Vec<usize>> = Vec::with_capacity(count);
    for index in 0..count {
        let mut reads = Vec::new();
        if index > 0 {
            let wanted = generator.random_range(0..=most_inputs);
            for _ in 0..wanted {
                // Mostly recent nodes, so that long chains appear.
                let back = generator.random_range(1..=index.min(4 + index / 4));
                reads.push(index - back);
            }
            if !reads.is_empty() && generator.random_range(0..5) == 0 {
                reads.push(reads[0]);
            }
        }
        made.push(reads);
    }
    let mut numbers: Vec<usize> = (0..count).collect();
    numbers.shuffle(&mut generator);
    let mut inputs = vec![Vec::new(); count];
    for (index, reads) in made.into_iter().enumerate() {
        inputs[numbers[index]] = reads.into_iter().map(|read| numbers[read]).collect();
    }
    inputs
}

/// The nodes that can run (in the checker's own order) and the longest chain of
/// dependencies, in nodes; `None` for the chain when some nodes can never run.
fn reference(inputs: &[Vec<usize>]) -> (Vec<usize>, Option<usize>) {
    let count = inputs.len();
    let mut chain = vec![0usize; count];
    let mut done = vec![false; count];
    let mut progress = true;
    // Simple on purpose: sweep until nothing changes.
    while progress {
        progress = false;
        for node in 0..count {
            if !done[node] && inputs[node].iter().all(|&input| done[input]) {
                chain[node] = 1 + inputs[node]
                    .iter()
                    .map(|&input| chain[input])
                    .max()
                    .unwrap_or(0);
                done[node] = true;
                progress = true;
            }
        }
    }
    let stuck: Vec<usize> = (0..count).filter(|&node| !done[node]).collect();
    let longest = stuck
        .is_empty()
        .then(|| chain.iter().copied().max().unwrap_or(0));
    (stuck, longest)
}

/// What is wrong with `waves` as a schedule of `inputs`, if anything.
fn schedule_problem(inputs: &[Vec<usize>], waves: &[Vec<usize>]) -> Option<String> {
    let count = inputs.len();
    let mut wave_of: Vec<Option<usize>> = vec![None; count];
    for (wave, nodes) in waves.iter().enumerate() {
        if nodes.is_empty() {
            return Some(format!(
                "wave {wave} is an empty wave: every wave must run at least one node"
            ));
        }
        for &node in nodes {
            if node >= count {
                return Some(format!(
                    "wave {wave} lists node {node}, but the graph has only {count} nodes"
                ));
            }
            if let Some(earlier) = wave_of[node] {
                return Some(format!(
                    "node {node} is scheduled twice, in waves {earlier} and {wave}: every \
                     node must run exactly once"
                ));
            }
            wave_of[node] = Some(wave);
        }
    }
    if let Some(missing) = (0..count).find(|&node| wave_of[node].is_none()) {
        let total = wave_of.iter().filter(|wave| wave.is_none()).count();
        return Some(format!(
            "node {missing} is never scheduled ({total} of {count} nodes are in no wave)"
        ));
    }
    for node in 0..count {
        let wave = wave_of[node].expect("checked above");
        for &input in &inputs[node] {
            let input_wave = wave_of[input].expect("checked above");
            if input_wave >= wave {
                return Some(format!(
                    "node {node} runs in wave {wave}, but its input {input} runs in wave \
                     {input_wave}, not before it"
                ));
            }
        }
    }
    None
}

fn check_one(function: ScheduleWaves, inputs: &[Vec<usize>]) -> Verdict {
    let (_, longest) = reference(inputs);
    let longest = longest.expect("only graphs without cycles are scheduled");
    match catching_panics(|| function(inputs)) {
        Err(panicked) => panicked,
        Ok(Err(ScheduleError::Cycle { nodes })) => Verdict::Unmet(format!(
            "reported a cycle through nodes {nodes:?}, but the graph has none"
        )),
        Ok(Err(error)) => Verdict::Unmet(format!(
            "returned the error `{error}` for a graph whose inputs are all nodes"
        )),
        Ok(Ok(waves)) => {
            if let Some(problem) = schedule_problem(inputs, &waves) {
                return Verdict::Unmet(problem);
            }
            if waves.len() != longest {
                return Verdict::Unmet(format!(
                    "{} waves, but the longest chain of dependencies has {longest} nodes: \
                     nodes that could run side by side were put in different waves",
                    waves.len()
                ));
            }
            let widest = waves.iter().map(Vec::len).max().unwrap_or(0);
            Verdict::Pass(format!(
                "{} waves (the longest chain), up to {widest} nodes side by side",
                waves.len()
            ))
        }
    }
}

fn schedules(function: ScheduleWaves) -> PartReport {
    let mut part = PartReport::new("schedules");
    part.push("an empty graph", check_one(function, &[]));
    part.push("one node", check_one(function, &[vec![]]));
    part.push(
        "a node that reads one input twice",
        check_one(function, &[vec![1, 1], vec![], vec![0, 1, 0]]),
    );
    part.push(
        "five nodes that read nothing",
        check_one(function, &vec![Vec::new(); 5]),
    );
    // (nodes, most inputs per node, what the case is about)
    let cases: [(usize, usize, &str); 7] = [
        (2, 1, "two nodes"),
        (12, 2, "a small DAG"),
        (40, 1, "chains and trees"),
        (60, 3, "many joins"),
        (200, 2, "a wide DAG"),
        (500, 4, "a large DAG"),
        (1000, 1, "a forest of long chains"),
    ];
    for (case, &(count, most_inputs, about)) in cases.iter().enumerate() {
        for repeat in 0..3u64 {
            let seed = 100 * case as u64 + repeat;
            let inputs = random_dag(count, most_inputs, seed);
            part.push(
                format!("{about}: {count} nodes, shuffled numbers (seed {seed})"),
                check_one(function, &inputs),
            );
        }
    }
    let standard = random_mlp(4, 6, 1).expect("a valid workload");
    part.push(
        "the standard workload (a chain of 6 layers)",
        check_one(function, &graph_inputs(&standard.graph)),
    );
    let shape = BranchShape {
        rows: 2,
        columns: 3,
        branches: 5,
        depth: 3,
    };
    let branching = random_branches(shape, 2).expect("a valid workload");
    part.push(
        "the branching workload (5 branches of 3 layers, joined by add)",
        check_one(function, &graph_inputs(&branching.graph)),
    );
    part
}

fn check_error(function: ScheduleWaves, inputs: &[Vec<usize>], expected: ScheduleError) -> Verdict {
    match catching_panics(|| function(inputs)) {
        Err(panicked) => panicked,
        Ok(Ok(waves)) => {
            let problem = schedule_problem(inputs, &waves)
                .unwrap_or_else(|| "the waves look complete".to_string());
            Verdict::Unmet(format!(
                "returned {} waves instead of the error `{expected}`: {problem}",
                waves.len()
            ))
        }
        Ok(Err(error)) if error == expected => Verdict::Pass(format!("`{error}`")),
        Ok(Err(ScheduleError::Cycle { nodes })) => match &expected {
            ScheduleError::Cycle { nodes: stuck } => Verdict::Unmet(format!(
                "reported that nodes {nodes:?} cannot run; the nodes that cannot run (on a \
                 cycle or reading one) are {stuck:?}"
            )),
            other => Verdict::Unmet(format!(
                "reported a cycle through {nodes:?}; expected `{other}`"
            )),
        },
        Ok(Err(error)) => Verdict::Unmet(format!("returned `{error}`; expected `{expected}`")),
    }
}

fn cycle_case(inputs: &[Vec<usize>]) -> ScheduleError {
    let (stuck, _) = reference(inputs);
    assert!(!stuck.is_empty(), "a cycle case without a cycle");
    ScheduleError::Cycle { nodes: stuck }
}

fn errors(function: ScheduleWaves) -> PartReport {
    let mut part = PartReport::new("errors");
    let unknown: [(&[Vec<usize>], usize, usize, &str); 3] = [
        (&[vec![], vec![0, 7]], 1, 7, "an input past the last node"),
        (
            &[vec![2]],
            0,
            2,
            "the only node reads a node that does not exist",
        ),
        (
            &[vec![], vec![0], vec![1, 5], vec![0, 9]],
            2,
            5,
            "two bad inputs: the first is reported",
        ),
    ];
    for (inputs, node, input, about) in unknown {
        part.push(
            about,
            check_error(
                function,
                inputs,
                ScheduleError::UnknownInput { node, input },
            ),
        );
    }
    let mut cycles: Vec<(Vec<Vec<usize>>, String)> = vec![
        (vec![vec![0]], "a node that reads itself".to_string()),
        (
            vec![vec![1], vec![0]],
            "two nodes that read each other".to_string(),
        ),
        (
            vec![vec![], vec![0, 3], vec![1], vec![2], vec![3], vec![0]],
            "a cycle 1 → 2 → 3 with node 4 reading it, beside nodes that can run".to_string(),
        ),
        (
            vec![vec![1], vec![0], vec![], vec![4], vec![3], vec![2, 4]],
            "two separate cycles".to_string(),
        ),
    ];
    for seed in 0..4u64 {
        let mut inputs = random_dag(80, 2, 700 + seed);
        // Close a cycle: a node that is read by others now also reads one of its readers.
        let reader = (0..inputs.len())
            .find(|&node| !inputs[node].is_empty())
            .expect("a DAG of 80 nodes has edges");
        let read = inputs[reader][0];
        inputs[read].push(reader);
        cycles.push((
            inputs,
            format!("a random DAG of 80 nodes with one edge closing a cycle (seed {seed})"),
        ));
    }
    for (inputs, about) in cycles {
        let expected = cycle_case(&inputs);
        part.push(about, check_error(function, &inputs, expected));
    }
    part
}
