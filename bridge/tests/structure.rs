//! Issue 54, point 6: bridge/src is layered and its state is owned. No file
//! of bridge/src imports, directly or through others, a file that imports it
//! (by `use crate::…`, an inline `crate::…` path, `super::…`, or from the
//! crate root a module's name), tests left out; and no process-wide `static`
//! holds state (a lock, an atomic, a cell, a `static mut`, a thread local):
//! state lives in values that own it (the disk host, `disk::Disk`) and are
//! handed down. Constants, the global allocator and statics of pure data (a
//! `LazyLock` of a table) are allowed.

#[path = "../../tests/structure/imports.rs"]
mod imports;

use imports::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[test]
fn the_checks_find_a_circle_and_a_stateful_static_where_there_are_some() {
    let files: BTreeMap<String, String> = [
        ("", "mod a;\nmod b;\nmod c;\nfn main() { a::go(); }"),
        ("a", "use crate::{b::{self, X}, c};\npub fn go() {}"),
        ("b", "pub fn f() { crate::a::go() }\nstatic N: std::sync::atomic::AtomicU64 = AtomicU64::new(0);"),
        ("c", "static NAMES: &[&str] = &[\"crate::b\"];\n#[cfg(test)]\nmod tests { use crate::a; static M: Mutex<()> = Mutex::new(()); }"),
    ]
    .into_iter()
    .map(|(m, t)| (m.to_string(), without_tests(&blanked(t))))
    .collect();
    assert_eq!(circles(&imports(&files)), vec![vec!["a".to_string(), "b".to_string()]]);
    assert_eq!(stateful_statics(&files["b"]), ["static N: std::sync::atomic::AtomicU64"]);
    assert!(stateful_statics(&files["c"]).is_empty(), "pure data, and a test's own static, pass");
    assert_eq!(stateful_statics("static mut COUNT: u32 = 0;"), ["static mut COUNT: u32"]);
    let allocator = "#[global_allocator]\nstatic GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;";
    assert!(stateful_statics(allocator).is_empty());
    assert!(stateful_statics("fn f(s: &'static str) -> &'static str { s }").is_empty());
}

/// The sources of bridge/src, read as `sources` reads them; SRC_UNDER_TEST=DIR
/// reads another checkout's (an older commit's, from `git archive`), to
/// measure it the same way.
fn bridge_src() -> BTreeMap<String, String> {
    let src = std::env::var_os("SRC_UNDER_TEST")
        .map_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), PathBuf::from);
    let files = sources(&src);
    assert!(files.contains_key("") && files.contains_key("disk"), "read {}: {:?}", src.display(), files.keys());
    files
}

fn file_of(module: &str) -> String {
    imports::file_of(module, "main.rs")
}

#[test]
fn issue_54_point_6_bridge_src_has_no_import_circle() {
    let graph = imports(&bridge_src());
    assert!(graph[""].contains("disk") && graph["disk"].contains("queue"), "the reading finds imports: {graph:?}");
    let found = circles_named(&graph, 1, "main.rs");
    assert!(
        found.is_empty(),
        "import circles in bridge/src (a lower module must not import a higher one: move what both need below them):\n{}",
        found.join("\n")
    );
}

#[test]
fn issue_54_point_6_bridge_src_holds_no_process_wide_state() {
    let statics: Vec<String> = bridge_src()
        .iter()
        .flat_map(|(m, text)| stateful_statics(text).into_iter().map(move |s| format!("{}: {s}", file_of(m))))
        .collect();
    assert!(
        statics.is_empty(),
        "process-wide state in bridge/src (give it to the value that owns it, as disk::Disk owns the queue and the spares):\n{}",
        statics.join("\n")
    );
}

#[test]
fn issue_54_no_function_in_bridge_is_longer_than_80_lines() {
    let long = long_functions_named(&bridge_src(), 80, "main.rs");
    assert!(long.is_empty(), "functions over 80 lines (split them where they do two things):\n{}", long.join("\n"));
}
