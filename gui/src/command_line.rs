//! The options `galaxy-gui` starts with: the workload to show first, and whether to start
//! running it at once (for demonstrations and screenshots).
//!
//! `galaxy-gui --size 256 --depth 16 --mode GraphCompiled --start`

use galaxy::runner::ExecutionMode;
use thiserror::Error;

use crate::app_state::{AppState, Control, MODES};

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Options {
    pub size: Option<usize>,
    pub depth: Option<usize>,
    pub mode: Option<ExecutionMode>,
    pub start: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum OptionError {
    #[error("unknown option `{0}`; the options are --size N, --depth N, --mode NAME and --start")]
    Unknown(String),
    #[error("`{option}` needs a value")]
    MissingValue { option: String },
    #[error("`{option} {value}`: expected a whole number")]
    NotANumber { option: String, value: String },
    #[error("unknown mode `{0}`; the GUI offers {modes}", modes = mode_names())]
    UnknownMode(String),
}

fn mode_names() -> String {
    MODES
        .iter()
        .map(|mode| format!("{mode:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Options {
    /// Parses the arguments after the program's name.
    pub fn parse(arguments: impl IntoIterator<Item = String>) -> Result<Options, OptionError> {
        let mut options = Options::default();
        let mut arguments = arguments.into_iter();
        while let Some(option) = arguments.next() {
            if option == "--start" {
                options.start = true;
                continue;
            }
            if !matches!(option.as_str(), "--size" | "--depth" | "--mode") {
                return Err(OptionError::Unknown(option));
            }
            let value = arguments.next().ok_or_else(|| OptionError::MissingValue {
                option: option.clone(),
            })?;
            let number = || {
                value.parse::<usize>().map_err(|_| OptionError::NotANumber {
                    option: option.clone(),
                    value: value.clone(),
                })
            };
            match option.as_str() {
                "--size" => options.size = Some(number()?),
                "--depth" => options.depth = Some(number()?),
                _ => {
                    let mode = MODES
                        .into_iter()
                        .find(|mode| format!("{mode:?}").eq_ignore_ascii_case(&value))
                        .ok_or_else(|| OptionError::UnknownMode(value.clone()))?;
                    options.mode = Some(mode);
                }
            }
        }
        Ok(options)
    }

    /// The controls that turn a fresh state into the one these options ask for, in the
    /// order to apply them (start last, so that it runs the chosen workload).
    pub fn controls(&self) -> Vec<Control> {
        let mut controls = Vec::new();
        controls.extend(self.size.map(Control::SetSize));
        controls.extend(self.depth.map(Control::SetDepth));
        controls.extend(self.mode.map(Control::SetMode));
        if self.start {
            controls.push(Control::ToggleRunning);
        }
        controls
    }
}

/// Applies `options` to `state`; returns the worker commands that result, in order.
pub fn apply_options(
    options: &Options,
    state: &mut AppState,
) -> Vec<crate::compute::WorkerCommand> {
    options
        .controls()
        .into_iter()
        .filter_map(|control| state.apply(control))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compute::{Job, WorkerCommand};

    fn parse(text: &str) -> Result<Options, OptionError> {
        Options::parse(text.split_whitespace().map(String::from))
    }

    #[test]
    fn options_set_the_workload_and_start_it() {
        let options = parse("--size 256 --depth 8 --mode graphcompiled --start").unwrap();
        let mut state = AppState::new("test adapter");
        let commands = apply_options(&options, &mut state);
        assert_eq!(
            commands,
            [WorkerCommand::Run(Job {
                size: 256,
                depth: 8,
                mode: ExecutionMode::GraphCompiled
            })]
        );
    }

    #[test]
    fn bad_options_are_typed_errors_that_name_the_problem() {
        assert_eq!(
            parse("--size big"),
            Err(OptionError::NotANumber {
                option: "--size".into(),
                value: "big".into()
            })
        );
        assert_eq!(
            parse("--depth"),
            Err(OptionError::MissingValue {
                option: "--depth".into()
            })
        );
        let unknown_mode = parse("--mode Fastest").unwrap_err();
        assert!(unknown_mode.to_string().contains("GraphCompiled"));
        assert_eq!(parse("--fast"), Err(OptionError::Unknown("--fast".into())));
    }
}
