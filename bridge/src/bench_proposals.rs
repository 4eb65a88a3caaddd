//! The benchmark's proposal figures (issue 56, point 7): a proposal of 10,000
//! staged writes over the synthetic vault, and its first page shown, before
//! and after the engine opens again (engine time, in memory).

use crate::bench_vault::{ms, vault, Host};
use datanotes_core::driver;
use datanotes_core::Engine;
use serde_json::{json, Value};
use std::time::Instant;

/// `writes` inserts staged into one proposal over a vault of `rows` rows.
pub fn proposals(rows: usize, writes: usize) -> Value {
    let files = vault(rows);
    let mut h = Host::new(files.clone());
    let t = Instant::now();
    for i in 0..writes {
        h.call(
            "insert_row",
            json!({"table": "film", "values": {"title": format!("Proposed {i}"), "year": 1950}, "proposal": "bench"}),
        );
    }
    let stage_ms = ms(t);
    let (page_ms, page) = h.call("show_proposal", json!({"proposal": "bench"}));
    assert_eq!(page["total"], writes, "{page}");
    let (select_ms, _) =
        h.call("select_rows", json!({"table": "film", "where": {"title": "Proposed 7"}, "proposal": "bench"}));
    // Opened again: the proposal's file read back, its view built by the first read.
    let store: Vec<(String, String)> = h.store().iter().map(|(p, t)| (p.clone(), t.clone())).collect();
    let bytes: usize = store.iter().filter(|(p, _)| p.starts_with("proposals/")).map(|(_, t)| t.len()).sum();
    let t = Instant::now();
    let mut e = Engine::open(files, store);
    let reopen_ms = ms(t);
    let t = Instant::now();
    let out = driver::call(&mut e, &mut h.mem, "show_proposal", &json!({"proposal": "bench"}), "bench", h.now + 1000);
    let cold_page_ms = ms(t);
    assert_eq!(out.answer["total"], writes, "{}", out.answer);
    json!({
        "rows": rows,
        "writes": writes,
        "stage_ms": stage_ms,
        "stage_ms_per_write": ((stage_ms / writes.max(1) as f64) * 1000.0).round() / 1000.0,
        "first_page_ms": page_ms,
        "select_through_proposal_ms": select_ms,
        "proposal_file_bytes": bytes,
        "reopen_ms": reopen_ms,
        "first_page_after_reopen_ms": cold_page_ms,
    })
}
