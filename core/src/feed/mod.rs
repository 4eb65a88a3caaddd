//! The change feed: every row change numbered (`seq`), from engine writes and
//! from hand edits, kept in `feed/<first seq>.<device>.jsonl` segments (one event
//! a line; `feed/<first seq>.jsonl` before devices) with a retention.
//!
//! Each device appends to its own segments, so a file sync keeps every device's
//! events; they are numbered as commits are (log/order.rs): by the seq each
//! claimed, then by device, one past the event before when that seq is taken.

pub mod address;
pub(crate) mod events;
pub mod webhook;

use crate::edits::StoreWrite;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

pub const DIR: &str = "feed/";
/// Events per segment file.
pub const SEGMENT: u64 = 1000;
/// Events kept; older segments are dropped (a reader that asks for them gets `gap`).
pub const KEEP: u64 = 100_000;

fn none<T>(v: &Option<T>) -> bool {
    v.is_none()
}

/// What happened to a row (or the schema), as the feed names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    Insert,
    #[default]
    Update,
    Delete,
    Move,
    /// metastore.yaml changed.
    Metastore,
    /// A row's front matter can no longer be read.
    Unreadable,
    /// An agent's tool call (only when a reader asks for it).
    ToolCall,
    /// A proposal was opened by its first staged write (proposals.rs).
    ProposalCreated,
    /// Writes of a proposal were accepted, as one journaled write.
    ProposalAccepted,
    /// A proposal was rejected (with the person's message) or withdrawn.
    ProposalRejected,
}

impl EventKind {
    /// The name on the wire (list_changes `kinds`, webhook filters).
    pub fn name(self) -> &'static str {
        match self {
            EventKind::Insert => "insert",
            EventKind::Update => "update",
            EventKind::Delete => "delete",
            EventKind::Move => "move",
            EventKind::Metastore => "metastore",
            EventKind::Unreadable => "unreadable",
            EventKind::ToolCall => "tool_call",
            EventKind::ProposalCreated => "proposal_created",
            EventKind::ProposalAccepted => "proposal_accepted",
            EventKind::ProposalRejected => "proposal_rejected",
        }
    }
}

/// Who made a change: the engine (an operation), or someone outside it (a hand
/// edit: an editor, git, a sync tool).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    #[default]
    Engine,
    External,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Event {
    pub seq: u64,
    pub at: String,
    #[serde(default)]
    pub at_ms: i64,
    pub table: Option<String>,
    pub kind: EventKind,
    #[serde(default, skip_serializing_if = "none")]
    pub op: Option<String>,
    pub source: Source,
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "none")]
    pub old_path: Option<String>,
    #[serde(default, skip_serializing_if = "none")]
    pub row_id: Option<String>,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub changes: Map<String, Value>,
    /// A hand edit that rewrote the note's front matter without changing a
    /// value (quotes, a list written another way, keys reordered: what
    /// Obsidian's property editor does): `changes` is empty and nothing is
    /// checked again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub format_only: bool,
    #[serde(default, skip_serializing_if = "none")]
    pub values: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "none")]
    pub actor: Option<Value>,
    #[serde(default, skip_serializing_if = "none")]
    pub migration_id: Option<String>,
    #[serde(default, skip_serializing_if = "none")]
    pub violations: Option<Vec<Value>>,
    #[serde(default, skip_serializing_if = "none")]
    pub violations_total: Option<usize>,
    #[serde(default, skip_serializing_if = "none")]
    pub cause: Option<Vec<Value>>,
    #[serde(default, skip_serializing_if = "none")]
    pub call: Option<Value>,
    /// A proposal's event: {name, author, message, writes, decision}.
    #[serde(default, skip_serializing_if = "none")]
    pub proposal: Option<Value>,
}

#[derive(Debug, Default, Clone)]
pub struct Feed {
    /// Kept events, oldest first.
    pub events: VecDeque<Event>,
    pub head: u64,
    /// This device's id: its events go to segments of its own.
    pub device: Option<String>,
    /// The segment file of each kept event, in step with `events`.
    files: VecDeque<Arc<str>>,
    /// The highest seq each other device claimed in the segments read: a
    /// segment that arrives again brings only the events after it.
    seen: HashMap<String, u64>,
}

/// The segment an event of `seq` written by `device` goes to.
pub fn segment_path(seq: u64, device: Option<&str>) -> String {
    let first = (seq.saturating_sub(1)) / SEGMENT * SEGMENT + 1;
    match device {
        Some(d) => format!("{DIR}{first:020}.{d}.jsonl"),
        None => format!("{DIR}{first:020}.jsonl"),
    }
}

/// An event as read: (seq claimed, device, line) for its order; the event; its file.
type Loaded<'a> = ((u64, &'a str, usize), Event, Arc<str>);

/// The device of a segment file ("" before devices); None for any other file.
pub(crate) fn segment_device(path: &str) -> Option<&str> {
    let stem = path.strip_prefix(DIR)?.strip_suffix(".jsonl")?;
    let (digits, device) = stem.split_once('.').unwrap_or((stem, ""));
    // A sync tool's copy of a segment (`….a.sync-conflict-….jsonl`) names no device.
    let named = device.is_empty() || crate::log::order::is_device(device);
    (digits.len() == 20 && digits.bytes().all(|b| b.is_ascii_digit()) && named).then_some(device)
}

/// The events of a segment's text, in its order; a damaged line, or one no
/// engine writes (trust.rs), is reported and left out.
fn events_in<'a>(path: &'a str, text: &'a str, warnings: &'a mut Vec<String>) -> impl Iterator<Item = Event> + 'a {
    let lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
    lines.filter_map(move |(i, line)| match serde_json::from_str::<Event>(line) {
        Ok(e) => match event_problem(&e) {
            None => Some(e),
            Some(why) => {
                warnings.push(format!("{path} line {} is left out of the change feed: {why}", i + 1));
                None
            }
        },
        Err(err) => {
            warnings.push(format!("{path} line {}: {err}: left out of the change feed", i + 1));
            None
        }
    })
}

impl Feed {
    /// Reads the segments the host handed over, every device's, in one order;
    /// damaged lines are reported.
    pub fn load(files: &[(String, String)]) -> (Feed, Vec<String>) {
        let mut warnings = vec![];
        let mut all: Vec<Loaded> = vec![];
        let mut last: HashMap<&str, u64> = HashMap::new();
        let mut segs: Vec<(&str, &str, &str)> =
            files.iter().filter_map(|(p, t)| Some((segment_device(p)?, p.as_str(), t.as_str()))).collect();
        segs.sort_unstable();
        for (device, path, text) in segs {
            let file: Arc<str> = path.into();
            for e in events_in(path, text, &mut warnings) {
                // A line written twice (an append retried) counts once.
                if e.seq > last.get(device).copied().unwrap_or(0) {
                    last.insert(device, e.seq);
                    all.push(((e.seq, device, all.len()), e, file.clone()));
                }
            }
        }
        all.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut f = Feed { seen: last.into_iter().map(|(d, s)| (d.to_string(), s)).collect(), ..Feed::default() };
        for ((claimed, _, _), mut e, file) in all {
            e.seq = crate::log::order::renumbered(f.events.back().map(|x| x.seq), claimed);
            f.head = e.seq;
            f.events.push_back(e);
            f.files.push_back(file);
        }
        (f, warnings)
    }

    /// A segment another device's engine wrote, brought by a sync while the
    /// engine runs: its events not read before are numbered after the head, in
    /// the order they came (a reader's `since` and the webhooks' cursors miss
    /// none; the next open numbers the merged feed by `load`'s rule). Damaged
    /// lines are reported.
    pub fn arrived(&mut self, path: &str, text: &str, now_ms: i64) -> Vec<String> {
        let mut warnings = vec![];
        let Some(device) = segment_device(path).filter(|d| !d.is_empty() && Some(*d) != self.device.as_deref()) else {
            return warnings;
        };
        let file: Arc<str> = path.into();
        let mut ahead = 0;
        for mut e in events_in(path, text, &mut warnings) {
            // Another device's clock, or a forger's: never ahead of this one's.
            if crate::trust::ahead_of(e.at_ms, now_ms) {
                ahead += 1;
                (e.at_ms, e.at) = (now_ms, crate::time::iso(now_ms));
            }
            if e.seq > self.seen.get(device).copied().unwrap_or(0) {
                self.seen.insert(device.to_string(), e.seq);
                self.head += 1;
                e.seq = self.head;
                self.events.push_back(e);
                self.files.push_back(file.clone());
            }
        }
        if ahead > 0 {
            warnings.push(format!("{path}: {ahead} events claim a time ahead of this device's clock: listed as now"));
        }
        warnings
    }

    /// The oldest seq kept (head + 1 when the feed is empty).
    pub fn first(&self) -> u64 {
        self.events.front().map_or(self.head + 1, |e| e.seq)
    }

    /// Numbers an event, keeps it, and returns the store writes: its line, and the
    /// segments retention drops.
    pub fn push(&mut self, mut e: Event) -> Vec<StoreWrite> {
        self.head += 1;
        e.seq = self.head;
        let mut line = serde_json::to_string(&e).unwrap_or_default();
        line.push('\n');
        let file = segment_path(e.seq, self.device.as_deref());
        let mut out = vec![StoreWrite::append(file.clone(), line)];
        self.events.push_back(e);
        self.files.push_back(match self.files.back() {
            Some(f) if **f == *file => f.clone(),
            _ => file.into(),
        });
        while self.events.len() as u64 > KEEP + SEGMENT {
            let Some(seg) = self.files.front().cloned() else { break };
            while self.files.front().is_some_and(|f| *f == seg) {
                self.files.pop_front();
                self.events.pop_front();
            }
            out.push(StoreWrite::delete(seg.to_string()));
        }
        out
    }

    /// The events after `since`, oldest first.
    pub fn after(&self, since: u64) -> impl Iterator<Item = &Event> {
        let first = self.first();
        let skip = since.saturating_sub(first.saturating_sub(1)) as usize;
        self.events.iter().skip(skip)
    }
}

/// Why a change-feed event read from another device's segment cannot be
/// believed, if it cannot: it names a note path no engine writes, a table by
/// something else than a table's name, or an operation id that is no id.
/// (An event that passes is still that device's word: it reports, it writes
/// nothing.)
pub fn event_problem(e: &Event) -> Option<String> {
    for p in e.path.iter().chain(e.old_path.iter()) {
        if let Some(why) = crate::trust::note_path_problem(p) {
            return Some(format!("it names {why}"));
        }
    }
    if let Some(t) = e.table.as_deref().filter(|t| !crate::schema::valid_qualified(t)) {
        return Some(format!("it names the table {t:?}, which is not a table's name"));
    }
    if let Some(m) = e.migration_id.as_deref().filter(|m| !crate::trust::is_id(m)) {
        return Some(format!("it names the operation {m:?}, which is not an id the engine makes"));
    }
    None
}
