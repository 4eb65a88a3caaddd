//! The change feed's operations: list_changes, and the webhooks (create, list,
//! delete) that push it.

use super::args::Args;
use super::context::{Keeps, Sees};
use crate::error::{fail, Failure, OpResult};
use crate::feed::webhook::{self, Hook, Hooks};
use crate::feed::{Event, EventKind};
use crate::filter::{Filter, Lookup};
use crate::index::Index;
use crate::step::Outcome;
use crate::validate::Ctx;
use serde_json::{json, Value};

pub const KINDS: [&str; 10] = [
    "insert",
    "update",
    "delete",
    "move",
    "metastore",
    "unreadable",
    "tool_call",
    "proposal_created",
    "proposal_accepted",
    "proposal_rejected",
];

/// A reader's filter, compiled.
pub(crate) struct Wants {
    tables: Option<Vec<String>>,
    kinds: Option<Vec<String>>,
    columns: Option<Vec<String>>,
    exclude_actor: Option<String>,
    where_: Option<Filter>,
}

/// An event's row values, seen by the filter language; links lead to the vault as it is.
struct EventLookup<'a> {
    ctx: Ctx<'a>,
}

impl<'a> Lookup for EventLookup<'a> {
    type Row = &'a Event;

    fn get(&self, ev: &'a Event, path: &[String]) -> Option<Value> {
        let values = ev.values.as_ref()?;
        let from = ev.path.as_deref().unwrap_or("");
        let v = crate::validate::column(ev.row_id.as_deref(), from, |c| values.get(c).cloned(), path.first()?)?;
        crate::validate::walk(v, &path[1..], |s, rest| self.ctx.follow(s, from).and_then(|t| self.ctx.get(t, rest)))
    }
}

fn actor_name(a: &Value) -> String {
    match a {
        Value::String(s) => s.clone(),
        Value::Object(m) => {
            m.get("credential").or_else(|| m.get("client")).and_then(Value::as_str).unwrap_or_default().to_string()
        }
        _ => String::new(),
    }
}

/// Compiles a filter; its tables are named short or in full.
pub(crate) fn wants(e: &Sees, op: &str, f: &webhook::Subscription) -> OpResult<Wants> {
    let tables = match &f.tables {
        Some(ts) => Some(ts.iter().map(|t| super::read::history_table(e, op, t)).collect::<OpResult<Vec<String>>>()?),
        None => None,
    };
    if let Some(ks) = &f.kinds {
        if let Some(k) = ks.iter().find(|k| !KINDS.contains(&k.as_str())) {
            return fail(Failure::bad_input(
                op,
                format!("kinds: \"{k}\" is not a kind of change{}", crate::names::did_you_mean(k, KINDS)),
                format!("The kinds: {}.", KINDS.join(", ")),
            ));
        }
    }
    let where_ = match &f.where_ {
        Some(w) => Some(Filter::parse(w).map_err(|m| {
            Failure::bad_input(op, format!("where: {m}"), "The filter language, on the row's values after the change.")
                .with_docs("reference/filters")
        })?),
        None => None,
    };
    Ok(Wants {
        tables,
        kinds: f.kinds.clone(),
        columns: f.columns.clone(),
        exclude_actor: f.exclude_actor.clone(),
        where_,
    })
}

/// Refuses a `where` that compares a column of a table named with a value
/// of another type (filter_types.rs). Asked of a new filter only: a
/// webhook's stored one keeps being delivered by `wants` alone.
fn typed_wants(index: &Index, op: &str, w: &Wants) -> OpResult<()> {
    let (Some(f), Some(ts)) = (&w.where_, &w.tables) else { return Ok(()) };
    // A dropped table's columns are not known.
    for def in ts.iter().filter_map(|t| index.schema.tables.get(t)) {
        super::read::typed(&index.schema, op, def, f, "where")?;
    }
    Ok(())
}

pub(crate) fn matches(index: &Index, w: &Wants, ev: &Event) -> bool {
    let kind_ok = match &w.kinds {
        Some(k) => k.iter().any(|k| k == ev.kind.name()),
        None => ev.kind != EventKind::ToolCall,
    };
    if !kind_ok {
        return false;
    }
    if let Some(ts) = &w.tables {
        if !ev.table.as_ref().is_some_and(|t| ts.contains(t)) {
            return false;
        }
    }
    if let Some(cs) = &w.columns {
        let touched = cs.iter().any(|c| {
            ev.changes.contains_key(c)
                || (ev.kind == EventKind::Delete && ev.values.as_ref().is_some_and(|v| v.contains_key(c)))
        });
        if !touched {
            return false;
        }
    }
    if let (Some(x), Some(a)) = (&w.exclude_actor, &ev.actor) {
        if actor_name(a) == *x {
            return false;
        }
    }
    if let Some(f) = &w.where_ {
        let lk = EventLookup { ctx: Ctx { schema: &index.schema, vault: &index.vault } };
        if !f.eval(&lk, ev) {
            return false;
        }
    }
    true
}

fn filter_of(a: &Args) -> webhook::Subscription {
    let list = |k: &str| a.get(k).is_some().then(|| a.list(k));
    webhook::Subscription {
        tables: list("tables"),
        kinds: list("kinds"),
        columns: list("columns"),
        exclude_actor: a.str("exclude_actor").map(str::to_string),
        where_: a.get("where").cloned(),
    }
}

pub(crate) fn list(e: &Sees, a: &Args) -> OpResult<Value> {
    let since = a.int("since").unwrap_or(0).max(0) as u64;
    let limit =
        a.int_in("limit", 500, 1..=5000, "limit takes 1 to 5000; pass the answer's last as since to read on.")?;
    if let Some(w) = a.int("wait_ms") {
        if !(0..=60_000).contains(&w) {
            return fail(Failure::bad_input(a.op, format!("wait_ms {w} is out of range"), "wait_ms takes 0 to 60000."));
        }
    }
    let wants = wants(e, a.op, &filter_of(a))?;
    typed_wants(e.index, a.op, &wants)?;
    // A cursor past the head is not this feed's: another vault's or store's,
    // one from before the store was made again, or another device's not yet
    // synced here. Kept, it would hide every change until the feed caught up
    // with it; the reader is sent back to the head and told to re-read.
    if since > e.feed.head {
        return Ok(json!({"events": [], "last": e.feed.head, "head": e.feed.head, "gap": true}));
    }
    // One operation's changes (the journal shows an entry's rows with them).
    let migration = a.str("migration_id");
    let mut events = vec![];
    let mut last = since.max(e.feed.first().saturating_sub(1)).min(e.feed.head);
    for ev in e.feed.after(since) {
        if events.len() == limit as usize {
            break;
        }
        last = ev.seq;
        if matches(e.index, &wants, ev) && migration.is_none_or(|m| ev.migration_id.as_deref() == Some(m)) {
            events.push(ev);
        }
    }
    let mut out = json!({"events": events, "last": last.max(since), "head": e.feed.head});
    if since + 1 < e.feed.first() && since < e.feed.head {
        out["gap"] = true.into();
    }
    Ok(out)
}

pub(crate) fn list_hooks(e: &Sees, _: &Args) -> OpResult<Value> {
    let shown = |h: &Hook| {
        let mut v = Hooks::shown(h);
        if e.hooks.waiting(h) {
            v["status"] = "waiting".into();
            v["waiting"] = WAITING.into();
        }
        v
    };
    Ok(json!({"webhooks": e.hooks.list.iter().map(shown).collect::<Vec<_>>()}))
}

const WAITING: &str = "for confirmation on this device: it came in a store file no device owns (a sync, git, or a hand), so nothing is delivered to it until confirm_webhook is called with its id here";

/// confirm_webhook: a webhook that came in a file no device owns becomes this
/// device's, to deliver from now on, with a new secret (whoever wrote the file
/// knows the old one).
pub(crate) fn confirm_hook(e: &mut Keeps, a: &Args, now_ms: i64) -> OpResult<Outcome> {
    let id = a.req("id");
    let Some(i) = e.hooks.list.iter().position(|h| h.id == id && e.hooks.waiting(h)) else {
        let why = match e.hooks.list.iter().any(|h| h.id == id) {
            true => format!("webhook \"{id}\" is not waiting for confirmation"),
            false => format!("no webhook \"{id}\""),
        };
        return fail(Failure::refused(
            a.op,
            vec![why],
            "list_webhooks lists the webhooks; those waiting have status waiting.",
        ));
    };
    if let Err(r) = crate::feed::address::check_url(&e.hooks.list[i].url, e.hooks.allow_private) {
        return fail(Failure::refused(a.op, vec![r.reason().to_string()], r.hint()));
    }
    if e.entropy.len() < 16 {
        return fail(no_randomness(a.op));
    }
    let secret = webhook::secret(e.entropy, &format!("secret|{id}|{now_ms}|confirmed"));
    let head = e.feed.head;
    let h = &mut e.hooks.list[i];
    h.device = e.device.clone();
    h.secret = secret.clone();
    // From now: what came before was never confirmed to go there.
    h.cursor = head;
    h.status = webhook::HookStatus::Ok;
    (h.failures, h.failing_since_ms, h.next_attempt_ms, h.last_error) = (0, None, 0, None);
    let mut shown = Hooks::shown(h);
    shown["secret"] = secret.into();
    Ok(Outcome { store: vec![e.hooks.save()], ..Outcome::done(json!({"ok": true, "op": a.op, "webhook": shown})) })
}

fn no_randomness(op: &str) -> Failure {
    Failure::refused(
        op,
        vec!["this engine's host gave it no randomness, so it cannot make a secret".into()],
        "Run the operation through datanotes serve or the Obsidian plugin.",
    )
}

pub(crate) fn create_hook(e: &mut Keeps, a: &Args, now_ms: i64) -> OpResult<Outcome> {
    let url = a.req("url").trim().to_string();
    if let Err(r) = crate::feed::address::check_url(&url, e.hooks.allow_private) {
        return fail(match r {
            crate::feed::address::Refusal::Never(_) if crate::feed::address::host_of(&url).is_err() => {
                Failure::bad_input(a.op, r.reason().to_string(), r.hint())
            }
            _ => Failure::refused(a.op, vec![r.reason().to_string()], r.hint()),
        });
    }
    if e.entropy.len() < 16 {
        return fail(no_randomness(a.op));
    }
    let filter = filter_of(a);
    typed_wants(e.index, a.op, &wants(&e.sees(), a.op, &filter)?)?;
    let n = e.hooks.list.len();
    let id = format!("wh_{}", &webhook::secret(e.entropy, &format!("id|{url}|{now_ms}|{n}"))[..12]);
    let secret = webhook::secret(e.entropy, &format!("secret|{id}|{now_ms}"));
    let since = a.int("since").map_or(e.feed.head, |s| (s.max(0) as u64).min(e.feed.head));
    let hook = Hook {
        id: id.clone(),
        url,
        filter,
        secret: secret.clone(),
        cursor: since,
        status: webhook::HookStatus::Ok,
        created_at: crate::time::iso(now_ms),
        last_delivery: None,
        last_error: None,
        failures: 0,
        failing_since_ms: None,
        next_attempt_ms: 0,
        in_flight: false,
        device: e.device.clone(),
    };
    let mut shown = Hooks::shown(&hook);
    shown["secret"] = secret.into();
    e.hooks.list.push(hook);
    Ok(Outcome { store: vec![e.hooks.save()], ..Outcome::done(json!({"ok": true, "op": a.op, "webhook": shown})) })
}

pub(crate) fn delete_hook(e: &mut Keeps, a: &Args, _now_ms: i64) -> OpResult<Outcome> {
    let id = a.req("id");
    let Some(i) = e.hooks.list.iter().position(|h| h.id == id) else {
        let hint = match crate::names::closest(id, e.hooks.list.iter().map(|h| h.id.as_str())) {
            Some(c) => format!("Did you mean \"{c}\"? list_webhooks lists them."),
            None => "list_webhooks lists the webhooks.".into(),
        };
        return fail(Failure::refused(a.op, vec![format!("no webhook \"{id}\"")], hint));
    };
    let h = e.hooks.remove(i);
    Ok(Outcome {
        store: vec![e.hooks.save()],
        ..Outcome::done(json!({"ok": true, "op": a.op, "deleted": Hooks::shown(&h)}))
    })
}
