// mutant: wrong-result — computes each node's wave as one more than its inputs' in index order, as if every input had a smaller number than its reader
// expect: not before it
//! A parallel schedule for a graph's branches: waves by depth, computed in index order.

/// Groups the nodes of a graph into waves (see the starter for the task).
pub fn schedule_waves(inputs: &[Vec<usize>]) -> Result<Vec<Vec<usize>>, ScheduleError> {
    let count = inputs.len();
    for (node, reads) in inputs.iter().enumerate() {
        if let Some(&input) = reads.iter().find(|&&input| input >= count) {
            return Err(ScheduleError::UnknownInput { node, input });
        }
    }
    // Cycle check first, with Kahn's algorithm; the depths below assume there is none.
    let mut waiting_on: Vec<usize> = inputs
        .iter()
        .map(|reads| {
            let mut distinct = reads.clone();
            distinct.sort_unstable();
            distinct.dedup();
            distinct.len()
        })
        .collect();
    let mut consumers: Vec<Vec<usize>> = vec![Vec::new(); count];
    for (node, reads) in inputs.iter().enumerate() {
        let mut distinct = reads.clone();
        distinct.sort_unstable();
        distinct.dedup();
        for input in distinct {
            consumers[input].push(node);
        }
    }
    let mut ready: Vec<usize> = (0..count).filter(|&node| waiting_on[node] == 0).collect();
    while let Some(node) = ready.pop() {
        for &consumer in &consumers[node] {
            waiting_on[consumer] -= 1;
            if waiting_on[consumer] == 0 {
                ready.push(consumer);
            }
        }
    }
    let stuck: Vec<usize> = (0..count).filter(|&node| waiting_on[node] > 0).collect();
    if !stuck.is_empty() {
        return Err(ScheduleError::Cycle { nodes: stuck });
    }
    // The mistake: an input with a larger number than its reader has depth 0 here yet.
    let mut depth = vec![0usize; count];
    for node in 0..count {
        depth[node] = inputs[node]
            .iter()
            .map(|&input| depth[input] + 1)
            .max()
            .unwrap_or(0);
    }
    let wave_count = depth.iter().max().map_or(0, |deepest| deepest + 1);
    let mut waves = vec![Vec::new(); wave_count];
    for node in 0..count {
        waves[depth[node]].push(node);
    }
    waves.retain(|wave: &Vec<usize>| !wave.is_empty());
    Ok(waves)
}

/// Why a graph has no schedule.
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
            ScheduleError::Cycle { nodes } => write!(
                formatter,
                "nodes {nodes:?} wait on a cycle: none of them can ever run"
            ),
        }
    }
}

impl std::error::Error for ScheduleError {}
