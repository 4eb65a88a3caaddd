//! One engine for the vault, shared by the front doors of `serve` (HTTP, MCP over
//! HTTP, the vault watcher, the webhook sender) and `mcp` (stdio). The engine
//! takes `&mut` for every call, so calls are serialised through one lock; each
//! runs on a blocking thread, since a write touches the disk. Reads go through the
//! same lock: they take microseconds.
//!
//! After every turn of the engine (a call, a finish, a tick, a report) the
//! feed's head is published on a watch channel, so that a long poll of
//! list_changes waits without holding the lock and without a busy loop.

use crate::disk::Disk;
use crate::fate::Fate;
use datanotes_core::error::Failure;
use datanotes_core::handedit::ToolCall;
use datanotes_core::webhook::Delivery;
use datanotes_core::{Engine, Outcome, Status, VaultEvent};
use serde_json::{json, Value};
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch};

/// How many rows `read_rows_in_background` hands over in one turn of the engine.
const ROWS_PER_TURN: usize = 2000;
/// The longest list_changes holds a request.
pub const MAX_WAIT_MS: u64 = 60_000;
/// A tool call's value in the feed is cut to this many characters.
const MAX_VALUE: usize = 2000;

pub struct Host {
    pub engine: Engine,
    pub disk: Arc<Disk>,
}

#[derive(Clone)]
pub struct Shared {
    host: Arc<Mutex<Host>>,
    /// The vault on disk, which carries out writes after the engine's lock.
    disk: Arc<Disk>,
    head: Arc<watch::Sender<u64>>,
    /// The webhook sender, once `serve` started it.
    deliveries: Arc<OnceLock<mpsc::UnboundedSender<Delivery>>>,
    /// See `engine::private_webhooks`: the engine is opened with it, again
    /// after a queue given up, and the webhook sender connects so.
    private_webhooks: bool,
}

impl Shared {
    /// Opens the vault's engine on `disk` (blocking: call it before the
    /// runtime starts or from a blocking thread), with group commit unless
    /// DATANOTES_GROUP_COMMIT=0. The rows the notes' cache vouched for are left
    /// unread: `read_rows_in_background` reads them once the engine answers.
    pub fn open(disk: Disk, private_webhooks: bool) -> Result<Shared, String> {
        let engine = crate::engine::open(&disk, private_webhooks)?;
        let head = engine.feed_head();
        if std::env::var("DATANOTES_GROUP_COMMIT").as_deref() != Ok("0") {
            disk.group_commit();
        }
        let disk = Arc::new(disk);
        Ok(Shared {
            host: Arc::new(Mutex::new(Host { engine, disk: disk.clone() })),
            disk,
            head: Arc::new(watch::channel(head).0),
            deliveries: Arc::new(OnceLock::new()),
            private_webhooks,
        })
    }

    pub fn vault(&self) -> &Path {
        self.disk.vault()
    }

    /// The vault on disk (the watcher asks it what its queue holds).
    pub fn disk(&self) -> &Disk {
        &self.disk
    }

    /// Whether webhooks may send to loopback and private addresses.
    pub fn private_webhooks(&self) -> bool {
        self.private_webhooks
    }

    /// Reads, on a thread of its own, the rows the open left unread, a few
    /// thousand a turn, while the engine answers: a write that comes first reads
    /// them itself. One changed since the open is reported as a hand edit, one
    /// gone is the watcher's to report (`Engine::read_notes` after reconcile).
    pub fn read_rows_in_background(&self) {
        let me = self.clone();
        let spawned = std::thread::Builder::new().name("datanotes-rows".into()).spawn(move || {
            let rows = me.with(|h| h.engine.unread_rows());
            for batch in rows.chunks(ROWS_PER_TURN) {
                let (files, warnings) = crate::read::read_notes(me.vault(), batch);
                for w in warnings {
                    eprintln!("datanotes: warning: {w}");
                }
                me.with(|h| h.engine.read_notes(files, vec![]));
            }
            // The lookups by name, link and unique value, which the first
            // write would otherwise build while its caller waits (about
            // 220 ms at 100k notes).
            me.with(|h| h.engine.warm_lookups());
        });
        if let Err(e) = spawned {
            eprintln!("datanotes: warning: the rows are read when a turn needs them (no thread to read them now: {e})");
        }
    }

    /// Where the deliveries the engine plans go from now on.
    pub fn send_deliveries_to(&self, tx: mpsc::UnboundedSender<Delivery>) {
        let _ = self.deliveries.set(tx);
    }

    /// Runs `f` on the engine under its lock (blocking), then publishes the feed's
    /// head. A panic while the lock was held is a defect of ours; the engine
    /// refuses further writes itself if one was left half applied.
    pub fn with<R>(&self, f: impl FnOnce(&mut Host) -> R) -> R {
        self.with_told(f).0
    }

    /// As `with`, and the call's fate when the disk refused its writes after
    /// the engine had made them (see `fate`), for its answer to say.
    fn with_told<R>(&self, f: impl FnOnce(&mut Host) -> R) -> (R, Option<Fate>) {
        let mut h = self.host.lock().unwrap_or_else(PoisonError::into_inner);
        let r = f(&mut h);
        let head = h.engine.feed_head();
        let ticket = self.disk.seal_call();
        drop(h);
        let mut fate = None;
        // What a call wrote is on disk and durable before its answer, and
        // before the feed's new head wakes a long poll or a webhook.
        if let Some(t) = ticket {
            if let Err(e) = self.disk.carry_out(t) {
                self.give_up_queue(&e);
            }
            fate = self.disk.wait_durable(t);
        }
        // A call given up: the engine opened the vault again, and said its head.
        if !fate.as_ref().is_some_and(Fate::reopened) {
            self.head.send_if_modified(|v| {
                let moved = *v != head;
                *v = head;
                moved
            });
        }
        (r, fate)
    }

    /// The queue could not be carried out (a full disk, a failed sync, a store
    /// folder replaced): tried once more under the engine's lock, then given
    /// up (`Queue::abandon`, which says each call's fate). The engine holds
    /// those writes; it opens the vault again, so that it holds what the disk
    /// does, before any other call runs.
    fn give_up_queue(&self, e: &str) {
        let mut h = self.host.lock().unwrap_or_else(PoisonError::into_inner);
        if self.disk.run_queue().is_ok() {
            return;
        }
        self.disk.abandon(e);
        eprintln!("datanotes: WARN the disk refused writes the engine had made ({e}): they are given up, and the vault is read again");
        match self.disk.direct(|| crate::engine::open(&self.disk, self.private_webhooks)) {
            Ok(engine) => {
                h.engine = engine;
                self.head.send_replace(h.engine.feed_head());
            }
            Err(e) => {
                // Its engine holds writes the disk does not: no call may see it.
                eprintln!("datanotes: the vault cannot be read again ({e}): stopping, so that no answer comes from an engine the disk disagrees with; start it again once the disk is mended");
                std::process::exit(1);
            }
        }
        drop(h);
        self.read_rows_in_background();
    }

    /// As `with`, on a blocking thread.
    async fn blocking<R: Send + 'static>(&self, f: impl FnOnce(&Shared, &mut Host) -> R + Send + 'static) -> Option<R> {
        self.blocking_told(f).await.map(|(r, _)| r)
    }

    /// As `with_told`, on a blocking thread.
    async fn blocking_told<R: Send + 'static>(
        &self,
        f: impl FnOnce(&Shared, &mut Host) -> R + Send + 'static,
    ) -> Option<(R, Option<Fate>)> {
        let me = self.clone();
        tokio::task::spawn_blocking(move || {
            let s = me.clone();
            me.with_told(|h| f(&s, h))
        })
        .await
        .ok()
    }

    /// What an outcome asks of the host besides its answer: its log lines on
    /// stderr (each names its level), its deliveries to the webhook sender.
    pub fn after(&self, out: &mut Outcome) {
        for line in out.log.drain(..) {
            eprintln!("datanotes: {line}");
        }
        let deliveries = std::mem::take(&mut out.deliveries);
        if let Some(tx) = self.deliveries.get() {
            for d in deliveries {
                let _ = tx.send(d);
            }
        }
    }

    /// Runs one operation to its end, as `datanotes call` does: the edits of a
    /// write are applied and the store written before the answer comes back.
    /// list_changes with `wait_ms` holds the call until the feed has something
    /// or the time runs out.
    pub async fn call(&self, op: String, args: Value, actor: String) -> Outcome {
        let wait = if datanotes_core::ops::registry::spec(&op).is_some_and(|s| s.facts.long_poll) {
            args.get("wait_ms").and_then(Value::as_u64).unwrap_or(0).min(MAX_WAIT_MS)
        } else {
            0
        };
        if wait == 0 {
            return self.call_once(op, args, actor).await;
        }
        // Subscribed before the first call: a change made after it wakes the wait.
        let mut head = self.head.subscribe();
        let deadline = tokio::time::Instant::now() + Duration::from_millis(wait);
        let mut out = self.call_once(op.clone(), args.clone(), actor.clone()).await;
        let mut again = args;
        if let Some(m) = again.as_object_mut() {
            m.insert("wait_ms".into(), json!(0));
        }
        loop {
            let empty = out.answer.get("events").and_then(Value::as_array).is_some_and(Vec::is_empty);
            // A gap (a cursor not of this feed) is news enough: the reader re-reads.
            let gap = out.answer.get("gap").and_then(Value::as_bool).unwrap_or(false);
            if out.status != Status::Ok || !empty || gap {
                return out;
            }
            match tokio::time::timeout_at(deadline, head.changed()).await {
                Ok(Ok(())) => {}
                _ => return out,
            }
            out = self.call_once(op.clone(), again.clone(), actor.clone()).await;
        }
    }

    async fn call_once(&self, op: String, args: Value, actor: String) -> Outcome {
        let name = op.clone();
        let out = self
            .blocking_told(move |s, h| {
                let Host { engine, disk } = h;
                let mut out = crate::engine::run(engine, disk, &op, args, &actor);
                s.after(&mut out);
                out
            })
            .await
            .map(|(out, fate)| match fate {
                // The engine's own refusals stand, unless part of the call does.
                Some(f) if out.status == Status::Ok || matches!(f, Fate::CutShort(_)) => {
                    let mut said = f.outcome(&name, &out.answer);
                    said.log = out.log;
                    said
                }
                _ => out,
            });
        out.unwrap_or_else(|| {
            Outcome::failed(&Failure::internal(&name, "the operation stopped unexpectedly".to_string()))
        })
    }

    /// An MCP tool call: the operation with "<credential>/<client>" as its actor,
    /// then its record in the change feed (a `tool_call` event).
    pub async fn call_tool(
        &self,
        op: String,
        args: Value,
        credential: &str,
        client: &str,
        session: Option<&str>,
    ) -> Outcome {
        let start = Instant::now();
        let out = self.call(op.clone(), args.clone(), format!("{credential}/{client}")).await;
        let ok = out.status == Status::Ok;
        let value = if ok {
            out.answer.clone()
        } else {
            out.answer.get("error").cloned().unwrap_or_else(|| out.answer.clone())
        };
        let call = ToolCall {
            tool: op,
            args,
            ok,
            duration_ms: start.elapsed().as_millis() as u64,
            value: cut(value),
            served_by: "engine".into(),
            actor: json!({"credential": credential, "client": client, "session": session}),
        };
        self.blocking(move |_, h| {
            let files = h.engine.record_tool_call(call, crate::clock::now_ms());
            if let Err(behind) = datanotes_core::driver::keep(&mut h.engine, &mut h.disk.turn(), &files) {
                eprintln!("datanotes: {}", behind.log);
            }
        })
        .await;
        out
    }

    /// Reports vault changes the watcher saw; `decide` turns what it read into
    /// events, knowing what the engine holds.
    pub fn observe(&self, decide: impl FnOnce(&Engine) -> Vec<VaultEvent>) {
        self.with(|h| {
            let now = crate::clock::now_ms();
            for ev in decide(&h.engine) {
                h.engine.observe(ev, now);
            }
        })
    }

    /// Store files another device wrote, as a sync brought them (paths under
    /// `.datanotes/`, `handedit::synced_file`): read under the engine's lock and
    /// handed to it.
    pub fn store_synced(&self, paths: Vec<String>) {
        self.with(|h| {
            // Read as this engine's own writes left them.
            let _ = h.disk.run_queue();
            let root = h.disk.vault().join(crate::files::STORE);
            let read = |p: String| Some((p.clone(), Some(std::fs::read_to_string(root.join(&p)).ok()?)));
            let files: Vec<(String, Option<String>)> = paths.into_iter().filter_map(read).collect();
            for line in h.engine.store_synced(files, crate::clock::now_ms()) {
                eprintln!("datanotes: {line}");
            }
        })
    }

    /// This engine's device id, if it has one.
    pub fn device(&self) -> Option<String> {
        self.with(|h| h.engine.device().map(str::to_string))
    }

    pub fn set_git_busy(&self, busy: bool) {
        self.with(|h| h.engine.set_git_busy(busy))
    }

    /// Runs what is due (hand-edit batches, link repair, recompute, webhook
    /// deliveries): its store, its write if it plans one, its log and deliveries.
    /// When the engine next has something to do.
    pub fn tick(&self) -> Option<i64> {
        self.with(|h| {
            let Host { engine, disk } = h;
            let mut out = datanotes_core::driver::tick(engine, &mut disk.turn(), crate::clock::now_ms());
            // The engine's own writes (a round of hand edits, a link repair)
            // are on disk before anyone can list them: no caller waits here.
            if disk.unsynced() {
                if let Err(e) = disk.run_queue() {
                    eprintln!("datanotes: warning: {e}: tried again after the lock");
                }
            }
            self.after(&mut out);
            if out.status != Status::Ok {
                let text = out.answer.get("error").and_then(Value::as_str).map(str::to_string);
                eprintln!("datanotes: WARN {}", text.unwrap_or_else(|| out.answer.to_string()));
            }
            engine.next_deadline()
        })
    }

    /// A webhook delivery's result, reported to the engine.
    pub async fn delivered(&self, webhook: String, last: u64, result: Result<u16, String>) {
        self.blocking(move |_, h| {
            let files = h.engine.delivered(&webhook, last, result, crate::clock::now_ms());
            if let Err(behind) = datanotes_core::driver::keep(&mut h.engine, &mut h.disk.turn(), &files) {
                eprintln!("datanotes: {}", behind.log);
            }
        })
        .await;
    }

    /// Waits for the call under way, if any, then ends the process while holding
    /// the engine, so that no write is cut in the middle; `last` runs just before
    /// (the lock file goes).
    pub async fn exit(&self, code: i32, last: impl FnOnce() + Send + 'static) -> ! {
        let host = self.host.clone();
        let _ = tokio::task::spawn_blocking(move || {
            let _h = host.lock().unwrap_or_else(PoisonError::into_inner);
            last();
            std::process::exit(code)
        })
        .await;
        std::process::exit(code)
    }
}

/// A value for the feed: as it is when short, else its JSON text cut.
fn cut(v: Value) -> Value {
    let text = match &v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if text.chars().count() <= MAX_VALUE {
        return v;
    }
    let mut short: String = text.chars().take(MAX_VALUE).collect();
    short.push('…');
    Value::String(short)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_values_are_cut() {
        assert_eq!(cut(json!({"ok": true})), json!({"ok": true}));
        let long = "x".repeat(3000);
        let c = cut(json!(long));
        assert_eq!(c.as_str().unwrap().chars().count(), MAX_VALUE + 1);
        let c = cut(json!({"rows": vec![long]}));
        assert!(c.as_str().unwrap().starts_with("{\"rows\""));
    }
}
