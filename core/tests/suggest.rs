//! Issue 12, point 4: suggest_rows, behind a form's link field.

mod common;

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use common::{Disk, Host, T0};
use datanotes_core::Status;
use serde_json::{json, Value};

fn films() -> Host {
    let mut disk = Disk::films();
    let e = disk.open(T0);
    let mut h = Host::new(disk, T0);
    h.e = e;
    h
}

fn names(a: &Value) -> Vec<&str> {
    a["rows"].as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap()).collect()
}

#[test]
fn rows_are_suggested_best_match_first_with_their_link() {
    let mut h = films();
    let a = h.ok("suggest_rows", json!({"table": "person", "query": "ha"}));
    // A word's start (Hawks, Hepburn) before the middle of a word (Chaplin, Sergei ...).
    assert_eq!(names(&a)[0], "Howard Hawks", "{a}");
    assert!(names(&a).contains(&"Charlie Chaplin"));
    assert_eq!(a["rows"][0]["link"], "[[Howard Hawks]]");
    assert_eq!(a["rows"][0]["path"], "datanotes/main/public/person/Howard Hawks.md");
    let a = h.ok("suggest_rows", json!({"table": "person", "query": "frtzlng"}));
    assert_eq!(names(&a), ["Fritz Lang"], "letters in order");
    let a = h.ok("suggest_rows", json!({"table": "person", "limit": 3}));
    assert_eq!(names(&a), ["Audrey Hepburn", "Brigitte Helm", "Buster Keaton"], "no query: by name");
    assert_eq!(a["total"], 10);
    assert_eq!(h.ok("suggest_rows", json!({"table": "film", "query": "zzz"}))["total"], 0);
}

#[test]
fn bad_input_gets_a_clear_answer() {
    let mut h = films();
    let out = h.call("suggest_rows", json!({"table": "person", "limit": 0}));
    assert_eq!(out.status, Status::BadInput);
    let out = h.call("suggest_rows", json!({"table": "to_watch", "query": "x"}));
    assert_eq!(out.status, Status::Refused);
    assert!(out.answer["error"].as_str().unwrap().contains("is a view of film"), "{}", out.answer);
}
