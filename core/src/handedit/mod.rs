//! Edits made outside the engine (an editor, git, a sync tool): the host reports
//! each vault change; the engine tells its own writes apart by content, gathers
//! the others (0.7 s after the last change, at most 5 s after the first),
//! reports them in the change feed checked against the rules, commits them to the
//! tables' logs (EXTERNAL_EDIT), and later repairs the links to notes moved by
//! hand and recomputes generated columns.

pub mod known;
mod reconcile;
mod round;
mod synced;

pub use synced::synced_file;

use crate::edits::StoreWrite;
use crate::feed::webhook::Hooks;
use crate::feed::{Event, EventKind, Feed, Source};
use crate::index::Index;
use crate::journal::Journal;
use crate::log::commit::Logs;
use crate::schema::METASTORE;
use crate::settings::Settings;
use crate::step::{Outcome, Status, Step};
use crate::store::Store;
use known::Known;
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::collections::{BTreeSet, HashMap};

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

impl VaultEvent {
    /// The notes it names: a rename's both.
    fn paths(&self) -> impl Iterator<Item = &str> {
        let (a, b) = match self {
            VaultEvent::Created { path, .. } | VaultEvent::Modified { path, .. } | VaultEvent::Removed { path } => {
                (path, None)
            }
            VaultEvent::Renamed { from, to, .. } => (from, Some(to)),
        };
        std::iter::once(a.as_str()).chain(b.map(String::as_str))
    }
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
    /// What a sync brought from other devices while the engine runs.
    synced: synced::Synced,
    /// Tables' logs still to begin (`begin_logs`), a part each tick from then.
    pub(crate) begin_logs_at: Option<i64>,
}

impl HandState {
    /// The notes the queued changes name.
    pub(crate) fn queued_paths(&self) -> crate::fxhash::FxHashSet<&str> {
        self.queue.iter().flat_map(VaultEvent::paths).collect()
    }

    /// When the last change was seen (ms), 0 before any.
    pub(crate) fn last_seen_ms(&self) -> i64 {
        self.last_ms
    }

    /// When the meeting of synced logs with their notes is due, if one waits.
    pub(crate) fn meet_at(&self) -> Option<i64> {
        self.synced.meet_at
    }

    /// A turn that needs texts the engine has not read: the step that asks for
    /// them. Every row's text but those whose change waits for the round: a
    /// write, a hand edit or a commit may need any of them. A plain note's text
    /// is asked for by the turn that needs it (a link to rewrite: `Vault::text`),
    /// so a vault of many notes outside the tables reads only those.
    pub(crate) fn texts_wanted(&self, vault: &crate::vault::Vault) -> Option<Step> {
        if vault.unread_rows_count() == 0 {
            return None;
        }
        // A row whose change waits for the round is not read again: the round
        // takes its new text from the change.
        let queued = self.queued_paths();
        let rows: Vec<String> = vault.unread_rows().filter(|p| !queued.contains(*p)).map(str::to_string).collect();
        (!rows.is_empty()).then_some(Step::ReadNotes(rows))
    }
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
    path.ends_with(".md") || path == METASTORE || crate::bases::is_base(path)
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

/// What hand edits work on: their own state (`hand`, and what this device last
/// knew of the notes), the index they change, the store (the logs they commit
/// to, the files a sync brings), the journal and the feed they report to.
pub(crate) struct Hands<'a> {
    pub hand: &'a mut HandState,
    pub known: &'a mut Option<Known>,
    pub index: &'a mut Index,
    pub store: &'a mut Store,
    pub journal: &'a mut Journal,
    pub feed: &'a mut Feed,
    pub hooks: &'a mut Hooks,
    pub settings: &'a mut Settings,
}

impl Hands<'_> {
    /// The tables' logs, as the round commits to them.
    pub(crate) fn logs(&mut self) -> Logs<'_> {
        Logs { index: self.index, store: self.store }
    }

    /// Whether a reported change is the engine's own write (the index holds it already).
    fn is_own(&self, ev: &VaultEvent) -> bool {
        let same = |path: &str, text: &str| {
            if path == METASTORE {
                self.index.metastore.as_deref() == Some(text)
            } else {
                self.index.vault.get(path).is_some_and(|n| {
                    n.text.as_ref().map_or(n.hash == crate::texthash::TextHash::of(text), |t| &**t == text)
                })
            }
        };
        match ev {
            VaultEvent::Created { path, text, .. } | VaultEvent::Modified { path, text, .. } => {
                !relevant(path) || same(path, text)
            }
            VaultEvent::Removed { path } => {
                !relevant(path)
                    || if path == METASTORE {
                        self.index.metastore.is_none()
                    } else {
                        self.index.vault.get(path).is_none()
                    }
            }
            VaultEvent::Renamed { from, to, text, .. } => {
                (!relevant(from) && !relevant(to)) || (self.index.vault.get(from).is_none() && same(to, text))
            }
        }
    }

    /// A vault change (see `Engine::observe`).
    pub(crate) fn observe_change(&mut self, event: VaultEvent, now_ms: i64) {
        self.hand.last_change_ms = now_ms;
        self.sync_still_busy(now_ms);
        if self.is_own(&event) {
            return;
        }
        self.hand.queue.push(event);
        self.hand.first_ms.get_or_insert(now_ms);
        self.hand.last_ms = now_ms;
    }

    /// Begins the logs of tables kept with history that have none (see
    /// `Logs::begin_logs`), the next tick asked for at once while some are left.
    pub(crate) fn begin_logs(&mut self, now_ms: i64) -> Vec<StoreWrite> {
        let (writes, done) = self.logs().begin_logs();
        self.hand.begin_logs_at = (!done).then_some(now_ms);
        writes
    }

    /// Whether the round of hand edits is due at `now_ms`.
    pub(crate) fn round_due(&self, now_ms: i64) -> bool {
        self.hand.first_ms.is_some_and(|f| now_ms >= (self.hand.last_ms + ROUND_QUIET_MS).min(f + ROUND_MAX_MS))
    }

    /// The automatic write of `stage` due at `now_ms`, taken from what waits for
    /// it: nothing while hand edits are still queued. The engine runs it
    /// (`Engine::tick`), so that this module never calls an operation itself.
    pub(crate) fn due_write(&mut self, stage: Upkeep, now_ms: i64) -> Option<(&'static str, Value)> {
        if !self.hand.queue.is_empty() {
            return None;
        }
        let h = &mut self.hand;
        match stage {
            Upkeep::RepairLinks => {
                if h.moves.is_empty() || h.git_busy || now_ms < h.last_change_ms + REPAIR_QUIET_MS {
                    return None;
                }
                let moves = std::mem::take(&mut h.moves);
                self.settings.repair_links_on_hand_move.then(|| ("repair_links", json!({"moves": moves})))
            }
            Upkeep::SyncLinks => {
                if h.links_at.is_none_or(|l| now_ms < l) {
                    return None;
                }
                h.links_at = None;
                Some(("sync_links", json!({"rows": std::mem::take(&mut h.links)})))
            }
            Upkeep::Recompute => {
                if h.recompute_at.is_none_or(|r| now_ms < r) {
                    return None;
                }
                let next = h.recompute.pop_first();
                if h.recompute.is_empty() {
                    h.recompute_at = None;
                }
                let t = next?;
                (self.settings.auto_recompute && self.index.schema.tables.contains_key(&t))
                    .then(|| ("recompute_columns", json!({"table": t})))
            }
        }
    }
}

/// The automatic writes that follow hand edits, in the order a tick runs them
/// (each at most once a tick).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Upkeep {
    /// Links to notes moved by hand, after 4 s of quiet (not while git works).
    RepairLinks,
    /// Two-way links a hand edit broke.
    SyncLinks,
    /// One table's generated columns gone stale.
    Recompute,
}

impl Upkeep {
    pub(crate) const ALL: [Upkeep; 3] = [Upkeep::RepairLinks, Upkeep::SyncLinks, Upkeep::Recompute];
}

/// Adds an automatic write's step to the tick's outcome: the write to apply now,
/// with what the tick gathered before it, or None when the tick goes on.
pub(crate) fn merge(out: &mut Outcome, w: Step) -> Option<Step> {
    match w {
        Step::Apply(mut a) => {
            let mut store = std::mem::take(&mut out.store);
            store.append(&mut a.store);
            a.store = store;
            a.log.splice(0..0, std::mem::take(&mut out.log));
            Some(Step::Apply(a))
        }
        Step::Done(o) if o.status == Status::Ok => {
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
        Step::Need(paths) | Step::ReadNotes(paths) => {
            out.log.push(format!("WARN an automatic write asked for files: {}", paths.join(", ")));
            None
        }
    }
}

/// An agent's tool call as a `tool_call` event in the change feed.
pub(crate) fn feed_tool_call(feed: &mut Feed, call: ToolCall, now_ms: i64) -> Vec<StoreWrite> {
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
    feed.push(e)
}

/// When `tick` next has something to do, if ever.
pub(crate) fn due_at(h: &HandState, settings: &Settings, hooks: &Hooks, feed: &Feed) -> Option<i64> {
    let mut d: Vec<i64> = vec![];
    if let Some(first) = h.first_ms {
        d.push((h.last_ms + ROUND_QUIET_MS).min(first + ROUND_MAX_MS));
    }
    if !h.moves.is_empty() && !h.git_busy && settings.repair_links_on_hand_move {
        d.push(h.last_change_ms + REPAIR_QUIET_MS);
    }
    if let Some(r) = h.recompute_at {
        d.push(r);
    }
    if let Some(l) = h.links_at {
        d.push(l);
    }
    d.extend(h.begin_logs_at);
    d.extend(h.meet_at());
    for hook in &hooks.list {
        if !hook.in_flight && hook.status != crate::feed::webhook::HookStatus::Disabled && hook.cursor < feed.head {
            d.push(hook.next_attempt_ms);
        }
    }
    d.into_iter().min()
}
