//! Every WGSL shader, and every ```wgsl block of the book, parsed and validated by naga,
//! the same front end wgpu uses. A shader error shows up here on any machine, GPU or not.

use std::path::{Path, PathBuf};

use book_tests::markdown::code_blocks;
use book_tests::{markdown_files, repository_root};

/// Parses and validates one WGSL module; the error names the file and the line.
fn validate(source: &str, name: &str) -> Result<(), String> {
    let module = naga::front::wgsl::parse_str(source)
        .map_err(|error| error.emit_to_string_with_path(source, name))?;
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .map_err(|error| error.emit_to_string_with_path(source, name))?;
    Ok(())
}

/// The files named by include directives in a block, relative to the chapter.
fn included_files(block_body: &str, chapter: &Path) -> Vec<PathBuf> {
    let directory = chapter.parent().unwrap();
    block_body
        .split("{{#")
        .skip(1)
        .filter_map(|directive| {
            let argument = directive.split("}}").next()?;
            let mut words = argument.split_whitespace();
            let kind = words.next()?;
            let target = words.next()?;
            matches!(kind, "include" | "rustdoc_include")
                .then(|| directory.join(target.split(':').next().unwrap()))
        })
        .collect()
}

#[test]
fn every_shader_file_validates() {
    let directory = repository_root().join("shaders");
    let mut shaders: Vec<PathBuf> = std::fs::read_dir(&directory)
        .unwrap()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            path.extension()
                .is_some_and(|extension| extension == "wgsl")
        })
        .collect();
    shaders.sort();
    assert!(
        !shaders.is_empty(),
        "no shaders found in {}",
        directory.display()
    );
    let failures: Vec<String> = shaders
        .iter()
        .filter_map(|path| {
            let source = std::fs::read_to_string(path).unwrap();
            validate(&source, &path.display().to_string()).err()
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A block that includes a shader fragment is checked by validating the whole file the
/// fragment comes from (a fragment alone refers to bindings declared elsewhere); a block
/// written out in the chapter must validate on its own.
#[test]
fn every_wgsl_block_of_the_book_validates() {
    let mut failures = Vec::new();
    for chapter in markdown_files(&repository_root().join("src")) {
        let text = std::fs::read_to_string(&chapter).unwrap();
        for block in code_blocks(&text)
            .iter()
            .filter(|block| block.language() == "wgsl")
        {
            let location = format!("{}:{}", chapter.display(), block.line);
            let files = included_files(&block.body, &chapter);
            if files.is_empty()
                && let Err(error) = validate(&block.body, &location)
            {
                failures.push(error);
            }
            for file in files {
                match std::fs::read_to_string(&file) {
                    Ok(source) => {
                        if let Err(error) = validate(&source, &file.display().to_string()) {
                            failures.push(format!("{location}: {error}"));
                        }
                    }
                    Err(error) => failures.push(format!("{location}: {}: {error}", file.display())),
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_broken_shader_fails_validation() {
    // The check itself must be able to fail.
    assert!(validate("fn main( {", "broken.wgsl").is_err());
    let unbound = "@compute @workgroup_size(1) fn main() { let x: u32 = 1.5; }";
    assert!(validate(unbound, "typed.wgsl").is_err());
}
