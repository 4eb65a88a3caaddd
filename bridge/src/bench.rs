//! `datanotes bench`: synthetic vaults (people, genres, films, watches; links
//! between them, a CHECK that follows a link, a generated column) and the
//! engine's times on them, as JSON.

use crate::bench_vault::{ms, vault, Host, Ram};
use serde_json::{json, Value};
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    v[v.len() / 2]
}

fn one(rows: usize) -> Value {
    let files = vault(rows);
    let count = files.len() - 1;
    let ram = Ram::of(&files);
    let t = Instant::now();
    let mut h = Host::on(ram, files);
    let open_ms = ms(t);
    let films = h.e.vault().rows.get("main.public.film").map_or(0, |s| s.len());
    let e = &mut h;
    let updates: Vec<f64> = (0..41)
        .map(|i| {
            let f = (i * 7919) % films;
            e.call("update_row", json!({"table": "film", "path": format!("datanotes/main/public/film/Film {f}.md"), "set": {"minutes": 100 + i}})).0
        })
        .collect();
    let (check_ms, check) = e.call("check_table", json!({}));
    let selects: Vec<f64> = (0..5)
        .map(|_| e.call("select_rows", json!({"table": "film", "where": {"minutes": {"gt": 170}}, "limit": 100})).0)
        .collect();
    let (select_link_ms, _) =
        e.call("select_rows", json!({"table": "watch", "where": {"film.year": 1950}, "limit": 100}));
    // A view is its query: reading it costs what the same select on its table does.
    e.call("create_view", json!({"name": "long_films", "table": "film", "where": {"minutes": {"gt": 170}}}));
    let view_selects: Vec<f64> =
        (0..5).map(|_| e.call("select_rows", json!({"table": "long_films", "limit": 100})).0).collect();
    // A link field's suggestions, one call a keystroke.
    let suggests: Vec<f64> = ["f", "fi", "fil", "film", "film ", "film 1", "film 12", "film 123", "flm12"]
        .iter()
        .map(|q| e.call("suggest_rows", json!({"table": "film", "query": q})).0)
        .collect();
    let (rename_ms, _) = e.call(
        "update_row",
        json!({"table": "film", "path": "datanotes/main/public/film/Film 1.md", "set": {"title": "Film one"}}),
    );
    let (update_rows_ms, ans) = e.call(
        "update_rows",
        json!({"table": "film", "where": {"minutes": {"in": [61, 62]}}, "set": {"status": "to watch"}}),
    );
    let (undo_ms, _) = e.call("undo_migration", json!({"migration_id": ans["migration_id"]}));
    let (_, upd) = e.call(
        "update_row",
        json!({"table": "film", "path": "datanotes/main/public/film/Film 2.md", "set": {"minutes": 77}}),
    );
    let text_bytes = e.e.vault().text("datanotes/main/public/film/Film 2.md").map_or(0, str::len);
    let entry =
        e.store().get(&format!("journal/{}.json", upd["migration_id"].as_str().unwrap_or(""))).map_or(0, String::len);
    json!({
        "rows": count,
        "open_ms": open_ms,
        "update_row_ms_median": median(updates.clone()),
        "update_row_ms_max": updates.iter().cloned().fold(0.0, f64::max),
        "rename_row_ms": rename_ms,
        "update_rows_ms": update_rows_ms,
        "update_rows_notes": ans["notes_changed"],
        "undo_update_rows_ms": undo_ms,
        "journal_entry_bytes": entry,
        "journal_bytes_beyond_texts": entry.saturating_sub(2 * text_bytes),
        "check_table_ms": check_ms,
        "check_table_violations": check["total"],
        "select_where_unindexed_ms_median": median(selects.clone()),
        "select_where_through_link_ms": select_link_ms,
        "select_view_ms_median": median(view_selects.clone()),
        "select_view_to_table_ratio": ((median(view_selects) / median(selects.clone()).max(1e-6)) * 100.0).round() / 100.0,
        "suggest_rows_target_rows": films,
        "suggest_rows_ms_max_per_keystroke": suggests.iter().cloned().fold(0.0, f64::max),
    })
}

/// The parts of the benchmark `--only` picks from.
pub const PARTS: [&str; 7] = ["sizes", "history", "hand_edits", "reopen", "cache", "semantic", "proposals"];

pub fn run(sizes: &[usize], only: Option<&str>) -> Value {
    let big = sizes.iter().copied().max().unwrap_or(0);
    let part = |p: &str| only.is_none_or(|o| o == p);
    let build = if cfg!(debug_assertions) { "debug: figures not meaningful" } else { "release" };
    let mut v = json!({"engine": format!("datanotes-core (native, {build})")});
    if part("sizes") {
        let out: serde_json::Map<String, Value> = sizes.iter().map(|&n| (n.to_string(), one(n))).collect();
        v["sizes"] = out.into();
    }
    if part("history") {
        v["history"] = crate::bench_more::history(big.min(10_000), if big >= 10_000 { 1000 } else { 100 });
    }
    if part("hand_edits") {
        v["hand_edits"] = crate::bench_more::hand_edits(big.max(5_000));
    }
    if part("reopen") {
        v["reopen"] = crate::bench_more::reopen(big);
    }
    if part("cache") {
        v["cache"] = sizes.iter().map(|&n| (n.to_string(), crate::bench_open::cache(n))).collect();
    }
    if part("proposals") {
        v["proposals"] = crate::bench_proposals::proposals(big.min(10_000), 10_000);
    }
    if part("semantic") {
        v["semantic"] = crate::bench_more::semantic(big.min(10_000));
    }
    if let (Some(a), Some(b)) = (v.pointer("/sizes/1000").cloned(), v.pointer("/sizes/100000").cloned()) {
        if let (Some(x), Some(y)) = (a["update_row_ms_median"].as_f64(), b["update_row_ms_median"].as_f64()) {
            v["update_row_ratio_100k_to_1k"] = ((y / x.max(1e-6) * 100.0).round() / 100.0).into();
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_synthetic_vault_is_valid() {
        let mut h = Host::new(vault(500));
        let (_, check) = h.call("check_table", json!({}));
        assert_eq!(check["total"], 0, "{check}");
        assert!(check["rows_checked"].as_u64().unwrap() >= 499);
        let r = one(300);
        assert!(r["open_ms"].as_f64().is_some());
    }
}
