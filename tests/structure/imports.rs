//! How the Rust structure tests read a crate's sources: each file's module,
//! its text without comments, literals and tests, the modules it imports, and
//! the import circles among them. Shared by core/tests/structure.rs and
//! bridge/tests/structure.rs through `#[path]`.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each source file's module path ("" for the crate root) and its text with
/// comments, string and char literals blanked and test items removed.
pub fn sources(src: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                out.insert(module_of(src, &path), without_tests(&blanked(&text)));
            }
        }
    }
    out
}

/// `main.rs` (or `lib.rs`) is the root; `a/mod.rs` and `a.rs` are `a`; `a/b.rs` is `a::b`.
pub fn module_of(src: &Path, file: &Path) -> String {
    let rel: PathBuf = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    if matches!(parts.last().map(String::as_str), Some("mod")) || parts == ["main"] || parts == ["lib"] {
        parts.pop();
    }
    parts.join("::")
}

/// The text with comments removed and the insides of string and char
/// literals blanked, so that braces and paths in them count for nothing.
pub fn blanked(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let (mut out, mut i) = (String::with_capacity(text.len()), 0);
    while i < b.len() {
        let next = b.get(i + 1).copied();
        if b[i] == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if b[i] == '/' && next == Some('*') {
            let mut depth = 0;
            loop {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if let Some(end) = literal_end(&b, i) {
            out.push_str("\"\"");
            i = end;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    out
}

/// Where the string, raw string or char literal starting at `i` ends, if one does.
pub fn literal_end(b: &[char], i: usize) -> Option<usize> {
    let word_before = i > 0 && (b[i - 1].is_alphanumeric() || b[i - 1] == '_');
    if b[i] == 'r' && !word_before {
        let hashes = b[i + 1..].iter().take_while(|&&c| c == '#').count();
        if b.get(i + 1 + hashes) == Some(&'"') {
            let close: String = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
            let rest: String = b[i + 2 + hashes..].iter().collect();
            return Some(i + 2 + hashes + rest.find(&close)? + close.chars().count());
        }
    }
    if b[i] == '"' {
        let mut j = i + 1;
        while j < b.len() && b[j] != '"' {
            j += if b[j] == '\\' { 2 } else { 1 };
        }
        return Some(j + 1);
    }
    // A char ('x', '\n', '\u{..}'), not a lifetime ('a).
    if b[i] == '\'' {
        if b.get(i + 1) == Some(&'\\') {
            return Some(i + 2 + b[i + 2..].iter().position(|&c| c == '\'')? + 1);
        }
        if b.get(i + 2) == Some(&'\'') {
            return Some(i + 3);
        }
    }
    None
}

/// The text without the items under `#[cfg(test)]` (or `cfg(all(test, …))`).
pub fn without_tests(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("#[cfg(") {
        let attr_end = at + rest[at..].find(']').unwrap();
        let attr = &rest[at..attr_end];
        let is_test =
            attr.split(|c: char| !c.is_alphanumeric() && c != '_').any(|w| w == "test") && !attr.contains("not(test");
        if !is_test {
            out.push_str(&rest[..=attr_end]);
            rest = &rest[attr_end + 1..];
            continue;
        }
        out.push_str(&rest[..at]);
        let item = &rest[attr_end + 1..];
        let (brace, semi) = (item.find('{'), item.find(';'));
        let end = match (brace, semi) {
            (Some(b), Some(s)) if s < b => s + 1,
            (Some(b), _) => b + matching_brace(&item[b..]) + 1,
            (None, Some(s)) => s + 1,
            (None, None) => item.len(),
        };
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// The offset of the brace closing the one `text` starts with.
pub fn matching_brace(text: &str) -> usize {
    let mut depth = 0;
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    text.len() - 1
}

/// The paths `text` names after `prefix` (`crate::`, `super::`): for a group
/// `crate::{a, b::c}`, each of its top-level paths.
pub fn paths_after(text: &str, prefix: &str) -> Vec<Vec<String>> {
    let mut out = vec![];
    for (at, _) in text.match_indices(prefix) {
        if text[..at].chars().next_back().is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &text[at + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = &group[..matching_brace(rest).saturating_sub(1)];
            out.extend(top_level(inner).iter().map(|p| segments(p)));
        } else {
            out.push(segments(rest));
        }
    }
    out
}

/// A group's entries split at its top-level commas.
pub fn top_level(inner: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut from) = (vec![], 0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[from..]);
    parts
}

/// `a::b::C` at the start of `text` as its segments.
pub fn segments(text: &str) -> Vec<String> {
    let mut out = vec![];
    let mut rest = text.trim_start();
    loop {
        let len = rest.find(|c: char| !c.is_alphanumeric() && c != '_').unwrap_or(rest.len());
        if len == 0 {
            return out;
        }
        out.push(rest[..len].to_string());
        match rest[len..].strip_prefix("::") {
            Some(r) if !r.starts_with('{') => rest = r,
            _ => return out,
        }
    }
}

/// The module a path from the crate root names: the longest known module
/// its segments begin with, or the root for an item of the root.
pub fn resolve(modules: &BTreeSet<String>, segs: &[String]) -> String {
    (1..=segs.len()).rev().map(|n| segs[..n].join("::")).find(|m| modules.contains(m)).unwrap_or_default()
}

/// Module -> the modules it refers to.
pub fn imports(files: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    let modules: BTreeSet<String> = files.keys().cloned().collect();
    let mut graph = BTreeMap::new();
    for (module, text) in files {
        let mut to = BTreeSet::new();
        for segs in paths_after(text, "crate::") {
            to.insert(resolve(&modules, &segs));
        }
        let parent: Vec<String> = module.split("::").filter(|s| !s.is_empty()).map(str::to_string).collect();
        for segs in paths_after(text, "super::") {
            let up = parent[..parent.len().saturating_sub(1)].iter().cloned().chain(segs);
            to.insert(resolve(&modules, &up.collect::<Vec<_>>()));
        }
        // A module's own children, named without `crate::` (the root names every module so).
        for child in modules.iter().filter(|m| is_child(module, m)) {
            let name = child.rsplit("::").next().unwrap_or(child);
            let named = text.match_indices(&format!("{name}::")).any(|(at, _)| {
                !text[..at].chars().next_back().is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
            });
            if named || text.contains(&format!("use {name}::")) {
                to.insert(child.clone());
            }
        }
        to.remove(module);
        graph.insert(module.clone(), to);
    }
    graph
}

pub fn is_child(parent: &str, child: &str) -> bool {
    let rest = if parent.is_empty() { Some(child) } else { child.strip_prefix(&format!("{parent}::")) };
    rest.is_some_and(|r| !r.is_empty() && !r.contains("::"))
}

/// The circles of `graph`: its strongly connected parts of two modules or more.
pub fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Each module with every module it reaches; two in one circle reach each other.
    let reach = |from: &String| {
        let (mut seen, mut stack) = (BTreeSet::new(), vec![from.clone()]);
        while let Some(m) = stack.pop() {
            for n in graph.get(&m).into_iter().flatten() {
                if seen.insert(n.clone()) {
                    stack.push(n.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&String, BTreeSet<String>> = graph.keys().map(|m| (m, reach(m))).collect();
    let mut out: Vec<Vec<String>> = vec![];
    for m in graph.keys() {
        let circle: Vec<String> =
            graph.keys().filter(|n| *n == m || (reached[m].contains(*n) && reached[*n].contains(m))).cloned().collect();
        if circle.len() > 1 && !out.contains(&circle) {
            out.push(circle);
        }
    }
    out
}

/// Kinds of type whose value changes while shared: a static of one is state.
pub const STATEFUL: [&str; 8] = ["Mutex", "RwLock", "Atomic", "Cell", "Condvar", "OnceLock", "OnceCell", "Barrier"];

/// The process-wide statics of `text` that hold state, each as written.
pub fn stateful_statics(text: &str) -> Vec<String> {
    let mut out = vec![];
    for (at, _) in text.match_indices("static") {
        let before = text[..at].chars().next_back();
        let after = text[at + "static".len()..].chars().next();
        let is_word = before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '\'')
            || after.is_some_and(|c| c.is_alphanumeric() || c == '_');
        if is_word {
            continue;
        }
        let item = &text[at..at + text[at..].find(';').unwrap_or(text.len() - at)];
        let attrs = text[..at].rsplit(['}', ';']).next().unwrap_or_default();
        let allocator = attrs.contains("#[global_allocator]");
        let ty = item.split_once(':').map_or("", |(_, t)| t.split('=').next().unwrap_or_default());
        let mutable = item["static".len()..].trim_start().starts_with("mut ");
        if !allocator && (mutable || STATEFUL.iter().any(|s| ty.contains(s))) {
            out.push(item.split('=').next().unwrap_or(item).trim().to_string());
        }
    }
    for (at, _) in text.match_indices("thread_local!") {
        out.push(text[at..].lines().next().unwrap_or_default().to_string());
    }
    out
}

/// Each function of `text` (as `sources` gives it) longer than `limit` lines:
/// its name, and its lines from `fn` to its closing brace.
pub fn long_functions(text: &str, limit: usize) -> Vec<(String, usize)> {
    let mut out = vec![];
    for (at, _) in text.match_indices("fn ") {
        if text[..at].chars().next_back().is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &text[at + 3..];
        let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if name.is_empty() {
            continue;
        }
        // The body: the first brace past the signature, unless a `;` ends it first
        // (a trait's declaration). Parentheses hold closures' braces, not the body.
        let (mut depth, mut body) = (0i32, None);
        for (i, c) in rest.char_indices() {
            match c {
                '(' | '[' => depth += 1,
                ')' | ']' => depth -= 1,
                ';' if depth == 0 => break,
                '{' if depth == 0 => {
                    body = Some(i);
                    break;
                }
                _ => {}
            }
        }
        let Some(open) = body else { continue };
        let close = open + matching_brace(&rest[open..]);
        let lines = rest[..=close].lines().count();
        if lines > limit {
            out.push((name, lines));
        }
    }
    out
}

/// A module's file under src/, for messages (`root`: main.rs or lib.rs).
pub fn file_of(module: &str, root: &str) -> String {
    if module.is_empty() {
        root.into()
    } else {
        format!("{}.rs", module.replace("::", "/"))
    }
}

/// The circles of `graph` of more than `over` files, each with the imports
/// that tie it, in words.
pub fn circles_named(graph: &BTreeMap<String, BTreeSet<String>>, over: usize, root: &str) -> Vec<String> {
    let named = |c: &Vec<String>| {
        let edges = c.iter().flat_map(|m| {
            graph[m]
                .iter()
                .filter(|n| c.contains(n))
                .map(move |n| format!("{} -> {}", file_of(m, root), file_of(n, root)))
        });
        format!("{} files: {}", c.len(), edges.collect::<Vec<_>>().join(", "))
    };
    circles(graph).iter().filter(|c| c.len() > over).map(named).collect()
}

/// The functions of `files` longer than `limit` lines, in words.
pub fn long_functions_named(files: &BTreeMap<String, String>, limit: usize, root: &str) -> Vec<String> {
    files
        .iter()
        .flat_map(|(m, text)| {
            long_functions(text, limit).into_iter().map(move |(f, n)| format!("{}: {f} ({n} lines)", file_of(m, root)))
        })
        .collect()
}
