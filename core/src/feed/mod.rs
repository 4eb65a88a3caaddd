//! The change feed: every row change numbered (`seq`), from engine writes and
//! from hand edits, kept in `feed/<first seq>.jsonl` segments (one event a line)
//! with a retention.

pub mod address;
pub(crate) mod events;
pub mod webhook;

use crate::edits::StoreWrite;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::VecDeque;

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
}

#[derive(Debug, Default, Clone)]
pub struct Feed {
    /// Kept events, oldest first.
    pub events: VecDeque<Event>,
    pub head: u64,
}

pub fn segment_path(seq: u64) -> String {
    let first = (seq.saturating_sub(1)) / SEGMENT * SEGMENT + 1;
    format!("{DIR}{first:020}.jsonl")
}

impl Feed {
    /// Reads the segments the host handed over; damaged lines are reported.
    pub fn load(files: &[(String, String)]) -> (Feed, Vec<String>) {
        let mut f = Feed::default();
        let mut warnings = vec![];
        let mut segs: Vec<&(String, String)> =
            files.iter().filter(|(p, _)| p.starts_with(DIR) && p.ends_with(".jsonl")).collect();
        segs.sort();
        for (path, text) in segs {
            for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
                match serde_json::from_str::<Event>(line) {
                    Ok(e) if e.seq > f.head => {
                        f.head = e.seq;
                        f.events.push_back(e);
                    }
                    Ok(_) => {}
                    Err(err) => warnings.push(format!("{path} line {}: {err}: left out of the change feed", i + 1)),
                }
            }
        }
        (f, warnings)
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
        let mut out = vec![StoreWrite::append(segment_path(e.seq), line)];
        self.events.push_back(e);
        while self.events.len() as u64 > KEEP + SEGMENT {
            let seg = segment_path(self.first());
            while self.events.front().is_some_and(|x| segment_path(x.seq) == seg) {
                self.events.pop_front();
            }
            out.push(StoreWrite::delete(seg));
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
