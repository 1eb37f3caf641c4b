//! Choosing figures by name: `--only 'modes-*'` on the `sweep` binary and on
//! `cargo xtask figures`.
//!
//! This file uses nothing but the standard library, because `xtask` compiles it too
//! (with `#[path]`), so that the sweep and the drawing select figures by one rule.

/// Shell-style matching of a whole name: `*` matches any run of characters (the empty
/// one too), `?` exactly one character, everything else itself.
pub fn glob_matches(pattern: &str, text: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let text: Vec<char> = text.chars().collect();
    // Walk both; on a mismatch after a `*`, let that `*` swallow one more character and
    // try again from there. Only the last `*` ever needs revisiting.
    let (mut in_pattern, mut in_text) = (0, 0);
    let mut last_star: Option<(usize, usize)> = None;
    while in_text < text.len() {
        match pattern.get(in_pattern) {
            Some('*') => {
                last_star = Some((in_pattern, in_text));
                in_pattern += 1;
            }
            Some(&wanted) if wanted == '?' || wanted == text[in_text] => {
                in_pattern += 1;
                in_text += 1;
            }
            _ => match last_star {
                Some((star, swallowed_up_to)) => {
                    last_star = Some((star, swallowed_up_to + 1));
                    in_pattern = star + 1;
                    in_text = swallowed_up_to + 1;
                }
                None => return false,
            },
        }
    }
    pattern[in_pattern..]
        .iter()
        .all(|&character| character == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_whole_ids() {
        assert!(glob_matches("modes-*", "modes-by-size-gpu"));
        assert!(glob_matches("*-gpu", "modes-by-size-gpu"));
        assert!(glob_matches("cpu-linear", "cpu-linear"));
        assert!(glob_matches("cpu-l?near", "cpu-linear"));
        assert!(glob_matches("*", ""));
        assert!(glob_matches("*size*", "modes-by-size-software"));
        assert!(glob_matches("a*b*c", "aXbYbZc"));
        assert!(!glob_matches("modes", "modes-by-size-gpu"));
        assert!(!glob_matches("*-gpu", "modes-by-size-software"));
        assert!(!glob_matches("m?des", "modes-"));
        assert!(!glob_matches("a*b*c", "aXbYbZ"));
        assert!(!glob_matches("?", ""));
    }
}
