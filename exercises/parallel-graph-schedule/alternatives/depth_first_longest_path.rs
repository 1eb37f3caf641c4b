// alternative: the wave of each node is the length of the longest chain ending in it, found by a depth-first walk with colours that also finds cycles
//! A parallel schedule for a graph's branches, from longest paths.

/// Groups the nodes of a graph into waves (see the starter for the task).
pub fn schedule_waves(inputs: &[Vec<usize>]) -> Result<Vec<Vec<usize>>, ScheduleError> {
    let count = inputs.len();
    for (node, reads) in inputs.iter().enumerate() {
        if let Some(&input) = reads.iter().find(|&&input| input >= count) {
            return Err(ScheduleError::UnknownInput { node, input });
        }
    }
    // depth[node]: None until known. `on_path` marks the nodes of the walk's current
    // path: meeting one again means a cycle.
    let mut depth: Vec<Option<usize>> = vec![None; count];
    let mut on_path = vec![false; count];
    let mut blocked = vec![false; count];
    for root in 0..count {
        if depth[root].is_some() || blocked[root] {
            continue;
        }
        // (node, next input to visit)
        let mut stack = vec![(root, 0usize)];
        on_path[root] = true;
        while let Some(&mut (node, ref mut next)) = stack.last_mut() {
            if let Some(&input) = inputs[node].get(*next) {
                *next += 1;
                if on_path[input] || blocked[input] {
                    blocked[node] = true;
                } else if depth[input].is_none() {
                    on_path[input] = true;
                    stack.push((input, 0));
                }
                continue;
            }
            stack.pop();
            on_path[node] = false;
            let inputs_blocked = inputs[node].iter().any(|&input| blocked[input]);
            if blocked[node] || inputs_blocked {
                blocked[node] = true;
            } else {
                let deepest = inputs[node].iter().filter_map(|&input| depth[input]).max();
                depth[node] = Some(deepest.map_or(0, |deepest| deepest + 1));
            }
        }
    }
    // A node on a cycle whose walk started elsewhere may still look finished: anything
    // that reads a blocked node is blocked too, until nothing changes.
    loop {
        let mut changed = false;
        for node in 0..count {
            if !blocked[node] && inputs[node].iter().any(|&input| blocked[input]) {
                blocked[node] = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let stuck: Vec<usize> = (0..count).filter(|&node| blocked[node]).collect();
    if !stuck.is_empty() {
        return Err(ScheduleError::Cycle { nodes: stuck });
    }
    let wave_count = depth
        .iter()
        .flatten()
        .max()
        .map_or(0, |deepest| deepest + 1);
    let mut waves = vec![Vec::new(); wave_count];
    for node in 0..count {
        waves[depth[node].expect("every node has a depth")].push(node);
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
