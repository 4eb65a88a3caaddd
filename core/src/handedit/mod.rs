//! Edits made outside the engine (an editor, git, a sync tool): the host reports
//! each vault change; the engine tells its own writes apart by content, gathers
//! the others (0.7 s after the last change, at most 5 s after the first),
//! reports them in the change feed checked against the rules, commits them to the
//! tables' logs (EXTERNAL_EDIT), and later repairs the links to notes moved by
//! hand and recomputes generated columns.

pub mod known;

use crate::edits::StoreWrite;
use crate::engine::{Engine, Outcome, Status, Step};
use crate::events::{event, metastore_event, Seen};
use crate::feed::{Event, EventKind, Source};
use crate::schema::{Schema, METASTORE};
use crate::tx::Tx;
use crate::validate::{Ctx, Violation};
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Quiet time that closes a round of hand edits (a "batch" in the guides; the
/// `batch` operation is another thing).
pub const ROUND_QUIET_MS: i64 = 700;
/// A round never waits longer than this after its first change.
pub const ROUND_MAX_MS: i64 = 5000;
/// Quiet time before the links to a note moved by hand are repaired.
pub const REPAIR_QUIET_MS: i64 = 4000;
/// Delay before generated columns are recomputed after a hand edit.
pub const RECOMPUTE_MS: i64 = 3000;
/// Violations listed on one event at most.
pub const MAX_VIOLATIONS: usize = 100;

/// A change to the vault, as the host saw it.
#[derive(Debug, Clone, PartialEq)]
pub enum VaultEvent {
    Created {
        path: String,
        text: String,
        mtime: i64,
    },
    Modified {
        path: String,
        text: String,
        mtime: i64,
    },
    Removed {
        path: String,
    },
    /// A note renamed or moved, with its text after the move.
    Renamed {
        from: String,
        to: String,
        text: String,
        mtime: i64,
    },
}

/// A note moved by hand whose links wait to be repaired: where it is, where it
/// was, and the feed event that reported the move (repair_links's `moves` item).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HandMove {
    pub path: String,
    pub old_path: String,
    pub seq: u64,
}

#[derive(Debug, Default)]
pub struct HandState {
    queue: Vec<VaultEvent>,
    first_ms: Option<i64>,
    last_ms: i64,
    /// The last vault change of any kind, for link repair's quiet.
    last_change_ms: i64,
    pub(crate) git_busy: bool,
    /// Notes moved by hand, waiting for their links to be repaired.
    moves: Vec<HandMove>,
    /// Rows whose two-way links a hand edit changed ({table, path, before}), and when
    /// to bring the links back in step.
    links: Vec<Value>,
    links_at: Option<i64>,
    /// Tables with generated columns gone stale, and when to recompute them.
    recompute: BTreeSet<String>,
    recompute_at: Option<i64>,
    /// The values of rows that became unreadable, so that their fix reads as an update.
    last_readable: HashMap<String, Map<String, Value>>,
}

/// An MCP tool call, as a front door reports it for the change feed.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
pub struct ToolCall {
    pub tool: String,
    pub args: Value,
    pub ok: bool,
    pub duration_ms: u64,
    /// The answer, or the error text.
    pub value: Value,
    /// "engine", or the MCP server that ran a tool of its own.
    pub served_by: String,
    /// Who called: the credential and the client, as in the feed's `actor`.
    pub actor: Value,
}

fn relevant(path: &str) -> bool {
    path.ends_with(".md") || path == METASTORE
}

/// The top-level scalars of an answer, and its lists as their length.
fn summary(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| {
                    let s = match x {
                        Value::Array(a) => json!(a.len()),
                        Value::Object(_) => json!("{…}"),
                        Value::String(s) if s.chars().count() > 500 => {
                            json!(format!("{}…", s.chars().take(500).collect::<String>()))
                        }
                        other => other.clone(),
                    };
                    (k.clone(), s)
                })
                .collect(),
        ),
        Value::String(s) if s.chars().count() > 2000 => json!(format!("{}…", s.chars().take(2000).collect::<String>())),
        other => other.clone(),
    }
}

impl Engine {
    /// Whether a reported change is the engine's own write (the index holds it already).
    fn is_own(&self, ev: &VaultEvent) -> bool {
        let same = |path: &str, text: &str| {
            if path == METASTORE {
                self.metastore.as_deref() == Some(text)
            } else {
                self.vault.get(path).is_some_and(|n| n.text == text)
            }
        };
        match ev {
            VaultEvent::Created { path, text, .. } | VaultEvent::Modified { path, text, .. } => {
                !relevant(path) || same(path, text)
            }
            VaultEvent::Removed { path } => {
                !relevant(path)
                    || if path == METASTORE { self.metastore.is_none() } else { self.vault.get(path).is_none() }
            }
            VaultEvent::Renamed { from, to, text, .. } => {
                (!relevant(from) && !relevant(to)) || (self.vault.get(from).is_none() && same(to, text))
            }
        }
    }

    /// A vault change (see `Engine::observe`).
    pub(crate) fn observe_change(&mut self, event: VaultEvent, now_ms: i64) {
        self.hand.last_change_ms = now_ms;
        if self.is_own(&event) {
            return;
        }
        self.hand.queue.push(event);
        self.hand.first_ms.get_or_insert(now_ms);
        self.hand.last_ms = now_ms;
    }

    /// An agent's tool call as a `tool_call` event in the change feed.
    pub(crate) fn feed_tool_call(&mut self, call: ToolCall, now_ms: i64) -> Vec<StoreWrite> {
        let e = Event {
            at: crate::time::iso(now_ms),
            at_ms: now_ms,
            kind: EventKind::ToolCall,
            source: Source::Engine,
            actor: Some(call.actor),
            call: Some(json!({
                "tool": call.tool, "args": summary(&call.args), "ok": call.ok, "duration_ms": call.duration_ms,
                "value": summary(&call.value), "served_by": call.served_by,
            })),
            ..Event::default()
        };
        self.feed.push(e)
    }

    /// When `tick` next has something to do, if ever.
    pub(crate) fn due_at(&self) -> Option<i64> {
        let h = &self.hand;
        let mut d: Vec<i64> = vec![];
        if let Some(first) = h.first_ms {
            d.push((h.last_ms + ROUND_QUIET_MS).min(first + ROUND_MAX_MS));
        }
        if !h.moves.is_empty() && !h.git_busy && self.settings.repair_links_on_hand_move {
            d.push(h.last_change_ms + REPAIR_QUIET_MS);
        }
        if let Some(r) = h.recompute_at {
            d.push(r);
        }
        if let Some(l) = h.links_at {
            d.push(l);
        }
        for hook in &self.hooks.list {
            if !hook.in_flight && hook.status != crate::webhook::HookStatus::Disabled && hook.cursor < self.feed.head {
                d.push(hook.next_attempt_ms);
            }
        }
        d.into_iter().min()
    }

    /// What is due at `now_ms` (see `Engine::tick`).
    pub(crate) fn run_due(&mut self, now_ms: i64) -> Step {
        let mut out = Outcome::done(Value::Null);
        if self.pending_write() {
            return Step::Done(out);
        }
        let due =
            self.hand.first_ms.is_some_and(|f| now_ms >= (self.hand.last_ms + ROUND_QUIET_MS).min(f + ROUND_MAX_MS));
        if due {
            self.hand_round(now_ms, &mut out);
        }
        let idle = self.hand.queue.is_empty();
        if idle
            && !self.hand.moves.is_empty()
            && !self.hand.git_busy
            && now_ms >= self.hand.last_change_ms + REPAIR_QUIET_MS
        {
            let moves = std::mem::take(&mut self.hand.moves);
            if self.settings.repair_links_on_hand_move {
                let w = self.call("repair_links", json!({"moves": moves}), "engine", now_ms);
                if let Some(apply) = merge(&mut out, w) {
                    return apply;
                }
            }
        }
        if idle && self.hand.links_at.is_some_and(|l| now_ms >= l) {
            self.hand.links_at = None;
            let rows = std::mem::take(&mut self.hand.links);
            let w = self.call("sync_links", json!({"rows": rows}), "engine", now_ms);
            if let Some(apply) = merge(&mut out, w) {
                return apply;
            }
        }
        if idle && self.hand.recompute_at.is_some_and(|r| now_ms >= r) {
            let next = self.hand.recompute.pop_first();
            if self.hand.recompute.is_empty() {
                self.hand.recompute_at = None;
            }
            if let Some(t) = next {
                if self.settings.auto_recompute && self.schema.tables.contains_key(&t) {
                    let w = self.call("recompute_columns", json!({"table": t}), "engine", now_ms);
                    if let Some(apply) = merge(&mut out, w) {
                        return apply;
                    }
                }
            }
        }
        let (deliveries, store) = self.plan_deliveries(now_ms);
        out.deliveries = deliveries;
        out.store.extend(store);
        Step::Done(out)
    }

    /// Checks rows (and the rows linking to them) and keeps their violations.
    fn note_violations(&self, paths: impl IntoIterator<Item = String>, into: &mut HashMap<String, Vec<Violation>>) {
        let ctx = Ctx { schema: &self.schema, vault: &self.vault };
        for p in paths {
            let mut rows = self.vault.naming(&p);
            rows.push(p);
            for r in rows {
                if !into.contains_key(&r) && self.vault.get(&r).is_some() {
                    let v = ctx.check_row(&r);
                    into.insert(r, v);
                }
            }
        }
    }

    /// Every row of these tables, checked.
    fn table_violations(&self, tables: &BTreeSet<String>, into: &mut HashMap<String, Vec<Violation>>) {
        let ctx = Ctx { schema: &self.schema, vault: &self.vault };
        for t in tables {
            for p in self.vault.table_rows(t).chain(self.vault.unreadable_rows(t)) {
                into.entry(p.to_string()).or_insert_with(|| ctx.check_row(p));
            }
        }
    }

    /// The round of hand edits: applied to the index in order, reported in the
    /// feed with what they break, committed to the logs.
    fn hand_round(&mut self, now_ms: i64, out: &mut Outcome) {
        let queue = std::mem::take(&mut self.hand.queue);
        let events = self.coalesce(queue);
        self.hand.first_ms = None;
        let mut tx = Tx::new("external_edit");
        let mut before: HashMap<String, Vec<Violation>> = HashMap::new();
        let touched: Vec<String> = events
            .iter()
            .flat_map(|e| match e {
                VaultEvent::Created { path, .. } | VaultEvent::Modified { path, .. } | VaultEvent::Removed { path } => {
                    vec![path.clone()]
                }
                VaultEvent::Renamed { from, to, .. } => vec![from.clone(), to.clone()],
            })
            .filter(|p| p != METASTORE)
            .collect();
        self.note_violations(touched.iter().cloned(), &mut before);
        for p in &touched {
            tx.originals.entry(p.clone()).or_insert_with(|| self.vault.text(p).map(str::to_string));
        }
        let mut feed: Vec<Event> = vec![];
        let mut last_of: BTreeMap<String, usize> = BTreeMap::new();
        let mut renamed_from: BTreeMap<String, String> = BTreeMap::new();
        let mut moves: Vec<(String, String, usize)> = vec![];
        // Each table whose definition was edited by hand: the index of its last metastore event.
        let mut schema_tables: BTreeMap<String, usize> = BTreeMap::new();
        for ev in events {
            match ev {
                VaultEvent::Created { path, text, .. } | VaultEvent::Modified { path, text, .. }
                    if path == METASTORE =>
                {
                    schema_tables.extend(self.hand_schema(Some(text), &mut tx, &mut before, &mut feed));
                }
                VaultEvent::Removed { path } if path == METASTORE => {
                    schema_tables.extend(self.hand_schema(None, &mut tx, &mut before, &mut feed));
                }
                VaultEvent::Created { path, text, mtime } | VaultEvent::Modified { path, text, mtime } => {
                    let b = self.seen_now(&path);
                    self.vault.insert(&self.schema, path.clone(), text, mtime);
                    self.push_hand(&mut feed, &mut last_of, &path, None, b);
                }
                VaultEvent::Removed { path } => {
                    let b = self.seen_now(&path);
                    self.vault.remove(&path);
                    self.push_hand(&mut feed, &mut last_of, &path, None, b);
                }
                VaultEvent::Renamed { from, to, text, mtime } => {
                    let b = self.seen_now(&from);
                    if let Some(v) = self.hand.last_readable.remove(&from) {
                        self.hand.last_readable.insert(to.clone(), v);
                    }
                    self.vault.remove(&from);
                    self.vault.insert(&self.schema, to.clone(), text, mtime);
                    tx.moves.push((from.clone(), to.clone()));
                    last_of.remove(&from);
                    let origin = renamed_from.remove(&from).unwrap_or(from.clone());
                    renamed_from.insert(to.clone(), origin);
                    if let Some(i) = self.push_hand(&mut feed, &mut last_of, &to, Some(&from), b) {
                        moves.push((from, to, i));
                    }
                }
            }
        }
        // What each row's last event breaks: in the row, and in the rows linking to it.
        let ctx = Ctx { schema: &self.schema, vault: &self.vault };
        let repairing = self.settings.repair_links_on_hand_move;
        // Links to notes moved by hand dangle until the repair rewrites them: not reported.
        let moved_stems: BTreeSet<String> = if repairing {
            moves
                .iter()
                .map(|(f, _, _)| crate::links::path_stem(f))
                .chain(self.hand.moves.iter().map(|m| crate::links::path_stem(&m.old_path)))
                .collect()
        } else {
            BTreeSet::new()
        };
        let to_moved = |row: &str, v: &Violation| -> bool {
            v.code == "broken_link"
                && v.column.as_ref().is_some_and(|c| {
                    let val = self.vault.row(row).and_then(|r| r.values.get(c));
                    let val = match (val, v.index) {
                        (Some(Value::Array(a)), Some(i)) => a.get(i),
                        (x, _) => x,
                    };
                    val.and_then(Value::as_str).is_some_and(|s| {
                        moved_stems.contains(&crate::links::target_stem(crate::filter::link_target(s)))
                    })
                })
        };
        let edited: BTreeSet<&String> = last_of.keys().collect();
        let mut stale: BTreeSet<String> = BTreeSet::new();
        for (path, i) in &last_of {
            let e = &feed[*i];
            if e.kind == EventKind::Unreadable
                || (e.kind == EventKind::Update && e.changes.is_empty())
                || (e.table.is_none() && e.kind != EventKind::Move)
            {
                continue;
            }
            let new = |p: &str| -> Vec<Violation> {
                let b = before.get(p);
                ctx.check_row(p)
                    .into_iter()
                    .filter(|v| b.is_none_or(|b| !b.iter().any(|o| o.key() == v.key())) && !to_moved(p, v))
                    .collect()
            };
            let mut list: Vec<(String, Vec<Violation>)> = vec![];
            if e.kind != EventKind::Delete {
                let own = new(path);
                if own.iter().any(|v| v.code == "generated") {
                    if let Some(t) = &e.table {
                        stale.insert(t.clone());
                    }
                }
                if !own.is_empty() {
                    list.push((path.clone(), own));
                }
            }
            let mut linkers = self.vault.naming(path);
            if let Some(old) = &e.old_path {
                linkers.extend(self.vault.naming(old));
            }
            if e.kind == EventKind::Delete || e.old_path.is_some() {
                linkers.extend(before.keys().filter(|k| !edited.contains(k)).cloned());
            }
            linkers.sort();
            linkers.dedup();
            let name = path.rsplit('/').next().unwrap_or(path).trim_end_matches(".md");
            for l in linkers.iter().filter(|l| !edited.contains(l) && *l != path) {
                let mut vs = new(l);
                if e.kind == EventKind::Move && repairing {
                    vs.retain(|v| v.code != "broken_link");
                }
                for v in &mut vs {
                    v.message = format!("{} (after the edit of [[{name}]], a row it links to)", v.message);
                }
                if !vs.is_empty() {
                    list.push((l.clone(), vs));
                }
            }
            set_violations(&mut feed[*i], list);
        }
        for (table, i) in &schema_tables {
            let mut list = vec![];
            let mut all = HashMap::new();
            self.table_violations(&BTreeSet::from([table.clone()]), &mut all);
            let mut paths: Vec<&String> = all.keys().collect();
            paths.sort();
            for p in paths {
                let b = before.get(p);
                let vs: Vec<Violation> = all[p]
                    .iter()
                    .filter(|v| b.is_none_or(|b| !b.iter().any(|o| o.key() == v.key())))
                    .cloned()
                    .collect();
                if !vs.is_empty() {
                    list.push((p.clone(), vs));
                }
            }
            if feed.get(*i).is_some_and(|e| e.violations.is_none()) {
                set_violations(&mut feed[*i], list);
            }
        }
        // Two-way links: the rows whose inverse link columns the edits changed.
        for e in &feed {
            let (Some(table), Some(path)) = (&e.table, &e.path) else { continue };
            let Some(def) = self.schema.tables.get(table) else { continue };
            let mut before = Map::new();
            for (c, _) in def.columns.iter().filter(|(_, d)| d.inverse.is_some()) {
                let old = match e.kind {
                    EventKind::Delete => e.values.as_ref().and_then(|v| v.get(c)).cloned(),
                    _ => e.changes.get(c).map(|x| x["before"].clone()),
                };
                if let Some(v) = old {
                    before.insert(c.clone(), v);
                }
            }
            let changed_cols = def.columns.iter().any(|(c, d)| d.inverse.is_some() && e.changes.contains_key(c));
            if !before.is_empty() || changed_cols {
                self.hand.links.push(json!({"table": table, "path": path, "before": before}));
                self.hand.links_at = Some(now_ms + RECOMPUTE_MS);
            }
        }
        // Numbered, logged, committed.
        let mut per_table: BTreeMap<String, usize> = BTreeMap::new();
        for (k, mut e) in feed.into_iter().enumerate() {
            e.at = crate::time::iso(now_ms);
            e.at_ms = now_ms;
            e.source = Source::External;
            let total = e.violations_total.unwrap_or_else(|| {
                e.violations
                    .as_ref()
                    .map_or(0, |l| l.iter().map(|r| r["violations"].as_array().map_or(0, Vec::len)).sum())
            });
            // Each table counts the violations of its own rows; a checked edit counts 0.
            if e.violations.is_some() {
                if let Some(t) = &e.table {
                    per_table.entry(t.clone()).or_default();
                }
                for r in e.violations.iter().flatten() {
                    let row_table = r["path"].as_str().and_then(|p| self.schema.table_of_path(p)).map(str::to_string);
                    if let Some(t) = row_table.or_else(|| e.table.clone()) {
                        *per_table.entry(t).or_default() += r["violations"].as_array().map_or(0, Vec::len);
                    }
                }
            }
            if total > 0 {
                out.log.push(format!(
                    "WARN hand edit of {} breaks {total} rule(s): {}",
                    e.path.clone().unwrap_or_default(),
                    first_messages(&e)
                ));
            }
            out.store.extend(self.feed.push(e));
            let seq = self.feed.head;
            for (from, to, i) in &moves {
                if *i == k {
                    // A note moved again before its links were repaired: one move, from the first path.
                    match self.hand.moves.iter_mut().find(|m| m.path == *from) {
                        Some(m) => {
                            m.path = to.clone();
                            m.seq = seq;
                        }
                        None => self.hand.moves.push(HandMove { path: to.clone(), old_path: from.clone(), seq }),
                    }
                }
            }
        }
        let touched_now: Vec<(String, Option<String>)> = tx
            .originals
            .keys()
            .chain(tx.moves.iter().map(|(_, to)| to))
            .map(|p| (p.clone(), self.vault.get(p).map(|n| n.hash.clone())))
            .collect();
        if let Some(k) = self.known.as_mut() {
            out.store.extend(k.record(touched_now.iter().map(|(p, h)| (p.as_str(), h.as_deref()))));
        }
        let changes = self.changes_of(&tx);
        match self.commits_of(&tx, &changes, "external_edit", None, now_ms) {
            Ok(mut c) => {
                add_violations(&mut c.files, &per_table);
                out.store.extend(std::mem::take(&mut c.blobs));
                out.store.extend(self.committed(c));
            }
            Err(f) => {
                out.log.push(format!("WARN the hand edits could not be committed to the tables' logs: {}", f.text()))
            }
        }
        if !stale.is_empty() && self.settings.auto_recompute {
            self.hand.recompute.extend(stale);
            self.hand.recompute_at = Some(now_ms + RECOMPUTE_MS);
        }
    }

    /// Compares the vault with what the store last knew (`known.jsonl`) and reports
    /// every difference as hand edits made while no engine ran: the old texts come
    /// from the log's blobs when it has them (the host reads them: Status::Need),
    /// the round runs at once. The first time, it only records the vault.
    pub(crate) fn reconcile_vault(&mut self, now_ms: i64) -> Step {
        let mut out = Outcome::done(Value::Null);
        let Some(known) = self.known.clone() else {
            let (k, w) = known::Known::snapshot(self.vault.notes.iter().map(|(p, n)| (p.as_str(), n.hash.as_str())));
            self.known = Some(k);
            out.store.push(w);
            return Step::Done(out);
        };
        let mut modified = vec![];
        let mut created = vec![];
        for (p, n) in &self.vault.notes {
            match known.hashes.get(p) {
                Some(h) if *h == n.hash => {}
                Some(h) => modified.push((p.clone(), h.clone())),
                None => created.push(p.clone()),
            }
        }
        let mut removed: Vec<(String, String)> = known
            .hashes
            .iter()
            .filter(|(p, _)| self.vault.get(p).is_none())
            .map(|(p, h)| (p.clone(), h.clone()))
            .collect();
        if modified.is_empty() && created.is_empty() && removed.is_empty() {
            return Step::Done(out);
        }
        modified.sort();
        created.sort();
        removed.sort();
        let need: Vec<String> = modified.iter().chain(removed.iter()).map(|(_, h)| crate::log::blob_path(h)).collect();
        if let Err(f) = self.store.require("reconcile", &need) {
            return Step::failed(&f);
        }
        // Renames: a note gone from one path and found, the same text, at another.
        let mut renames = vec![];
        created.retain(|c| {
            let h = &self.vault.notes[c].hash;
            match removed.iter().position(|(_, rh)| rh == h) {
                Some(i) => {
                    renames.push((removed.remove(i).0, c.clone()));
                    false
                }
                None => true,
            }
        });
        // Put the index back as the store knew it, then replay the vault as it is.
        let mut unknown_before = vec![];
        for (p, h) in &modified {
            let text = self.vault.get(p).map(|n| (n.text.clone(), n.mtime));
            match (self.store.text(&crate::log::blob_path(h)).map(str::to_string), text) {
                (Some(old), Some((now, mtime))) => {
                    self.vault.insert(&self.schema, p.clone(), old, mtime);
                    self.hand.queue.push(VaultEvent::Modified { path: p.clone(), text: now, mtime });
                }
                _ => unknown_before.push(p.clone()),
            }
        }
        for (p, h) in &removed {
            if let Some(old) = self.store.text(&crate::log::blob_path(h)).map(str::to_string) {
                self.vault.insert(&self.schema, p.clone(), old, 0);
            }
            self.hand.queue.push(VaultEvent::Removed { path: p.clone() });
        }
        for c in &created {
            if let Some(n) = self.vault.remove(c) {
                self.hand.queue.push(VaultEvent::Created { path: c.clone(), text: n.text, mtime: n.mtime });
            }
        }
        for (from, to) in &renames {
            if let Some(n) = self.vault.remove(to) {
                self.vault.insert(&self.schema, from.clone(), n.text.clone(), n.mtime);
                self.hand.queue.push(VaultEvent::Renamed {
                    from: from.clone(),
                    to: to.clone(),
                    text: n.text,
                    mtime: n.mtime,
                });
            }
        }
        // Removed notes whose text the store never had: reported, without values.
        let mut lost = vec![];
        self.hand.queue.retain(|e| match e {
            VaultEvent::Removed { path } if self.vault.get(path).is_none() => {
                lost.push(path.clone());
                false
            }
            _ => true,
        });
        if !self.hand.queue.is_empty() {
            self.hand.first_ms.get_or_insert(now_ms);
            self.hand_round(now_ms, &mut out);
        }
        let unseen: Vec<(&String, EventKind)> = unknown_before
            .iter()
            .map(|p| (p, EventKind::Update))
            .chain(lost.iter().map(|p| (p, EventKind::Delete)))
            .collect();
        for (p, kind) in unseen {
            let table = self.schema.table_of_path(p).map(str::to_string);
            let row = self.vault.row(p);
            let e = Event {
                at: crate::time::iso(now_ms),
                at_ms: now_ms,
                table,
                kind,
                source: Source::External,
                path: Some(p.clone()),
                row_id: row.and_then(|r| r.id.clone()),
                values: row.map(|r| r.values.clone()),
                ..Event::default()
            };
            out.store.extend(self.feed.push(e));
        }
        let changes: Vec<(String, Option<String>)> = unknown_before
            .iter()
            .chain(lost.iter())
            .map(|p| (p.clone(), self.vault.get(p).map(|n| n.hash.clone())))
            .collect();
        if let Some(k) = self.known.as_mut() {
            out.store.extend(k.record(changes.iter().map(|(p, h)| (p.as_str(), h.as_deref()))));
            if k.lines > 2 * self.vault.notes.len() + 1000 {
                let (k2, w) =
                    known::Known::snapshot(self.vault.notes.iter().map(|(p, n)| (p.as_str(), n.hash.as_str())));
                self.known = Some(k2);
                out.store.retain(|s| s.path != known::FILE);
                out.store.push(w);
            }
        }
        Step::Done(out)
    }

    /// Watchers see a rename as a rename, as a removal and a creation, or as both:
    /// a note removed and one created with its text in the same round is a move,
    /// and a rename already told as removal and creation is told once. Several
    /// writes of a note in one round are one.
    fn coalesce(&self, events: Vec<VaultEvent>) -> Vec<VaultEvent> {
        let mut out: Vec<Option<VaultEvent>> = events.into_iter().map(Some).collect();
        for i in 0..out.len() {
            let Some(VaultEvent::Renamed { from, to, .. }) = &out[i] else { continue };
            let (from, to) = (from.clone(), to.clone());
            let removed =
                out[..i].iter().position(|e| matches!(e, Some(VaultEvent::Removed { path }) if *path == from));
            let created =
                out[..i].iter().position(|e| matches!(e, Some(VaultEvent::Created { path, .. }) if *path == to));
            if let (Some(r), Some(c)) = (removed, created) {
                out[r] = None;
                out[c] = None;
            }
        }
        for i in 0..out.len() {
            let Some(VaultEvent::Removed { path }) = &out[i] else { continue };
            let Some(old) = self.vault.text(path) else { continue };
            let from = path.clone();
            let later = out[i + 1..].iter().position(
                |e| matches!(e, Some(VaultEvent::Created { text, path: p, .. }) if text == old && *p != from),
            );
            if let Some(j) = later {
                if let Some(VaultEvent::Created { path: to, text, mtime }) = out[i + 1 + j].take() {
                    out[i + 1 + j] = Some(VaultEvent::Renamed { from: from.clone(), to, text, mtime });
                    out[i] = None;
                }
            }
        }
        // A note written several times in one round (an editor saving twice, a file
        // seen half written) is one change: its last text. A creation stays one.
        for i in (0..out.len()).rev() {
            let Some(VaultEvent::Modified { path, text, mtime }) = &out[i] else { continue };
            let (path, text, mtime) = (path.clone(), text.clone(), *mtime);
            let mut j = i;
            while j > 0 {
                j -= 1;
                match &out[j] {
                    Some(VaultEvent::Modified { path: p, .. }) if *p == path => out[j] = None,
                    Some(VaultEvent::Created { path: p, .. }) if *p == path => {
                        out[j] = Some(VaultEvent::Created { path: path.clone(), text: text.clone(), mtime });
                        out[i] = None;
                        break;
                    }
                    Some(VaultEvent::Removed { path: p }) if *p == path => break,
                    Some(VaultEvent::Renamed { from, to, .. }) if *from == path || *to == path => break,
                    _ => {}
                }
            }
        }
        out.into_iter().flatten().collect()
    }

    /// A hand-edit event for a note, from what it was (`b`) to what the index holds.
    fn push_hand(
        &mut self,
        feed: &mut Vec<Event>,
        last_of: &mut BTreeMap<String, usize>,
        path: &str,
        from: Option<&str>,
        b: Seen,
    ) -> Option<usize> {
        let a = self.seen_now(path);
        if let (Seen::Row { values, .. }, Seen::Unreadable { .. }) = (&b, &a) {
            self.hand.last_readable.insert(path.to_string(), values.clone());
        }
        let last = match (&b, &a) {
            (Seen::Unreadable { .. }, Seen::Row { .. }) => self.hand.last_readable.remove(path),
            _ => None,
        };
        let e = event(path, from, &b, &a, last.as_ref())?;
        if e.kind == EventKind::Delete && matches!(b, Seen::Unreadable { .. }) {
            self.hand.last_readable.remove(path);
        }
        feed.push(e);
        let i = feed.len() - 1;
        last_of.insert(path.to_string(), i);
        Some(i)
    }

    /// metastore.yaml edited (or removed) by hand: the tables whose entries changed
    /// are read again. Returns the metastore event's index and those tables.
    fn hand_schema(
        &mut self,
        text: Option<String>,
        tx: &mut Tx,
        before: &mut HashMap<String, Vec<Violation>>,
        feed: &mut Vec<Event>,
    ) -> Vec<(String, usize)> {
        let parsed = match &text {
            Some(t) => Schema::parse(t),
            None => Err(format!("{METASTORE} was removed")),
        };
        let new = match parsed {
            Ok(s) => s,
            Err(msg) => {
                self.schema_error = Some(msg.clone());
                self.metastore = text;
                feed.push(Event {
                    kind: EventKind::Metastore,
                    path: Some(METASTORE.into()),
                    violations: Some(vec![json!({"path": METASTORE, "violations": [{"code": "unreadable", "message": format!("{msg}: the engine keeps the schema it had, and refuses writes until the file is fixed")}]})]),
                    ..Event::default()
                });
                return vec![];
            }
        };
        let changed = self.schema.changed_tables(&new);
        self.schema_error = None;
        if changed.is_empty() {
            self.metastore = text;
            return vec![];
        }
        self.table_violations(&changed, before);
        if tx.schema_before.is_none() {
            tx.schema_before = Some((self.schema.clone(), self.metastore.clone().unwrap_or_default()));
        }
        let mut events = vec![];
        for t in &changed {
            events.push((t.clone(), feed.len()));
            feed.push(metastore_event(t, self.schema.tables.get(t), new.tables.get(t)));
        }
        self.set_schema(new, text, &changed);
        events
    }
}

/// Puts the violations on an event: at most MAX_VIOLATIONS, the count beyond.
fn set_violations(e: &mut Event, list: Vec<(String, Vec<Violation>)>) {
    let total: usize = list.iter().map(|(_, v)| v.len()).sum();
    let mut left = MAX_VIOLATIONS;
    let mut shown = vec![];
    for (p, vs) in list {
        if left == 0 {
            break;
        }
        let take: Vec<Violation> = vs.into_iter().take(left).collect();
        left -= take.len();
        shown.push(crate::validate::row_json(&p, &take));
    }
    e.violations = Some(shown);
    if total > MAX_VIOLATIONS {
        e.violations_total = Some(total);
    }
}

fn first_messages(e: &Event) -> String {
    e.violations
        .iter()
        .flatten()
        .flat_map(|r| {
            r["violations"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .map(move |v| format!("{}: {}", r["path"].as_str().unwrap_or(""), v["message"].as_str().unwrap_or("")))
        })
        .take(3)
        .collect::<Vec<_>>()
        .join("; ")
}

/// EXTERNAL_EDIT commits count the violations their hand edits brought.
fn add_violations(files: &mut [StoreWrite], per_table: &BTreeMap<String, usize>) {
    for f in files.iter_mut().filter(|f| !f.path.ends_with(".checkpoint.json")) {
        let Ok(mut c) = serde_json::from_str::<crate::log::Commit>(&f.text) else { continue };
        if c.operation != "EXTERNAL_EDIT" {
            continue;
        }
        let table = f.path.trim_start_matches(crate::log::LOG).split('/').next().unwrap_or("");
        if let Some(n) = per_table.get(table) {
            c.operation_metrics["violations"] = (*n).into();
            *f = crate::log::write_json(f.path.clone(), &c);
        }
    }
}

/// Adds an automatic write's step to the tick's outcome: the write to apply now,
/// with what the tick gathered before it, or None when the tick goes on.
fn merge(out: &mut Outcome, w: Step) -> Option<Step> {
    match w {
        Step::Apply(mut a) => {
            let mut store = std::mem::take(&mut out.store);
            store.append(&mut a.store);
            a.store = store;
            a.log.splice(0..0, std::mem::take(&mut out.log));
            Some(Step::Apply(a))
        }
        Step::Done(o) if o.status == Status::Done => {
            out.store.extend(o.store);
            out.answer = o.answer;
            None
        }
        Step::Done(o) => {
            out.store.extend(o.store);
            let error = o.answer.get("error").and_then(Value::as_str).unwrap_or("an automatic write was refused");
            out.log.push(format!("WARN {error}"));
            None
        }
        Step::Need(paths) => {
            out.log.push(format!("WARN an automatic write asked for store files: {}", paths.join(", ")));
            None
        }
    }
}
