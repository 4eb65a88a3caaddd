//! list_migrations and undo_migration.

use super::args::Args;
use super::context::{Plans, Sees};
use super::spec::{find, OpSpec};
use crate::error::{fail, Failure, OpResult};
use crate::frontmatter;
use crate::journal::{Change, Entry};
use crate::names;
use crate::schema::Schema;
use crate::tx::Tx;
use serde_json::{json, Value};
use std::collections::BTreeMap;

pub(crate) fn list(e: &Sees, a: &Args) -> OpResult<Value> {
    let limit = a.int("limit").unwrap_or(50);
    if limit < 0 {
        return fail(Failure::bad_input(
            a.op,
            format!("limit {limit} is negative"),
            "limit takes a whole number of entries (default 50).",
        ));
    }
    let since = match a.str("since") {
        Some(s) => Some(crate::time::parse(s).ok_or_else(|| {
            Failure::bad_input(
                a.op,
                format!("since \"{s}\" is not an ISO date or date-time"),
                "since takes 2026-10-12 or 2026-10-12T16:52:23Z.",
            )
        })?),
        None => None,
    };
    let hits: Vec<&crate::journal::Entry> = e
        .journal
        .entries
        .iter()
        .rev()
        .filter(|x| a.str("op").is_none_or(|op| x.op == op))
        .filter(|x| a.str("table").is_none_or(|t| x.table.as_deref().is_some_and(|xt| xt.contains(t))))
        .filter(|x| since.is_none_or(|s| x.executed_ms >= s))
        .collect();
    let migrations: Vec<Value> = hits.iter().take(limit as usize).map(|x| x.listing()).collect();
    let mut out = json!({"total": hits.len()});
    out["migrations"] = Value::Array(migrations);
    Ok(out)
}

const CONFLICT_HINT: &str = "Later changes touched the same notes: undo those first (list_migrations lists them, newest first), or change the rows with update_row.";
const CONFLICT_DOCS: &str = "guides/history/journal-and-undo#undo-refuses-to-overwrite-later-changes";

/// Reverts a journal entry inside `tx`.
pub(crate) fn undo(e: &mut Plans, tx: &mut Tx, a: &Args) -> OpResult<String> {
    let id = a.req("migration_id");
    let entry = with_texts(&e.sees(), a.op, undoable(&e.sees(), a.op, id)?)?;
    super::claims::check(&e.sees(), a.op, &entry)?;
    tx.undoes = Some(id.to_string());
    if tx.table.is_none() {
        tx.table = entry.table.clone();
    }
    let mut conflicts = vec![];
    let new_schema = schema_back(&e.sees(), tx, &entry, &mut conflicts)?;
    // A write that did not finish (cut short, or its rollback stopped) left some
    // notes as they were before it: those are skipped.
    let partial = entry.status != crate::journal::EntryStatus::Done;
    // Then the notes, last change first.
    let mut steps = vec![];
    let mut kept = vec![];
    for c in entry.changes.iter().rev() {
        match note_back(&e.sees(), c, partial) {
            Ok(Some(s)) => steps.push(s),
            Ok(None) => {}
            // A Bases file edited since is the person's now: it stays as they made it.
            Err(_) if crate::bases::is_base(&c.path) => kept.push(c.path.clone()),
            Err(m) => conflicts.push(m),
        }
    }
    if !kept.is_empty() {
        tx.extra.insert("bases_kept".into(), kept.into());
    }
    if !conflicts.is_empty() {
        return fail(Failure::refused(a.op, conflicts, CONFLICT_HINT).with_docs(CONFLICT_DOCS));
    }
    if let Some(s) = new_schema {
        if s.tables != e.index.schema.tables || s.views != e.index.schema.views {
            let s = compile(a.op, s)?;
            // The file as the operation left it goes back to the person's text,
            // byte for byte; edited since, only the tables put back change.
            let before = entry.schema_before.as_deref().filter(|b| {
                e.index.metastore.as_deref() == entry.schema_after.as_deref()
                    && Schema::parse(b).is_ok_and(|b| b.tables == s.tables && b.views == s.views)
            });
            match before {
                Some(b) => e.index.tx_schema_text(tx, s, b.to_string()),
                None => e.index.tx_schema(tx, s),
            }
        }
    }
    for s in steps {
        match s {
            Back::Trash(p) => e.index.tx_trash(tx, &p),
            Back::Put(p, t) => e.index.tx_put(tx, &p, t),
            Back::Move(from, to, text) => {
                e.index.tx_move(tx, &from, &to);
                if let Some(t) = text {
                    e.index.tx_put(tx, &to, t);
                }
            }
        }
    }
    Ok(format!("undo {id}"))
}

/// show_migration: what one journal entry did to each note: the columns it
/// changed (before and after) and its body's changed lines, from the texts the
/// journal keeps for undo.
pub(crate) fn show(e: &Sees, a: &Args) -> OpResult<Value> {
    let id = a.req("migration_id");
    let entry = e.journal.get(id).cloned().ok_or_else(|| unknown(a.op, e, id))?;
    let entry = with_texts(e, a.op, entry)?;
    let mut out = entry.listing();
    out["notes"] = entry.changes.iter().map(note_change).collect::<Vec<_>>().into();
    Ok(out)
}

fn unknown(op: &str, e: &Sees, id: &str) -> Failure {
    let hint = match names::closest(id, e.journal.ids()) {
        Some(c) => format!("Did you mean \"{c}\"? list_migrations lists the ids, newest first."),
        None => "list_migrations lists the ids, newest first; entries older than journalRetentionDays are gone.".into(),
    };
    Failure::refused(op, vec![format!("no migration \"{id}\" in the journal")], hint)
}

/// One note's change: its kind, the front matter keys that differ, and the body's
/// changed lines.
pub(crate) fn note_change(c: &Change) -> Value {
    let kind = match (&c.before, &c.after) {
        (None, Some(_)) => "created",
        (Some(_), None) if c.trashed => "trashed",
        (Some(_), None) => "removed",
        _ if c.from.is_some() => "moved",
        _ => "changed",
    };
    // A text the parser refuses shows as no keys and all body.
    let read = |t: &Option<String>| -> (serde_json::Map<String, Value>, String) {
        match t.as_deref() {
            None => Default::default(),
            Some(t) => match frontmatter::parse(t) {
                Ok(p) => (p.values, t[p.body_start..].to_string()),
                Err(_) => (Default::default(), t.to_string()),
            },
        }
    };
    let ((before, body_before), (after, body_after)) = (read(&c.before), read(&c.after));
    let mut changes = serde_json::Map::new();
    for k in before.keys().chain(after.keys().filter(|k| !before.contains_key(*k))) {
        let (b, a) = (before.get(k), after.get(k));
        if b != a {
            changes.insert(k.clone(), json!({"before": b, "after": a}));
        }
    }
    let mut out = json!({"path": c.path, "kind": kind, "changes": changes});
    if let Some(from) = &c.from {
        out["from"] = from.clone().into();
    }
    if body_before != body_after {
        out["body_diff"] = line_diff(&body_before, &body_after).into();
    }
    out
}

/// The most lines a body diff shows; past it, a last line says how many more.
const DIFF_LINES: usize = 400;

/// A line diff: unchanged lines start "  ", removed "- ", added "+ ". The common
/// head and tail are cut to 3 lines of context; the middle is matched line by
/// line (longest common subsequence) when small, else shown as removed then added.
pub fn line_diff(before: &str, after: &str) -> Vec<String> {
    if before == after {
        return vec![];
    }
    let (a, b): (Vec<&str>, Vec<&str>) = (before.lines().collect(), after.lines().collect());
    let head = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let tail = a[head..].iter().rev().zip(b[head..].iter().rev()).take_while(|(x, y)| x == y).count();
    let (mid_a, mid_b) = (&a[head..a.len() - tail], &b[head..b.len() - tail]);
    let mut out: Vec<String> = a[head.saturating_sub(3)..head].iter().map(|l| format!("  {l}")).collect();
    if mid_a.len() * mid_b.len() <= 250_000 {
        // lcs[i][j]: the longest common subsequence of mid_a[i..] and mid_b[j..].
        let mut lcs = vec![vec![0u32; mid_b.len() + 1]; mid_a.len() + 1];
        for i in (0..mid_a.len()).rev() {
            for j in (0..mid_b.len()).rev() {
                lcs[i][j] = if mid_a[i] == mid_b[j] { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < mid_a.len() || j < mid_b.len() {
            if i < mid_a.len() && j < mid_b.len() && mid_a[i] == mid_b[j] {
                out.push(format!("  {}", mid_a[i]));
                (i, j) = (i + 1, j + 1);
            } else if i < mid_a.len() && (j == mid_b.len() || lcs[i + 1][j] >= lcs[i][j + 1]) {
                // Removed lines before the added ones that replace them.
                out.push(format!("- {}", mid_a[i]));
                i += 1;
            } else {
                out.push(format!("+ {}", mid_b[j]));
                j += 1;
            }
        }
    } else {
        out.extend(mid_a.iter().map(|l| format!("- {l}")));
        out.extend(mid_b.iter().map(|l| format!("+ {l}")));
    }
    out.extend(a[a.len() - tail..].iter().take(3).map(|l| format!("  {l}")));
    if out.len() > DIFF_LINES {
        let more = out.len() - DIFF_LINES;
        out.truncate(DIFF_LINES);
        out.push(format!("… {more} more lines"));
    }
    out
}

/// The journal entry `id`, unless it cannot be undone: unknown, a rollback, or
/// undone already (the way to redo it is named).
fn undoable(e: &Sees, op: &str, id: &str) -> OpResult<Entry> {
    let Some(entry) = e.journal.get(id).cloned() else {
        return fail(unknown(op, e, id));
    };
    if entry.rollback {
        return fail(
            Failure::refused(
                op,
                vec![format!("{id} is the rollback of a write that could not finish: it cannot be undone")],
                "Send the operation again instead.",
            )
            .with_docs("guides/history/journal-and-undo#the-engine-rolls-back-a-write-it-cannot-finish"),
        );
    }
    if entry.undone {
        let by = entry.undone_by.clone().unwrap_or_default();
        return fail(Failure::refused(
            op,
            vec![format!("{id} is undone already (by {by})")],
            format!("To redo it, undo the undo: undo_migration {{\"migration_id\": \"{by}\"}}."),
        ));
    }
    Ok(entry)
}

/// The entry with the long texts it keeps in the blobs read back (the host is
/// asked for them first).
fn with_texts(e: &Sees, op: &str, mut entry: Entry) -> OpResult<Entry> {
    let paths: Vec<String> =
        entry.changes.iter().flat_map(|c| c.unread_blobs()).map(|h| crate::log::blob_path(h)).collect();
    e.store.require(&paths)?;
    for c in &mut entry.changes {
        for (text, blob) in [(&mut c.before, &c.before_blob), (&mut c.after, &c.after_blob)] {
            let Some(h) = blob.as_ref().filter(|_| text.is_none()) else { continue };
            let path = crate::log::blob_path(h);
            let Some(t) = e.store.text(&path) else {
                return fail(Failure::refused(
                    op,
                    vec![format!("conflict {}: its text is gone from the store (.datanotes/{path})", c.path)],
                    "The blob was removed (by hand, or by a sync tool): restore .datanotes from a backup, or change the row with update_row.",
                ));
            };
            *text = Some(t.to_string());
        }
    }
    Ok(entry)
}

/// The schema with the tables the operation changed back to their old
/// definitions (a conflict for each one changed since); a renamed table's log
/// goes back to the old name.
fn schema_back(e: &Sees, tx: &mut Tx, entry: &Entry, conflicts: &mut Vec<String>) -> OpResult<Option<Schema>> {
    let (Some(before), Some(after)) = (&entry.schema_before, &entry.schema_after) else { return Ok(None) };
    let (Ok(b), Ok(f)) = (Schema::parse(before), Schema::parse(after)) else { return Ok(None) };
    let mut s = e.index.schema.clone();
    put_back(&b.tables, &f.tables, &e.index.schema.tables, &mut s.tables, "the definition of", conflicts);
    put_back(&b.views, &f.views, &e.index.schema.views, &mut s.views, "the view", conflicts);
    if let Some((old, new)) = renamed(entry, e.ops, &b, &f) {
        let files: Vec<String> = e.store.under(&crate::log::dir(&new)).cloned().collect();
        e.store.require(&files)?;
        tx.renamed = Some((new, old));
    }
    Ok(Some(s))
}

/// Puts back each object (table or view) the operation changed from `was` to
/// `became`, into `into` (a copy of `now`); one changed since is a conflict.
fn put_back<T: PartialEq + Clone>(
    was: &BTreeMap<String, T>,
    became: &BTreeMap<String, T>,
    now: &BTreeMap<String, T>,
    into: &mut BTreeMap<String, T>,
    what: &str,
    conflicts: &mut Vec<String>,
) {
    let names: std::collections::BTreeSet<&String> = was.keys().chain(became.keys()).collect();
    for t in names {
        let (w, b, n) = (was.get(t), became.get(t), now.get(t));
        if w == b || n == w {
            continue;
        }
        if n != b {
            let metastore = crate::schema::METASTORE;
            conflicts.push(format!("conflict {metastore}: {what} {t} changed since the operation"));
            continue;
        }
        match w {
            Some(d) => into.insert(t.clone(), d.clone()),
            None => into.remove(t),
        };
    }
}

/// The table an entry renamed (old, new). Entries written before the journal
/// recorded it are read from the schema before and after a rename_table.
fn renamed(entry: &Entry, ops: &'static [OpSpec], before: &Schema, after: &Schema) -> Option<(String, String)> {
    if entry.renamed.is_some() || !find(ops, &entry.op).is_some_and(|s| s.facts.renames_table) {
        return entry.renamed.clone();
    }
    let gone: Vec<&String> = before.tables.keys().filter(|t| !after.tables.contains_key(*t)).collect();
    let came: Vec<&String> = after.tables.keys().filter(|t| !before.tables.contains_key(*t)).collect();
    match (gone.as_slice(), came.as_slice()) {
        ([old], [new]) => Some(((*old).clone(), (*new).clone())),
        _ => None,
    }
}

/// What puts one note back.
enum Back {
    Trash(String),
    Put(String, String),
    Move(String, String, Option<String>),
}

/// How a note the operation changed goes back, or the conflict that stops it.
fn note_back(e: &Sees, c: &Change, partial: bool) -> Result<Option<Back>, String> {
    let now = e.index.vault.text(&c.path).map(str::to_string);
    match (&c.before, &c.after, &c.from) {
        (None, Some(after), _) => match now {
            None => Ok(None),
            Some(n) if &n == after => Ok(Some(Back::Trash(c.path.clone()))),
            Some(_) => Err(format!("conflict {}: created note changed since the operation", c.path)),
        },
        (Some(before), None, _) => match now {
            None => Ok(Some(Back::Put(c.path.clone(), before.clone()))),
            Some(n) if &n == before => Ok(None),
            Some(_) => Err(format!("conflict {}: a note was created there since the operation", c.path)),
        },
        (Some(before), Some(after), Some(from)) => {
            let Some(n) = now else {
                return if partial && e.index.vault.text(from) == Some(before.as_str()) {
                    Ok(None)
                } else {
                    Err(format!("conflict {}: moved or removed since the operation", c.path))
                };
            };
            if e.index.vault.get(from).is_some() {
                return Err(format!("conflict {from}: a note holds the old path since the operation"));
            }
            let text = revert(&c.path, &n, before, after)?;
            Ok(Some(Back::Move(c.path.clone(), from.clone(), (text != n).then_some(text))))
        }
        (Some(before), Some(after), None) => match now {
            None => Err(format!("conflict {}: removed since the operation", c.path)),
            Some(n) if partial && &n == before => Ok(None),
            Some(n) => Ok(Some(Back::Put(c.path.clone(), revert(&c.path, &n, before, after)?))),
        },
        (None, None, _) => Ok(None),
    }
}

fn compile(op: &str, mut s: Schema) -> OpResult<Schema> {
    if let Err(m) = s.compile() {
        let hint = crate::views::broken_hint(&s)
            .unwrap_or_else(|| "Undo the later schema changes first (list_migrations).".into());
        return fail(Failure::refused(op, vec![format!("the schema it puts back does not hold: {m}")], hint));
    }
    Ok(s)
}

/// The note `now` with the keys (and body) the operation changed put back as they
/// were `before`; later changes to other keys stay. Err names a key the operation
/// wrote that changed since.
fn revert(path: &str, now: &str, before: &str, after: &str) -> Result<String, String> {
    if now == after {
        return Ok(before.to_string());
    }
    let (b, f, n) = match (frontmatter::parse(before), frontmatter::parse(after), frontmatter::parse(now)) {
        (Ok(b), Ok(f), Ok(n)) => (b, f, n),
        _ => return Err(format!("conflict {path}: the note changed since the operation")),
    };
    let keys: Vec<&String> =
        b.values.keys().chain(f.values.keys()).filter(|k| b.values.get(*k) != f.values.get(*k)).collect();
    let mut keys = keys;
    keys.dedup();
    let mut changed: Vec<String> =
        keys.iter().filter(|k| n.values.get(**k) != f.values.get(**k)).map(|k| format!("\"{k}\"")).collect();
    changed.dedup();
    let body_changed = before[b.body_start..] != after[f.body_start..];
    if body_changed && now[n.body_start..] != after[f.body_start..] {
        changed.push("the body".into());
    }
    if !changed.is_empty() {
        return Err(format!("conflict {path}: {} changed since the operation", changed.join(", ")));
    }
    let set: Vec<(&str, &Value)> = keys.iter().filter_map(|k| b.values.get(*k).map(|v| (k.as_str(), v))).collect();
    let remove: Vec<&str> = keys.iter().filter(|k| !b.values.contains_key(**k)).map(|k| k.as_str()).collect();
    let mut text = frontmatter::edit(now, &set, &remove);
    if body_changed {
        text = frontmatter::set_body(&text, &before[b.body_start..]);
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    #[test]
    fn line_diff_keeps_context_and_matches_lines() {
        let before = "a\nb\nc\nd\ne\nf\ng\n";
        let after = "a\nb\nc\nd\nE\nf\ng\nh\n";
        assert_eq!(super::line_diff(before, after), ["  b", "  c", "  d", "- e", "+ E", "  f", "  g", "+ h"]);
        assert_eq!(super::line_diff("same\n", "same\n"), Vec::<String>::new());
        assert_eq!(super::line_diff("", "new\n"), ["+ new"]);
        // A long body: the diff is cut, and says how much is left.
        let long: String = (0..1000).map(|i| format!("{i}\n")).collect();
        let d = super::line_diff("", &long);
        assert_eq!(d.len(), super::DIFF_LINES + 1);
        assert_eq!(d.last().unwrap(), "… 600 more lines");
    }

    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    fn entry(op: &str, renamed: Option<(&str, &str)>) -> Entry {
        let text = format!(
            r#"{{"format": 1, "migration_id": "m", "op": "{op}", "summary": "", "executed_at": "", "executed_ms": 0,
            "by": "t", "status": "done", "notes_changed": 0, "files_changed": 0, "changes": []}}"#
        );
        let mut e: Entry = serde_json::from_str(&text).unwrap();
        e.renamed = renamed.map(|(a, b)| (a.to_string(), b.to_string()));
        e
    }

    fn schema(table: &str) -> Schema {
        Schema::parse(&format!("version: 1\ntables:\n  {table}:\n    columns:\n      name: {{type: text}}\n")).unwrap()
    }

    #[test]
    fn the_rename_an_entry_records_is_the_one_undone() {
        let (a, b) = (schema("main.public.film"), schema("main.public.movie"));
        let recorded = entry("rename_table", Some(("main.public.film", "main.public.movie")));
        assert_eq!(
            renamed(&recorded, crate::ops::registry::OPS, &a, &b),
            Some(("main.public.film".into(), "main.public.movie".into()))
        );
        // An entry written before the journal recorded renames: read from its schemas.
        let older = entry("rename_table", None);
        assert_eq!(
            renamed(&older, crate::ops::registry::OPS, &a, &b),
            Some(("main.public.film".into(), "main.public.movie".into()))
        );
        // A batch that dropped one table and created another renamed nothing.
        assert_eq!(renamed(&entry("batch", None), crate::ops::registry::OPS, &a, &b), None);
    }
}
