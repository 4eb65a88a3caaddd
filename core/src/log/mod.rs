//! A table's transaction log, as Delta Lake keeps one: numbered commits of row
//! images (each row's note text, stored once by SHA-256 in `blobs/`) and the
//! table's definition when it changes, with checkpoints so that a read replays at
//! most nine commits.
//!
//! Layout under the store:
//! - `log/<table>/<version, 20 digits>.<device>.json`: a commit (`<version>.json`
//!   before devices); `order` says how commits of several devices are numbered.
//! - `log/<table>/<version>.checkpoint.json`: every 10 versions; the whole table
//!   every 100 versions (and at version 0), else the rows changed since that one.
//! - `blobs/<2 hex>/<sha256>`: note texts.
//!
//! This module holds the format; `commit` writes the log, `replay` reads a table
//! as of a version.

pub(crate) mod commit;
mod meet;
pub mod order;
pub mod replay;

use crate::edits::StoreWrite;
use crate::error::{fail, Failure, OpResult};
use crate::store::Store;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

pub const LOG: &str = "log/";
pub const BLOBS: &str = "blobs/";
pub const FULL_EVERY: u64 = 100;
pub const CHECKPOINT_EVERY: u64 = 10;

pub fn blob_path(hash: &str) -> String {
    format!("{BLOBS}{}/{hash}", &hash[..2.min(hash.len())])
}

pub fn dir(table: &str) -> String {
    format!("{LOG}{table}/")
}

/// The path of a commit this engine writes at version `v`, from `device`.
pub fn commit_path(table: &str, v: u64, device: Option<&str>) -> String {
    format!("{LOG}{table}/{}", order::file_name(v, device))
}

pub fn checkpoint_path(table: &str, v: u64) -> String {
    format!("{LOG}{table}/{v:020}.checkpoint.json")
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// A row's note as it is from this version on.
    Add { path: String, id: Option<String>, blob: String },
    /// A row's note leaves the table.
    Remove { path: String, id: Option<String> },
    /// The table's definition from this version on (None: the table is dropped).
    Metadata { definition: Option<Value> },
}

impl Action {
    /// The note an action wrote and the hash it gave it (None: removed); None
    /// for the table's definition.
    pub fn written(&self) -> Option<(&str, Option<&str>)> {
        match self {
            Action::Add { path, blob, .. } => Some((path, Some(blob))),
            Action::Remove { path, .. } => Some((path, None)),
            Action::Metadata { .. } => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Commit {
    pub format: u32,
    pub version: u64,
    pub timestamp: String,
    pub timestamp_ms: i64,
    pub operation: String,
    pub operation_metrics: Value,
    pub migration_id: Option<String>,
    #[serde(default)]
    pub batch: Option<String>,
    /// The device whose engine wrote it (None before devices).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    pub actions: Vec<Action>,
}

/// A row as the log holds it: its id and the hash of its text.
pub type Snapshot = BTreeMap<String, (Option<String>, String)>;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    pub format: u32,
    pub version: u64,
    /// The whole-table checkpoint this one adds to (None: this one is whole).
    pub base: Option<u64>,
    pub definition: Option<Value>,
    /// [path, id, blob]
    pub rows: Vec<(String, Option<String>, String)>,
    /// Rows of the base gone since.
    #[serde(default)]
    pub removed: Vec<String>,
    /// The commit file this checkpoint is the table as of: a commit of another
    /// device synced in before it renumbers the log, and the checkpoint no
    /// longer holds (None: written before devices, trusted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

impl Checkpoint {
    /// Whether the log still has this checkpoint's commit at its version.
    pub fn holds(&self, store: &Store, table: &str) -> bool {
        let Some(name) = &self.commit else { return true };
        commit_file(store, table, self.version).is_some_and(|p| p.rsplit('/').next() == Some(name.as_str()))
    }
}

/// A table as of a version.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TableState {
    pub definition: Option<Value>,
    pub rows: Snapshot,
}

impl TableState {
    /// The table with some of its rows only (a page, or one row: the rest go unread).
    pub fn with_rows<'a, I>(&self, rows: I) -> TableState
    where
        I: Iterator<Item = (&'a String, &'a (Option<String>, String))>,
    {
        TableState { definition: self.definition.clone(), rows: rows.map(|(p, r)| (p.clone(), r.clone())).collect() }
    }

    pub fn apply(&mut self, c: &Commit) {
        for a in &c.actions {
            match a {
                Action::Add { path, id, blob } => {
                    self.rows.insert(path.clone(), (id.clone(), blob.clone()));
                }
                Action::Remove { path, .. } => {
                    self.rows.remove(path);
                }
                Action::Metadata { definition } => self.definition = definition.clone(),
            }
        }
    }
}

/// The versions a table's log holds: commits (in their merged order) and
/// checkpoints, from the listing.
pub fn versions(store: &Store, table: &str) -> (Vec<u64>, Vec<u64>) {
    let commits = store.order(table).iter().map(|p| p.version).collect();
    let d = dir(table);
    let mut checkpoints: Vec<u64> = store
        .under(&d)
        .filter_map(|p| p[d.len()..].strip_suffix(".checkpoint.json").filter(|n| n.len() == 20)?.parse().ok())
        .collect();
    checkpoints.sort_unstable();
    (commits, checkpoints)
}

/// The table's last version. Called by every commit: the order is kept in the
/// store, not made again from a walk of the whole log.
pub fn latest(store: &Store, table: &str) -> Option<u64> {
    store.order(table).last().map(|p| p.version)
}

/// The path of the commit at version `v` of a table.
pub fn commit_file(store: &Store, table: &str, v: u64) -> Option<String> {
    let order = store.order(table);
    order.binary_search_by_key(&v, |p| p.version).ok().map(|i| order[i].path.clone())
}

/// Every table with a log, dropped ones included.
pub fn tables(store: &Store) -> Vec<String> {
    let mut out: Vec<String> =
        store.under(LOG).filter_map(|p| p[LOG.len()..].split_once('/').map(|(t, _)| t.to_string())).collect();
    out.dedup();
    out
}

/// A commit as read from the store, refused when it names what no engine
/// writes (trust.rs): the log is then damaged, as with a file that cannot be read.
fn parse_commit(store: &Store, path: &str, op: &str) -> OpResult<Commit> {
    let c: Commit = parse(store, path, op)?;
    match commit_problem(&c) {
        None => Ok(c),
        Some(why) => fail(Failure::refused(
            op,
            vec![format!("{path} cannot be believed: {why}")],
            "The table's log holds a commit no engine wrote (damaged, or forged and brought by a sync): delete that file from .datanotes/, or restore the store from a backup.",
        )),
    }
}

fn parse<T: for<'de> Deserialize<'de>>(store: &Store, path: &str, op: &str) -> OpResult<T> {
    let text = store.text(path).ok_or_else(|| Failure::internal(op, format!("{path} is missing from the store")))?;
    serde_json::from_str(text).map_err(|e| {
        Failure::refused(
            op,
            vec![format!("{path} cannot be read: {e}")],
            "The table's log is damaged: restore the store from a backup, or vacuum the table's history.",
        )
        .into()
    })
}

/// The commit at version `v` of a table, with that version (the one its file
/// claims may have been taken by another device's).
pub fn commit(store: &Store, op: &str, table: &str, v: u64) -> OpResult<Commit> {
    let path = commit_file(store, table, v)
        .ok_or_else(|| Failure::internal(op, format!("{table} has no commit at version {v}")))?;
    let mut c = parse_commit(store, &path, op)?;
    c.version = v;
    Ok(c)
}

/// The paths of the commits `from..=to` of a table.
pub fn commit_files(store: &Store, table: &str, from: u64, to: u64) -> Vec<String> {
    store.order(table).iter().filter(|p| (from..=to).contains(&p.version)).map(|p| p.path.clone()).collect()
}

/// Commits `from..=to` of a table, reading them first when needed.
pub fn commits(store: &Store, op: &str, table: &str, from: u64, to: u64) -> OpResult<Vec<Commit>> {
    let order = store.order(table);
    let wanted: Vec<&order::Placed> = order.iter().filter(|p| (from..=to).contains(&p.version)).collect();
    store.require(wanted.iter().map(|p| &p.path))?;
    wanted
        .iter()
        .map(|p| {
            let mut c = parse_commit(store, &p.path, op)?;
            c.version = p.version;
            Ok(c)
        })
        .collect()
}

/// The whole checkpoint to write at version `v` of a table now in `state`.
/// `commit`: the path of the commit at `v`. (One that adds to a whole one is
/// made from the engine's rows: `Engine::checkpoint_from`.)
pub fn checkpoint(v: u64, state: &TableState, commit: Option<&str>) -> Checkpoint {
    Checkpoint {
        format: 1,
        version: v,
        base: None,
        definition: state.definition.clone(),
        rows: state.rows.iter().map(|(p, (id, h))| (p.clone(), id.clone(), h.clone())).collect(),
        removed: vec![],
        commit: commit.map(commit_name),
    }
}

/// How a checkpoint names the commit it is the table as of: its file's name.
pub fn commit_name(path: &str) -> String {
    path.rsplit('/').next().unwrap_or(path).to_string()
}

pub fn write_json<T: Serialize>(path: String, v: &T) -> StoreWrite {
    let mut text = serde_json::to_string(v).unwrap_or_default();
    text.push('\n');
    StoreWrite::put(path, text)
}

/// The hand edits' pseudo-operation: its commits are EXTERNAL_EDIT.
pub const EXTERNAL_EDIT: &str = "external_edit";

/// The log's name for a hand edit's commits.
pub const EXTERNAL_EDIT_OPERATION: &str = "EXTERNAL_EDIT";

/// Why a commit read from a table's log cannot be believed, if it cannot: an
/// action names a path that is no note, or a blob by something else than a
/// hash (a blob's name becomes a path the host reads).
pub fn commit_problem(c: &Commit) -> Option<String> {
    use crate::log::Action;
    c.actions.iter().find_map(|a| match a {
        Action::Add { path, blob, .. } if !crate::trust::is_hash(blob) => {
            Some(format!("it names the blob {blob:?} for {path}, which is not a SHA-256"))
        }
        Action::Add { path, .. } | Action::Remove { path, .. } => {
            crate::trust::note_path_problem(path).map(|why| format!("it names a row that {why}"))
        }
        Action::Metadata { .. } => None,
    })
}
