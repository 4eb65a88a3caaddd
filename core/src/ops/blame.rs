//! blame_row: who last changed each property of a row, when, and by which
//! change: an engine write (its journal entry and actor), a hand edit, or the
//! row as its table's log began. Read from the table's log (the row's
//! versions, as table_changes gives them) and the journal (who made each).

use super::answers::{Answer, Field, A};
use super::args::Args;
use super::context::Sees;
use super::{history, read};
use crate::error::{fail, Failure, OpResult};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// table_changes' own columns, not the row's.
const META: [&str; 6] = ["_change_type", "_commit_version", "_commit_timestamp", "_operation", "path", "id"];

/// The versions of a table described at most (describe_history's limit).
const VERSIONS: u64 = 10_000;

/// The same operation's arguments for a read it builds on.
fn sub(a: &Args, args: Value) -> Args {
    Args { op: a.op, map: args.as_object().cloned().unwrap_or_default() }
}

/// A row's own values in a change of table_changes.
fn own(change: &Value) -> Map<String, Value> {
    let mut m = change.as_object().cloned().unwrap_or_default();
    m.retain(|k, _| !META.contains(&k.as_str()));
    m
}

/// What blame_row answers (MCP's outputSchema, OpenAPI's response).
pub(crate) const ANSWER: Answer = Answer {
    write: false,
    required: &[
        Field { name: "path", ty: A::Str, description: "The row's note path." },
        Field { name: "table", ty: A::Str, description: "Its table, qualified." },
        Field { name: "row_id", ty: A::Str, description: "Its id." },
        Field {
            name: "columns",
            ty: A::Objs(&["column", "value", "source"]),
            description:
                "Each property now, with the version, time, operation and actor of the change that last set it.",
        },
    ],
    optional: &[],
};

pub(crate) fn blame_row(e: &Sees, a: &Args) -> OpResult<Value> {
    let path = a.req("path");
    let note = read::read_note(e, &sub(a, json!({"path": path})))?;
    let (Some(table), Some(id)) = (note["table"].as_str(), note["row_id"].as_str()) else {
        return fail(Failure::refused(
            a.op,
            vec![format!("{path} is not a row of a table")],
            "blame_row reads a row of a table: select_rows answers each row's path.",
        ));
    };
    let values = note["values"].as_object().cloned().unwrap_or_default();
    let described = history::describe(e, &sub(a, json!({"table": table, "limit": VERSIONS})))?;
    let commits = described["history"].as_array().cloned().unwrap_or_default();
    let mut last: BTreeMap<String, u64> = BTreeMap::new();
    if let Some(oldest) = commits.iter().filter_map(|c| c["version"].as_u64()).min() {
        let all = history::changes(e, &sub(a, json!({"table": table, "start_version": oldest})))?;
        last = last_changed(all["changes"].as_array().map(Vec::as_slice).unwrap_or_default(), id);
    }
    let by_version: BTreeMap<u64, &Value> = commits.iter().filter_map(|c| Some((c["version"].as_u64()?, c))).collect();
    let columns: Vec<Value> = values
        .iter()
        .filter(|(k, _)| k.as_str() != "table" && k.as_str() != "id")
        .map(|(column, value)| {
            let mut out = json!({"column": column, "value": value});
            match last.get(column).and_then(|v| by_version.get(v)) {
                Some(c) => blame_of(e, c, &mut out),
                // The log holds no version of it: it was set before the table's history began.
                None => out["source"] = "before_history".into(),
            }
            out
        })
        .collect();
    Ok(json!({"path": path, "table": table, "row_id": id, "columns": columns}))
}

/// For each column of row `id`, the last version whose change to the row set
/// it (changed it, added it, or brought the row in).
fn last_changed(changes: &[Value], id: &str) -> BTreeMap<String, u64> {
    let mut last = BTreeMap::new();
    let mut before: Option<Map<String, Value>> = None;
    for c in changes.iter().filter(|c| c["id"].as_str() == Some(id)) {
        let Some(version) = c["_commit_version"].as_u64() else { continue };
        let now = own(c);
        match c["_change_type"].as_str() {
            Some("insert") => {
                for k in now.keys() {
                    last.insert(k.clone(), version);
                }
                before = Some(now);
            }
            Some("update_preimage") => before = Some(now),
            Some("update_postimage") => {
                let was = before.take().unwrap_or_default();
                for k in now.keys().chain(was.keys()) {
                    if now.get(k) != was.get(k) {
                        last.insert(k.clone(), version);
                    }
                }
                before = Some(now);
            }
            Some("delete") => before = None,
            _ => {}
        }
    }
    last
}

/// Fills in who made version `c` and how: its operation's journal entry and
/// actor for an engine write, a hand edit, or the row as the log began.
fn blame_of(e: &Sees, c: &Value, out: &mut Value) {
    for k in ["version", "timestamp", "operation", "migration_id", "device"] {
        if !c[k].is_null() {
            out[k] = c[k].clone();
        }
    }
    let source = match c["operation"].as_str() {
        Some("EXTERNAL_EDIT") => "hand_edit",
        Some("CONVERT") => "history_began",
        _ => "write",
    };
    out["source"] = source.into();
    let entry = c["migration_id"].as_str().and_then(|m| e.journal.entries.iter().find(|x| x.migration_id == m));
    if let Some(x) = entry {
        out["by"] = x.by.clone().into();
        out["op"] = x.op.clone().into();
    }
}
