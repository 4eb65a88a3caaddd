//! batch: several journaled writes as one, one journal entry and one undo.

use super::args::Args;
use super::context::Plans;
use super::spec::{find, Handler};
use crate::error::{fail, Failure, OpResult};
use crate::names;
use crate::tx::Tx;
use serde_json::{json, Value};

pub(crate) fn batch(e: &mut Plans, tx: &mut Tx, args: &Args) -> OpResult<String> {
    let ops = args.get("operations").and_then(Value::as_array).cloned().unwrap_or_default();
    if ops.is_empty() {
        return fail(Failure::bad_input(
            "batch",
            "operations is empty",
            "Give [{\"op\": \"insert_row\", \"args\": {...}}, ...].",
        ));
    }
    let mut summaries = vec![];
    for (i, item) in ops.iter().enumerate() {
        let (Some(op), a) = (item.get("op").and_then(Value::as_str), item.get("args").cloned().unwrap_or(json!({})))
        else {
            return fail(Failure::bad_input(
                "batch",
                format!("operations[{i}] needs \"op\" (a name) and \"args\" (an object)"),
                "Give [{\"op\": \"insert_row\", \"args\": {...}}, ...].",
            ));
        };
        let Some(s) = find(e.ops, op) else {
            return fail(Failure::bad_input(
                "batch",
                format!(
                    "operations[{i}]: unknown operation \"{op}\"{}",
                    names::did_you_mean(op, e.ops.iter().map(|o| o.name))
                ),
                "A batch holds write operations.",
            ));
        };
        let (Handler::Write(write), true, false) = (s.run, s.journaled, s.facts.batch) else {
            return fail(Failure::bad_input("batch", format!("operations[{i}]: {op} cannot be part of a batch"), "A batch holds journaled writes (insert_row, update_rows, add_column, …), not reads, batches or settings."));
        };
        if a.get("proposal").is_some_and(|p| !p.is_null()) {
            return fail(Failure::bad_input(
                "batch",
                format!("operations[{i}] ({op}) names a proposal: a batch is applied whole, never staged"),
                "Stage each write on its own call with proposal, or apply the batch without it.",
            ));
        }
        let sub = Args::check(s, a).map_err(|s| {
            s.map_failure(|mut f| {
                f.reasons = f.reasons.iter().map(|r| format!("operations[{i}] ({op}): {r}")).collect();
                f.op = "batch".into();
                f
            })
        })?;
        let summary = write(e, tx, &sub).map_err(|s| {
            s.map_failure(|mut f| {
                f.reasons = f.reasons.iter().map(|r| format!("operations[{i}] ({op}): {r}")).collect();
                f.op = "batch".into();
                f
            })
        })?;
        tx.members.get_or_insert_with(Vec::new).push(json!({"op": op, "summary": summary}));
        summaries.push(summary);
    }
    tx.op = "batch".into();
    Ok(format!("batch of {}: {}", summaries.len(), summaries.join("; ")))
}
