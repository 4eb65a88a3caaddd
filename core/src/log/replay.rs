//! Reading a table as of a version: its log replayed from the checkpoint at or
//! before it, and its rows read from their texts.

use crate::error::{fail, Failure, OpResult};
use crate::index::Index;
use crate::log::{self, checkpoint_path, commit_files, commits, parse, versions, Checkpoint, TableState, FULL_EVERY};
use crate::schema::TableDef;
use crate::store::Store;
use crate::vault::{parse_row, Row};
use serde_json::Value;
use std::cell::OnceCell;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

/// Rows of a table at a version: path -> (row, note text).
pub type RowsAt<'a> = BTreeMap<&'a str, (Row, &'a str)>;

/// The table as of version `v`, replayed once while the logs stay as they are.
pub fn state_at(store: &Store, op: &str, table: &str, v: u64) -> OpResult<Arc<TableState>> {
    check_version(store, op, table, v)?;
    if let Some(s) = store.state(table, v) {
        return Ok(s);
    }
    let state = Arc::new(replay(store, op, table, v, &|_| true)?);
    store.keep_state(table, v, state.clone());
    Ok(state)
}

/// The rows among `paths` of a table as of version `v` (the rest left out as the
/// checkpoints are read): what a read that looks up a few rows needs.
pub fn rows_named_at(store: &Store, op: &str, table: &str, v: u64, paths: &HashSet<&str>) -> OpResult<TableState> {
    check_version(store, op, table, v)?;
    replay(store, op, table, v, &|p| paths.contains(p))
}

/// Refuses a version the log does not hold.
fn check_version(store: &Store, op: &str, table: &str, v: u64) -> OpResult<()> {
    let (commits_listed, _) = versions(store, table);
    let Some(first) = commits_listed.first().copied() else {
        return fail(Failure::refused(
            op,
            vec![format!("{table} has no history")],
            "The table keeps no transaction log (history off, or nothing written since it was turned on).",
        ));
    };
    let last = commits_listed.last().copied().unwrap_or(0);
    if v > last {
        return fail(Failure::refused(
            op,
            vec![format!("{table} has no version {v}: its latest is {last}")],
            "describe_history lists the versions.",
        ));
    }
    if v < first {
        return fail(Failure::refused(
            op,
            vec![format!("version {v} of {table} was vacuumed: the oldest version kept is {first}")],
            "Read a version from the oldest kept on (describe_history lists them).",
        ));
    }
    Ok(())
}

/// The table as of version `v` (the rows for which `keep` holds): from the
/// newest checkpoint at or before it that still holds (log/order.rs: a commit
/// synced in from another device may renumber the log under it), then the
/// commits after that.
fn replay(store: &Store, op: &str, table: &str, v: u64, keep: &dyn Fn(&str) -> bool) -> OpResult<TableState> {
    let (commits_listed, checkpoints) = versions(store, table);
    let first = commits_listed.first().copied().unwrap_or(0);
    for c in checkpoints.iter().rev().copied().filter(|c| (first..=v).contains(c)) {
        // The checkpoints and the commits after them, asked for in one round.
        let mut need = commit_files(store, table, c + 1, v);
        need.push(checkpoint_path(table, c));
        let base = c - c % FULL_EVERY;
        if base != c && checkpoints.contains(&base) {
            need.push(checkpoint_path(table, base));
        }
        store.require(&need)?;
        let cpt: Checkpoint = parse(store, &checkpoint_path(table, c), op)?;
        let base_cpt = cpt.base.map(|b| parse::<Checkpoint>(store, &checkpoint_path(table, b), op)).transpose()?;
        // One that does not hold, or names what no engine writes (a forged or
        // damaged file), is passed over: the commits say the same, checked.
        let sound = |k: &Checkpoint| {
            k.holds(store, table)
                && k.rows
                    .iter()
                    .all(|(p, _, b)| crate::trust::is_hash(b) && crate::trust::note_path_problem(p).is_none())
        };
        if !sound(&cpt) || base_cpt.as_ref().is_some_and(|b| !sound(b)) {
            continue;
        }
        let mut state = TableState::default();
        if let Some(b) = base_cpt {
            load(&mut state, b, keep);
        }
        load(&mut state, cpt, keep);
        for commit in commits(store, op, table, c + 1, v)? {
            state.apply(&commit);
        }
        return Ok(state);
    }
    let mut state = TableState::default();
    for commit in commits(store, op, table, first, v)? {
        state.apply(&commit);
    }
    Ok(state)
}

fn load(state: &mut TableState, cp: Checkpoint, keep: &dyn Fn(&str) -> bool) {
    state.definition = cp.definition;
    for r in &cp.removed {
        state.rows.remove(r);
    }
    state.rows.extend(cp.rows.into_iter().filter(|(p, _, _)| keep(p)).map(|(p, id, blob)| (p, (id, blob))));
}

/// The tables as of their past versions: the log's files in the store, and
/// the index, whose notes hold the texts still unchanged.
#[derive(Clone, Copy)]
pub struct Past<'a> {
    pub index: &'a Index,
    pub store: &'a Store,
}

impl<'a> Past<'a> {
    /// The texts of a table's rows as of a version: the vault's when unchanged
    /// since, else the blobs (read through the host first: Step::Need).
    pub(crate) fn texts_at(&self, op: &str, state: &'a TableState) -> OpResult<Vec<(&'a str, &'a str)>> {
        let mut out = Vec::with_capacity(state.rows.len());
        let mut need = vec![];
        for (p, (_, h)) in &state.rows {
            // A note opened from the cache and unread is read from its blob.
            if let Some(t) = self.index.vault.get(p).filter(|n| &n.hash == h).and_then(|n| n.text.as_deref()) {
                out.push((p.as_str(), t));
                continue;
            }
            let blob = log::blob_path(h);
            match self.store.text(&blob) {
                Some(text) => out.push((p.as_str(), text)),
                None => need.push((p, h, blob)),
            }
        }
        self.store.require(need.iter().map(|(_, _, b)| b))?;
        // Asked for, and the host found nothing.
        if let Some((p, h, _)) = need.first() {
            return fail(Failure::refused(
                op,
                vec![format!("the text of {p} ({h}) is missing from the store")],
                "The store lost a blob: restore .datanotes/ from a backup.",
            ));
        }
        Ok(out)
    }

    /// The rows of a table as of a version, read from their texts.
    pub(crate) fn rows_at(&self, op: &str, table: &str, state: &'a TableState) -> OpResult<(TableDef, RowsAt<'a>)> {
        let def = match &state.definition {
            Some(d) => TableDef::from_json(d, table).map_err(|m| Failure::internal(op, m))?,
            None => {
                return fail(Failure::refused(
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
        let (commits, _) = log::versions(self.store, table);
        let (Some(first), Some(last)) = (commits.first(), commits.last()) else { return Ok(None) };
        let all = log::commits(self.store, op, table, *first, *last)?;
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
        let v = crate::validate::column(r.id_str().as_deref(), row, |c| r.values.pick(c), path.first()?)?;
        // A link leads to the row of this version when it names one, else to the vault.
        crate::validate::walk(v, &path[1..], |s, rest| {
            let stem = crate::links::target_stem(crate::filter::link_target(s));
            let stems = self.stems.get_or_init(|| self.rows.keys().map(|p| (crate::links::path_stem(p), *p)).collect());
            let target = stems.get(&stem).copied();
            target.or_else(|| self.ctx.follow(s, row)).and_then(|t| self.get(t, rest))
        })
    }
}
