//! Writing the transaction log: the commits a write makes, the blobs of the
//! texts they name, and the checkpoints that keep a read short.

use crate::edits::{hash, StoreWrite};
use crate::error::OpResult;
use crate::index::Index;
use crate::journal::Change;
use crate::log::{self, Action, Commit, TableState};
use crate::schema::{Schema, TableDef};
use crate::store::Store;
use crate::tx::Tx;
use crate::vault::{parse_row, Note, Row};
use serde_json::{json, Value};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

/// What a write adds to the logs: blobs to write before the edits, commits to
/// write once they are done, and the answer's `commits`.
#[derive(Default)]
pub struct Commits {
    pub blobs: Vec<StoreWrite>,
    pub files: Vec<StoreWrite>,
    pub answer: Vec<Value>,
    /// Whole checkpoints written, to keep in memory.
    pub full: Vec<(String, u64, TableState)>,
}

/// A write's actions, by table.
struct TableActions {
    actions: BTreeMap<String, Vec<Action>>,
    /// The texts the write replaced: a log that starts with this write holds
    /// them in its version 0.
    befores: BTreeMap<String, Vec<(String, String)>>,
    /// [inserted, updated, deleted]
    metrics: BTreeMap<String, [usize; 3]>,
}

fn definition(s: &Schema, t: &str) -> Option<Value> {
    s.tables.get(t).map(TableDef::to_json)
}

/// The schema before the write: borrowed, never copied (a write that changed no
/// definition reads the one in place). Only the engine's schema is borrowed, so
/// that the store can be written meanwhile.
fn schema_before<'a>(tx: &'a Tx, schema: &'a Schema) -> &'a Schema {
    match &tx.schema_before {
        Some((s, _)) => s,
        None => schema,
    }
}

/// Writes a text to the blobs unless it is there already: its hash.
fn blob(store: &mut Store, out: &mut Commits, text: &str) -> String {
    let h = hash(text);
    keep_blob(store, &mut out.blobs, &h, text);
    h
}

/// Writes a text to the blobs under its hash, unless it is there already.
pub(crate) fn keep_blob(store: &mut Store, blobs: &mut Vec<StoreWrite>, h: &str, text: &str) {
    let p = log::blob_path(h);
    if !store.exists(&p) {
        let w = StoreWrite::put(p, text.to_string());
        store.wrote(&w);
        blobs.push(w);
    }
}

/// The log's commits of a finished write, recorded in the store: its files,
/// and the whole checkpoints kept in memory.
pub(crate) fn committed(store: &mut Store, c: Commits) -> Vec<StoreWrite> {
    for f in &c.files {
        store.wrote(f);
    }
    for (t, v, s) in c.full {
        store.keep_full(t, v, s);
    }
    c.files
}

/// The tables kept with history whose log has not begun.
pub(crate) fn unlogged_history(index: &Index, store: &Store) -> Vec<String> {
    let schema = &index.schema;
    let unlogged = |t: &&String| schema.tables[*t].history && log::latest(store, t).is_none();
    schema.tables.keys().filter(unlogged).cloned().collect()
}

/// Blobs a turn writes at most to begin the tables' logs (`begin_logs`).
const BLOBS_AT_ONCE: usize = 2000;

/// What made a write's commits: the log's name for its operation, the journal
/// entry it belongs to, whether it is a batch, and when.
pub struct Made<'a> {
    /// The operation as the log names it (the registry's `log_operation`, or
    /// EXTERNAL_EDIT for a hand edit).
    pub operation: &'a str,
    pub migration_id: Option<&'a str>,
    /// A batch: its commits carry the migration id as their batch.
    pub batch: bool,
    pub now_ms: i64,
}

/// The tables' logs as a write sees them: the index (the tables as they are
/// now) and the store's files, which it adds commits, blobs and checkpoints to.
pub struct Logs<'a> {
    pub index: &'a Index,
    pub store: &'a mut Store,
}

impl Logs<'_> {
    /// The table as the vault holds it now.
    pub(crate) fn table_state(&self, table: &str) -> TableState {
        let rows = self.logged_rows(table).into_iter();
        let rows = rows
            .map(|(p, n)| {
                (p.to_string(), (n.row().and_then(|r| r.id.as_ref().map(ToString::to_string)), n.hash.to_string()))
            })
            .collect();
        TableState { definition: definition(&self.index.schema, table), rows }
    }

    /// The notes a table's log holds as its rows (read as rows or not), by path.
    fn logged_rows(&self, table: &str) -> Vec<(&str, &Note)> {
        let vault = &self.index.vault;
        let mut rows: Vec<(&str, &Note)> = vault
            .table_rows(table)
            .chain(vault.unreadable_rows(table))
            .filter_map(|p| Some((p, vault.get(p)?)))
            .collect();
        // A table's rows come sorted: the sort then only looks.
        rows.sort_unstable_by(|a, b| a.0.cmp(b.0));
        rows.dedup_by(|a, b| a.0 == b.0);
        rows
    }

    /// The commits of a write, one per table with history that it changed.
    /// `changes` are the write's (`changes_of`), computed once for the journal too.
    pub(crate) fn commits_of(&mut self, tx: &Tx, changes: &[Change], made: &Made) -> OpResult<Commits> {
        let (migration_id, now_ms) = (made.migration_id, made.now_ms);
        let mut out = Commits::default();
        let TableActions { mut actions, befores, metrics } = self.actions_of(tx, changes, &mut out);
        let moved_latest = self.move_renamed_log(tx, &mut actions, &mut out)?;
        for (t, acts) in actions {
            let old = schema_before(tx, &self.index.schema);
            let history = self.index.schema.tables.get(&t).or_else(|| old.tables.get(&t)).is_some_and(|d| d.history);
            if !history || acts.is_empty() {
                continue;
            }
            let created = !old.tables.contains_key(&t);
            let carried = tx.renamed.as_ref().filter(|(_, to)| *to == t).and(moved_latest);
            let mut v = match log::latest(self.store, &t).or(carried) {
                Some(l) => l + 1,
                None if created => 0,
                None => {
                    self.start_log(tx, &t, &acts, befores.get(&t), &mut out);
                    1
                }
            };
            if v == 0 && !created {
                v = 1;
            }
            let [ins, upd, del] = metrics.get(&t).copied().unwrap_or_default();
            let commit = Commit {
                format: 1,
                version: v,
                timestamp: crate::time::iso(now_ms),
                timestamp_ms: now_ms,
                operation: made.operation.into(),
                operation_metrics: json!({"rows_inserted": ins, "rows_updated": upd, "rows_deleted": del}),
                migration_id: migration_id.map(str::to_string),
                batch: made.batch.then(|| migration_id.map(str::to_string)).flatten(),
                device: self.store.device().map(str::to_string),
                actions: acts,
            };
            let path = log::commit_path(&t, v, self.store.device());
            out.files.push(log::write_json(path.clone(), &commit));
            if v % log::CHECKPOINT_EVERY == 0 {
                self.checkpoint_at(&t, v, &path, &mut out);
            }
            out.answer.push(json!({"table": t, "version": v, "operation": commit.operation}));
        }
        Ok(out)
    }

    /// The actions of a write on each table, from its changes (the texts they add
    /// go to the blobs), a changed definition first.
    fn actions_of(&mut self, tx: &Tx, changes: &[Change], out: &mut Commits) -> TableActions {
        let old = schema_before(tx, &self.index.schema);
        let mut actions: BTreeMap<String, Vec<Action>> = BTreeMap::new();
        let mut befores: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
        let mut metrics: BTreeMap<String, [usize; 3]> = BTreeMap::new();
        for c in changes {
            let before_path = c.from.clone().unwrap_or_else(|| c.path.clone());
            let bt = c.before.as_ref().and_then(|_| old.table_of_path(&before_path)).map(str::to_string);
            let at = c.after.as_ref().and_then(|_| self.index.schema.table_of_path(&c.path)).map(str::to_string);
            if let (Some(t), Some(text)) = (&bt, &c.before) {
                befores.entry(t.clone()).or_default().push((before_path.clone(), text.clone()));
                if at.as_ref() != Some(t) || c.from.is_some() {
                    actions.entry(t.clone()).or_default().push(Action::Remove { path: before_path.clone(), id: None });
                    if at.as_ref() != Some(t) {
                        metrics.entry(t.clone()).or_default()[2] += 1;
                    }
                }
            }
            if let (Some(t), Some(text)) = (&at, &c.after) {
                let id = self.index.vault.row(&c.path).and_then(|r| r.id.as_ref().map(ToString::to_string));
                let blob = blob(self.store, out, text);
                actions.entry(t.clone()).or_default().push(Action::Add { path: c.path.clone(), id, blob });
                metrics.entry(t.clone()).or_default()[if bt.as_ref() == Some(t) { 1 } else { 0 }] += 1;
            }
        }
        let tables: BTreeSet<&String> = old.tables.keys().chain(self.index.schema.tables.keys()).collect();
        for t in tables {
            if old.tables.get(t) != self.index.schema.tables.get(t) {
                actions
                    .entry(t.clone())
                    .or_default()
                    .insert(0, Action::Metadata { definition: definition(&self.index.schema, t) });
            }
        }
        TableActions { actions, befores, metrics }
    }

    /// A renamed table keeps its log: the files move to the new name, and the
    /// rows leaving the old folder are removed in the log that carries on. Gives
    /// the old log's latest version, which the new name's log carries on from.
    fn move_renamed_log(
        &mut self,
        tx: &Tx,
        actions: &mut BTreeMap<String, Vec<Action>>,
        out: &mut Commits,
    ) -> OpResult<Option<u64>> {
        let Some((from, to)) = &tx.renamed else {
            return Ok(None);
        };
        if let Some(acts) = actions.remove(from) {
            let removes = acts.into_iter().filter(|a| matches!(a, Action::Remove { .. }));
            actions.entry(to.clone()).or_default().extend(removes);
        }
        let (src, dst) = (log::dir(from), log::dir(to));
        let files: Vec<String> = self.store.under(&src).cloned().collect();
        self.store.require(&files)?;
        for f in files {
            let text = self.store.text(&f).unwrap_or_default().to_string();
            out.files.push(StoreWrite::put(f.replacen(&src, &dst, 1), text));
            out.files.push(StoreWrite::delete(f));
        }
        let moved_latest = log::latest(self.store, from);
        self.store.move_full(from, Some(to));
        Ok(moved_latest)
    }

    /// The table's log starts now: version 0 holds it as it was.
    fn start_log(
        &mut self,
        tx: &Tx,
        t: &str,
        acts: &[Action],
        befores: Option<&Vec<(String, String)>>,
        out: &mut Commits,
    ) {
        let before = self.state_before(tx, t, acts, befores, out);
        self.begin_log(t, before, out);
    }

    /// Version 0 of a table's log, holding `before` (whose texts are in the
    /// blobs already or in `out`).
    fn begin_log(&self, t: &str, before: TableState, out: &mut Commits) {
        let mut adds: Vec<Action> = vec![Action::Metadata { definition: before.definition.clone() }];
        adds.extend(before.rows.iter().map(|(p, (id, h))| Action::Add {
            path: p.clone(),
            id: id.clone(),
            blob: h.clone(),
        }));
        // The table as it was before its log began: true of every earlier moment.
        let c0 = Commit {
            format: 1,
            version: 0,
            timestamp: crate::time::iso(0),
            timestamp_ms: 0,
            operation: "CONVERT".into(),
            operation_metrics: json!({"rows": before.rows.len()}),
            migration_id: None,
            batch: None,
            device: self.store.device().map(str::to_string),
            actions: adds,
        };
        let path = log::commit_path(t, 0, self.store.device());
        let cp = log::checkpoint(0, &before, Some(&path));
        out.files.push(log::write_json(path, &c0));
        out.files.push(log::write_json(log::checkpoint_path(t, 0), &cp));
        out.full.push((t.to_string(), 0, before));
    }

    /// The log of each table kept with history that has none yet, begun at the
    /// table as the vault holds it (hand edits made later while no engine runs
    /// then have their old texts, and are reported as they are live). At most
    /// BLOBS_AT_ONCE blobs a turn: a large vault's are written over several
    /// ticks (a host on a UI thread takes each turn's files at once), each
    /// table's version 0 once its rows' texts are all in the blobs; the next
    /// tick is asked for at once while logs are left to begin (none when a
    /// row's text is unread: read at the next open).
    /// Answers the files to write, and whether every log has begun.
    pub(crate) fn begin_logs(&mut self) -> (Vec<StoreWrite>, bool) {
        let mut out = Commits::default();
        let mut done = true;
        for t in unlogged_history(self.index, self.store) {
            let mut unread = false;
            let texts: Vec<(String, String)> = self
                .logged_rows(&t)
                .into_iter()
                .filter(|(_, n)| !self.store.exists(&log::blob_path(&n.hash.to_string())))
                .filter_map(|(_, n)| match n.text.as_deref() {
                    Some(text) => Some((n.hash.to_string(), text.to_string())),
                    None => {
                        unread = true;
                        None
                    }
                })
                .collect();
            let room = BLOBS_AT_ONCE.saturating_sub(out.blobs.len());
            let all = texts.len() <= room;
            for (h, text) in texts.into_iter().take(room) {
                keep_blob(self.store, &mut out.blobs, &h, &text);
            }
            if unread {
                continue;
            }
            if !all {
                done = false;
                break;
            }
            let now = self.table_state(&t);
            self.begin_log(&t, now, &mut out);
        }
        let mut writes = std::mem::take(&mut out.blobs);
        writes.extend(committed(self.store, out));
        (writes, done)
    }

    /// The table as it was before the write, from the vault and the texts the
    /// write replaced: every text it names kept in the blobs.
    fn state_before(
        &mut self,
        tx: &Tx,
        t: &str,
        acts: &[Action],
        befores: Option<&Vec<(String, String)>>,
        out: &mut Commits,
    ) -> TableState {
        let old = schema_before(tx, &self.index.schema);
        let mut before = self.table_state(t);
        before.definition = definition(old, t);
        for a in acts {
            if let Action::Add { path, .. } = a {
                before.rows.remove(path);
            }
        }
        for (p, text) in befores.into_iter().flatten() {
            let id = parse_row(t, &old.tables[t], text).ok().and_then(|r| r.id).map(|i| i.to_string());
            let h = blob(self.store, out, text);
            before.rows.insert(p.clone(), (id, h));
        }
        // The rows the write left alone: their texts are the vault's.
        let unchanged: Vec<(String, String)> = before
            .rows
            .iter()
            .filter_map(|(p, (_, h))| {
                self.index
                    .vault
                    .get(p)
                    .filter(|n| n.hash == *h)
                    .and_then(|n| Some((h.clone(), n.text.as_deref()?.to_string())))
            })
            .collect();
        for (h, text) in unchanged {
            keep_blob(self.store, &mut out.blobs, &h, &text);
        }
        before
    }

    /// The checkpoint of version `v` of a table, as the write leaves it: the
    /// difference from the whole one when at hand.
    fn checkpoint_at(&self, t: &str, v: u64, commit: &str, out: &mut Commits) {
        let base_v = v - v % log::FULL_EVERY;
        if !v.is_multiple_of(log::FULL_EVERY) {
            let cp = self.full_state(t, base_v, out).map(|base| self.checkpoint_from(t, v, &base, commit));
            if let Some(cp) = cp {
                out.files.push(log::write_json(log::checkpoint_path(t, v), &cp));
                return;
            }
        }
        let now = self.table_state(t);
        let cp = log::checkpoint(v, &now, Some(commit));
        out.files.push(log::write_json(log::checkpoint_path(t, v), &cp));
        out.full.push((t.to_string(), v, now));
    }

    /// The checkpoint of version `v` as its difference from the whole one
    /// `base` (the rows whose id or text differ from the base's, and the
    /// base's rows gone), without the table's whole state built: the rows,
    /// sorted as the base's are, are walked beside them, and only those that
    /// differ are copied. Building the whole state and looking
    /// each row up in the base cost every tenth write of a 100k-row table 100
    /// ms.
    fn checkpoint_from(&self, t: &str, v: u64, (b, full): &(u64, Cow<TableState>), commit: &str) -> log::Checkpoint {
        let (mut rows, mut removed) = (vec![], vec![]);
        let mut was = full.rows.iter().peekable();
        for (p, n) in self.logged_rows(t) {
            while let Some((gone, _)) = was.next_if(|(q, _)| q.as_str() < p) {
                removed.push(gone.clone());
            }
            let before = was.next_if(|(q, _)| q.as_str() == p).map(|(_, r)| r);
            let id = n.row().and_then(Row::id_str);
            if !before.is_some_and(|(fid, fh)| fid.as_deref() == id.as_deref() && *fh == n.hash) {
                rows.push((p.to_string(), id.as_deref().map(str::to_string), n.hash.to_string()));
            }
        }
        removed.extend(was.map(|(gone, _)| gone.clone()));
        log::Checkpoint {
            format: 1,
            version: v,
            base: Some(*b),
            definition: definition(&self.index.schema, t),
            rows,
            removed,
            commit: Some(log::commit_name(commit)),
        }
    }

    /// The whole checkpoint `v` of a table, when at hand: kept in memory, planned in
    /// this write, or read before. Otherwise the new checkpoint is written whole (a
    /// write never waits for the store, and a vacuum may have taken the old one).
    fn full_state<'a>(&'a self, table: &str, v: u64, planned: &'a Commits) -> Option<(u64, Cow<'a, TableState>)> {
        if let Some((_, _, s)) = planned.full.iter().find(|(t, fv, _)| t == table && *fv == v) {
            return Some((v, Cow::Borrowed(s)));
        }
        if let Some(s) = self.store.full(table, v) {
            return Some((v, Cow::Borrowed(s)));
        }
        let cp: log::Checkpoint = serde_json::from_str(self.store.text(&log::checkpoint_path(table, v))?).ok()?;
        if cp.base.is_some() || !cp.holds(self.store, table) {
            return None;
        }
        let mut state = TableState { definition: cp.definition, rows: BTreeMap::new() };
        state.rows.extend(cp.rows.into_iter().map(|(p, id, h)| (p, (id, h))));
        Some((v, Cow::Owned(state)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::{self, Memory};
    use crate::engine::Engine;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn a_checkpoint_made_from_its_base_is_the_difference_of_the_whole_states() {
        let mut host = Memory::new(BTreeMap::new());
        let mut e = Engine::open(vec![], vec![]);
        let mut call = |e: &mut Engine, op: &str, args: Value| {
            let out = driver::call(e, &mut host, op, &args, "test", 0);
            assert_eq!(out.status, crate::Status::Ok, "{op}: {}", out.answer);
            out.answer
        };
        let columns = json!({"n": {"type": "integer", "unique": true}, "v": {"type": "integer"}});
        call(&mut e, "create_table", json!({"table": "item", "name_from": "i{n}", "columns": columns}));
        let rows: Vec<Value> = (0..30).map(|n| json!({"n": n, "v": 0})).collect();
        call(&mut e, "insert_rows", json!({"table": "item", "rows": rows}));
        let t = "main.public.item";
        let base = (1, e.logs_for_tests().table_state(t));
        let path = |n: u32| format!("datanotes/main/public/item/i{n}.md");
        for n in [3, 8, 13] {
            call(&mut e, "update_row", json!({"table": "item", "path": path(n), "set": {"v": 1}}));
        }
        call(&mut e, "delete_rows", json!({"table": "item", "where": {"n": {"in": [5, 6]}}}));
        call(&mut e, "update_row", json!({"table": "item", "path": path(20), "set": {"n": 120}}));
        call(&mut e, "insert_rows", json!({"table": "item", "rows": [{"n": 40}, {"n": 41}]}));

        // The difference of the whole states, row by row.
        let now = e.logs_for_tests().table_state(t);
        let whole = log::Checkpoint {
            format: 1,
            version: 9,
            base: Some(1),
            definition: now.definition.clone(),
            rows: (now.rows.iter())
                .filter(|(p, r)| base.1.rows.get(*p) != Some(r))
                .map(|(p, (id, h))| (p.clone(), id.clone(), h.clone()))
                .collect(),
            removed: base.1.rows.keys().filter(|p| !now.rows.contains_key(*p)).cloned().collect(),
            commit: Some("9.json".into()),
        };
        let made = e.logs_for_tests().checkpoint_from(t, 9, &(base.0, Cow::Borrowed(&base.1)), "log/item/9.json");
        let text = |c: &log::Checkpoint| serde_json::to_string(c).unwrap();
        assert_eq!(text(&made), text(&whole));
        let changed: Vec<&str> = made.rows.iter().map(|(p, _, _)| p.as_str()).collect();
        let want = [path(120), path(13), path(3), path(40), path(41), path(8)];
        assert_eq!(changed, want.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(made.removed, [path(20), path(5), path(6)]);
        assert_eq!(made.base, Some(1));
    }
}
