//! The engine's shape, checked on its source: functions short enough to read in
//! one sitting, and no clock, file, socket or thread in core (it runs in wasm).

// Property runs and the shape checks are long or read files: native only.
#![cfg(not(target_arch = "wasm32"))]

use std::path::{Path, PathBuf};

const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
/// The longest a function of core may be, from its `fn` line to its closing brace.
const MAX_LINES: usize = 80;

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// Each function of a rustfmt-formatted file that spans more than `max` lines:
/// (its line, its name, its length). Test functions and test modules are left out.
fn long_functions(text: &str, max: usize) -> Vec<(usize, String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = vec![];
    let tests_from = lines.iter().position(|l| l.trim() == "#[cfg(test)]").unwrap_or(lines.len());
    for (n, line) in lines.iter().enumerate().take(tests_from) {
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        let head = ["pub fn ", "pub(crate) fn ", "fn ", "pub const fn ", "const fn ", "pub(super) fn "]
            .iter()
            .find_map(|p| trimmed.strip_prefix(p));
        let Some(rest) = head else { continue };
        if line.trim_end().ends_with('}') || line.trim_end().ends_with(';') {
            continue;
        }
        let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        let close = format!("{indent}}}");
        if let Some(end) = lines[n + 1..].iter().position(|l| *l == close) {
            let len = end + 2;
            if len > max {
                out.push((n + 1, name, len));
            }
        }
    }
    out
}

#[test]
fn no_function_of_core_is_longer_than_80_lines() {
    let mut files = vec![];
    sources(Path::new(SRC), &mut files);
    files.sort();
    let mut long = vec![];
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for (line, name, len) in long_functions(&text, MAX_LINES) {
            long.push(format!("{}:{line} {name} ({len} lines)", f.strip_prefix(SRC).unwrap().display()));
        }
    }
    assert!(long.is_empty(), "split these into functions that each do one thing:\n{}", long.join("\n"));
}

#[test]
fn the_length_check_sees_a_long_function_and_skips_tests() {
    let body = "    let x = 1;\n".repeat(81);
    let text = format!("fn short() {{\n}}\n\npub(crate) fn long() {{\n{body}}}\n\n#[cfg(test)]\nmod tests {{\n    fn also_long() {{\n{body}    }}\n}}\n");
    assert_eq!(long_functions(&text, MAX_LINES), vec![(4, "long".to_string(), 83)]);
}

#[test]
fn core_reaches_for_no_clock_file_socket_or_thread() {
    let mut files = vec![];
    sources(Path::new(SRC), &mut files);
    let banned = ["std::fs", "std::net", "std::thread", "std::process", "SystemTime::now", "Instant::now", "tokio::"];
    let mut hits = vec![];
    for f in &files {
        for (n, line) in std::fs::read_to_string(f).unwrap().lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            if let Some(b) = banned.iter().find(|b| line.contains(*b)) {
                hits.push(format!("{}:{} {b}", f.display(), n + 1));
            }
        }
    }
    assert!(hits.is_empty(), "the host hands these in:\n{}", hits.join("\n"));
}
