//! The round of hand edits: the changes gathered since the last round, applied to
//! the index in order, reported in the feed with what they break, committed to
//! the tables' logs.

use super::{HandMove, Hands, VaultEvent, MAX_VIOLATIONS, RECOMPUTE_MS};
use crate::edits::StoreWrite;
use crate::feed::events::{event, metastore_event, Seen};
use crate::feed::{Event, EventKind, Source};
use crate::frontmatter::body;
use crate::log::commit::Made;
use crate::schema::{Schema, METASTORE};
use crate::step::Outcome;
use crate::texthash::TextHash;
use crate::tx::Tx;
use crate::validate::{Ctx, Violation};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// A round's work from its first event to its commit.
struct Round {
    tx: Tx,
    /// Rows as they were checked before the edits (the rows touched, the rows linking
    /// to them, the rows of tables redefined): an event reports only what its edit brought.
    before: HashMap<String, Vec<Violation>>,
    feed: Vec<Event>,
    /// Each note's last event in `feed`: the one that carries its violations.
    last_of: BTreeMap<String, usize>,
    /// Notes moved by hand: from, to, and the event in `feed` that reports the move.
    moves: Vec<(String, String, usize)>,
    /// Each table whose definition was edited by hand: the index of its last metastore event.
    schema_tables: BTreeMap<String, usize>,
}

/// What the edits of a round newly break, the violations from before them aside.
struct Breaks<'a> {
    ctx: Ctx<'a>,
    before: &'a HashMap<String, Vec<Violation>>,
    /// Notes edited in the round: their own events report their violations.
    edited: BTreeSet<&'a String>,
    /// Links to notes moved by hand dangle until the repair rewrites them: not reported.
    moved_stems: BTreeSet<String>,
    repairing: bool,
}

impl Breaks<'_> {
    /// Whether a violation is a link to a note moved by hand.
    fn to_moved(&self, row: &str, v: &Violation) -> bool {
        v.code == "broken_link"
            && v.column.as_ref().is_some_and(|c| {
                let val = self.ctx.vault.row(row).and_then(|r| r.values.get(c));
                let val = match (val, v.index) {
                    (Some(Value::Array(a)), Some(i)) => a.get(i),
                    (x, _) => x,
                };
                val.and_then(Value::as_str).is_some_and(|s| {
                    self.moved_stems.contains(&crate::links::target_stem(crate::filter::link_target(s)))
                })
            })
    }

    /// A row's violations that it did not have before the round.
    fn added(&self, p: &str) -> Vec<Violation> {
        let b = self.before.get(p);
        self.ctx
            .check_row(p)
            .into_iter()
            .filter(|v| b.is_none_or(|b| !b.iter().any(|o| o.key() == v.key())) && !self.to_moved(p, v))
            .collect()
    }

    /// What an event's edit breaks: in its row, and in the rows linking to it (or to
    /// where it was). A row whose generated columns are off puts its table in `stale`.
    fn of_event(&self, path: &str, e: &Event, stale: &mut BTreeSet<String>) -> Vec<(String, Vec<Violation>)> {
        let mut list: Vec<(String, Vec<Violation>)> = vec![];
        if e.kind != EventKind::Delete {
            let own = self.added(path);
            if own.iter().any(|v| v.code == "generated") {
                if let Some(t) = &e.table {
                    stale.insert(t.clone());
                }
            }
            if !own.is_empty() {
                list.push((path.to_string(), own));
            }
        }
        let vault = self.ctx.vault;
        let mut linkers = vault.naming(path);
        if let Some(old) = &e.old_path {
            linkers.extend(vault.naming(old));
        }
        if e.kind == EventKind::Delete || e.old_path.is_some() {
            linkers.extend(self.before.keys().filter(|k| !self.edited.contains(k)).cloned());
        }
        linkers.sort();
        linkers.dedup();
        let name = crate::names::note_name(path);
        for l in linkers.iter().filter(|l| !self.edited.contains(l) && *l != path) {
            let mut vs = self.added(l);
            if e.kind == EventKind::Move && self.repairing {
                vs.retain(|v| v.code != "broken_link");
            }
            for v in &mut vs {
                v.message = format!("{} (after the edit of [[{name}]], a row it links to)", v.message);
            }
            if !vs.is_empty() {
                list.push((l.clone(), vs));
            }
        }
        list
    }
}

impl Hands<'_> {
    /// The round of hand edits: applied to the index in order, reported in the
    /// feed with what they break, committed to the logs.
    pub(crate) fn hand_round(&mut self, now_ms: i64, out: &mut Outcome) {
        let queue = std::mem::take(&mut self.hand.queue);
        let events = self.coalesce(queue);
        self.hand.first_ms = None;
        let events = self.apply_synced(events, out);
        if events.is_empty() {
            return;
        }
        let mut round = self.open_round(&events);
        self.apply_events(events, &mut round);
        let stale = self.event_violations(&mut round);
        self.schema_violations(&mut round);
        self.queue_link_sync(&round.feed, now_ms);
        let per_table = self.publish(round.feed, &round.moves, now_ms, out);
        self.record_touched(&round.tx, out);
        self.commit_round(&round.tx, &per_table, now_ms, out);
        if !stale.is_empty() && self.settings.auto_recompute {
            self.hand.recompute.extend(stale);
            self.hand.recompute_at = Some(now_ms + RECOMPUTE_MS);
        }
    }

    /// A round for these events, with the rows they touch checked and their texts
    /// kept as they were before it.
    fn open_round(&self, events: &[VaultEvent]) -> Round {
        let mut tx = Tx::new(crate::log::EXTERNAL_EDIT);
        let mut before: HashMap<String, Vec<Violation>> = HashMap::new();
        let touched = touched_paths(events);
        self.note_violations(touched.iter().cloned(), &mut before);
        for p in &touched {
            tx.originals.entry(p.clone()).or_insert_with(|| self.index.vault.text(p).map(str::to_string));
        }
        Round { tx, before, feed: vec![], last_of: BTreeMap::new(), moves: vec![], schema_tables: BTreeMap::new() }
    }

    /// The events applied to the index in order, each with its feed event.
    fn apply_events(&mut self, events: Vec<VaultEvent>, round: &mut Round) {
        for ev in events {
            match ev {
                VaultEvent::Created { path, text, .. } | VaultEvent::Modified { path, text, .. }
                    if path == METASTORE =>
                {
                    let tables = self.hand_schema(Some(text), round);
                    round.schema_tables.extend(tables);
                }
                VaultEvent::Removed { path } if path == METASTORE => {
                    let tables = self.hand_schema(None, round);
                    round.schema_tables.extend(tables);
                }
                VaultEvent::Created { path, text, mtime } | VaultEvent::Modified { path, text, mtime } => {
                    let b = crate::feed::events::seen_now(&self.index.vault, &path);
                    let old_body = self.index.vault.get(&path).and_then(|n| n.text.as_deref()).map(body);
                    let same_body = old_body == Some(body(&text));
                    self.index.vault.insert(&self.index.schema, path.clone(), text, mtime);
                    if let Some(i) = self.push_hand(round, &path, None, b) {
                        let e = &mut round.feed[i];
                        e.format_only = same_body && e.kind == EventKind::Update && e.changes.is_empty();
                    }
                }
                VaultEvent::Removed { path } => {
                    let b = crate::feed::events::seen_now(&self.index.vault, &path);
                    self.index.vault.remove(&path);
                    self.push_hand(round, &path, None, b);
                }
                VaultEvent::Renamed { from, to, text, mtime } => {
                    let b = crate::feed::events::seen_now(&self.index.vault, &from);
                    if let Some(v) = self.hand.last_readable.remove(&from) {
                        self.hand.last_readable.insert(to.clone(), v);
                    }
                    self.index.vault.remove(&from);
                    self.index.vault.insert(&self.index.schema, to.clone(), text, mtime);
                    round.tx.moves.push((from.clone(), to.clone()));
                    round.last_of.remove(&from);
                    if let Some(i) = self.push_hand(round, &to, Some(&from), b) {
                        round.moves.push((from, to, i));
                    }
                }
            }
        }
    }

    /// What each row's last event breaks: in the row, and in the rows linking to it.
    /// Returns the tables whose generated columns went stale.
    fn event_violations(&self, round: &mut Round) -> BTreeSet<String> {
        let repairing = self.settings.repair_links_on_hand_move;
        let breaks = Breaks {
            ctx: Ctx { schema: &self.index.schema, vault: &self.index.vault },
            before: &round.before,
            edited: round.last_of.keys().collect(),
            moved_stems: self.moved_stems(&round.moves, repairing),
            repairing,
        };
        let mut stale: BTreeSet<String> = BTreeSet::new();
        for (path, i) in &round.last_of {
            let e = &round.feed[*i];
            if e.kind == EventKind::Unreadable
                || (e.kind == EventKind::Update && e.changes.is_empty())
                || (e.table.is_none() && e.kind != EventKind::Move)
            {
                continue;
            }
            let list = breaks.of_event(path, e, &mut stale);
            set_violations(&mut round.feed[*i], list);
        }
        stale
    }

    /// What a hand edit found without its old text (made while no engine ran, to a
    /// table that keeps no history) breaks: as for an edit of a round, but
    /// against nothing known before, so every violation of the row and of the
    /// rows linking to it counts.
    pub(super) fn unseen_violations(&self, path: &str, e: &mut Event) {
        let before = HashMap::new();
        let path_key = path.to_string();
        let breaks = Breaks {
            ctx: Ctx { schema: &self.index.schema, vault: &self.index.vault },
            before: &before,
            edited: BTreeSet::from([&path_key]),
            moved_stems: BTreeSet::new(),
            repairing: false,
        };
        let list = breaks.of_event(path, e, &mut BTreeSet::new());
        if !list.is_empty() {
            set_violations(e, list);
        }
    }

    /// The old stems of the notes moved by hand, in this round and before it, when
    /// their links are to be repaired.
    fn moved_stems(&self, moves: &[(String, String, usize)], repairing: bool) -> BTreeSet<String> {
        if repairing {
            moves
                .iter()
                .map(|(f, _, _)| crate::links::path_stem(f))
                .chain(self.hand.moves.iter().map(|m| crate::links::path_stem(&m.old_path)))
                .collect()
        } else {
            BTreeSet::new()
        }
    }

    /// What each table definition edited by hand breaks in the table's rows, on its
    /// metastore event.
    fn schema_violations(&self, round: &mut Round) {
        for (table, i) in &round.schema_tables {
            let mut list = vec![];
            let mut all = HashMap::new();
            self.table_violations(&BTreeSet::from([table.clone()]), &mut all);
            let mut paths: Vec<&String> = all.keys().collect();
            paths.sort();
            for p in paths {
                let b = round.before.get(p);
                let vs: Vec<Violation> = all[p]
                    .iter()
                    .filter(|v| b.is_none_or(|b| !b.iter().any(|o| o.key() == v.key())))
                    .cloned()
                    .collect();
                if !vs.is_empty() {
                    list.push((p.clone(), vs));
                }
            }
            if round.feed.get(*i).is_some_and(|e| e.violations.is_none()) {
                set_violations(&mut round.feed[*i], list);
            }
        }
    }

    /// Two-way links: the rows whose inverse link columns the edits changed.
    fn queue_link_sync(&mut self, feed: &[Event], now_ms: i64) {
        for e in feed {
            let (Some(table), Some(path)) = (&e.table, &e.path) else { continue };
            let Some(def) = self.index.schema.tables.get(table) else { continue };
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
    }

    /// The round's events numbered, logged and added to the feed; the moves wait for
    /// their links to be repaired. Returns each table's count of violations.
    fn publish(
        &mut self,
        feed: Vec<Event>,
        moves: &[(String, String, usize)],
        now_ms: i64,
        out: &mut Outcome,
    ) -> BTreeMap<String, usize> {
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
            self.count_violations(&e, &mut per_table);
            if total > 0 {
                out.log.push(format!(
                    "WARN hand edit of {} breaks {total} rule(s): {}",
                    e.path.clone().unwrap_or_default(),
                    first_messages(&e)
                ));
            }
            out.store.extend(self.feed.push(e));
            let seq = self.feed.head;
            for (from, to, i) in moves {
                if *i == k {
                    self.note_move(from, to, seq);
                }
            }
        }
        per_table
    }

    /// Each table counts the violations of its own rows; a checked edit counts 0.
    fn count_violations(&self, e: &Event, per_table: &mut BTreeMap<String, usize>) {
        if e.violations.is_some() {
            if let Some(t) = &e.table {
                per_table.entry(t.clone()).or_default();
            }
            for r in e.violations.iter().flatten() {
                let row_table = r["path"].as_str().and_then(|p| self.index.schema.table_of_path(p)).map(str::to_string);
                if let Some(t) = row_table.or_else(|| e.table.clone()) {
                    *per_table.entry(t).or_default() += r["violations"].as_array().map_or(0, Vec::len);
                }
            }
        }
    }

    /// A note moved by hand, reported as event `seq`, waits for its links to be repaired.
    fn note_move(&mut self, from: &str, to: &str, seq: u64) {
        // A note moved again before its links were repaired: one move, from the first path.
        match self.hand.moves.iter_mut().find(|m| m.path == *from) {
            Some(m) => {
                m.path = to.to_string();
                m.seq = seq;
            }
            None => self.hand.moves.push(HandMove { path: to.to_string(), old_path: from.to_string(), seq }),
        }
    }

    /// The notes the round touched, recorded in `known.jsonl`.
    fn record_touched(&mut self, tx: &Tx, out: &mut Outcome) {
        let touched_now: Vec<(String, Option<TextHash>)> = tx
            .originals
            .keys()
            .chain(tx.moves.iter().map(|(_, to)| to))
            .map(|p| (p.clone(), self.index.vault.get(p).map(|n| n.hash)))
            .collect();
        if let Some(k) = self.known.as_mut() {
            out.store.extend(k.record(touched_now.iter().map(|(p, h)| (p.as_str(), *h))));
        }
    }

    /// The round committed to the tables' logs (EXTERNAL_EDIT), with the count of
    /// violations it brought.
    fn commit_round(&mut self, tx: &Tx, per_table: &BTreeMap<String, usize>, now_ms: i64, out: &mut Outcome) {
        let changes = self.index.changes_of(tx);
        let made = Made { operation: crate::log::EXTERNAL_EDIT_OPERATION, migration_id: None, batch: false, now_ms };
        match self.logs().commits_of(tx, &changes, &made) {
            Ok(mut c) => {
                add_violations(&mut c.files, per_table);
                out.store.extend(std::mem::take(&mut c.blobs));
                out.store.extend(crate::log::commit::committed(self.store, c));
            }
            Err(f) => {
                out.log.push(format!("WARN the hand edits could not be committed to the tables' logs: {}", f.text()))
            }
        }
    }

    /// Checks rows (and the rows linking to them) and keeps their violations.
    fn note_violations(&self, paths: impl IntoIterator<Item = String>, into: &mut HashMap<String, Vec<Violation>>) {
        let ctx = Ctx { schema: &self.index.schema, vault: &self.index.vault };
        for p in paths {
            let mut rows = self.index.vault.naming(&p);
            rows.push(p);
            for r in rows {
                if !into.contains_key(&r) && self.index.vault.get(&r).is_some() {
                    let v = ctx.check_row(&r);
                    into.insert(r, v);
                }
            }
        }
    }

    /// Every row of these tables, checked.
    fn table_violations(&self, tables: &BTreeSet<String>, into: &mut HashMap<String, Vec<Violation>>) {
        let ctx = Ctx { schema: &self.index.schema, vault: &self.index.vault };
        for t in tables {
            for p in self.index.vault.table_rows(t).chain(self.index.vault.unreadable_rows(t)) {
                into.entry(p.to_string()).or_insert_with(|| ctx.check_row(p));
            }
        }
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
        // By hash: the removed note may be one opened from the cache, unread.
        let created: Vec<Option<TextHash>> = out
            .iter()
            .map(|e| match e {
                Some(VaultEvent::Created { text, .. }) => Some(TextHash::of(text)),
                _ => None,
            })
            .collect();
        for i in 0..out.len() {
            let Some(VaultEvent::Removed { path }) = &out[i] else { continue };
            let Some(old) = self.index.vault.get(path).map(|n| n.hash) else { continue };
            let from = path.clone();
            let later = out[i + 1..].iter().zip(&created[i + 1..]).position(|(e, h)| {
                matches!(e, Some(VaultEvent::Created { path: p, .. }) if *p != from) && *h == Some(old)
            });
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
    fn push_hand(&mut self, round: &mut Round, path: &str, from: Option<&str>, b: Seen) -> Option<usize> {
        let a = crate::feed::events::seen_now(&self.index.vault, path);
        if let (Seen::Row { values, .. }, Seen::Unreadable { .. }) = (&b, &a) {
            self.hand.last_readable.insert(path.to_string(), values.clone());
        }
        let last = match (&b, &a) {
            (Seen::Unreadable { .. }, Seen::Row { .. }) => self.hand.last_readable.remove(path),
            _ => None,
        };
        let mut e = event(path, from, &b, &a, last.as_ref())?;
        if e.kind == EventKind::Unreadable {
            // A conflict (a sync tool's copy, git's markers): both versions, as check_table has them.
            let ctx = Ctx { schema: &self.index.schema, vault: &self.index.vault };
            let v = ctx.check_row(path);
            if v.first().is_some_and(|v| v.code == "conflict") {
                let list: Vec<Value> = v.iter().map(Violation::to_json).collect();
                e.violations = Some(vec![serde_json::json!({"path": path, "violations": list})]);
            }
        }
        if e.kind == EventKind::Delete && matches!(b, Seen::Unreadable { .. }) {
            self.hand.last_readable.remove(path);
        }
        round.feed.push(e);
        let i = round.feed.len() - 1;
        round.last_of.insert(path.to_string(), i);
        Some(i)
    }

    /// metastore.yaml edited (or removed) by hand: the tables whose entries changed
    /// are read again. Returns the metastore event's index and those tables.
    fn hand_schema(&mut self, text: Option<String>, round: &mut Round) -> Vec<(String, usize)> {
        let parsed = match &text {
            Some(t) => Schema::parse(t),
            None => Err(format!("{METASTORE} was removed")),
        };
        let new = match parsed {
            Ok(s) => s,
            Err(msg) => {
                self.index.schema_error = Some(msg.clone());
                self.index.metastore = text;
                round.feed.push(Event {
                    kind: EventKind::Metastore,
                    path: Some(METASTORE.into()),
                    violations: Some(vec![json!({"path": METASTORE, "violations": [{"code": "unreadable", "message": format!("{msg}: the engine keeps the schema it had, and refuses writes until the file is fixed")}]})]),
                    ..Event::default()
                });
                return vec![];
            }
        };
        let changed = self.index.schema.changed_tables(&new);
        let was_unreadable = self.index.schema_error.take().is_some();
        if changed.is_empty() {
            self.index.metastore = text;
            if was_unreadable {
                // Readable again, as it was before it broke: said as its
                // breaking was, so that a reader of the feed knows writes run.
                round.feed.push(Event {
                    kind: EventKind::Metastore,
                    path: Some(METASTORE.into()),
                    violations: Some(vec![]),
                    ..Event::default()
                });
            }
            return vec![];
        }
        self.table_violations(&changed, &mut round.before);
        if round.tx.schema_before.is_none() {
            round.tx.schema_before =
                Some((self.index.schema.clone(), self.index.metastore.clone().unwrap_or_default()));
        }
        let mut events = vec![];
        for t in &changed {
            events.push((t.clone(), round.feed.len()));
            round.feed.push(metastore_event(t, self.index.schema.tables.get(t), new.tables.get(t)));
        }
        self.index.set_schema(new, text, &changed);
        events
    }
}

/// The notes the events touch (both paths of a move), metastore.yaml aside.
fn touched_paths(events: &[VaultEvent]) -> Vec<String> {
    events
        .iter()
        .flat_map(|e| match e {
            VaultEvent::Created { path, .. } | VaultEvent::Modified { path, .. } | VaultEvent::Removed { path } => {
                vec![path.clone()]
            }
            VaultEvent::Renamed { from, to, .. } => vec![from.clone(), to.clone()],
        })
        .filter(|p| p != METASTORE)
        .collect()
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
