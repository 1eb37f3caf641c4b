// mutant: wrong-result — a correct topological order, but every node in a wave of its own: nothing runs side by side
// expect: longest chain
//! A parallel schedule for a graph's branches.
//!
//! Kahn's algorithm, one wave at a time: the first wave is every node that reads nothing;
//! running a wave lowers the count of unfinished inputs of every node it feeds, and the
//! nodes whose count reaches zero form the next wave. A node lands in wave `w` exactly
//! when the longest chain of dependencies ending in it has `w + 1` nodes, so there are as
//! many waves as the longest chain has nodes: no schedule can be shorter.

/// Groups the nodes of a graph into waves: every node of a wave may run at the same time,
/// because everything it reads ran in an earlier wave. `inputs[node]` lists the nodes
/// that `node` reads (a node may appear twice in a list). Every node appears in exactly
/// one wave; there are as few waves as the dependencies allow.
pub fn schedule_waves(inputs: &[Vec<usize>]) -> Result<Vec<Vec<usize>>, ScheduleError> {
    let count = inputs.len();
    // Check every input first: a wrong index is reported as such, not as a cycle.
    for (node, reads) in inputs.iter().enumerate() {
        if let Some(&input) = reads.iter().find(|&&input| input >= count) {
            return Err(ScheduleError::UnknownInput { node, input });
        }
    }
    // Distinct inputs only: a node that reads one tensor twice waits for it once.
    let mut waiting_on = vec![0usize; count];
    let mut consumers: Vec<Vec<usize>> = vec![Vec::new(); count];
    for (node, reads) in inputs.iter().enumerate() {
        let mut distinct = reads.clone();
        distinct.sort_unstable();
        distinct.dedup();
        waiting_on[node] = distinct.len();
        for input in distinct {
            consumers[input].push(node);
        }
    }
    let mut waves = Vec::new();
    let mut wave: Vec<usize> = (0..count).filter(|&node| waiting_on[node] == 0).collect();
    let mut scheduled = 0;
    while !wave.is_empty() {
        scheduled += wave.len();
        let mut next = Vec::new();
        for &node in &wave {
            for &consumer in &consumers[node] {
                waiting_on[consumer] -= 1;
                if waiting_on[consumer] == 0 {
                    next.push(consumer);
                }
            }
        }
        for &node in &wave {
            waves.push(vec![node]);
        }
        wave = next;
    }
    if scheduled < count {
        // What never became ready waits on a cycle, directly or through other nodes.
        let nodes = (0..count).filter(|&node| waiting_on[node] > 0).collect();
        return Err(ScheduleError::Cycle { nodes });
    }
    Ok(waves)
}

/// Why a graph has no schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScheduleError {
    /// `node` reads `input`, which is not a node of the graph (the first such input of
    /// the lowest-numbered such node).
    UnknownInput { node: usize, input: usize },
    /// These nodes can never run: each lies on a cycle or reads, directly or not, a node
    /// that does. In increasing order.
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
            ScheduleError::Cycle { nodes } => write!(
                formatter,
                "nodes {nodes:?} wait on a cycle: none of them can ever run"
            ),
        }
    }
}

impl std::error::Error for ScheduleError {}
