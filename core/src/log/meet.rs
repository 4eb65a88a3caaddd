//! A log that another device's commits reached by sync, brought to meet the
//! vault. A sync tool keeps the newest note, while the merged log (order.rs)
//! ends with the commit that sorts last; where the two differ, the vault is the
//! truth, and the difference goes into the log as an EXTERNAL_EDIT, so that the
//! latest version of every table is its notes, as on one device.

use crate::edits::StoreWrite;
use crate::error::OpResult;
use crate::log::commit::{keep_blob, Logs};
use crate::log::{self, order, Action, Commit, TableState};
use serde_json::json;
use std::collections::HashMap;
use std::sync::Arc;

/// How many of a table's newest commits are searched for the other devices'
/// writes a sync brought: one that sorts before this device's own later commit
/// is found too.
const RECENT: u64 = 64;

impl Logs<'_> {
    /// The tables with history whose log holds a commit of another device: those
    /// a sync may have left apart from the vault.
    pub(crate) fn synced_tables(&self) -> Vec<String> {
        let Some(me) = self.store.device() else { return vec![] };
        let theirs = |p: &str| {
            let name = p.rsplit('/').next().unwrap_or("");
            order::claimed(name).is_some_and(|(_, d)| !d.is_empty() && d != me)
        };
        let logged = self.index.schema.tables.iter().filter(|(_, d)| d.history).map(|(t, _)| t);
        logged.filter(|t| self.store.order(t).iter().any(|p| theirs(&p.path))).cloned().collect()
    }

    /// Each of `tables` as its log ends, its newest commits read too (the host
    /// is asked for what is missing: Step::Need, after every table was tried).
    pub(crate) fn read_latest(&self, op: &str, tables: &[String]) -> OpResult<HashMap<String, Arc<TableState>>> {
        let mut first_err = None;
        let mut out = HashMap::new();
        for t in tables {
            if let Some(v) = log::latest(self.store, t) {
                let newest = log::commit_files(self.store, t, v.saturating_sub(RECENT - 1), v);
                match self.store.require(&newest).and(log::replay::state_at(self.store, op, t, v)) {
                    Ok(state) => {
                        out.insert(t.clone(), state);
                    }
                    Err(f) => {
                        first_err.get_or_insert(f);
                    }
                }
            }
        }
        first_err.map_or(Ok(out), Err)
    }

    /// What the newest commits of other devices made of each note in `tables`:
    /// path -> the hashes it was given (None: removed). Read by `read_latest`.
    pub(crate) fn synced_writes<'a>(
        &self,
        tables: impl Iterator<Item = &'a String>,
    ) -> HashMap<String, Vec<Option<String>>> {
        let mut out: HashMap<String, Vec<Option<String>>> = HashMap::new();
        let me = self.store.device().unwrap_or("");
        for t in tables {
            let Some(v) = log::latest(self.store, t) else { continue };
            let Ok(commits) = log::commits(self.store, "reconcile", t, v.saturating_sub(RECENT - 1), v) else {
                continue;
            };
            for c in commits.iter().filter(|c| c.device.as_deref().is_some_and(|d| d != me)) {
                for (path, hash) in c.actions.iter().filter_map(Action::written) {
                    out.entry(path.to_string()).or_default().push(hash.map(str::to_string));
                }
            }
        }
        out
    }

    /// The commits that make each table's latest version its notes.
    pub(crate) fn meet_vault(&mut self, tables: &[String], now_ms: i64) -> OpResult<Vec<StoreWrite>> {
        let mut out = vec![];
        for t in tables {
            let Some(v) = log::latest(self.store, t) else { continue };
            let logged = log::replay::state_at(self.store, "reconcile", t, v)?;
            let actions = differences(&logged, &self.table_state(t));
            if actions.is_empty() {
                out.extend(self.checkpoint_latest(t, v));
                continue;
            }
            for a in &actions {
                if let Action::Add { path, blob, .. } = a {
                    // Texts are read before a meet (`texts_wanted`); an unread
                    // one is never stored as an empty blob.
                    if let Some(text) = self.index.vault.get(path).and_then(|n| n.text.as_deref()) {
                        keep_blob(self.store, &mut out, blob, text);
                    }
                }
            }
            let updated = actions.iter().filter(|a| matches!(a, Action::Add { .. })).count();
            let removed = actions.iter().filter(|a| matches!(a, Action::Remove { .. })).count();
            let commit = Commit {
                format: 1,
                version: v + 1,
                timestamp: crate::time::iso(now_ms),
                timestamp_ms: now_ms,
                operation: log::EXTERNAL_EDIT_OPERATION.into(),
                operation_metrics: json!({"rows_inserted": 0, "rows_updated": updated, "rows_deleted": removed, "synced": true}),
                migration_id: None,
                batch: None,
                device: self.store.device().map(str::to_string),
                actions,
            };
            let w = log::write_json(log::commit_path(t, v + 1, self.store.device()), &commit);
            self.store.wrote(&w);
            out.push(w);
            out.extend(self.checkpoint_latest(t, v + 1));
        }
        Ok(out)
    }

    /// A whole checkpoint at version `v` (the vault's notes, as the log now has
    /// them) when the newest one that holds is `CHECKPOINT_EVERY` or more behind:
    /// commits synced in renumber the log, and a read would replay ever more.
    fn checkpoint_latest(&mut self, t: &str, v: u64) -> Option<StoreWrite> {
        let (_, checkpoints) = log::versions(self.store, t);
        let newest = checkpoints.iter().rev().find(|c| **c <= v).and_then(|c| {
            let cp: log::Checkpoint = serde_json::from_str(self.store.text(&log::checkpoint_path(t, *c))?).ok()?;
            (cp.base.is_none() && cp.holds(self.store, t)).then_some(*c)
        });
        if newest.is_some_and(|c| v - c < log::CHECKPOINT_EVERY) {
            return None;
        }
        let commit = log::commit_file(self.store, t, v);
        let w =
            log::write_json(log::checkpoint_path(t, v), &log::checkpoint(v, &self.table_state(t), commit.as_deref()));
        self.store.wrote(&w);
        Some(w)
    }
}

/// What takes a table from `logged` to `now`: its definition, the rows changed
/// or added, the rows gone.
fn differences(logged: &TableState, now: &TableState) -> Vec<Action> {
    let mut out = vec![];
    if logged.definition != now.definition {
        out.push(Action::Metadata { definition: now.definition.clone() });
    }
    for (p, (id, h)) in &now.rows {
        if logged.rows.get(p).is_none_or(|(_, lh)| lh != h) {
            out.push(Action::Add { path: p.clone(), id: id.clone(), blob: h.clone() });
        }
    }
    for (p, (id, _)) in &logged.rows {
        if !now.rows.contains_key(p) {
            out.push(Action::Remove { path: p.clone(), id: id.clone() });
        }
    }
    out
}
