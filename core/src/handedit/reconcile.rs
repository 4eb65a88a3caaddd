//! Hand edits made while no engine ran: the vault as it is against what the store
//! last knew (`known.jsonl`), the differences replayed as a round of hand edits.

use super::known::{self, Known};
use super::{Hands, VaultEvent};
use crate::edits::StoreWrite;
use crate::feed::{Event, EventKind, Source};
use crate::log::TableState;
use crate::step::{Outcome, Step};
use crate::texthash::TextHash;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// Tables whose log has another device's commits, as each log ends.
type Latest = HashMap<String, Arc<TableState>>;

/// How the vault differs from what the store last knew, each list sorted by path.
struct Drift {
    /// Notes whose text changed, with the hash the store knew.
    modified: Vec<(String, TextHash)>,
    created: Vec<String>,
    /// Notes gone, with the hash the store knew.
    removed: Vec<(String, TextHash)>,
    /// (from, to): found among the removed and created notes by their text.
    renames: Vec<(String, String)>,
}

impl Hands<'_> {
    /// Compares the vault with what the store last knew (`known.jsonl`) and reports
    /// every difference as hand edits made while no engine ran: the old texts come
    /// from the log's blobs when it has them (the host reads them: Step::Need),
    /// the round runs at once. The first time, it only records the vault.
    pub(crate) fn reconcile_vault(&mut self, now_ms: i64) -> Step {
        let mut out = Outcome::done(Value::Null);
        // Everything is read before anything changes: a Step::Need runs this again.
        let synced = self.logs().synced_tables();
        // Asked only then: the step names every unread row (100k paths copied).
        if let Some(step) = (!synced.is_empty()).then(|| self.hand.texts_wanted(&self.index.vault)).flatten() {
            return step;
        }
        let read = self.logs().read_latest("reconcile", &synced);
        let drift = self.known.as_ref().and_then(|k| self.drift_from(k));
        if let Some(step) = self.texts_to_commit(drift.as_ref()) {
            return step;
        }
        let olds = drift.iter().flat_map(|d| d.modified.iter().chain(d.removed.iter()));
        let need: Vec<String> = olds.map(|(_, h)| crate::log::blob_path(&h.hex())).collect();
        let blobs = self.store.require(&need);
        let wanted = self.store.take_wanted();
        if !wanted.is_empty() {
            return Step::Need(wanted);
        }
        let latest = match read.and_then(|l| blobs.map(|()| l)) {
            Ok(l) => l,
            Err(f) => {
                out.log.push(format!("WARN the logs synced from other devices cannot be read: {}", f.text()));
                HashMap::new()
            }
        };
        let drift = drift.and_then(|d| self.explained_by_sync(&latest, d, &mut out));
        match &self.known {
            None => out.store.push(self.snapshot_known()),
            Some(known) => {
                // Read from the store as it was before devices: this device's own
                // file starts whole, once what changed since is recorded.
                let whole = !self.store.exists(&known.path);
                match drift {
                    Some(drift) => self.hand_edits_while_closed(drift, whole, now_ms, &mut out),
                    None if whole => out.store.push(self.snapshot_known()),
                    None => {}
                }
            }
        }
        out.store.extend(self.begin_logs(now_ms));
        let synced: Vec<String> = latest.into_keys().collect();
        match self.logs().meet_vault(&synced, now_ms) {
            Ok(w) => out.store.extend(w),
            Err(f) => out.log.push(format!("WARN the logs synced from other devices cannot be met: {}", f.text())),
        }
        Step::Done(out)
    }

    /// Edits found are committed to the logs their tables have begun, which keep
    /// a blob of every row they leave alone: the unread texts of those rows whose
    /// blob the store lacks (a write cut short before its blobs) are read first;
    /// so are those of the tables whose log begins now (`begin_logs`).
    fn texts_to_commit(&self, d: Option<&Drift>) -> Option<Step> {
        let schema = &self.index.schema;
        let unlogged = crate::log::commit::unlogged_history(self.index, self.store);
        let none: &[(String, TextHash)] = &[];
        let (modified, removed) = d.map_or((none, none), |d| (&d.modified[..], &d.removed[..]));
        let paths = modified.iter().chain(removed).map(|(p, _)| p);
        let paths =
            paths.chain(d.into_iter().flat_map(|d| d.created.iter().chain(d.renames.iter().flat_map(|(a, b)| [a, b]))));
        // A hand edit is committed only to a log that has begun.
        let logged =
            |t: &&str| schema.tables.get(*t).is_some_and(|d| d.history) && crate::log::latest(self.store, t).is_some();
        let mut tables: std::collections::HashSet<&str> =
            paths.filter_map(|p| schema.table_of_path(p)).filter(logged).collect();
        tables.extend(unlogged.iter().map(String::as_str));
        let vault = &self.index.vault;
        // A modified note the cache vouched for (a change that kept its size and
        // mtime) is compared by its text.
        let modified =
            modified.iter().map(|(p, _)| p.as_str()).filter(|p| vault.get(p).is_some_and(|n| n.text.is_none()));
        // A note's table as its state says (the one its folder says, as read
        // or as the cache checked): asking the schema cost 30 ms at 100k rows.
        let of_tables = |n: &crate::vault::Note| match &n.state {
            crate::vault::State::Row(r) => tables.contains(&*r.table),
            crate::vault::State::Unreadable { table, .. } => tables.contains(table.as_str()),
            crate::vault::State::Plain => false,
        };
        // A set: a modified note of such a table is named once.
        let unread: std::collections::BTreeSet<String> = vault
            .notes
            .iter()
            .filter(|(_, n)| n.text.is_none() && !tables.is_empty() && of_tables(n))
            .filter(|(_, n)| !self.store.exists(&crate::log::blob_path(&n.hash.hex())))
            .map(|(p, _)| &**p)
            .chain(modified)
            .map(str::to_string)
            .collect();
        (!unread.is_empty()).then(|| Step::ReadNotes(unread.into_iter().collect()))
    }

    /// The differences replayed as one round of hand edits, and recorded.
    fn hand_edits_while_closed(&mut self, mut drift: Drift, whole: bool, now_ms: i64, out: &mut Outcome) {
        self.pair_renames(&mut drift);
        let unknown_before = self.replay(&drift);
        let lost = self.drop_lost();
        if !self.hand.queue.is_empty() {
            self.hand.first_ms.get_or_insert(now_ms);
            self.hand_round(now_ms, out);
        }
        self.report_unseen(&unknown_before, &lost, now_ms, out);
        self.record_unseen(&unknown_before, &lost, whole, out);
    }

    /// The drift without the changes another device's commits made (synced in
    /// with its log: that device's events tell of them, in the merged feed),
    /// which are recorded as known; None when nothing else is left. A note whose
    /// text the sync tool took from a write that the merged log puts before
    /// another is found among the other devices' newest commits; one the log
    /// ends with, however old its commit.
    fn explained_by_sync(&mut self, latest: &Latest, mut drift: Drift, out: &mut Outcome) -> Option<Drift> {
        let writes = self.logs().synced_writes(latest.keys());
        // And each table as its log ends: a note the log has as it is was written
        // by an engine, however long ago.
        let logged = |p: &str| {
            let state = latest.get(self.index.schema.table_of_path(p)?)?;
            Some(state.rows.get(p).map(|(_, h)| h.clone()))
        };
        let now = |p: &str| self.index.vault.get(p).map(|n| n.hash);
        let mut explained: Vec<(String, Option<TextHash>)> = vec![];
        let mut keep = |p: &String| {
            // The logs name hashes in hex.
            let hex = now(p).map(|h| h.to_string());
            let synced_in = writes.get(p).is_some_and(|hs| hs.contains(&hex)) || logged(p) == Some(hex);
            if synced_in {
                explained.push((p.clone(), now(p)));
            }
            !synced_in
        };
        drift.modified.retain(|(p, _)| keep(p));
        drift.created.retain(|p| keep(p));
        drift.removed.retain(|(p, _)| keep(p));
        if let Some(k) = self.known.as_mut() {
            out.store.extend(k.record(explained.iter().map(|(p, h)| (p.as_str(), *h))));
        }
        let empty = drift.modified.is_empty() && drift.created.is_empty() && drift.removed.is_empty();
        (!empty).then_some(drift)
    }

    /// `known.jsonl` anew, from the vault as it is.
    fn snapshot_known(&mut self) -> StoreWrite {
        let path = known::path(self.store.device());
        let (k, w) = Known::snapshot(path, self.index.vault.notes.iter().map(|(p, n)| (&**p, n.hash)));
        *self.known = Some(k);
        w
    }

    /// How the vault differs from `known`; None when it does not.
    fn drift_from(&self, known: &Known) -> Option<Drift> {
        let mut modified = vec![];
        let mut created = vec![];
        let mut found = 0;
        for (p, n) in &self.index.vault.notes {
            match known.hashes.get(&**p) {
                Some(h) if *h == n.hash => found += 1,
                Some(h) => {
                    found += 1;
                    modified.push((p.to_string(), *h));
                }
                None => created.push(p.to_string()),
            }
        }
        // Each known path found in the vault once: when all were, none is gone,
        // and the second pass (100k look-ups) is spared.
        let mut removed: Vec<(String, TextHash)> = if found == known.hashes.len() {
            vec![]
        } else {
            (known.hashes.iter())
                .filter(|(p, _)| self.index.vault.get(p).is_none())
                .map(|(p, h)| (p.clone(), *h))
                .collect()
        };
        if modified.is_empty() && created.is_empty() && removed.is_empty() {
            return None;
        }
        modified.sort();
        created.sort();
        removed.sort();
        Some(Drift { modified, created, removed, renames: vec![] })
    }

    /// Renames: a note gone from one path and found, the same text, at another.
    fn pair_renames(&self, drift: &mut Drift) {
        let Drift { created, removed, renames, .. } = drift;
        created.retain(|c| {
            let h = &self.index.vault.notes[c.as_str()].hash;
            match removed.iter().position(|(_, rh)| rh == h) {
                Some(i) => {
                    renames.push((removed.remove(i).0, c.clone()));
                    false
                }
                None => true,
            }
        });
    }

    /// Puts the index back as the store knew it, then queues the vault as it is.
    /// Returns the modified notes whose old text the store lacks.
    fn replay(&mut self, drift: &Drift) -> Vec<String> {
        let mut unknown_before = vec![];
        for (p, h) in &drift.modified {
            let text = self.index.vault.get(p).map(|n| (n.text().to_string(), n.mtime));
            match (self.store.text(&crate::log::blob_path(&h.hex())).map(str::to_string), text) {
                (Some(old), Some((now, mtime))) => {
                    self.index.vault.insert(&self.index.schema, p.clone(), old, mtime);
                    self.hand.queue.push(VaultEvent::Modified { path: p.clone(), text: now, mtime });
                }
                _ => unknown_before.push(p.clone()),
            }
        }
        for (p, h) in &drift.removed {
            if let Some(old) = self.store.text(&crate::log::blob_path(&h.hex())).map(str::to_string) {
                self.index.vault.insert(&self.index.schema, p.clone(), old, 0);
            }
            self.hand.queue.push(VaultEvent::Removed { path: p.clone() });
        }
        for c in &drift.created {
            if let Some(n) = self.index.vault.remove(c) {
                let (text, mtime) = n.into_text();
                self.hand.queue.push(VaultEvent::Created { path: c.clone(), text, mtime });
            }
        }
        for (from, to) in &drift.renames {
            if let Some(n) = self.index.vault.remove(to) {
                let (text, mtime) = n.into_text();
                self.index.vault.insert(&self.index.schema, from.clone(), text.clone(), mtime);
                self.hand.queue.push(VaultEvent::Renamed { from: from.clone(), to: to.clone(), text, mtime });
            }
        }
        unknown_before
    }

    /// Removed notes whose text the store never had: reported, without values.
    /// Takes them out of the queue and returns them.
    fn drop_lost(&mut self) -> Vec<String> {
        let mut lost = vec![];
        self.hand.queue.retain(|e| match e {
            VaultEvent::Removed { path } if self.index.vault.get(path).is_none() => {
                lost.push(path.clone());
                false
            }
            _ => true,
        });
        lost
    }

    /// The changes that could not be replayed (the store lacks the old text): in the
    /// feed as the notes are now.
    fn report_unseen(&mut self, unknown_before: &[String], lost: &[String], now_ms: i64, out: &mut Outcome) {
        let unseen: Vec<(&String, EventKind)> = unknown_before
            .iter()
            .map(|p| (p, EventKind::Update))
            .chain(lost.iter().map(|p| (p, EventKind::Delete)))
            .collect();
        for (p, kind) in unseen {
            let table = self.index.schema.table_of_path(p).map(str::to_string);
            let row = self.index.vault.row(p);
            let mut e = Event {
                at: crate::time::iso(now_ms),
                at_ms: now_ms,
                table,
                kind,
                source: Source::External,
                path: Some(p.clone()),
                row_id: row.and_then(|r| r.id.as_ref().map(ToString::to_string)),
                values: row.map(|r| r.values.to_map()),
                ..Event::default()
            };
            if e.table.is_some() {
                self.unseen_violations(p, &mut e);
            }
            out.store.extend(self.feed.push(e));
        }
    }

    /// Those changes recorded in `known.jsonl`, written anew when its lines far
    /// outnumber the notes, or when `whole` (the device's file is new).
    fn record_unseen(&mut self, unknown_before: &[String], lost: &[String], whole: bool, out: &mut Outcome) {
        let changes: Vec<(String, Option<TextHash>)> = unknown_before
            .iter()
            .chain(lost.iter())
            .map(|p| (p.clone(), self.index.vault.get(p).map(|n| n.hash)))
            .collect();
        if let Some(k) = self.known.as_mut() {
            out.store.extend(k.record(changes.iter().map(|(p, h)| (p.as_str(), *h))));
            if whole || k.lines > 2 * self.index.vault.notes.len() + 1000 {
                let path = k.path.clone();
                let w = self.snapshot_known();
                out.store.retain(|s| s.path != path);
                out.store.push(w);
            }
        }
    }
}
