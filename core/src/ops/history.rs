//! History: describe_history, table_changes, restore_table, restore_database,
//! vacuum_table.

use super::args::Args;
use super::context::{Keeps, Plans, Sees};
use super::read::{asked_version, history_table};
use crate::edits::StoreWrite;
use crate::error::{fail, Failure, OpResult};
use crate::log::{self, Action, Commit, TableState};
use crate::schema::{short, TableDef, ARCHIVE};
use crate::step::Outcome;
use crate::tx::Tx;
use crate::vault::parse_row;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::rc::Rc;
use std::sync::Arc;

fn since_ms(a: &Args) -> OpResult<Option<i64>> {
    match a.str("since") {
        Some(s) => crate::time::parse(s).map(Some).ok_or_else(|| {
            Failure::bad_input(
                a.op,
                format!("since \"{s}\" is not an ISO date or date-time"),
                "since takes 2026-10-12 or 2026-10-12T16:52:23Z.",
            )
            .into()
        }),
        None => Ok(None),
    }
}

fn entry(c: &Commit, table: Option<&str>) -> Value {
    let mut v = json!({
        "version": c.version, "timestamp": c.timestamp, "operation": c.operation,
        "operation_metrics": c.operation_metrics, "migration_id": c.migration_id,
    });
    if let Some(b) = &c.batch {
        v["batch"] = b.clone().into();
    }
    // Which device's engine made it, once devices sync one vault.
    if let Some(d) = &c.device {
        v["device"] = d.clone().into();
    }
    if let Some(t) = table {
        v["table"] = t.into();
    }
    v
}

pub(crate) fn describe(e: &Sees, a: &Args) -> OpResult<Value> {
    let limit =
        a.int_in("limit", 50, 0..=10_000, "limit takes 0 to 10000 commits (default 50); since narrows by date.")?
            as usize;
    let since = since_ms(a)?;
    let one = a.str("table").map(|t| history_table(e, a.op, t)).transpose()?;
    let logged = log::tables(e.store);
    // The newest `limit` commits of every table: enough for the answer, and to
    // name every table an operation (or a batch) committed to.
    let mut wanted: Vec<(String, u64)> = vec![];
    for t in &logged {
        let (vs, _) = log::versions(e.store, t);
        wanted.extend(vs.iter().rev().take(limit).map(|v| (t.clone(), *v)));
    }
    let paths: Vec<String> = wanted.iter().filter_map(|(t, v)| log::commit_file(e.store, t, *v)).collect();
    e.store.require(&paths)?;
    let all: Vec<(String, Commit)> = wanted
        .iter()
        .map(|(t, v)| log::commit(e.store, a.op, t, *v).map(|c| (t.clone(), c)))
        .collect::<OpResult<_>>()?;
    let mut by_op: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (t, c) in &all {
        for id in c.migration_id.iter().chain(c.batch.iter()) {
            by_op.entry(id.as_str()).or_default().insert(t.as_str());
        }
    }
    let shown = |t: &str, c: &Commit, with_table: bool| {
        let mut v = entry(c, with_table.then_some(t));
        let id = c.batch.as_deref().or(c.migration_id.as_deref());
        if let Some(ts) = id.and_then(|i| by_op.get(i)) {
            v["tables"] = json!(ts);
        }
        v
    };
    let mut commits: Vec<&(String, Commit)> = all
        .iter()
        .filter(|(t, c)| one.as_ref().is_none_or(|o| o == t) && since.is_none_or(|s| c.timestamp_ms >= s))
        .collect();
    // One table's versions in their order; the tables' commits together by time.
    // (Devices' clocks differ: a version synced in may be older than the one before.)
    match one {
        Some(_) => commits.sort_by_key(|(_, c)| std::cmp::Reverse(c.version)),
        None => {
            commits.sort_by(|(ta, a), (tb, b)| (b.timestamp_ms, b.version, tb).cmp(&(a.timestamp_ms, a.version, ta)))
        }
    }
    commits.truncate(limit);
    let history = Value::Array(commits.iter().map(|(t, c)| shown(t, c, one.is_none())).collect());
    let mut out = match one {
        Some(t) => json!({"table": t}),
        None => json!({"tables": logged}),
    };
    out["history"] = history;
    Ok(out)
}

/// A row's values from a blob, read with the definition of its version.
fn values_of(e: &Sees, table: &str, def: Option<&TableDef>, path: &str, blob: &str) -> Map<String, Value> {
    let text = match e.index.vault.get(path).filter(|n| n.hash == *blob) {
        Some(n) => Some(n.text()),
        None => e.store.text(&log::blob_path(blob)),
    };
    let mut m = Map::new();
    if let (Some(text), Some(def)) = (text, def) {
        if let Ok(r) = parse_row(table, def, text) {
            m.insert("id".into(), r.id.map(|i| i.to_string()).into());
            m.extend(r.values.into_map());
        }
    }
    m
}

/// (change type, commit, path, blob, the definition to read the blob with)
type ChangeItem<'a> = (&'static str, &'a Commit, String, Option<String>, Option<Rc<Value>>);

pub(crate) fn changes(e: &Sees, a: &Args) -> OpResult<Value> {
    let q = history_table(e, a.op, a.req("table"))?;
    let (start, end) = version_range(e, a, &q)?;
    let commits = log::commits(e.store, a.op, &q, start, end)?;
    // Only the rows the commits name are looked up in the table as it was before them.
    let named = named_rows(&commits);
    let mut state = if start > 0 {
        log::replay::rows_named_at(e.store, a.op, &q, start - 1, &named)?
    } else {
        TableState::default()
    };
    let items = change_items(&mut state, &commits);
    let blobs: Vec<String> = items
        .iter()
        .filter_map(|(_, _, p, b, _)| {
            b.as_ref().filter(|b| e.index.vault.get(p).is_none_or(|n| &n.hash != *b)).map(|b| log::blob_path(b))
        })
        .collect();
    e.store.require(&blobs)?;
    let rows = change_rows(e, &q, &items);
    let mut out = json!({"table": q, "start_version": start, "end_version": end});
    out["changes"] = Value::Array(rows);
    Ok(out)
}

/// The versions table_changes is asked for: (start, end), end the latest when absent.
fn version_range(e: &Sees, a: &Args, q: &str) -> OpResult<(u64, u64)> {
    let start = a.int("start_version").unwrap_or(0);
    let latest = log::latest(e.store, q).ok_or_else(|| {
        Failure::refused(a.op, vec![format!("{q} has no history yet")], "Its log starts with the next write.")
    })?;
    let end = a.int("end_version").map_or(latest, |v| v.max(0) as u64);
    if start < 0 || start as u64 > end {
        return fail(Failure::bad_input(
            a.op,
            format!("start_version {start} is after end_version {end}"),
            "Give 0 <= start_version <= end_version (end defaults to the latest).",
        ));
    }
    let start = start as u64;
    if end > latest {
        return fail(Failure::refused(
            a.op,
            vec![format!("{q} has no version {end}: its latest is {latest}")],
            "describe_history lists the versions.",
        ));
    }
    Ok((start, end))
}

/// The paths of the rows the commits add or remove.
fn named_rows(commits: &[Commit]) -> HashSet<&str> {
    commits
        .iter()
        .flat_map(|c| &c.actions)
        .filter_map(|a| match a {
            Action::Add { path, .. } | Action::Remove { path, .. } => Some(path.as_str()),
            Action::Metadata { .. } => None,
        })
        .collect()
}

/// The changes the commits make to a table that was `state` before them, in the
/// order they made them.
fn change_items<'a>(state: &mut TableState, commits: &'a [Commit]) -> Vec<ChangeItem<'a>> {
    // (change type, commit, path, blob, definition at the time)
    let mut items: Vec<ChangeItem> = vec![];
    // The definitions are shared, not copied, by the many changes they read.
    let mut current_def: Option<Rc<Value>> = state.definition.clone().map(Rc::new);
    for c in commits {
        let def_before = current_def.clone();
        let def_after = c
            .actions
            .iter()
            .rev()
            .find_map(|a| match a {
                Action::Metadata { definition } => Some(definition.clone().map(Rc::new)),
                _ => None,
            })
            .unwrap_or_else(|| def_before.clone());
        let renamed = renamed_rows(state, c);
        for act in &c.actions {
            match act {
                Action::Metadata { definition } => {
                    items.push(("metadata", c, String::new(), None, definition.clone().map(Rc::new)))
                }
                Action::Add { path, blob, id } => {
                    let before = state.rows.get(path).map(|(_, b)| (path.clone(), b.clone())).or_else(|| {
                        let from = id.as_ref().and_then(|i| renamed.get(i))?;
                        state.rows.get(from).map(|(_, b)| (from.clone(), b.clone()))
                    });
                    match before {
                        Some((old_path, old)) => {
                            items.push(("update_preimage", c, old_path, Some(old), def_before.clone()));
                            items.push(("update_postimage", c, path.clone(), Some(blob.clone()), def_after.clone()));
                        }
                        None => items.push(("insert", c, path.clone(), Some(blob.clone()), def_after.clone())),
                    }
                }
                Action::Remove { path, .. } => {
                    if renamed.values().any(|p| p == path) {
                        continue;
                    }
                    if let Some((_, old)) = state.rows.get(path) {
                        items.push(("delete", c, path.clone(), Some(old.clone()), def_before.clone()));
                    }
                }
            }
        }
        state.apply(c);
        current_def = def_after;
    }
    items
}

/// A row renamed in a commit (removed and added with the same id) is an update:
/// id -> the path it leaves.
fn renamed_rows(state: &TableState, c: &Commit) -> BTreeMap<String, String> {
    c.actions
        .iter()
        .filter_map(|a| match a {
            Action::Remove { path, .. } => {
                state.rows.get(path).and_then(|(id, _)| id.clone()).map(|id| (id, path.clone()))
            }
            _ => None,
        })
        .filter(|(id, _)| {
            c.actions.iter().any(
                |a| matches!(a, Action::Add { id: Some(i), path, .. } if i == id && !state.rows.contains_key(path)),
            )
        })
        .collect()
}

/// The changes as table_changes answers them: each row's values read with the
/// definition of its version.
fn change_rows(e: &Sees, q: &str, items: &[ChangeItem]) -> Vec<Value> {
    // Definitions change rarely: each is read once.
    let mut defs: Vec<(&Rc<Value>, Option<TableDef>)> = vec![];
    for (_, _, _, _, d) in items {
        if let Some(d) = d {
            if !defs.iter().any(|(x, _)| Rc::ptr_eq(x, d)) {
                defs.push((d, TableDef::from_json(d, q).ok()));
            }
        }
    }
    let def_of = |d: &Rc<Value>| defs.iter().find(|(x, _)| Rc::ptr_eq(x, d)).and_then(|(_, t)| t.as_ref());
    items
        .iter()
        .map(|(kind, c, path, blob, def)| {
            let mut m = match (blob, def) {
                (Some(b), Some(d)) => values_of(e, q, def_of(d), path, b),
                (None, Some(d)) if *kind == "metadata" => Map::from_iter([("definition".to_string(), (**d).clone())]),
                _ => Map::new(),
            };
            if *kind != "metadata" {
                m.insert("path".into(), path.clone().into());
            }
            m.insert("_change_type".into(), (*kind).into());
            m.insert("_commit_version".into(), c.version.into());
            m.insert("_commit_timestamp".into(), c.timestamp.clone().into());
            m.insert("_operation".into(), c.operation.clone().into());
            Value::Object(m)
        })
        .collect()
}

#[derive(Default)]
struct Restored {
    creates: usize,
    texts: usize,
    deletes: usize,
}

/// Puts a table back as `state` holds it, inside `tx`: its definition, then its
/// rows (matched by path, then by id for rows renamed since).
fn restore_one(e: &mut Plans, tx: &mut Tx, op: &str, q: &str, state: &TableState) -> OpResult<Restored> {
    let mut r = Restored::default();
    let texts: BTreeMap<String, String> =
        e.past().texts_at(op, state)?.into_iter().map(|(p, t)| (p.to_string(), t.to_string())).collect();
    let def = match &state.definition {
        Some(d) => Some(TableDef::from_json(d, q).map_err(|m| Failure::internal(op, m))?),
        None => None,
    };
    outside_folder(op, q, def.as_ref(), texts.keys())?;
    let current = e.index.schema.tables.get(q).cloned();
    let folder_now = e.index.schema.folder(q);
    let rows_now: Vec<String> = if current.is_some() {
        e.index.vault.paths_under(&folder_now).into_iter().filter(|p| e.index.vault.is_row_of(p, q)).collect()
    } else {
        vec![]
    };
    if current != def {
        let mut s = e.index.schema.clone();
        match &def {
            Some(d) => s.tables.insert(q.to_string(), d.clone()),
            None => s.tables.remove(q),
        };
        if let Err(m) = s.compile() {
            let hint = crate::views::broken_hint(&s).unwrap_or_else(|| {
                "Restore the tables it links to first, or restore the whole database (restore_database).".into()
            });
            return fail(Failure::refused(
                op,
                vec![format!("the definition of {q} it puts back does not hold: {m}")],
                hint,
            ));
        }
        e.index.tx_schema(tx, s);
    }
    let by_id: BTreeMap<String, String> = rows_now
        .iter()
        .filter_map(|p| e.index.vault.row(p).and_then(|r| r.id.as_ref()).map(|id| (id.to_string(), p.clone())))
        .collect();
    let mut kept: BTreeSet<String> = BTreeSet::new();
    for (p, text) in &texts {
        let id = state.rows.get(p).and_then(|(id, _)| id.clone());
        if e.index.vault.get(p).is_none() {
            if let Some(from) =
                id.and_then(|i| by_id.get(&i)).filter(|f| !texts.contains_key(*f) && e.index.vault.get(f).is_some())
            {
                // Renamed since: back to its old name, and the links to it with it.
                let from = from.clone();
                e.index.rename_note(tx, &from, p);
                kept.insert(from);
            } else {
                r.creates += 1;
            }
        }
        kept.insert(p.clone());
        if e.index.vault.text(p) != Some(text.as_str()) {
            if e.index.vault.get(p).is_some() {
                r.texts += 1;
            }
            e.index.tx_put(tx, p, text.clone());
        }
    }
    for p in rows_now.iter().filter(|p| !kept.contains(*p)) {
        let rel = p.strip_prefix(&folder_now).unwrap_or(p);
        let to = super::rows::free_path(&e.sees(), &format!("{ARCHIVE}{}/{rel}", q.replace('.', "/")));
        e.index.tx_move(tx, p, &to);
        r.deletes += 1;
    }
    Ok(r)
}

/// Refuses rows of a version that lie outside the folder of the table they
/// would be restored to: a commit that names them was not written by an
/// engine (it came with a sync or was edited), and a restore never writes them.
fn outside_folder<'a>(
    op: &str,
    q: &str,
    def: Option<&TableDef>,
    paths: impl Iterator<Item = &'a String>,
) -> OpResult<()> {
    let folder = crate::schema::folder_of(q, def);
    let bad: Vec<String> = paths
        .filter(|p| !p.starts_with(&folder) || !p.ends_with(".md") || crate::trust::note_path_problem(p).is_some())
        .map(|p| format!("{p}: the version names it as a row of {q}, but it lies outside {folder}"))
        .collect();
    if bad.is_empty() {
        return Ok(());
    }
    fail(Failure::refused(
        op,
        bad,
        "The table's log names files no engine writes there, so it is damaged or forged: nothing was written. Pick another version, or restore .datanotes/ from a backup.",
    ))
}

pub(crate) fn restore_table(e: &mut Plans, tx: &mut Tx, a: &Args) -> OpResult<String> {
    let q = history_table(&e.sees(), a.op, a.req("table"))?;
    let Some(v) = asked_version(&e.sees(), a.op, &q, a)? else {
        return fail(Failure::bad_input(
            a.op,
            "give version or timestamp",
            "describe_history lists the versions of the table.",
        ));
    };
    let state = log::replay::state_at(e.store, a.op, &q, v)?;
    if state.definition.is_none() {
        return fail(Failure::refused(
            a.op,
            vec![format!("{q} was dropped at version {v}")],
            "Pick a version at which the table existed (describe_history).",
        ));
    }
    let was_dropped = !e.index.schema.tables.contains_key(&q);
    let r = restore_one(e, tx, a.op, &q, &state)?;
    tx.table = Some(q.clone());
    tx.extra.insert("table".into(), q.clone().into());
    tx.extra.insert("restored_to".into(), v.into());
    tx.extra.insert("action".into(), (if was_dropped { "recreate" } else { "restore" }).into());
    tx.extra.insert("creates".into(), r.creates.into());
    tx.extra.insert("texts".into(), r.texts.into());
    tx.extra.insert("deletes".into(), r.deletes.into());
    Ok(format!("restore {} to version {v}", short(&q)))
}

pub(crate) fn restore_database(e: &mut Plans, tx: &mut Tx, a: &Args) -> OpResult<String> {
    let logged = log::tables(e.store);
    let (cut, restored_to) = cut_of(&e.sees(), a, &logged)?;
    let mut tables = Map::new();
    let (mut unchanged, mut skipped) = unlogged(&e.sees(), &logged);
    for q in &logged {
        let Some(first_undone) = cut.get(q).copied() else {
            unchanged.push(q.clone().into());
            continue;
        };
        let (vs, _) = log::versions(e.store, q);
        if first_undone > 0 && vs.first().is_some_and(|f| *f > first_undone - 1) {
            skipped.push(json!({"table": q, "reason": "its history before that moment was vacuumed"}));
            continue;
        }
        let exists = e.index.schema.tables.contains_key(q);
        let state = if first_undone == 0 {
            Arc::new(TableState::default())
        } else {
            log::replay::state_at(e.store, a.op, q, first_undone - 1)?
        };
        let action = match (exists, state.definition.is_some()) {
            (true, false) => "drop",
            (false, true) => "recreate",
            (false, false) => {
                unchanged.push(q.clone().into());
                continue;
            }
            (true, true) => "restore",
        };
        let r = restore_one(e, tx, a.op, q, &state)?;
        tables.insert(q.clone(), json!({"action": action, "version": first_undone.saturating_sub(1), "creates": r.creates, "texts": r.texts, "deletes": if action == "drop" { 0 } else { r.deletes }, "archived": if action == "drop" { r.deletes } else { 0 }}));
    }
    tx.extra.insert("restored_to".into(), restored_to.clone().into());
    tx.extra.insert("tables".into(), Value::Object(tables));
    tx.extra.insert("unchanged".into(), Value::Array(unchanged));
    tx.extra.insert("skipped".into(), Value::Array(skipped));
    Ok(format!("restore database to {restored_to}"))
}

/// The moment restore_database goes back to: every commit strictly before it
/// stays. Gives, per table, the first version to take back, and the moment as
/// the answer names it.
fn cut_of(e: &Sees, a: &Args, logged: &[String]) -> OpResult<(BTreeMap<String, u64>, String)> {
    match (a.str("timestamp"), a.str("before_migration")) {
        (Some(t), None) => Ok((cut_at(e, a, logged, t)?, t.to_string())),
        (None, Some(id)) => Ok((cut_before(e, a, logged, id)?, format!("before {id}"))),
        _ => fail(Failure::bad_input(
            a.op,
            "give timestamp or before_migration (one of them)",
            "describe_history without table shows the moments; before_migration takes a migration_id or a batch.",
        )),
    }
}

/// Every commit a table's log holds.
fn all_commits(e: &Sees, op: &str, q: &str) -> OpResult<Vec<Commit>> {
    let (vs, _) = log::versions(e.store, q);
    log::commits(e.store, op, q, vs.first().copied().unwrap_or(0), vs.last().copied().unwrap_or(0))
}

/// The cut at a timestamp: each table's first commit after it.
fn cut_at(e: &Sees, a: &Args, logged: &[String], t: &str) -> OpResult<BTreeMap<String, u64>> {
    let ms = crate::time::parse(t).ok_or_else(|| {
        Failure::bad_input(
            a.op,
            format!("timestamp \"{t}\" is not an ISO date or date-time"),
            "timestamp takes 2026-10-12T16:52:23Z.",
        )
    })?;
    let mut cut: BTreeMap<String, u64> = BTreeMap::new();
    for q in logged {
        let all = all_commits(e, a.op, q)?;
        if let Some(c) = all.iter().find(|c| c.timestamp_ms > ms) {
            cut.insert(q.clone(), c.version);
        }
    }
    Ok(cut)
}

/// The cut just before an operation (a migration or a batch): its commits, and
/// in the tables it did not commit to, the commits after it began.
fn cut_before(e: &Sees, a: &Args, logged: &[String], id: &str) -> OpResult<BTreeMap<String, u64>> {
    let mut cut: BTreeMap<String, u64> = BTreeMap::new();
    let mut at: Option<i64> = e.journal.get(id).map(|j| j.executed_ms);
    let mut all: BTreeMap<String, Vec<Commit>> = BTreeMap::new();
    for q in logged {
        all.insert(q.clone(), all_commits(e, a.op, q)?);
    }
    for (q, cs) in &all {
        if let Some(c) = cs.iter().find(|c| c.migration_id.as_deref() == Some(id) || c.batch.as_deref() == Some(id)) {
            cut.insert(q.clone(), c.version);
            at = Some(at.map_or(c.timestamp_ms, |x| x.min(c.timestamp_ms)));
        }
    }
    let Some(at) = at else {
        return fail(Failure::refused(
            a.op,
            vec![format!("no operation \"{id}\" in the journal or the logs")],
            "list_migrations and describe_history (without table) list them.",
        ));
    };
    for (q, cs) in &all {
        if !cut.contains_key(q) {
            if let Some(c) = cs.iter().find(|c| c.timestamp_ms > at) {
                cut.insert(q.clone(), c.version);
            }
        }
    }
    Ok(cut)
}

/// The tables without a log: unchanged when they keep history (nothing written
/// since it was turned on), skipped when they keep none.
fn unlogged(e: &Sees, logged: &[String]) -> (Vec<Value>, Vec<Value>) {
    let mut unchanged = vec![];
    let mut skipped = vec![];
    for (q, def) in e.index.schema.tables.clone() {
        if !logged.contains(&q) {
            if def.history {
                unchanged.push(Value::String(q));
            } else {
                skipped
                    .push(json!({"table": q, "reason": "history is off: the table keeps no log to go back through"}));
            }
        }
    }
    (unchanged, skipped)
}

/// The blobs still needed once `files` (the log files a vacuum of `q` drops) are
/// gone and `q` starts at `retain`: those the other log files refer to, and the
/// long texts of journal entries, which undo reads back.
fn referenced_blobs(e: &Sees, files: &[String], q: &str, retain: u64) -> OpResult<BTreeSet<String>> {
    let mut referenced: BTreeSet<String> = BTreeSet::new();
    let mut need = vec![];
    for t in log::tables(e.store) {
        let (_, cps) = log::versions(e.store, &t);
        for p in log::commit_files(e.store, &t, 0, u64::MAX) {
            if !files.contains(&p) {
                need.push(p);
            }
        }
        for v in cps {
            let p = log::checkpoint_path(&t, v);
            if !(files.contains(&p) || t == q && v == retain) {
                need.push(p);
            }
        }
    }
    e.store.require(&need)?;
    for p in &need {
        let text = e.store.text(p).unwrap_or_default();
        if p.ends_with(".checkpoint.json") {
            if let Ok(cp) = serde_json::from_str::<log::Checkpoint>(text) {
                referenced.extend(cp.rows.into_iter().map(|(_, _, h)| h));
            }
        } else if let Ok(c) = serde_json::from_str::<Commit>(text) {
            referenced.extend(c.actions.into_iter().filter_map(|x| match x {
                Action::Add { blob, .. } => Some(blob),
                _ => None,
            }));
        }
    }
    referenced.extend(e.journal.entries.iter().flat_map(|j| j.blobs().cloned()));
    Ok(referenced)
}

pub(crate) fn vacuum(e: &mut Keeps, a: &Args, _now_ms: i64) -> OpResult<Outcome> {
    let q = history_table(&e.sees(), a.op, a.req("table"))?;
    let (commits, checkpoints) = log::versions(e.store, &q);
    let Some(latest) = commits.last().copied() else {
        return fail(Failure::refused(a.op, vec![format!("{q} has no history")], "Nothing to vacuum."));
    };
    let retain = a.int("retain_from_version").map_or(latest, |v| v.max(0) as u64);
    if retain > latest {
        return fail(Failure::bad_input(
            a.op,
            format!("retain_from_version {retain} is after the latest version {latest}"),
            "Give a version from describe_history.",
        ));
    }
    let dry = a.bool("dry_run").unwrap_or(true);
    // A whole checkpoint at the oldest version kept makes it readable on its own;
    // the whole checkpoint later delta checkpoints build on stays.
    let keep_base = retain - retain % log::FULL_EVERY;
    let base_needed =
        checkpoints.iter().any(|c| *c > retain && *c < keep_base + log::FULL_EVERY && c % log::FULL_EVERY != 0);
    let mut files: Vec<String> = if retain > 0 { log::commit_files(e.store, &q, 0, retain - 1) } else { vec![] };
    files.extend(
        checkpoints
            .iter()
            .filter(|v| **v < retain && !(base_needed && **v == keep_base))
            .map(|v| log::checkpoint_path(&q, *v)),
    );
    let state = log::replay::state_at(e.store, a.op, &q, retain)?;
    let at = log::commit_file(e.store, &q, retain);
    let anchor = log::write_json(log::checkpoint_path(&q, retain), &log::checkpoint(retain, &state, at.as_deref()));
    let mut referenced = referenced_blobs(&e.sees(), &files, &q, retain)?;
    referenced.extend(state.rows.values().map(|(_, h)| h.clone()));
    let blobs: Vec<String> = e
        .store
        .under(log::BLOBS)
        .filter(|p| !referenced.contains(p.rsplit('/').next().unwrap_or("")))
        .cloned()
        .collect();
    let answer = json!({"ok": true, "op": a.op, "table": q, "dry_run": dry, "retain_from_version": retain, "files": files, "blobs": blobs.len()});
    if dry {
        return Ok(Outcome::done(answer));
    }
    let mut store: Vec<StoreWrite> = vec![anchor];
    store.extend(files.iter().chain(blobs.iter()).map(StoreWrite::delete));
    for w in &store {
        e.store.wrote(w);
    }
    e.store.move_full(&q, None);
    Ok(Outcome { store, ..Outcome::done(answer) })
}
