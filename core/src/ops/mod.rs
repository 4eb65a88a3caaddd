//! Operations: the registry, argument checks, and one module per kind.

pub mod answers;
pub mod args;
mod bases;
mod changes;
mod claims;
mod conflicts;
mod history;
mod journal;
mod read;
pub mod registry;
mod repair;
mod rows;
mod semantic;
mod suggest;
mod tables;
mod views;

use crate::engine::{Engine, Outcome, Step};
use crate::error::{fail, Failure, OpResult};
use crate::journal::{Entry, EntryStatus};
use crate::names;
use crate::tx::Tx;
use args::Args;
use registry::{spec, Handler, OpSpec, WriteFn, OPS};
use serde_json::{json, Value};

pub(crate) fn run(e: &mut Engine, name: &str, args: Value, actor: &str, now_ms: i64) -> OpResult<Step> {
    let Some(spec) = spec(name) else {
        return fail(Failure::bad_input(
            name,
            format!("unknown operation \"{name}\"{}", names::did_you_mean(name, OPS.iter().map(|o| o.name))),
            format!(
                "The operations: {}. read_docs(\"reference/operations\") describes each; describe_database lists the tables.",
                OPS.iter().map(|o| o.name).collect::<Vec<_>>().join(", ")
            ),
        )
        .with_docs("reference/operations"));
    };
    let args = Args::check(spec, args)?;
    let write = match spec.run {
        Handler::Read(read) => return read(e, &args).map(|a| Step::Done(Outcome::done(a))),
        Handler::Store(store) => return store(e, &args, now_ms).map(Step::Done),
        Handler::Write(write) => write,
    };
    if let Some(f) = e.owed_refusal(name) {
        return fail(f);
    }
    if let Some(err) = &e.index.schema_error {
        return fail(
            Failure::refused(
                name,
                vec![err.clone()],
                format!("{}: until it can be read, no write runs.", read::FIX_METASTORE),
            )
            .with_docs("reference/schema"),
        );
    }
    write_op(e, spec, write, &args, actor, now_ms)
}

/// The transaction of a write, for the table it names.
fn new_tx(e: &Engine, name: &str, args: &Args, now_ms: i64) -> Tx {
    let mut tx = Tx::new(name);
    tx.now_ms = now_ms;
    tx.table = args
        .str("table")
        .and_then(|t| e.index.schema.resolve(t).ok())
        .or_else(|| args.str("table").map(str::to_string));
    tx
}

/// Runs a write: plans it inside a transaction, then (unless a dry run) makes its
/// journal entry and log commits and hands its edits to the host.
fn write_op(e: &mut Engine, spec: &OpSpec, write: WriteFn, args: &Args, actor: &str, now_ms: i64) -> OpResult<Step> {
    let name = spec.name;
    let mut tx = new_tx(e, name, args, now_ms);
    let summary = match write(e, &mut tx, args) {
        Ok(s) => s,
        Err(f) => {
            e.index.tx_abort(&mut tx);
            return Err(f);
        }
    };
    bases::after_schema_change(e, &mut tx);
    e.index.tx_finish(&mut tx)?;
    // A plain note it would rewrite (a link to a renamed row) is unread: the
    // write is given up whole, and runs again once the host has read it.
    let wanted = e.index.vault.take_wanted();
    if !wanted.is_empty() {
        e.index.tx_abort(&mut tx);
        return Ok(Step::ReadNotes(wanted));
    }
    let (planned, notes, files) = e.index.planned(&tx);
    let mut answer = json!({
        "ok": true, "op": name, "summary": summary,
        "notes_changed": notes, "files_changed": files, "planned_edits": planned,
    });
    for (k, v) in std::mem::take(&mut tx.extra) {
        answer[k] = v;
    }
    if let Some(u) = &tx.undoes {
        answer["undoes"] = u.clone().into();
        answer["conflicts"] = json!([]);
        answer["failed"] = json!([]);
    }
    if args.dry_run() {
        answer["dry_run"] = true.into();
        e.index.tx_abort(&mut tx);
        return Ok(Step::Done(Outcome::done(answer)));
    }
    let mid = spec.journaled.then(|| e.journal.new_id(now_ms, name, &summary, e.device.as_deref()));
    if let Some(id) = &mid {
        answer["migration_id"] = id.clone().into();
    }
    let changes = e.index.changes_of(&tx);
    let commits = match e.commits_of(&tx, &changes, name, mid.as_deref(), now_ms) {
        Ok(c) => c,
        Err(f) => {
            e.index.tx_abort(&mut tx);
            return Err(f);
        }
    };
    if !commits.answer.is_empty() {
        answer["commits"] = Value::Array(commits.answer.clone());
    }
    let entry = mid.map(|id| Entry {
        format: 1,
        migration_id: id,
        op: name.to_string(),
        summary,
        table: tx.table.clone(),
        executed_at: crate::time::iso(now_ms),
        executed_ms: now_ms,
        by: actor.to_string(),
        status: EntryStatus::Pending,
        notes_changed: notes,
        files_changed: files,
        files_failed: 0,
        undone: false,
        undone_by: None,
        undoes: tx.undoes.clone(),
        rollback: false,
        members: tx.members.clone(),
        changes,
        schema_before: tx.schema_before.as_ref().map(|(_, t)| t.clone()),
        schema_after: tx.schema_before.as_ref().and(e.index.metastore.clone()),
        cause: tx.cause.clone(),
        renamed: tx.renamed.clone(),
        seal: None,
    });
    Ok(e.plan(name, answer, tx, entry, commits))
}

pub(crate) fn batch(e: &mut Engine, tx: &mut Tx, args: &Args) -> OpResult<String> {
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
        let Some(s) = spec(op) else {
            return fail(Failure::bad_input(
                "batch",
                format!(
                    "operations[{i}]: unknown operation \"{op}\"{}",
                    names::did_you_mean(op, OPS.iter().map(|o| o.name))
                ),
                "A batch holds write operations.",
            ));
        };
        let (Handler::Write(write), true, false) = (s.run, s.journaled, s.facts.batch) else {
            return fail(Failure::bad_input("batch", format!("operations[{i}]: {op} cannot be part of a batch"), "A batch holds journaled writes (insert_row, update_rows, add_column, …), not reads, batches or settings."));
        };
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
