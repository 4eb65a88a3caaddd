//! Issue 54, point 1: the engine's inside has a shape. `Engine` is a
//! coordinator whose fields are private and whose whole `impl` is in
//! engine.rs; the subsystems it coordinates do not import it; no import
//! circle in core/src is larger than three files; no function is longer than
//! 80 lines. Measured from the sources the way bridge/tests/structure.rs
//! measures bridge/src (tests left out).

#[path = "../../tests/structure/imports.rs"]
mod imports;

use imports::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn core_src() -> BTreeMap<String, String> {
    let src = std::env::var_os("SRC_UNDER_TEST")
        .map_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), PathBuf::from);
    let files = sources(&src);
    assert!(files.contains_key("") && files.contains_key("engine"), "read {}: {:?}", src.display(), files.keys());
    files
}

fn file_of(module: &str) -> String {
    imports::file_of(module, "lib.rs")
}

#[test]
fn issue_54_point_1_no_import_circle_in_core_is_larger_than_three_files() {
    let graph = imports(&core_src());
    assert!(graph["engine"].contains("index"), "the reading finds imports: {:?}", graph["engine"]);
    let found = circles_named(&graph, 3, "lib.rs");
    assert!(
        found.is_empty(),
        "import circles in core/src over three files (a lower module must not import a higher one: move what both need below them):\n{}",
        found.join("\n")
    );
}

#[test]
fn issue_54_point_1_engine_is_a_coordinator_with_private_fields_and_one_impl() {
    let files = core_src();
    let outside: Vec<String> = files
        .iter()
        .filter(|(m, text)| *m != "engine" && text.contains("impl Engine"))
        .map(|(m, _)| file_of(m))
        .collect();
    assert!(outside.is_empty(), "impl Engine outside engine.rs: {outside:?}");
    let engine = &files["engine"];
    let at = engine.find("pub struct Engine {").expect("engine.rs defines Engine");
    let body = &engine[at..at + matching_brace(&engine[at + engine[at..].find('{').unwrap()..])];
    let open: Vec<&str> = body.lines().skip(1).filter(|l| l.trim_start().starts_with("pub")).collect();
    assert!(open.is_empty(), "Engine's fields are its own: {open:?}");
    let importers: Vec<String> = imports(&files)
        .iter()
        .filter(|(m, to)| to.contains("engine") && !["", "driver", "wasm", "driver::memory"].contains(&m.as_str()))
        .map(|(m, _)| file_of(m))
        .collect();
    assert!(importers.is_empty(), "only the hosts' side (lib, driver, wasm) imports engine: {importers:?}");
}

#[test]
fn issue_54_point_1_no_function_in_core_is_longer_than_80_lines() {
    let long = long_functions_named(&core_src(), 80, "lib.rs");
    assert!(long.is_empty(), "functions over 80 lines (split them where they do two things):\n{}", long.join("\n"));
}

#[test]
fn the_length_check_counts_a_body_not_its_closures_or_literals() {
    let text = without_tests(&blanked(&format!(
        "fn short(x: impl Fn() -> u8) {{ let s = \"{{\"; }}\nfn long() {{\n{}}}\ntrait T {{ fn decl(&self); }}",
        "    let a = |x: u8| {{ x }};\n".repeat(81)
    )));
    assert_eq!(long_functions(&text, 80), vec![("long".to_string(), 83)]);
}
