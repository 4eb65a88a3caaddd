//! The proposals' operations: list, show, accept, reject, withdraw. Staging a
//! write (any stageable write given `proposal`) is the engine's (engine.rs
//! `stage`); the store of proposals is proposals.rs.

use super::args::Args;
use super::context::{Keeps, Plans, Sees};
use crate::error::{fail, Failure, OpResult};
use crate::feed::{Event, EventKind};
use crate::merge3::{merged_in, Merged};
use crate::proposals::{decision_word, picked, Decision, Picked, Proposal, Staged};
use crate::step::Outcome;
use crate::tx::Tx;
use serde_json::{json, Value};

const DOCS: &str = "guides/history/proposals";

/// An open proposal older than this is listed as stale (never dropped).
pub(crate) const STALE_DAYS: i64 = 30;

/// A proposal's state, in one word.
fn status(pr: &Proposal, taken: &Picked) -> &'static str {
    if pr.problem.is_some() {
        return "damaged";
    }
    if let Some(d) = &pr.decided {
        return decision_word(d.decision);
    }
    let pairs: usize = pr.writes.iter().map(|w| w.changes.len()).sum();
    match taken.len() {
        0 => "open",
        n if n >= pairs => "accepted",
        _ => "partly_accepted",
    }
}

fn listing(e: &Sees, pr: &Proposal) -> Value {
    let taken = picked(e.journal, &pr.name);
    let mut out = json!({
        "name": pr.name, "author": pr.author, "device": pr.device, "message": pr.message,
        "created_at": crate::time::iso(pr.created_ms), "status": status(pr, &taken),
        "writes": pr.writes.len(), "rows": pr.writes.iter().map(|w| w.changes.len()).sum::<usize>(),
    });
    if let Some(d) = &pr.decided {
        out["decided"] = json!({"decision": decision_word(d.decision), "by": d.by, "message": d.message, "at": crate::time::iso(d.at_ms)});
    }
    if let Some(p) = &pr.problem {
        out["problem"] = p.clone().into();
    }
    let open = matches!(out["status"].as_str(), Some("open" | "partly_accepted"));
    out["stale"] = (open && e.now_ms > 0 && e.now_ms - pr.created_ms > STALE_DAYS * 86_400_000).into();
    out
}

fn unknown(op: &str, e: &Sees, name: &str) -> Failure {
    let names: Vec<&str> = e.proposals.all().map(|p| p.name.as_str()).collect();
    Failure::refused(
        op,
        vec![format!("no proposal \"{name}\"{}", crate::names::did_you_mean(name, names.iter().copied()))],
        "list_proposals lists the proposals by name.",
    )
    .with_docs(DOCS)
}

fn proposal<'a>(e: &Sees<'a>, op: &str, name: &str) -> OpResult<&'a Proposal> {
    e.proposals.get(name).ok_or_else(|| unknown(op, e, name).into())
}

pub(crate) fn list(e: &Sees, _: &Args) -> OpResult<Value> {
    let list: Vec<Value> = e.proposals.all().map(|p| listing(e, p)).collect();
    Ok(json!({"ok": true, "op": "list_proposals", "total": list.len(), "proposals": list}))
}

/// show_proposal reads through the proposal's view (`Sees::through`): the rows
/// as they would be, the rules they would break, and the conflicts with the
/// vault as it is.
pub(crate) fn show(e: &Sees, a: &Args) -> OpResult<Value> {
    let name = a.req("proposal");
    let pr = proposal(e, a.op, name)?;
    let taken = picked(e.journal, name);
    let offset = a.int_in("offset", 0, 0..=i64::MAX, "offset counts writes from 0.")? as usize;
    let limit = a.int_in("limit", 50, 1..=1000, "limit: 1 to 1000 writes (default 50).")? as usize;
    let ctx = crate::validate::Ctx { schema: &e.index.schema, vault: &e.index.vault };
    let mut conflicts = 0;
    let writes: Vec<Value> = pr
        .writes
        .iter()
        .skip(offset)
        .take(limit)
        .map(|w| {
            let rows: Vec<Value> = w
                .changes
                .iter()
                .map(|c| {
                    let mut row = super::journal::note_change(c);
                    row["accepted"] = taken.contains(&(w.n, c.path.clone())).into();
                    let clash = e.through.and_then(|v| v.conflicts.get(&(w.n, c.path.clone())));
                    conflicts += usize::from(clash.is_some());
                    row["conflicts"] = clash.cloned().unwrap_or_default().into();
                    let breaks: Vec<Value> = match e.index.vault.get(&c.path) {
                        Some(_) if c.after.is_some() => ctx.check_row(&c.path).iter().map(|v| v.to_json()).collect(),
                        _ => vec![],
                    };
                    row["breaks"] = breaks.into();
                    row
                })
                .collect();
            json!({"n": w.n, "op": w.op, "summary": w.summary, "at": crate::time::iso(w.at_ms), "args": w.args, "rows": rows})
        })
        .collect();
    let mut out = listing(e, pr);
    out["ok"] = true.into();
    out["op"] = "show_proposal".into();
    out["offset"] = offset.into();
    out["total"] = pr.writes.len().into();
    out["conflicts_shown"] = conflicts.into();
    out["items"] = writes.into();
    Ok(out)
}

/// The (write, change) pairs `a` picks: every write, or those of `writes`,
/// narrowed to the notes of `rows`; none already accepted.
fn chosen<'p>(op: &str, pr: &'p Proposal, a: &Args, taken: &Picked) -> OpResult<Vec<(&'p Staged, usize)>> {
    let writes: Option<Vec<u64>> =
        a.get("writes").and_then(Value::as_array).map(|l| l.iter().filter_map(Value::as_u64).collect());
    let rows = a.list("rows");
    if let Some(n) = writes.iter().flatten().find(|n| **n == 0 || **n as usize > pr.writes.len()) {
        return fail(Failure::bad_input(
            op,
            format!("the proposal has no write {n}"),
            format!("Its writes are numbered 1 to {}: show_proposal lists them.", pr.writes.len()),
        ));
    }
    let mut out = vec![];
    for w in pr.writes.iter().filter(|w| writes.as_ref().is_none_or(|l| l.contains(&(w.n as u64)))) {
        for (i, c) in w.changes.iter().enumerate() {
            let row_ok = rows.is_empty() || rows.iter().any(|r| *r == c.path || c.from.as_deref() == Some(r.as_str()));
            if row_ok && !taken.contains(&(w.n, c.path.clone())) {
                out.push((w, i));
            }
        }
    }
    if out.is_empty() {
        let why = if taken.is_empty() {
            "nothing in it matches writes and rows"
        } else {
            "what it picks was accepted already"
        };
        return fail(
            Failure::refused(
                op,
                vec![format!("the proposal {}: {why}", pr.name)],
                "show_proposal shows each write, its rows and whether they were accepted.",
            )
            .with_docs(DOCS),
        );
    }
    Ok(out)
}

/// Why `pr` cannot be decided now, if it cannot.
fn undecidable(op: &str, pr: &Proposal) -> OpResult<()> {
    let why = match (&pr.problem, &pr.decided) {
        (Some(p), _) => format!("the proposal {} cannot be believed, so it is never applied: {p}", pr.name),
        (_, Some(d)) => format!("the proposal {} was {} by {} already", pr.name, decision_word(d.decision), d.by),
        _ => return Ok(()),
    };
    fail(
        Failure::refused(
            op,
            vec![why],
            "list_proposals shows the open proposals; an agent can stage its writes again into a new one.",
        )
        .with_docs(DOCS),
    )
}

pub(crate) fn accept(e: &mut Plans, tx: &mut Tx, a: &Args) -> OpResult<String> {
    let name = a.req("proposal");
    let (proposals, journal) = (e.proposals, e.journal);
    let pr = proposals.get(name).ok_or_else(|| unknown(a.op, &e.sees(), name))?;
    undecidable(a.op, pr)?;
    let taken = picked(journal, name);
    let chosen = chosen(a.op, pr, a, &taken)?;
    let mut conflicts = vec![];
    let mut pairs = vec![];
    for (w, i) in chosen {
        let c = &w.changes[i];
        match merged_in(e.index, c) {
            Merged::Same => {}
            Merged::Put(text) => e.index.tx_put(tx, &c.path, text),
            Merged::Remove => e.index.tx_trash(tx, &c.path),
            Merged::Move { from, text } => {
                e.index.tx_move(tx, &from, &c.path);
                if e.index.vault.text(&c.path) != Some(text.as_str()) {
                    e.index.tx_put(tx, &c.path, text);
                }
            }
            Merged::Conflict(why) => conflicts.push(json!({"write": w.n, "path": c.path, "conflicts": why})),
        }
        pairs.push(json!([w.n, c.path]));
    }
    if !conflicts.is_empty() {
        let reasons = conflicts.iter().map(conflict_words).collect();
        let f = Failure::refused(a.op, reasons, "Nothing was applied. Accept the other rows (rows: [...]) and leave these, or reject the proposal and have its author stage them again over the notes as they are now.")
            .with_docs(DOCS)
            .with_details(json!({"conflicts": conflicts}));
        return fail(f);
    }
    let n = pairs.len();
    tx.proposal = Some(json!({"name": name, "picked": pairs, "author": pr.author, "message": pr.message}));
    tx.extra.insert("proposal".into(), name.into());
    tx.extra.insert("accepted_rows".into(), n.into());
    Ok(format!("accept proposal {name} ({n} changes)"))
}

fn conflict_words(c: &Value) -> String {
    let props: Vec<String> = c["conflicts"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|x| match x["property"].as_str() {
            Some(p) => format!("{p} is {} now and the proposal makes it {}", x["current"], x["proposed"]),
            None => x["why"].as_str().unwrap_or("it changed since").to_string(),
        })
        .collect();
    format!("write {} on {}: {}", c["write"], c["path"].as_str().unwrap_or(""), props.join("; "))
}

/// reject_proposal and withdraw_proposal: a decision line, and the feed's event.
fn decide(e: &mut Keeps, a: &Args, d: Decision, now_ms: i64) -> OpResult<Outcome> {
    let name = a.req("proposal");
    let sees = e.sees();
    let pr = proposal(&sees, a.op, name)?;
    undecidable(a.op, pr)?;
    if d == Decision::Withdrawn && pr.author != e.actor {
        return fail(
            Failure::refused(
                a.op,
                vec![format!("the proposal {name} is {}'s: only its author withdraws it", pr.author)],
                "The person reviewing it rejects it instead (reject_proposal).",
            )
            .with_docs(DOCS),
        );
    }
    if status(pr, &picked(e.journal, name)) == "accepted" {
        return fail(
            Failure::refused(
                a.op,
                vec![format!("the proposal {name} was accepted")],
                "undo_migration with its accept's migration_id takes the accepted writes back.",
            )
            .with_docs(DOCS),
        );
    }
    let message = a.str("message");
    let ev = event(
        EventKind::ProposalRejected,
        pr,
        json!({"decision": decision_word(d), "message": message, "by": e.actor}),
        e.actor,
        now_ms,
    );
    let mut store = vec![e.proposals.decide(name, d, e.actor, message, now_ms)];
    store.extend(e.feed.push(ev));
    let answer = json!({"ok": true, "op": a.op, "proposal": name, "decision": decision_word(d), "message": message});
    Ok(Outcome { store, ..Outcome::done(answer) })
}

pub(crate) fn reject(e: &mut Keeps, a: &Args, now_ms: i64) -> OpResult<Outcome> {
    decide(e, a, Decision::Rejected, now_ms)
}

pub(crate) fn withdraw(e: &mut Keeps, a: &Args, now_ms: i64) -> OpResult<Outcome> {
    decide(e, a, Decision::Withdrawn, now_ms)
}

/// A proposal's event in the change feed.
pub(crate) fn event(kind: EventKind, pr: &Proposal, extra: Value, actor: &str, now_ms: i64) -> Event {
    let mut p = json!({"name": pr.name, "author": pr.author, "message": pr.message, "writes": pr.writes.len()});
    if let (Some(m), Value::Object(x)) = (p.as_object_mut(), extra) {
        m.extend(x);
    }
    Event {
        at: crate::time::iso(now_ms),
        at_ms: now_ms,
        kind,
        actor: Some(actor.into()),
        proposal: Some(p),
        ..Event::default()
    }
}
