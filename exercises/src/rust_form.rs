//! Reading a Rust hand-in for the form of its code.
//!
//! Some warm-up exercises are about *how* code is written, not about what it computes: an
//! indexed loop and an iterator chain give the same numbers, and so do an operator table
//! of strings and one of enum variants. Running the code cannot tell them apart, so the
//! checker also reads the file. It does not parse Rust; it needs much less than that:
//!
//! - the source with every comment, and the inside of every string and character
//!   literal, blanked out (so a `[` or an `unsafe` in a comment proves nothing);
//! - the body of one function, found by its `fn name` and matching braces;
//! - in that body, the places where a value is indexed (`values[i]`), where a string
//!   literal appears, and where a given word such as `unsafe` is used;
//! - whether an item (`enum Operator`) is declared with a given keyword.
//!
//! Every finding comes with its line number and the line itself, so that the report
//! points at the code.

use std::path::{Path, PathBuf};

use crate::error::CheckError;
use crate::report::shown_path;
use crate::submission::Variant;

/// The Rust file a variant of the exercise `name` takes its code from (the work file or
/// the starter, the solution, a mutant, an alternative), read.
pub fn source_of(name: &str, variant: Variant) -> Result<RustSource, CheckError> {
    let exercise = crate::registry::find(name).ok_or_else(|| CheckError::UnknownExercise {
        name: name.to_string(),
    })?;
    let path = exercise
        .files(variant)
        .into_iter()
        .map(|(path, _)| path)
        .find(|path| path.extension().is_some_and(|extension| extension == "rs"))
        .ok_or_else(|| CheckError::UnknownExercise {
            name: name.to_string(),
        })?;
    RustSource::read(&path)
}

/// A Rust file, with comments and literal contents blanked out. Blanking keeps every
/// byte offset and line break where it was, so positions map back to the original.
pub struct RustSource {
    pub path: PathBuf,
    original: String,
    code: String,
}

/// A byte range of the blanked code: a function's body, between its braces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

/// One place in the file: its line number and the line as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub line: usize,
    pub text: String,
}

impl std::fmt::Display for Place {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "line {}: `{}`", self.line, self.text)
    }
}

/// Words after which a `[` opens an array or a slice pattern, not an index.
const KEYWORDS_BEFORE_BRACKET: [&str; 9] = [
    "mut", "in", "return", "break", "else", "let", "match", "if", "while",
];

impl RustSource {
    pub fn read(path: &Path) -> Result<RustSource, CheckError> {
        let original = std::fs::read_to_string(path).map_err(|source| CheckError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(RustSource::from_text(path, original))
    }

    pub fn from_text(path: &Path, original: String) -> RustSource {
        let code = blank_comments_and_literals(&original);
        RustSource {
            path: path.to_path_buf(),
            original,
            code,
        }
    }

    /// The file's name as a report shows it.
    pub fn shown(&self) -> String {
        shown_path(&self.path)
    }

    /// The whole file, as a span.
    pub fn whole(&self) -> Span {
        Span {
            start: 0,
            end: self.code.len(),
        }
    }

    /// The body of `fn name`, between its braces; `None` when there is no such function.
    pub fn function_body(&self, name: &str) -> Option<Span> {
        let bytes = self.code.as_bytes();
        for start in word_positions(&self.code, "fn") {
            let after = skip_whitespace(bytes, start + 2);
            if !self.code[after..].starts_with(name)
                || bytes
                    .get(after + name.len())
                    .is_some_and(|&next| is_identifier_byte(next))
            {
                continue;
            }
            let open = after + self.code[after..].find('{')?;
            let mut depth = 0usize;
            for (offset, byte) in bytes[open..].iter().enumerate() {
                match byte {
                    b'{' => depth += 1,
                    b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(Span {
                                start: open + 1,
                                end: open + offset,
                            });
                        }
                    }
                    _ => {}
                }
            }
            return None;
        }
        None
    }

    /// Whether the file declares `keyword name`, such as `enum Operator`.
    pub fn declares(&self, keyword: &str, name: &str) -> bool {
        word_positions(&self.code, keyword).into_iter().any(|at| {
            let after = skip_whitespace(self.code.as_bytes(), at + keyword.len());
            self.code[after..].starts_with(name)
                && self
                    .code
                    .as_bytes()
                    .get(after + name.len())
                    .is_none_or(|&next| !is_identifier_byte(next))
        })
    }

    /// Every place in `span` where a value is indexed with `[…]`: a `[` right after a
    /// name, a `)` or a `]`. Array literals, slice types, attributes and `vec![…]` are not
    /// indexing and are not reported.
    pub fn indexing_in(&self, span: Span) -> Vec<Place> {
        let bytes = self.code.as_bytes();
        let mut places = Vec::new();
        for at in span.start..span.end {
            if bytes[at] != b'[' {
                continue;
            }
            let Some(before) = (span.start..at)
                .rev()
                .find(|&index| !bytes[index].is_ascii_whitespace())
            else {
                continue;
            };
            let indexes = match bytes[before] {
                b')' | b']' => true,
                byte if is_identifier_byte(byte) => {
                    let word_start = (span.start..=before)
                        .rev()
                        .take_while(|&index| is_identifier_byte(bytes[index]))
                        .last()
                        .unwrap_or(before);
                    let word = &self.code[word_start..=before];
                    !KEYWORDS_BEFORE_BRACKET.contains(&word)
                }
                _ => false,
            };
            if indexes {
                self.push_place(&mut places, at);
            }
        }
        places
    }

    /// Every place in `span` where a string literal appears.
    pub fn string_literals_in(&self, span: Span) -> Vec<Place> {
        let mut places = Vec::new();
        let bytes = self.code.as_bytes();
        let mut at = span.start;
        while at < span.end {
            if bytes[at] == b'"' {
                self.push_place(&mut places, at);
                // Skip to the closing quote: the contents are blanked, so it is the next one.
                at += 1 + self.code[at + 1..span.end].find('"').unwrap_or(0);
            }
            at += 1;
        }
        places
    }

    /// Every place in `span` where `word` appears as a whole word.
    pub fn word_in(&self, span: Span, word: &str) -> Vec<Place> {
        let mut places = Vec::new();
        for at in word_positions(&self.code[..span.end], word) {
            if at >= span.start {
                self.push_place(&mut places, at);
            }
        }
        places
    }

    /// The names called in `span`, as `name(` or `.name(`, each once, in order of first
    /// appearance.
    pub fn called_names(&self, span: Span) -> Vec<String> {
        let bytes = self.code.as_bytes();
        let mut names: Vec<String> = Vec::new();
        let mut at = span.start;
        while at < span.end {
            if !is_identifier_byte(bytes[at]) || (at > 0 && is_identifier_byte(bytes[at - 1])) {
                at += 1;
                continue;
            }
            let end = (at..span.end)
                .find(|&index| !is_identifier_byte(bytes[index]))
                .unwrap_or(span.end);
            let name = &self.code[at..end];
            let opens = bytes.get(skip_whitespace(bytes, end)) == Some(&b'(');
            if opens && !names.iter().any(|known| known == name) {
                names.push(name.to_string());
            }
            at = end;
        }
        names
    }

    /// Adds the line holding byte `at`, once per line.
    fn push_place(&self, places: &mut Vec<Place>, at: usize) {
        let line = self.code[..at].matches('\n').count() + 1;
        if places.last().is_some_and(|place| place.line == line) {
            return;
        }
        let text = self
            .original
            .lines()
            .nth(line - 1)
            .unwrap_or_default()
            .trim()
            .to_string();
        places.push(Place { line, text });
    }
}

fn is_identifier_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

fn skip_whitespace(bytes: &[u8], mut at: usize) -> usize {
    while bytes.get(at).is_some_and(u8::is_ascii_whitespace) {
        at += 1;
    }
    at
}

/// The offsets where `word` occurs as a whole word in `code`.
fn word_positions(code: &str, word: &str) -> Vec<usize> {
    let bytes = code.as_bytes();
    code.match_indices(word)
        .map(|(at, _)| at)
        .filter(|&at| {
            let before_ok = at == 0 || !is_identifier_byte(bytes[at - 1]);
            let after_ok = bytes
                .get(at + word.len())
                .is_none_or(|&next| !is_identifier_byte(next));
            before_ok && after_ok
        })
        .collect()
}

/// The source with comments replaced by spaces and the insides of string and character
/// literals replaced by spaces (the quotes stay). Line breaks are kept everywhere, and
/// every replaced character becomes as many spaces as it had bytes, so offsets and line
/// numbers still match the original.
fn blank_comments_and_literals(source: &str) -> String {
    let characters: Vec<(usize, char)> = source.char_indices().collect();
    let mut blanked = String::with_capacity(source.len());
    let blank = |character: char, output: &mut String| {
        if character == '\n' {
            output.push('\n');
        } else {
            output.extend(std::iter::repeat_n(' ', character.len_utf8()));
        }
    };
    let mut index = 0;
    while index < characters.len() {
        let character = characters[index].1;
        let next = characters.get(index + 1).map(|&(_, next)| next);
        match (character, next) {
            ('/', Some('/')) => {
                while index < characters.len() && characters[index].1 != '\n' {
                    blank(characters[index].1, &mut blanked);
                    index += 1;
                }
            }
            ('/', Some('*')) => {
                let mut depth = 0usize;
                while index < characters.len() {
                    let here = characters[index].1;
                    let after = characters.get(index + 1).map(|&(_, next)| next);
                    if here == '/' && after == Some('*') {
                        depth += 1;
                    } else if here == '*' && after == Some('/') {
                        depth -= 1;
                        blank(here, &mut blanked);
                        blank('/', &mut blanked);
                        index += 2;
                        if depth == 0 {
                            break;
                        }
                        continue;
                    }
                    blank(here, &mut blanked);
                    index += 1;
                }
            }
            ('r', Some('"' | '#')) if index == 0 || !characters[index - 1].1.is_alphanumeric() => {
                // A raw string: r"…", r#"…"#, with as many #s at the end as at the start.
                let mut hashes = 0;
                let mut at = index + 1;
                while characters.get(at).is_some_and(|&(_, c)| c == '#') {
                    hashes += 1;
                    at += 1;
                }
                if characters.get(at).map(|&(_, c)| c) != Some('"') {
                    blanked.push(character);
                    index += 1;
                    continue;
                }
                for &(_, c) in &characters[index..=at] {
                    blanked.push(c);
                }
                at += 1;
                while at < characters.len() {
                    let closes = characters[at].1 == '"'
                        && (1..=hashes)
                            .all(|k| characters.get(at + k).is_some_and(|&(_, c)| c == '#'));
                    if closes {
                        blanked.push('"');
                        blanked.extend(std::iter::repeat_n('#', hashes));
                        at += 1 + hashes;
                        break;
                    }
                    blank(characters[at].1, &mut blanked);
                    at += 1;
                }
                index = at;
            }
            ('"', _) => {
                blanked.push('"');
                index += 1;
                while index < characters.len() {
                    let here = characters[index].1;
                    if here == '\\' {
                        blank(here, &mut blanked);
                        if let Some(&(_, escaped)) = characters.get(index + 1) {
                            blank(escaped, &mut blanked);
                        }
                        index += 2;
                        continue;
                    }
                    index += 1;
                    if here == '"' {
                        blanked.push('"');
                        break;
                    }
                    blank(here, &mut blanked);
                }
            }
            ('\'', Some(_)) => {
                // A character literal ('x', '\n', '\u{1F600}') or a lifetime ('a).
                let closing = if next == Some('\\') {
                    (index + 3..characters.len().min(index + 12))
                        .find(|&at| characters[at].1 == '\'')
                } else if characters.get(index + 2).map(|&(_, c)| c) == Some('\'') {
                    Some(index + 2)
                } else {
                    None
                };
                match closing {
                    Some(end) => {
                        blanked.push('\'');
                        for &(_, c) in &characters[index + 1..end] {
                            blank(c, &mut blanked);
                        }
                        blanked.push('\'');
                        index = end + 1;
                    }
                    None => {
                        blanked.push('\'');
                        index += 1;
                    }
                }
            }
            _ => {
                blanked.push(character);
                index += 1;
            }
        }
    }
    blanked
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(text: &str) -> RustSource {
        RustSource::from_text(Path::new("test.rs"), text.to_string())
    }

    #[test]
    fn comments_and_literals_are_blanked_and_offsets_kept() {
        let text = "let a = \"x[0]\"; // b[1]\n/* c[2] /* nested */ */ let d = 'e'; let r = r#\"f[3]\"#;\n'a";
        let blanked = blank_comments_and_literals(text);
        assert_eq!(blanked.len(), text.len());
        assert_eq!(blanked.lines().count(), text.lines().count());
        assert!(!blanked.contains('['), "{blanked}");
        assert!(blanked.contains("let d = ' ';"), "{blanked}");
        assert!(blanked.ends_with("'a"), "{blanked}");
    }

    #[test]
    fn indexing_is_told_from_arrays_types_and_macros() {
        let file = source(
            "fn other() { x[0]; }\n\
             fn body(values: &mut [f32], bias: &[f32]) {\n\
                 let table = [1.0, 2.0];\n\
                 let grown = vec![0.0; 4];\n\
                 #[allow(unused)]\n\
                 let slice: &[f32] = &table;\n\
                 for value in &mut values[..] {}\n\
                 values[0] = bias[1] + table[0];\n\
                 call(1)[2];\n\
             }\n",
        );
        let body = file.function_body("body").unwrap();
        let lines: Vec<usize> = file
            .indexing_in(body)
            .iter()
            .map(|place| place.line)
            .collect();
        assert_eq!(lines, [7, 8, 9]);
        assert!(file.function_body("missing").is_none());
        // `fn bodyguard` is not `fn body`.
        let other = source("fn bodyguard() { a[1]; }\nfn body() {}\n");
        let span = other.function_body("body").unwrap();
        assert!(other.indexing_in(span).is_empty());
    }

    #[test]
    fn string_literals_words_and_declarations_are_found() {
        let file = source(
            "pub enum Operator { Relu }\n\
             fn run() {\n    let name = \"relu\"; // \"not this\"\n    unsafe { go() }\n}\n",
        );
        let body = file.function_body("run").unwrap();
        let literals = file.string_literals_in(body);
        assert_eq!(literals.len(), 1);
        assert_eq!(literals[0].line, 3);
        assert_eq!(literals[0].text, "let name = \"relu\"; // \"not this\"");
        assert_eq!(file.word_in(body, "unsafe")[0].line, 4);
        assert!(file.declares("enum", "Operator"));
        assert_eq!(file.called_names(body), ["go"]);
        assert!(!file.declares("struct", "Operator"));
        assert!(!file.declares("enum", "Op"));
    }
}
