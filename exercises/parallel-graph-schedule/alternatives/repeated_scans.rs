// alternative: no counts and no consumer lists: every round scans all nodes left for those whose inputs have all run (quadratic, but simple)
//! A parallel schedule for a graph's branches, by repeated scans.

/// Groups the nodes of a graph into waves (see the starter for the task).
pub fn schedule_waves(inputs: &[Vec<usize>]) -> Result<Vec<Vec<usize>>, ScheduleError> {
    let count = inputs.len();
    for (node, reads) in inputs.iter().enumerate() {
        for &input in reads {
            if input >= count {
                return Err(ScheduleError::UnknownInput { node, input });
            }
        }
    }
    let mut done = vec![false; count];
    let mut left: Vec<usize> = (0..count).collect();
    let mut waves = Vec::new();
    while !left.is_empty() {
        // Decide the whole wave before marking any of it done: a node may not join the
        // wave of its input.
        let (wave, rest): (Vec<usize>, Vec<usize>) = left
            .iter()
            .partition(|&&node| inputs[node].iter().all(|&input| done[input]));
        if wave.is_empty() {
            return Err(ScheduleError::Cycle { nodes: rest });
        }
        for &node in &wave {
            done[node] = true;
        }
        waves.push(wave);
        left = rest;
    }
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
