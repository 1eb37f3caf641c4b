//! A tiny `#define` preprocessor for shader text.
//!
//! WGSL has no preprocessor, but a shader is only text, and text can be edited before
//! the WGSL compiler sees it. Graphics engines do this all the time: one template, with
//! `#ifdef` around the variants, becomes the shader the current device runs best, chosen
//! at run time. The directives, one per line:
//!
//! - `#define NAME value`: from the next line on, the whole word `NAME` becomes `value`.
//!   The value is expanded once, when it is defined, so a value may use earlier names.
//! - `#define NAME`: a flag. It only matters to `#ifdef`; the word itself is left alone.
//! - `#ifdef NAME`, `#ifndef NAME`, `#else`, `#endif`: keep the lines between only if
//!   `NAME` is (or is not) defined. They nest.
//!
//! Directive lines and the lines a condition drops are removed from the result. Rust
//! passes defines in too, as if they were `#define` lines at the top of the text.

use std::collections::HashMap;

use thiserror::Error;

// ANCHOR: preprocessor_error
/// Why a shader template could not be preprocessed. Lines count from 1.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PreprocessorError {
    #[error("line {line}: unknown directive #{directive}")]
    UnknownDirective { line: usize, directive: String },
    #[error(
        "line {line}: #define needs a name (an ASCII letter or `_`, then letters, digits or `_`), found {text:?}"
    )]
    MalformedDefine { line: usize, text: String },
    #[error("line {line}: #{directive} needs exactly one name, found {text:?}")]
    MalformedCondition {
        line: usize,
        directive: &'static str,
        text: String,
    },
    #[error("line {line}: #{directive} without an #ifdef or #ifndef to belong to")]
    Unmatched {
        line: usize,
        directive: &'static str,
    },
    #[error("line {line}: a second #else for the #ifdef or #ifndef on line {opened}")]
    SecondElse { line: usize, opened: usize },
    #[error("the #ifdef or #ifndef on line {line} has no #endif")]
    Unterminated { line: usize },
    #[error("the define {name:?} passed to the preprocessor is not a name")]
    InvalidDefineName { name: String },
}
// ANCHOR_END: preprocessor_error

/// One open `#ifdef` or `#ifndef`.
struct Condition {
    /// The line it opened on, for messages.
    line: usize,
    /// Whether the branch we are in keeps its lines (ignoring enclosing conditions).
    keeps_lines: bool,
    seen_else: bool,
}

// ANCHOR: preprocess
/// Applies the directives of `source`, after defining `defines` (name, value; an empty
/// value defines a flag).
pub fn preprocess(source: &str, defines: &[(&str, &str)]) -> Result<String, PreprocessorError> {
    let mut definitions: HashMap<String, String> = HashMap::new();
    for &(name, value) in defines {
        if !is_name(name) {
            return Err(PreprocessorError::InvalidDefineName {
                name: name.to_string(),
            });
        }
        definitions.insert(name.to_string(), value.trim().to_string());
    }
    let mut conditions: Vec<Condition> = Vec::new();
    let mut output = String::new();
    for (index, text) in source.lines().enumerate() {
        let line = index + 1;
        // A line is kept only if every enclosing condition keeps it.
        let active = conditions.iter().all(|condition| condition.keeps_lines);
        let Some(directive) = text.trim_start().strip_prefix('#') else {
            if active {
                output += &substitute(text, &definitions);
                output.push('\n');
            }
            continue;
        };
        let (keyword, argument) = split_word(directive);
        match keyword {
            "define" => {
                let (name, value) = split_word(argument);
                if !is_name(name) {
                    return Err(PreprocessorError::MalformedDefine {
                        line,
                        text: text.to_string(),
                    });
                }
                if active {
                    // A comment after the value is not part of it.
                    let value = value.split("//").next().unwrap_or_default().trim();
                    let value = substitute(value, &definitions);
                    definitions.insert(name.to_string(), value);
                }
            }
            "ifdef" | "ifndef" => {
                let directive = if keyword == "ifdef" {
                    "ifdef"
                } else {
                    "ifndef"
                };
                let name = condition_name(line, directive, argument)?;
                let defined = definitions.contains_key(name);
                conditions.push(Condition {
                    line,
                    keeps_lines: defined == (directive == "ifdef"),
                    seen_else: false,
                });
            }
            "else" => {
                let condition = conditions.last_mut().ok_or(PreprocessorError::Unmatched {
                    line,
                    directive: "else",
                })?;
                if condition.seen_else {
                    return Err(PreprocessorError::SecondElse {
                        line,
                        opened: condition.line,
                    });
                }
                condition.seen_else = true;
                condition.keeps_lines = !condition.keeps_lines;
            }
            "endif" => {
                conditions.pop().ok_or(PreprocessorError::Unmatched {
                    line,
                    directive: "endif",
                })?;
            }
            _ => {
                return Err(PreprocessorError::UnknownDirective {
                    line,
                    directive: keyword.to_string(),
                });
            }
        }
    }
    if let Some(condition) = conditions.last() {
        return Err(PreprocessorError::Unterminated {
            line: condition.line,
        });
    }
    Ok(output)
}
// ANCHOR_END: preprocess

fn condition_name<'text>(
    line: usize,
    directive: &'static str,
    argument: &'text str,
) -> Result<&'text str, PreprocessorError> {
    let (name, rest) = split_word(argument);
    if !is_name(name) || !rest.is_empty() {
        return Err(PreprocessorError::MalformedCondition {
            line,
            directive,
            text: argument.to_string(),
        });
    }
    Ok(name)
}

/// The first whitespace-separated word and the trimmed rest.
fn split_word(text: &str) -> (&str, &str) {
    let text = text.trim();
    match text.split_once(char::is_whitespace) {
        Some((word, rest)) => (word, rest.trim()),
        None => (text, ""),
    }
}

fn is_name(text: &str) -> bool {
    let mut characters = text.chars();
    characters
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && characters.all(is_name_character)
}

fn is_name_character(character: char) -> bool {
    character.is_ascii_alphanumeric() || character == '_'
}

// ANCHOR: substitute
/// Replaces every whole word that names a define with a value by that value. Words are
/// runs of letters, digits and `_`, so `WORKGROUP_SIZE` inside `MY_WORKGROUP_SIZE` is
/// left alone. Flags (empty values) and `//` comments are left alone too: a comment that
/// talks about `WORKGROUP_SIZE` should still say so.
fn substitute(text: &str, definitions: &HashMap<String, String>) -> String {
    let (code, comment) = text.split_at(text.find("//").unwrap_or(text.len()));
    let mut result = String::with_capacity(text.len());
    let mut rest = code;
    while let Some(start) = rest.find(is_name_character) {
        result += &rest[..start];
        let word_length = rest[start..]
            .find(|character: char| !is_name_character(character))
            .unwrap_or(rest.len() - start);
        let word = &rest[start..start + word_length];
        match definitions.get(word) {
            Some(value) if !value.is_empty() => result += value,
            _ => result += word,
        }
        rest = &rest[start + word_length..];
    }
    result + rest + comment
}
// ANCHOR_END: substitute

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_replace_whole_words_only() {
        let source = "#define SIZE 16\nlet a = SIZE * SIZE; let b = MY_SIZE; let c = SIZE2;\n";
        assert_eq!(
            preprocess(source, &[]).unwrap(),
            "let a = 16 * 16; let b = MY_SIZE; let c = SIZE2;\n"
        );
    }

    #[test]
    fn comments_are_left_alone() {
        let source = "#define SIZE 16 // the tile edge\nlet a = SIZE; // SIZE is the tile edge\n";
        assert_eq!(
            preprocess(source, &[]).unwrap(),
            "let a = 16; // SIZE is the tile edge\n"
        );
    }

    #[test]
    fn a_define_applies_from_the_next_line_on() {
        let source = "SIZE\n#define SIZE 4\nSIZE\n";
        assert_eq!(preprocess(source, &[]).unwrap(), "SIZE\n4\n");
    }

    #[test]
    fn a_value_may_use_earlier_defines() {
        let source = "#define EDGE 8\n#define AREA EDGE * EDGE\nAREA\n";
        assert_eq!(preprocess(source, &[]).unwrap(), "8 * 8\n");
    }

    #[test]
    fn defines_from_rust_come_first() {
        let source = "#ifdef FAST\nfast WIDTH\n#else\nslow WIDTH\n#endif\n";
        let fast = preprocess(source, &[("FAST", ""), ("WIDTH", "64")]).unwrap();
        assert_eq!(fast, "fast 64\n");
        assert_eq!(preprocess(source, &[]).unwrap(), "slow WIDTH\n");
    }

    #[test]
    fn conditions_nest() {
        let source = "\
#define OUTER
#ifdef OUTER
a
#ifndef INNER
b
#else
c
#endif
#else
#ifdef OUTER
d
#endif
#endif
e
";
        assert_eq!(preprocess(source, &[]).unwrap(), "a\nb\ne\n");
        assert_eq!(preprocess(source, &[("INNER", "")]).unwrap(), "a\nc\ne\n");
    }

    #[test]
    fn defines_in_dropped_branches_do_not_count() {
        let source = "#ifdef MISSING\n#define SIZE 1\n#endif\nSIZE\n";
        assert_eq!(preprocess(source, &[]).unwrap(), "SIZE\n");
    }

    #[test]
    fn indented_directives_are_directives() {
        let source = "    #ifdef FLAG\n    kept\n    #endif\n";
        assert_eq!(preprocess(source, &[("FLAG", "")]).unwrap(), "    kept\n");
    }

    #[test]
    fn errors_name_the_line() {
        let error = |source: &str| preprocess(source, &[]).unwrap_err();
        assert_eq!(
            error("a\n#include x\n"),
            PreprocessorError::UnknownDirective {
                line: 2,
                directive: "include".into()
            }
        );
        assert_eq!(
            error("#define 4X 1\n"),
            PreprocessorError::MalformedDefine {
                line: 1,
                text: "#define 4X 1".into()
            }
        );
        assert_eq!(
            error("#define\n"),
            PreprocessorError::MalformedDefine {
                line: 1,
                text: "#define".into()
            }
        );
        assert!(matches!(
            error("#ifdef A B\n#endif\n"),
            PreprocessorError::MalformedCondition {
                line: 1,
                directive: "ifdef",
                ..
            }
        ));
        assert!(matches!(
            error("#ifndef\n#endif\n"),
            PreprocessorError::MalformedCondition {
                line: 1,
                directive: "ifndef",
                ..
            }
        ));
        assert_eq!(
            error("x\n#else\n"),
            PreprocessorError::Unmatched {
                line: 2,
                directive: "else"
            }
        );
        assert_eq!(
            error("#endif\n"),
            PreprocessorError::Unmatched {
                line: 1,
                directive: "endif"
            }
        );
        assert_eq!(
            error("#ifdef A\n#else\n#else\n#endif\n"),
            PreprocessorError::SecondElse { line: 3, opened: 1 }
        );
        assert_eq!(
            error("#ifdef A\n#ifdef B\n#endif\n"),
            PreprocessorError::Unterminated { line: 1 }
        );
        assert_eq!(
            preprocess("", &[("NOT A NAME", "1")]).unwrap_err(),
            PreprocessorError::InvalidDefineName {
                name: "NOT A NAME".into()
            }
        );
    }
}
