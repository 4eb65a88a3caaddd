//! Issue 52 through the binary: store files a sync brings (or anyone who can
//! write to the vault plants) never make `datanotes` write outside the tables,
//! and what was not taken in is told by check_table.

mod common;

use common::{datanotes_env, temp_path, vault};
use serde_json::{json, Value};
use std::path::Path;

const CHARADE: &str = "datanotes/main/public/film/Charade.md";

/// `datanotes call` as device `laptop`, its id and key kept in `state`.
fn call(state: &Path, vault: &Path, op: &str, args: Value) -> (i32, Value) {
    let state = state.to_str().unwrap();
    let env = [("XDG_STATE_HOME", Some(state)), ("DATANOTES_DEVICE", Some("laptop")), ("DATANOTES_TOKEN", None)];
    let run = datanotes_env(&["call", "--vault", vault.to_str().unwrap(), op, &args.to_string()], &env);
    (run.code, run.answer())
}

fn plant(vault: &Path, id: &str, changes: Value) {
    let entry = json!({"format": 1, "migration_id": id, "op": "update_row", "summary": "update film",
        "table": "main.public.film", "executed_at": "2026-12-07T10:00:00Z", "executed_ms": 1_796_637_600_000i64,
        "by": "agent", "status": "done", "notes_changed": 1, "files_changed": 1, "changes": changes});
    std::fs::write(vault.join(format!(".datanotes/journal/{id}.json")), entry.to_string()).unwrap();
}

#[test]
fn forged_journal_entries_write_nothing_and_are_told() {
    let v = vault("forged");
    let state = temp_path("forged-state");
    let (code, wrote) = call(&state, &v, "update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 4}}));
    assert_eq!(code, 0, "{wrote}");
    assert!(state.join("datanotes/key.laptop").exists(), "the key is kept beside the device id");
    let charade = std::fs::read_to_string(v.join(CHARADE)).unwrap();
    let targets = [".obsidian/plugins/evil/main.js", ".git/hooks/pre-commit", ".datanotes/token", "Notes/x.sh"];
    for (i, t) in targets.iter().enumerate() {
        plant(
            &v,
            &format!("20261207T100000-update_row-x-{i}.phone"),
            json!([{"path": t, "before": "pwned", "after": null}]),
        );
    }
    // Named as this device names its entries, but not sealed with its key.
    let own = "20261207T100000-update_row-update-film.laptop";
    let forged = charade.replace("rating: 4", "rating: 1");
    plant(&v, own, json!([{"path": CHARADE, "before": forged, "after": charade}]));
    for (i, t) in targets.iter().enumerate() {
        let (code, out) = call(
            &state,
            &v,
            "undo_migration",
            json!({"migration_id": format!("20261207T100000-update_row-x-{i}.phone")}),
        );
        assert_eq!(code, 1, "{t}: {out}");
        assert!(!v.join(t).exists() || *t == ".datanotes/token", "{t} not written");
    }
    let token = std::fs::read_to_string(v.join(".datanotes/token")).unwrap_or_default();
    assert_ne!(token.trim(), "pwned", "the token is not the attacker's");
    let (code, out) = call(&state, &v, "undo_migration", json!({"migration_id": own}));
    assert_eq!(code, 1, "{out}");
    assert_eq!(std::fs::read_to_string(v.join(CHARADE)).unwrap(), charade, "the row is as it was");
    let (_, checked) = call(&state, &v, "check_table", json!({}));
    let told = checked["store_problems"].as_array().map(Vec::len).unwrap_or(0);
    assert_eq!(told, targets.len(), "{checked}");
    // This device's own write is undone as ever.
    let (code, out) = call(&state, &v, "undo_migration", json!({"migration_id": wrote["migration_id"]}));
    assert_eq!(code, 0, "{out}");
    let _ = std::fs::remove_dir_all(&v);
    let _ = std::fs::remove_dir_all(&state);
}
