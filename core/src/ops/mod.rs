//! Operations: the registry, argument checks, and one module per kind.

pub mod answers;
pub mod args;
mod bases;
mod batch;
mod blame;
pub(crate) mod changes;
mod claims;
mod conflicts;
pub(crate) mod context;
mod history;
mod journal;
mod proposals;
mod read;
pub mod registry;
mod repair;
mod rows;
mod semantic;
pub mod spec;
mod suggest;
mod tables;
mod views;

use crate::error::{fail, Failure, OpResult};
use crate::journal::{Change, Entry, EntryStatus};
use crate::names;
use crate::step::{Outcome, Step};
use crate::tx::Tx;
use args::Args;
use context::{Plans, Sees};
use registry::{spec, OpSpec, WriteFn, OPS};
use serde_json::{json, Value};

/// The operation named, and its arguments checked.
pub(crate) fn checked(name: &str, args: Value) -> OpResult<(&'static OpSpec, Args)> {
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
    Ok((spec, Args::check(spec, args)?))
}

/// A write refused before it runs: metastore.yaml cannot be read.
pub(crate) fn unwritable(e: &Sees, name: &str) -> Option<Failure> {
    let err = e.index.schema_error.as_ref()?;
    Some(
        Failure::refused(
            name,
            vec![err.clone()],
            format!("{}: until it can be read, no write runs.", read::FIX_METASTORE),
        )
        .with_docs("reference/schema"),
    )
}

/// The transaction of a write, for the table it names.
fn new_tx(e: &Sees, name: &str, args: &Args, now_ms: i64) -> Tx {
    let mut tx = Tx::new(name);
    tx.now_ms = now_ms;
    tx.table = args
        .str("table")
        .and_then(|t| e.index.schema.resolve(t).ok())
        .or_else(|| args.str("table").map(str::to_string));
    tx
}

/// A write as planned: the step it comes to at once (a dry run's answer, a
/// plain note to read first), or its transaction to record.
pub(crate) enum Planned {
    Step(Step),
    Write(Box<Write>),
}

/// A write planned, to record: its answer so far, its transaction, and what
/// its journal entry says of it.
pub(crate) struct Write {
    pub answer: Value,
    pub tx: Tx,
    pub summary: String,
    pub notes: usize,
    pub files: usize,
}

impl Write {
    /// The write's journal entry, pending until its edits are done.
    pub(crate) fn entry(&self, id: String, actor: &str, changes: Vec<Change>, schema_after: Option<String>) -> Entry {
        let tx = &self.tx;
        Entry {
            format: 1,
            migration_id: id,
            op: tx.op.clone(),
            summary: self.summary.clone(),
            table: tx.table.clone(),
            executed_at: crate::time::iso(tx.now_ms),
            executed_ms: tx.now_ms,
            by: actor.to_string(),
            status: EntryStatus::Pending,
            notes_changed: self.notes,
            files_changed: self.files,
            files_failed: 0,
            undone: false,
            undone_by: None,
            undoes: tx.undoes.clone(),
            rollback: false,
            members: tx.members.clone(),
            changes,
            schema_before: tx.schema_before.as_ref().map(|(_, t)| t.clone()),
            schema_after: tx.schema_before.as_ref().and(schema_after),
            cause: tx.cause.clone(),
            renamed: tx.renamed.clone(),
            proposal: tx.proposal.clone(),
            seal: None,
        }
    }
}

/// Plans a write inside a transaction: the index holds its result, and the
/// answer says what it changes; the engine then journals it and commits it to
/// the logs (engine.rs), unless it was a dry run.
pub(crate) fn plan_write(e: &mut Plans, write: WriteFn, args: &Args, now_ms: i64) -> OpResult<Planned> {
    let name = args.op;
    let mut tx = new_tx(&e.sees(), name, args, now_ms);
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
        return Ok(Planned::Step(Step::ReadNotes(wanted)));
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
        return Ok(Planned::Step(Step::Done(Outcome::done(answer))));
    }
    Ok(Planned::Write(Box::new(Write { answer, tx, summary, notes, files })))
}

/// A staged write's answer: what it would change, and that nothing changed.
pub(crate) fn staged_answer(mut answer: Value, pr: &crate::proposals::Proposal) -> Value {
    answer["staged"] = true.into();
    answer["proposal"] = pr.name.clone().into();
    answer["write"] = pr.writes.len().into();
    answer["hint"] = format!(
        "Nothing was written: the write waits in the proposal {} ({} writes) for a person's review (show_proposal, accept_proposal, reject_proposal).",
        pr.name,
        pr.writes.len()
    )
    .into();
    answer
}

/// A proposal's event in the change feed.
pub(crate) fn proposal_event(
    kind: crate::feed::EventKind,
    pr: &crate::proposals::Proposal,
    actor: &str,
    now_ms: i64,
) -> crate::feed::Event {
    proposals::event(kind, pr, json!({}), actor, now_ms)
}
