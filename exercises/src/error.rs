//! Why a check could not even compare numbers: the file is missing, the shader does not
//! compile, it binds the wrong things, or the GPU rejected or never finished the run.
//!
//! These are typed errors, never panics: a student's broken shader is the normal case
//! for a checker, and it deserves a clear sentence.

use std::path::PathBuf;

use galaxy::gpu::GpuError;
use thiserror::Error;

use crate::report::shown_path;

#[derive(Debug, Error)]
pub enum CheckError {
    #[error("cannot read {}: {source}", shown_path(path))]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },

    /// naga's message, with the file name, the line and a caret under the mistake.
    #[error("the shader does not compile:\n{message}")]
    ShaderInvalid { message: String },

    #[error(
        "{} has no compute entry point called `main` (found: {}); the checker runs `@compute fn main`",
        shown_path(path),
        if found.is_empty() { "none".to_string() } else { found.join(", ") }
    )]
    MissingEntryPoint { path: PathBuf, found: Vec<String> },

    #[error("{}: {message}", shown_path(path))]
    Bindings { path: PathBuf, message: String },

    /// wgpu refused the pipeline (for example a feature the device lacks).
    #[error("wgpu could not build a pipeline from the shader: {message}")]
    Pipeline { message: String },

    /// wgpu refused the buffers, the bind group or the dispatch.
    #[error("wgpu rejected the run: {message}")]
    Run { message: String },

    #[error(
        "the kernel did not finish within {seconds} s: an endless loop, or a barrier that not \
         every invocation of a workgroup reaches?"
    )]
    Timeout { seconds: u64 },

    #[error(
        "the dispatch needs {workgroups} workgroups along one axis, more than the device allows \
         ({limit}); use larger workgroups"
    )]
    DispatchTooLarge { workgroups: u64, limit: u32 },

    /// A kernel about to be timed gave a wrong result: a benchmark never times a bug.
    #[error("{kernel} differs from the CPU reference, so it is not timed: {details}")]
    WrongResult { kernel: String, details: String },

    #[error(transparent)]
    Gpu(#[from] GpuError),

    #[error("unknown exercise `{name}`; `cargo xtask exercise --list` lists them")]
    UnknownExercise { name: String },

    #[error("`--file` checks a WGSL file, but the exercise `{name}` has no WGSL part")]
    NoWgslPart { name: String },
}
