//! The engine's side of the transaction log: the commits a write makes, and the
//! rows of a table as of a version.

use crate::edits::{hash, StoreWrite};
use crate::engine::Engine;
use crate::error::{Failure, OpResult};
use crate::journal::Change;
use crate::log::{self, Action, Commit, TableState};
use crate::schema::{Schema, TableDef};
use crate::store::Store;
use crate::tx::Tx;
use crate::vault::{parse_row, Row};
use serde_json::{json, Value};
use std::cell::OnceCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Rows of a table at a version: path -> (row, note text).
pub type RowsAt<'a> = BTreeMap<&'a str, (Row, &'a str)>;

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

fn definition(s: &Schema, t: &str) -> Option<Value> {
    s.tables.get(t).map(TableDef::to_json)
}

/// Writes a text to the blobs unless it is there already: its hash.
fn blob(store: &mut Store, out: &mut Commits, text: &str) -> String {
    let h = hash(text);
    keep_blob(store, out, &h, text);
    h
}

/// Writes a text to the blobs under its hash, unless it is there already.
fn keep_blob(store: &mut Store, out: &mut Commits, h: &str, text: &str) {
    let p = log::blob_path(h);
    if !store.exists(&p) {
        let w = StoreWrite::put(p, text.to_string());
        store.wrote(&w);
        out.blobs.push(w);
    }
}

impl Engine {
    /// The table as the vault holds it now.
    pub(crate) fn table_state(&self, table: &str) -> TableState {
        let mut rows = BTreeMap::new();
        for p in self.vault.table_rows(table).chain(self.vault.unreadable_rows(table)) {
            if let Some(n) = self.vault.get(p) {
                rows.insert(p.to_string(), (n.row().and_then(|r| r.id.clone()), n.hash.clone()));
            }
        }
        TableState { definition: definition(&self.schema, table), rows }
    }

    /// The commits of a write, one per table with history that it changed.
    /// `changes` are the write's (`changes_of`), computed once for the journal too.
    pub(crate) fn commits_of(
        &mut self,
        tx: &Tx,
        changes: &[Change],
        op: &str,
        migration_id: Option<&str>,
        now_ms: i64,
    ) -> OpResult<Commits> {
        // The schema before the write: borrowed, never copied (a write that changed
        // no definition reads the one in place).
        let old: &Schema = match &tx.schema_before {
            Some((s, _)) => s,
            None => &self.schema,
        };
        let mut out = Commits::default();
        let mut actions: BTreeMap<String, Vec<Action>> = BTreeMap::new();
        let mut befores: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
        let mut metrics: BTreeMap<String, [usize; 3]> = BTreeMap::new();
        for c in changes {
            let before_path = c.from.clone().unwrap_or_else(|| c.path.clone());
            let bt = c.before.as_ref().and_then(|_| old.table_of_path(&before_path)).map(str::to_string);
            let at = c.after.as_ref().and_then(|_| self.schema.table_of_path(&c.path)).map(str::to_string);
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
                let id = self.vault.row(&c.path).and_then(|r| r.id.clone());
                let blob = blob(&mut self.store, &mut out, text);
                actions.entry(t.clone()).or_default().push(Action::Add { path: c.path.clone(), id, blob });
                metrics.entry(t.clone()).or_default()[if bt.as_ref() == Some(t) { 1 } else { 0 }] += 1;
            }
        }
        let tables: BTreeSet<&String> = old.tables.keys().chain(self.schema.tables.keys()).collect();
        for t in tables {
            if old.tables.get(t) != self.schema.tables.get(t) {
                actions
                    .entry(t.clone())
                    .or_default()
                    .insert(0, Action::Metadata { definition: definition(&self.schema, t) });
            }
        }
        // A renamed table keeps its log: the files move to the new name, and the
        // rows leaving the old folder are removed in the log that carries on.
        let mut moved_latest = None;
        if let Some((from, to)) = &tx.renamed {
            if let Some(acts) = actions.remove(from) {
                let removes = acts.into_iter().filter(|a| matches!(a, Action::Remove { .. }));
                actions.entry(to.clone()).or_default().extend(removes);
            }
            let (src, dst) = (log::dir(from), log::dir(to));
            let files: Vec<String> = self.store.under(&src).cloned().collect();
            self.store.require(op, &files)?;
            for f in files {
                let text = self.store.text(&f).unwrap_or_default().to_string();
                out.files.push(StoreWrite::put(f.replacen(&src, &dst, 1), text));
                out.files.push(StoreWrite::delete(f));
            }
            moved_latest = log::latest(&self.store, from);
            if let Some(c) = self.full_cache.remove(from) {
                self.full_cache.insert(to.clone(), c);
            }
        }
        for (t, acts) in actions {
            let history = self.schema.tables.get(&t).or_else(|| old.tables.get(&t)).is_some_and(|d| d.history);
            if !history || acts.is_empty() {
                continue;
            }
            let created = !old.tables.contains_key(&t);
            let carried = tx.renamed.as_ref().filter(|(_, to)| *to == t).and(moved_latest);
            let mut v = match log::latest(&self.store, &t).or(carried) {
                Some(l) => l + 1,
                None if created => 0,
                None => {
                    // The table's log starts now: version 0 holds it as it was.
                    let mut before = self.table_state(&t);
                    before.definition = definition(old, &t);
                    for a in &acts {
                        if let Action::Add { path, .. } = a {
                            before.rows.remove(path);
                        }
                    }
                    for (p, text) in befores.get(&t).into_iter().flatten() {
                        let id = parse_row(&t, &old.tables[&t], text).ok().and_then(|r| r.id);
                        let h = blob(&mut self.store, &mut out, text);
                        before.rows.insert(p.clone(), (id, h));
                    }
                    // The rows the write left alone: their texts are the vault's.
                    let unchanged: Vec<(String, String)> = before
                        .rows
                        .iter()
                        .filter_map(|(p, (_, h))| {
                            self.vault.get(p).filter(|n| n.hash == *h).map(|n| (h.clone(), n.text.clone()))
                        })
                        .collect();
                    for (h, text) in unchanged {
                        keep_blob(&mut self.store, &mut out, &h, &text);
                    }
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
                        actions: adds,
                    };
                    out.files.push(log::write_json(log::commit_path(&t, 0), &c0));
                    out.files.push(log::write_json(log::checkpoint_path(&t, 0), &log::checkpoint(0, &before, None)));
                    out.full.push((t.clone(), 0, before));
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
                operation: log::operation(op).into(),
                operation_metrics: json!({"rows_inserted": ins, "rows_updated": upd, "rows_deleted": del}),
                migration_id: migration_id.map(str::to_string),
                batch: (op == "batch").then(|| migration_id.map(str::to_string)).flatten(),
                actions: acts,
            };
            out.files.push(log::write_json(log::commit_path(&t, v), &commit));
            if v % log::CHECKPOINT_EVERY == 0 {
                let now = self.table_state(&t);
                let base_v = v - v % log::FULL_EVERY;
                let base = if v % log::FULL_EVERY == 0 { None } else { self.full_state(&t, base_v, &out) };
                let cp = log::checkpoint(v, &now, base.as_ref());
                out.files.push(log::write_json(log::checkpoint_path(&t, v), &cp));
                if cp.base.is_none() {
                    out.full.push((t.clone(), v, now));
                }
            }
            out.answer.push(json!({"table": t, "version": v, "operation": commit.operation}));
        }
        Ok(out)
    }

    /// The whole checkpoint `v` of a table, when at hand: kept in memory, planned in
    /// this write, or read before. Otherwise the new checkpoint is written whole (a
    /// write never waits for the store, and a vacuum may have taken the old one).
    fn full_state(&self, table: &str, v: u64, planned: &Commits) -> Option<(u64, TableState)> {
        if let Some((_, _, s)) = planned.full.iter().find(|(t, fv, _)| t == table && *fv == v) {
            return Some((v, s.clone()));
        }
        if let Some((fv, s)) = self.full_cache.get(table).filter(|(fv, _)| *fv == v) {
            return Some((*fv, s.clone()));
        }
        let cp: log::Checkpoint = serde_json::from_str(self.store.text(&log::checkpoint_path(table, v))?).ok()?;
        if cp.base.is_some() {
            return None;
        }
        let mut state = TableState { definition: cp.definition, rows: BTreeMap::new() };
        state.rows.extend(cp.rows.into_iter().map(|(p, id, h)| (p, (id, h))));
        Some((v, state))
    }

    /// The texts of a table's rows as of a version: the vault's when unchanged
    /// since, else the blobs (read through the host first: Status::Need).
    pub(crate) fn texts_at<'a>(&'a self, op: &str, state: &'a TableState) -> OpResult<Vec<(&'a str, &'a str)>> {
        let mut out = Vec::with_capacity(state.rows.len());
        let mut need = vec![];
        for (p, (_, h)) in &state.rows {
            if let Some(n) = self.vault.get(p).filter(|n| &n.hash == h) {
                out.push((p.as_str(), n.text.as_str()));
                continue;
            }
            let blob = log::blob_path(h);
            match self.store.text(&blob) {
                Some(text) => out.push((p.as_str(), text)),
                None => need.push((p, h, blob)),
            }
        }
        self.store.require(op, need.iter().map(|(_, _, b)| b))?;
        // Asked for, and the host found nothing.
        if let Some((p, h, _)) = need.first() {
            return Err(Failure::refused(
                op,
                vec![format!("the text of {p} ({h}) is missing from the store")],
                "The store lost a blob: restore .datanotes/ from a backup.",
            ));
        }
        Ok(out)
    }

    /// The rows of a table as of a version, read from their texts.
    pub(crate) fn rows_at<'a>(
        &'a self,
        op: &str,
        table: &str,
        state: &'a TableState,
    ) -> OpResult<(TableDef, RowsAt<'a>)> {
        let def = match &state.definition {
            Some(d) => TableDef::from_json(d, table).map_err(|m| Failure::internal(op, m))?,
            None => {
                return Err(Failure::refused(
                    op,
                    vec![format!("{table} did not exist at that version")],
                    "describe_history lists its versions.",
                ))
            }
        };
        // In path order already: collected, the map is built in bulk.
        let texts = self.texts_at(op, state)?;
        let out = texts.into_iter().filter_map(|(p, t)| Some((p, (parse_row(table, &def, t).ok()?, t)))).collect();
        Ok((def, out))
    }

    /// The version of a table at a moment: its last commit at or before it.
    pub(crate) fn version_at(&self, op: &str, table: &str, ms: i64) -> OpResult<Option<u64>> {
        let (commits, _) = log::versions(&self.store, table);
        let (Some(first), Some(last)) = (commits.first(), commits.last()) else { return Ok(None) };
        let all = log::commits(&self.store, op, table, *first, *last)?;
        Ok(all.iter().filter(|c| c.timestamp_ms <= ms).map(|c| c.version).max())
    }
}

/// Rows of a table as of a version, seen by the filter language: links from
/// them lead to the rows of that version when they are of the same table, else
/// to the vault as it is.
pub struct AtVersion<'a> {
    ctx: crate::validate::Ctx<'a>,
    rows: &'a RowsAt<'a>,
    /// The rows by the stem a link names them with: made when a link is first followed.
    stems: OnceCell<HashMap<String, &'a str>>,
}

impl<'a> AtVersion<'a> {
    pub fn new(ctx: crate::validate::Ctx<'a>, rows: &'a RowsAt<'a>) -> Self {
        AtVersion { ctx, rows, stems: OnceCell::new() }
    }
}

impl<'a> crate::filter::Lookup for AtVersion<'a> {
    type Row = &'a str;

    fn get(&self, row: &'a str, path: &[String]) -> Option<Value> {
        let Some((r, _)) = self.rows.get(row) else {
            return self.ctx.get(row, path);
        };
        let v = crate::validate::column(r.id.as_deref(), row, &r.values, path.first()?)?;
        // A link leads to the row of this version when it names one, else to the vault.
        crate::validate::walk(v, &path[1..], |s, rest| {
            let stem = crate::links::target_stem(crate::filter::link_target(s));
            let stems = self.stems.get_or_init(|| self.rows.keys().map(|p| (crate::links::path_stem(p), *p)).collect());
            let target = stems.get(&stem).copied();
            target.or_else(|| self.ctx.follow(s, row)).and_then(|t| self.get(t, rest))
        })
    }
}
