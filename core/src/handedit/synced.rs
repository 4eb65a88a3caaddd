//! Store files another device's engine wrote, brought by a sync tool while this
//! engine runs (the host watches `.datanotes/` and hands them over). Its
//! commits, journal entries, feed events, settings and webhooks are taken in at
//! once; the notes its commits wrote, when they arrive, are that device's writes
//! (its feed events tell of them), not hand edits; and once the sync has been
//! quiet a while, each table it brought commits to is met with its notes, as at
//! open (log/meet.rs).

use super::{Hands, VaultEvent};
use crate::log::{order, Action, Commit};
use crate::step::{Outcome, Step};
use crate::texthash::TextHash;
use std::collections::BTreeSet;

/// Quiet after the last synced file (a store file or a note) before the tables
/// its commits touched are met with their notes: a sync tool brings a note and
/// its commit in either order, seconds apart.
pub const SETTLE_MS: i64 = 5000;
/// Paths whose synced writes are remembered at most: they are dropped as the
/// notes arrive; an engine that runs for weeks forgets the ones that never did.
const REMEMBERED: usize = 10_000;

/// What a sync brought while the engine runs, not yet met with the notes.
#[derive(Debug, Default)]
pub(crate) struct Synced {
    /// Note path -> the hashes other devices' commits gave it (None: removed).
    writes: std::collections::HashMap<String, Vec<Option<String>>>,
    /// Tables with commits synced in, met with their notes at `meet_at`.
    tables: BTreeSet<String>,
    pub(crate) meet_at: Option<i64>,
}

/// Whether a host watching `.datanotes/` hands the engine a store file that
/// changed (with its text): a commit, journal entry, feed segment, settings or
/// webhooks file of another device than `me`. This device's own files, the
/// blobs (listed by the commits that name them), the derived files and the
/// machine's own are left.
pub fn synced_file(path: &str, me: &str) -> bool {
    let theirs = |d: &str| !d.is_empty() && d != me && order::is_device(d);
    if let Some((_, name)) = path.strip_prefix(crate::log::LOG).and_then(|r| r.split_once('/')) {
        return order::claimed(name).is_some_and(|(_, d)| theirs(d));
    }
    if let Some(id) = path.strip_prefix(crate::journal::DIR).and_then(|n| n.strip_suffix(".json")) {
        return crate::trust::entry_device(id).is_some_and(theirs) && !id.contains(".sync-conflict-");
    }
    let device = crate::feed::segment_device(path)
        .or_else(|| crate::settings::device_of(path))
        .or_else(|| crate::feed::webhook::device_of(path));
    device.is_some_and(theirs)
}

/// What kind of store file a path is, for a file that arrives.
enum Arrived<'a> {
    /// A commit of another device, of this table.
    Commit(&'a str),
    /// A file read on demand (a blob, a checkpoint).
    Listed,
    Journal,
    Feed,
    Settings,
    Webhooks,
    Other,
}

fn kind<'a>(path: &'a str, me: &str) -> Arrived<'a> {
    if path.starts_with(crate::log::BLOBS) {
        return Arrived::Listed;
    }
    if let Some((table, name)) = path.strip_prefix(crate::log::LOG).and_then(|r| r.split_once('/')) {
        return match order::claimed(name) {
            Some((_, d)) if !d.is_empty() && d != me => Arrived::Commit(table),
            Some(_) => Arrived::Other,
            None => Arrived::Listed,
        };
    }
    if path.starts_with(crate::journal::DIR) {
        Arrived::Journal
    } else if path.starts_with(crate::feed::DIR) {
        Arrived::Feed
    } else if path == crate::settings::FILE || crate::settings::device_of(path).is_some_and(|d| d != me) {
        Arrived::Settings
    } else if crate::feed::webhook::is_file(path) {
        Arrived::Webhooks
    } else {
        Arrived::Other
    }
}

impl Hands<'_> {
    /// Store files a sync brought (see `Engine::store_synced`): log lines for
    /// what could not be read.
    pub(crate) fn take_synced(&mut self, files: Vec<(String, Option<String>)>, now_ms: i64) -> Vec<String> {
        let Some(me) = self.store.device().map(str::to_string) else {
            return vec!["WARN store files synced in are left for the next open: this engine has no device id".into()];
        };
        let mut log = vec![];
        let mut settings = false;
        for (path, text) in files {
            let Some(text) = text else {
                if matches!(kind(&path, &me), Arrived::Listed) {
                    self.store.arrived_unread(path);
                }
                continue;
            };
            match kind(&path, &me) {
                // Seen already (a watcher reports a file more than once).
                Arrived::Commit(_) if self.store.text(&path) == Some(text.as_str()) => {}
                Arrived::Commit(table) => {
                    let table = table.to_string();
                    for blob in self.commit_synced(&table, &path, &text, &mut log) {
                        // Absent until the sync brings it: a read then finds none.
                        self.store.arrived_unread(blob);
                    }
                    self.store.provide(vec![(path, Some(text))]);
                    self.store.move_full(&table, None);
                    self.hand.synced.tables.insert(table);
                    self.hand.synced.meet_at = Some(now_ms + SETTLE_MS);
                }
                Arrived::Listed => self.store.provide(vec![(path, Some(text))]),
                Arrived::Journal => {
                    if let Some(why) = self.journal.arrived(&path, &text, now_ms) {
                        self.store.distrust(why.clone());
                        log.push(why);
                    }
                }
                Arrived::Feed => {
                    for why in self.feed.arrived(&path, &text, now_ms) {
                        self.store.distrust(why.clone());
                        log.push(why);
                    }
                }
                Arrived::Settings => {
                    self.store.provide(vec![(path, Some(text))]);
                    settings = true;
                }
                Arrived::Webhooks => log.extend(self.hooks.arrived(&path, &text)),
                Arrived::Other => {}
            }
        }
        if settings {
            let texts = self.store.under("settings.").filter_map(|p| Some((p.as_str(), self.store.text(p)?)));
            let (s, w) = crate::settings::Settings::load(texts);
            *self.settings = s;
            log.extend(w);
        }
        log.into_iter().map(|l| if l.starts_with("WARN") { l } else { format!("WARN {l}") }).collect()
    }

    /// Remembers what a synced commit wrote, for the notes still to arrive;
    /// the blobs it names.
    fn commit_synced(&mut self, table: &str, path: &str, text: &str, log: &mut Vec<String>) -> Vec<String> {
        let commit: Commit = match serde_json::from_str(text) {
            Ok(c) => c,
            Err(e) => {
                log.push(format!("{path} cannot be read ({e}): the table {table}'s history lacks it"));
                return vec![];
            }
        };
        if let Some(why) = crate::log::commit_problem(&commit) {
            let why = format!("{path} is not taken in: {why}, which no engine writes");
            self.store.distrust(why.clone());
            log.push(why);
            return vec![];
        }
        let writes = &mut self.hand.synced.writes;
        if writes.len() > REMEMBERED {
            writes.clear();
        }
        let mut blobs = vec![];
        for (path, hash) in commit.actions.iter().filter_map(Action::written) {
            blobs.extend(hash.map(crate::log::blob_path));
            writes.entry(path.to_string()).or_default().push(hash.map(str::to_string));
        }
        blobs
    }

    /// The vault changes of a round that another device's synced commit made,
    /// taken into the index as they are (recorded as known, reported by that
    /// device's events); the others are returned, hand edits.
    pub(crate) fn apply_synced(&mut self, events: Vec<VaultEvent>, out: &mut Outcome) -> Vec<VaultEvent> {
        if self.hand.synced.writes.is_empty() {
            return events;
        }
        let mut known: Vec<(String, Option<TextHash>)> = vec![];
        let mut rest = vec![];
        for ev in events {
            let (path, now) = match &ev {
                VaultEvent::Created { path, text, .. } | VaultEvent::Modified { path, text, .. } => {
                    (path, Some(TextHash::of(text)))
                }
                VaultEvent::Removed { path } => (path, None),
                VaultEvent::Renamed { .. } => {
                    rest.push(ev);
                    continue;
                }
            };
            // The commits name hashes in hex.
            let hex = now.map(|h| h.to_string());
            let Some(i) = self.hand.synced.writes.get(path).and_then(|hs| hs.iter().position(|h| *h == hex)) else {
                rest.push(ev);
                continue;
            };
            let path = path.clone();
            let hs = self.hand.synced.writes.get_mut(&path).expect("found above");
            hs.remove(i);
            if hs.is_empty() {
                self.hand.synced.writes.remove(&path);
            }
            match ev {
                VaultEvent::Created { text, mtime, .. } | VaultEvent::Modified { text, mtime, .. } => {
                    self.index.vault.insert(&self.index.schema, path.clone(), text, mtime)
                }
                _ => {
                    self.index.vault.remove(&path);
                }
            }
            known.push((path, now));
        }
        if let Some(k) = self.known.as_mut() {
            out.store.extend(k.record(known.iter().map(|(p, h)| (p.as_str(), *h))));
        }
        rest
    }

    /// Whether the tables a sync brought commits to are due to meet their notes.
    pub(crate) fn meet_due(&self, now_ms: i64) -> bool {
        self.hand.queue.is_empty() && self.hand.synced.meet_at.is_some_and(|t| now_ms >= t)
    }

    /// A note changed while a meeting waits: the sync is still bringing files.
    pub(crate) fn sync_still_busy(&mut self, now_ms: i64) {
        if self.hand.synced.meet_at.is_some() {
            self.hand.synced.meet_at = Some(now_ms + SETTLE_MS);
        }
    }

    /// The tables a sync brought commits to, met with their notes: Err(Need)
    /// when their logs must be read first (the tick runs again).
    pub(crate) fn meet_synced(&mut self, now_ms: i64, out: &mut Outcome) -> Result<(), Step> {
        let tables: Vec<String> = self.hand.synced.tables.iter().cloned().collect();
        if let Err(f) = self.logs().read_latest("tick", &tables) {
            let wanted = self.store.take_wanted();
            if !wanted.is_empty() {
                return Err(Step::Need(wanted));
            }
            out.log.push(format!("WARN the logs synced from other devices cannot be read: {}", f.text()));
        }
        self.hand.synced.tables.clear();
        self.hand.synced.meet_at = None;
        match self.logs().meet_vault(&tables, now_ms) {
            Ok(w) => out.store.extend(w),
            Err(f) => out.log.push(format!("WARN the logs synced from other devices cannot be met: {}", f.text())),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::synced_file;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn only_another_devices_files_are_handed_over() {
        let cases = [
            ("log/main.public.film/00000000000000000004.a.json", true),
            ("log/main.public.film/00000000000000000004.b.json", false),
            ("log/main.public.film/00000000000000000004.json", false),
            ("log/main.public.film/00000000000000000004.checkpoint.json", false),
            ("journal/20261204T133000-update_row-update-film.a.json", true),
            ("journal/20261204T133000-update_row-update-film.a-2.json", true),
            ("journal/20261204T133000-update_row-update-film.b-2.json", false),
            ("journal/20261204T133000-update_row-update-film.json", false),
            ("journal/20261204T133000-update_row-update-film.a.sync-conflict-20261204-1-X.json", false),
            ("feed/00000000000000000001.a.jsonl", true),
            ("feed/00000000000000000001.b.jsonl", false),
            ("feed/00000000000000000001.jsonl", false),
            ("settings.a.json", true),
            ("settings.b.json", false),
            ("settings.json", false),
            ("webhooks.a.json", true),
            ("webhooks.json", false),
            ("known.a.jsonl", false),
            ("blobs/ab/abcdef", false),
            ("lock", false),
        ];
        for (path, want) in cases {
            assert_eq!(synced_file(path, "b"), want, "{path}");
        }
    }
}
