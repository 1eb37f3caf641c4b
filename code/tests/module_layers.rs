//! Imports flow one way: a module of the crate uses only modules the book teaches before it.
//!
//! The test reads every file under `code/src/` (the binaries in `src/bin/` are crates of
//! their own), finds each path that starts with `crate::` outside comments and string
//! literals, and fails, naming the file and the line, when it reaches a module that comes
//! later in [`LAYERS`]. A path through a name the crate's root re-exports
//! (`crate::Tensor2d`) counts as a path into the module it comes from.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The modules of `src/lib.rs`, in the order the book teaches them (`figure` first: it
/// uses nothing else and everything may use it). The runner comes after the compiler
/// because the execution modes run the compiler's passes.
const LAYERS: [&str; 16] = [
    "figure",
    "rust_basics",
    "tensor",
    "cpu",
    "memory",
    "gpu",
    "immediate",
    "graph",
    "compiler",
    "runner",
    "bench",
    "parallel",
    "numbers",
    "inference",
    "use_cases",
    "realtime",
];

#[test]
fn no_module_imports_a_later_one() {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let root_names = root_reexports(&std::fs::read_to_string(source.join("lib.rs")).unwrap());
    let mut files = Vec::new();
    collect_rust_files(&source, &mut files);
    assert!(
        files.len() > 50,
        "only {} files found under {}",
        files.len(),
        source.display()
    );

    let mut violations = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&source).unwrap();
        let Some(module) = module_of(relative) else {
            continue;
        };
        let Some(layer) = LAYERS.iter().position(|name| *name == module) else {
            violations.push(format!(
                "{}: the module `{module}` is not in LAYERS; add it where the book teaches it",
                relative.display()
            ));
            continue;
        };
        let text = std::fs::read_to_string(file).unwrap();
        for (line, target) in crate_paths(&text) {
            let target = root_names.get(&target).cloned().unwrap_or(target);
            let Some(target_layer) = LAYERS.iter().position(|name| *name == target) else {
                violations.push(format!(
                    "code/src/{}:{line}: `crate::{target}` is neither a module in LAYERS nor a \
                     name lib.rs re-exports",
                    relative.display()
                ));
                continue;
            };
            if target_layer > layer {
                violations.push(format!(
                    "code/src/{}:{line}: `{module}` uses `crate::{target}`, a module that comes \
                     later in the order {}",
                    relative.display(),
                    LAYERS.join(" → ")
                ));
            }
        }
    }
    assert!(violations.is_empty(), "\n{}\n", violations.join("\n"));
}

#[test]
fn the_layers_are_the_modules_of_lib_rs() {
    let lib =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    let mut declared: Vec<&str> = lib
        .lines()
        .filter_map(|line| line.strip_prefix("pub mod "))
        .map(|rest| rest.trim_end_matches(';'))
        .collect();
    let mut layers = LAYERS.to_vec();
    declared.sort_unstable();
    layers.sort_unstable();
    assert_eq!(declared, layers);
}

#[test]
fn paths_are_found_outside_comments_and_strings_only() {
    let text = r##"
use crate::gpu::{GpuContext, GpuError};
// use crate::runner::Hidden;
/// See [`crate::bench::figure`] and /* crate::bench */.
let shader = "crate::runner inside a string";
let raw = r#"a "quoted" crate::runner"#;
let lifetime: &'static str = "x"; let c = '"'; let slash = '\\'; let quote = '\'';
use crate::{graph::Operator, compiler::fuse};
    pub(crate) fn f() -> crate::Tensor2d { crate::tensor::Tensor2d::zeros(1, 1) }
/* a block /* nested */ crate::runner still a comment */ let x = crate::cpu::relu;
"##;
    let found: Vec<(usize, String)> = crate_paths(text);
    let expected: Vec<(usize, String)> = [
        (2, "gpu"),
        (8, "graph"),
        (8, "compiler"),
        (9, "Tensor2d"),
        (9, "tensor"),
        (10, "cpu"),
    ]
    .into_iter()
    .map(|(line, name)| (line, name.to_string()))
    .collect();
    assert_eq!(found, expected);
}

/// The module a file belongs to: the first component of its path under `src/`. `None` for
/// `lib.rs` (the root) and the binaries.
fn module_of(relative: &Path) -> Option<String> {
    let first = relative.components().next()?.as_os_str().to_str()?;
    match first {
        "lib.rs" | "bin" => None,
        name => Some(name.trim_end_matches(".rs").to_string()),
    }
}

/// `name → module` for every name `lib.rs` re-exports with `pub use module::{…}` or
/// `pub use module::Name`.
fn root_reexports(lib: &str) -> HashMap<String, String> {
    let mut names = HashMap::new();
    let code = strip_comments_and_strings(lib);
    for statement in code.split(';') {
        let Some(path) = statement.trim().strip_prefix("pub use ") else {
            continue;
        };
        let Some((module, rest)) = path.split_once("::") else {
            continue;
        };
        let items = rest.trim().trim_start_matches('{').trim_end_matches('}');
        for item in items.split(',') {
            let name = item.split("::").last().unwrap_or("").trim();
            let name = name.rsplit(" as ").next().unwrap_or(name).trim();
            if !name.is_empty() {
                names.insert(name.to_string(), module.trim().to_string());
            }
        }
    }
    names
}

fn collect_rust_files(directory: &Path, files: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(directory)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect_rust_files(&path, files);
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            files.push(path);
        }
    }
}

/// Every `crate::name` in `text` outside comments and literals, with its line (from 1).
/// `crate::{a::…, b}` gives `a` and `b`.
fn crate_paths(text: &str) -> Vec<(usize, String)> {
    let code = strip_comments_and_strings(text);
    let mut found = Vec::new();
    for (index, line) in code.lines().enumerate() {
        let mut rest = line;
        while let Some(position) = rest.find("crate::") {
            let preceded_by_identifier =
                rest[..position]
                    .chars()
                    .next_back()
                    .is_some_and(|character| {
                        character.is_alphanumeric() || character == '_' || character == '$'
                    });
            let after = &rest[position + "crate::".len()..];
            rest = after;
            if preceded_by_identifier {
                continue;
            }
            if let Some(group) = after.strip_prefix('{') {
                let group = group.split('}').next().unwrap_or("");
                for item in group.split(',') {
                    let name = leading_identifier(item.trim());
                    if !name.is_empty() {
                        found.push((index + 1, name.to_string()));
                    }
                }
            } else {
                let name = leading_identifier(after);
                if !name.is_empty() {
                    found.push((index + 1, name.to_string()));
                }
            }
        }
    }
    found
}

fn leading_identifier(text: &str) -> &str {
    let end = text
        .find(|character: char| !(character.is_alphanumeric() || character == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

/// `text` with every comment and every string or character literal blanked out, line
/// breaks kept, so that what is left is code and line numbers still match.
fn strip_comments_and_strings(text: &str) -> String {
    let characters: Vec<char> = text.chars().collect();
    let mut code = String::with_capacity(text.len());
    let blank = |character: char| if character == '\n' { '\n' } else { ' ' };
    let mut index = 0;
    while index < characters.len() {
        let character = characters[index];
        let next = characters.get(index + 1).copied();
        if character == '/' && next == Some('/') {
            while index < characters.len() && characters[index] != '\n' {
                code.push(' ');
                index += 1;
            }
        } else if character == '/' && next == Some('*') {
            let mut depth = 0;
            while index < characters.len() {
                if characters[index] == '/' && characters.get(index + 1) == Some(&'*') {
                    depth += 1;
                    code.push_str("  ");
                    index += 2;
                } else if characters[index] == '*' && characters.get(index + 1) == Some(&'/') {
                    depth -= 1;
                    code.push_str("  ");
                    index += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    code.push(blank(characters[index]));
                    index += 1;
                }
            }
        } else if let Some(hashes) = raw_string_start(&characters, index) {
            // r"…", r#"…"#, br"…": ends at a quote followed by as many #.
            let opening = if character == 'b' { 3 } else { 2 } + hashes;
            for _ in 0..opening {
                code.push(' ');
            }
            index += opening;
            while index < characters.len() {
                let closes = characters[index] == '"'
                    && (1..=hashes).all(|offset| characters.get(index + offset) == Some(&'#'));
                if closes {
                    for _ in 0..=hashes {
                        code.push(' ');
                    }
                    index += hashes + 1;
                    break;
                }
                code.push(blank(characters[index]));
                index += 1;
            }
        } else if character == '"' {
            code.push(' ');
            index += 1;
            while index < characters.len() && characters[index] != '"' {
                if characters[index] == '\\' {
                    code.push(' ');
                    index += 1;
                }
                if index < characters.len() {
                    code.push(blank(characters[index]));
                    index += 1;
                }
            }
            code.push(' ');
            index += 1;
        } else if character == '\'' && is_character_literal(&characters, index) {
            code.push(' ');
            index += 1;
            if characters.get(index) == Some(&'\\') {
                // The backslash and the character it escapes, which may be a quote.
                code.push_str("  ");
                index += 2;
            }
            while index < characters.len() && characters[index] != '\'' {
                code.push(' ');
                index += 1;
            }
            code.push(' ');
            index += 1;
        } else {
            code.push(character);
            index += 1;
        }
    }
    code
}

/// At `index`, the start of a raw string literal (`r"`, `r#"`, `br"`…)? Then how many `#`.
fn raw_string_start(characters: &[char], index: usize) -> Option<usize> {
    let after_prefix = match characters[index] {
        'r' => index + 1,
        'b' if characters.get(index + 1) == Some(&'r') => index + 2,
        _ => return None,
    };
    let previous_is_identifier =
        index > 0 && (characters[index - 1].is_alphanumeric() || characters[index - 1] == '_');
    if previous_is_identifier {
        return None;
    }
    let hashes = characters[after_prefix..]
        .iter()
        .take_while(|&&character| character == '#')
        .count();
    (characters.get(after_prefix + hashes) == Some(&'"')).then_some(hashes)
}

/// A `'` that opens a character literal (`'a'`, `'\n'`, `'"'`), not a lifetime (`'a`).
fn is_character_literal(characters: &[char], index: usize) -> bool {
    match characters.get(index + 1) {
        Some('\\') => true,
        Some(_) => characters.get(index + 2) == Some(&'\''),
        None => false,
    }
}
