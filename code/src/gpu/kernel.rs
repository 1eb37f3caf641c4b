//! The hand-written compute kernels and where their WGSL comes from.
//!
//! Every shader lives in `shaders/` at the root of the repository, so the book can include
//! the very text the crate compiles. `include_str!` bakes the text into the binary at
//! compile time: examples run from any directory.

// ANCHOR: kernel
/// One compute kernel: a shader, its entry point and its pipeline constants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kernel {
    Linear,
    /// `linear` followed by ReLU in the same invocation (the `apply_relu` override).
    LinearRelu,
    Relu,
    ReluInPlace,
    /// `left + right`, element by element.
    Add,
    Softmax,
    Sum,
    Max,
    /// `Sum` with subgroup operations; needs the SUBGROUP feature.
    SubgroupSum,
    /// `Max` with subgroup operations; needs the SUBGROUP feature.
    SubgroupMax,
    /// `Softmax` with subgroup operations; needs the SUBGROUP feature.
    SubgroupSoftmax,
}

impl Kernel {
    pub const ALL: [Kernel; 11] = [
        Kernel::Linear,
        Kernel::LinearRelu,
        Kernel::Relu,
        Kernel::ReluInPlace,
        Kernel::Add,
        Kernel::Softmax,
        Kernel::Sum,
        Kernel::Max,
        Kernel::SubgroupSum,
        Kernel::SubgroupMax,
        Kernel::SubgroupSoftmax,
    ];

    /// The WGSL source text.
    pub fn source(self) -> &'static str {
        match self {
            Kernel::Linear | Kernel::LinearRelu => include_str!("../../../shaders/linear.wgsl"),
            Kernel::Relu => include_str!("../../../shaders/relu.wgsl"),
            Kernel::ReluInPlace => include_str!("../../../shaders/relu_in_place.wgsl"),
            Kernel::Add => include_str!("../../../shaders/add.wgsl"),
            Kernel::Softmax => include_str!("../../../shaders/softmax.wgsl"),
            Kernel::Sum | Kernel::Max => include_str!("../../../shaders/reduce.wgsl"),
            Kernel::SubgroupSum | Kernel::SubgroupMax => {
                include_str!("../../../shaders/reduce_subgroup.wgsl")
            }
            Kernel::SubgroupSoftmax => include_str!("../../../shaders/softmax_subgroup.wgsl"),
        }
    }

    pub fn entry_point(self) -> &'static str {
        match self {
            Kernel::Sum | Kernel::SubgroupSum => "sum",
            Kernel::Max | Kernel::SubgroupMax => "max_value",
            _ => "main",
        }
    }

    /// Values for the shader's `override` declarations, set when the pipeline is created.
    pub fn constants(self) -> &'static [(&'static str, f64)] {
        match self {
            Kernel::Linear => &[("apply_relu", 0.0)],
            Kernel::LinearRelu => &[("apply_relu", 1.0)],
            _ => &[],
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Kernel::Linear => "linear",
            Kernel::LinearRelu => "linear_relu",
            Kernel::Relu => "relu",
            Kernel::ReluInPlace => "relu_in_place",
            Kernel::Add => "add",
            Kernel::Softmax => "softmax",
            Kernel::Sum => "sum",
            Kernel::Max => "max",
            Kernel::SubgroupSum => "subgroup_sum",
            Kernel::SubgroupMax => "subgroup_max",
            Kernel::SubgroupSoftmax => "subgroup_softmax",
        }
    }

    /// The device features the kernel needs.
    pub fn required_features(self) -> wgpu::Features {
        match self {
            Kernel::SubgroupSum | Kernel::SubgroupMax | Kernel::SubgroupSoftmax => {
                wgpu::Features::SUBGROUP
            }
            _ => wgpu::Features::empty(),
        }
    }
}
// ANCHOR_END: kernel

/// What a reduction computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reduction {
    Sum,
    Max,
}

/// How a workgroup combines its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReductionStrategy {
    /// A tree in workgroup memory, with a barrier after every halving step.
    WorkgroupMemory,
    /// Subgroup operations, then one small step through workgroup memory.
    Subgroups,
}

impl ReductionStrategy {
    /// The softmax kernel that combines each row's values this way (a softmax is two
    /// reductions per row, a maximum and a sum).
    pub fn softmax_kernel(self) -> Kernel {
        match self {
            ReductionStrategy::WorkgroupMemory => Kernel::Softmax,
            ReductionStrategy::Subgroups => Kernel::SubgroupSoftmax,
        }
    }
}

impl Reduction {
    pub fn kernel(self, strategy: ReductionStrategy) -> Kernel {
        match (self, strategy) {
            (Reduction::Sum, ReductionStrategy::WorkgroupMemory) => Kernel::Sum,
            (Reduction::Max, ReductionStrategy::WorkgroupMemory) => Kernel::Max,
            (Reduction::Sum, ReductionStrategy::Subgroups) => Kernel::SubgroupSum,
            (Reduction::Max, ReductionStrategy::Subgroups) => Kernel::SubgroupMax,
        }
    }
}
