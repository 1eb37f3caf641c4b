//! A parallel schedule for a graph's branches.
//!
//! A graph runner that wants to use every core must know which nodes may run at the same
//! time. Your task: group the nodes into *waves*. A node may go into a wave only if every
//! node it reads ran in an earlier wave; every node goes into exactly one wave; and the
//! schedule must be as short as the graph allows: as many waves as the longest chain of
//! dependencies has nodes. Nodes are numbered in any order (an input may have a larger
//! number than its reader), a node may read the same input twice, and a graph may have
//! several nodes that read nothing.
//!
//! Bad graphs get errors, never a panic and never a partial schedule: an input that is
//! not a node is `UnknownInput` (checked before anything else), and if some nodes can
//! never run, `Cycle` lists them (see the error type below, part of the task's interface:
//! keep it).

/// Groups the nodes of a graph into waves: every node of a wave may run at the same time,
/// because everything it reads ran in an earlier wave. `inputs[node]` lists the nodes
/// that `node` reads (a node may appear twice in a list). Every node appears in exactly
/// one wave; there are as few waves as the dependencies allow.
pub fn schedule_waves(inputs: &[Vec<usize>]) -> Result<Vec<Vec<usize>>, ScheduleError> {
    todo!("group the nodes into waves")
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
