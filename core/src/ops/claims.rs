//! An undo built from a journal entry this engine may not have written: the
//! entry is a claim about rows, believed only where the rows' own history (the
//! tables' logs) says the same. Every entry is also kept from creating a file
//! outside the tables' folders, whoever wrote it.

use super::context::Sees;
use crate::edits::hash;
use crate::error::{fail, Failure, OpResult};
use crate::journal::{Change, Entry};
use crate::log::{self, Action, Commit};
use crate::schema::Schema;
use std::collections::BTreeMap;

const HINT: &str = "The entry does not match the tables' history, so it may be damaged or forged: nothing was written. Undo it on the device that made it, or change the rows with update_row; delete the entry's file from .datanotes/journal/ if you do not know it.";
const DOCS: &str = "guides/history/journal-and-undo";

/// Refuses the undo of `entry` when it would create a note outside every
/// table's folder (the schema now, or the one the undo puts back) and the
/// archive, or when the
/// entry is another device's and its changes are not in the tables' logs.
pub(crate) fn check(e: &Sees, op: &str, entry: &Entry) -> OpResult<()> {
    let back = entry.schema_before.as_deref().and_then(|b| Schema::parse(b).ok());
    let inside = |p: &str| {
        // The archive is the tables' too: a redo of a delete moves rows back there.
        crate::bases::is_base(p)
            || p.starts_with(crate::schema::ARCHIVE)
            || e.index.schema.table_of_path(p).is_some()
            || back.as_ref().is_some_and(|s| s.table_of_path(p).is_some())
    };
    let mut reasons: Vec<String> = entry
        .changes
        .iter()
        .filter_map(created_by_undo)
        .filter(|p| !inside(p))
        .map(|p| format!("{p}: its undo would create a note outside every table's folder"))
        .collect();
    if reasons.is_empty() && foreign(e, entry) {
        reasons = against_logs(e, op, entry)?;
    }
    if reasons.is_empty() {
        return Ok(());
    }
    fail(Failure::refused(op, reasons, HINT).with_docs(DOCS))
}

/// The path an undo would make a note at: where a deleted note was, or where
/// a moved one came from.
fn created_by_undo(c: &Change) -> Option<&str> {
    match (&c.before, &c.after, &c.from) {
        (Some(_), _, Some(from)) => Some(from),
        (Some(_), None, None) => Some(&c.path),
        _ => None,
    }
}

/// Whether the entry may be another device's: with this device's key, any
/// entry it did not seal (as kept); without one, an entry naming another
/// device (one made before devices is this vault's own).
fn foreign(e: &Sees, entry: &Entry) -> bool {
    let key = &e.journal.key;
    if key.is_set() {
        return !e.journal.get(&entry.migration_id).is_some_and(|kept| kept.sealed_by(key));
    }
    crate::trust::entry_device(&entry.migration_id).is_some_and(|d| Some(d) != e.device)
}

/// For each change, the reason the table's log does not bear it out, if it
/// does not: the row's table keeps a log, the log has a commit with the
/// entry's id, the commit wrote the text the entry says it did, and the
/// version before held the text it says it replaced.
fn against_logs(e: &Sees, op: &str, entry: &Entry) -> OpResult<Vec<String>> {
    let id = entry.migration_id.as_str();
    let mut reasons = vec![];
    // Each table's commit of the entry, looked for once (the search reads the
    // whole log), not once per note the entry changed.
    let mut found: BTreeMap<&str, Option<Commit>> = BTreeMap::new();
    for c in &entry.changes {
        if crate::bases::is_base(&c.path) {
            continue;
        }
        let origin = c.from.as_deref().unwrap_or(&c.path);
        let table = e.index.schema.table_of_path(&c.path).or_else(|| e.index.schema.table_of_path(origin));
        let Some(table) = table else {
            reasons.push(format!("{}: another device's entry may change only rows, and this note is no row", c.path));
            continue;
        };
        let Some(latest) = log::latest(e.store, table) else {
            reasons.push(format!("{}: {table} keeps no history to check the entry {id} against", c.path));
            continue;
        };
        if !found.contains_key(table) {
            let commits = log::commits(e.store, op, table, 0, latest)?;
            found.insert(table, commits.into_iter().find(|k| k.migration_id.as_deref() == Some(id)));
        }
        let Some(commit) = &found[table] else {
            reasons.push(format!("{}: the history of {table} has no commit of the entry {id}", c.path));
            continue;
        };
        if let Some(why) = commit_disagrees(e, op, table, commit, c, origin)? {
            reasons.push(format!("{}: {why}", c.path));
        }
    }
    Ok(reasons)
}

/// Why the commit does not say what the change says, if it does not.
fn commit_disagrees(
    e: &Sees,
    op: &str,
    table: &str,
    commit: &Commit,
    c: &Change,
    origin: &str,
) -> OpResult<Option<String>> {
    let stays = e.index.schema.table_of_path(&c.path) == Some(table);
    let wrote = match (&c.after, stays) {
        (Some(after), true) => {
            let h = hash(after);
            commit.actions.iter().any(|a| matches!(a, Action::Add { path, blob, .. } if *path == c.path && *blob == h))
        }
        _ => commit.actions.iter().any(|a| matches!(a, Action::Remove { path, .. } if path == origin)),
    };
    if !wrote {
        return Ok(Some(format!("version {} of {table} did not write what the entry says", commit.version)));
    }
    let held = match commit.version {
        0 => None,
        v => log::replay::state_at(e.store, op, table, v - 1)?.rows.get(origin).map(|(_, h)| h.clone()),
    };
    if held != c.before.as_deref().map(hash) {
        return Ok(Some(format!(
            "version {} of {table} did not hold the text the entry says it replaced",
            commit.version.saturating_sub(1)
        )));
    }
    Ok(None)
}
