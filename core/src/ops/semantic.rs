//! sync_semantic_index and semantic_search (issue 19): search notes by meaning,
//! offline, fused with a lexical score (core/src/semantic). The index is kept in
//! the engine's memory and in the store (semantic/stored.rs), brought up to date
//! before each search (only the notes added or changed since are embedded) and,
//! when the `semanticIndex` setting says so, as notes change. It is derived, so
//! nothing is journaled and the engine can build it again at any time.

use super::args::Args;
use super::context::{Keeps, Sees};
use crate::error::{fail, Failure, OpResult};
use crate::fxhash::FxHashSet as HashSet;
use crate::semantic::{search, MODEL_FILE};
use crate::step::Outcome;
use serde_json::{json, Value};

/// Results a search answers at most.
const MAX_LIMIT: i64 = 100;
/// The longest query, in characters: a search is a few words (a note's worth
/// is `like`), and the answer says the query back.
const MAX_QUERY: usize = 2_000;

/// The refusal of an engine that was given no model (the plugin's, before the
/// model is installed into the vault's store).
fn no_model(op: &str) -> Failure {
    Failure::refused(
        op,
        vec![format!("this vault's store holds no model to search by meaning with ({MODEL_FILE})")],
        "Install it once: in Obsidian, the command \"Install the model to search by meaning\"; else `datanotes install-model --vault <vault>`. The datanotes program copies its model (8 MB, offline) into the vault's .datanotes/models/, where your sync tool carries it to your other devices.",
    )
    // For a host that offers to install it (the plugin's button), not the text.
    .with_details(json!({"needs_model": MODEL_FILE}))
}

fn outcome(answer: Value, brought: crate::semantic::meaning::Brought) -> Outcome {
    let mut out = Outcome::done(answer);
    out.store.extend(brought.write);
    out.log.extend(brought.rebuilt.map(|why| format!("the semantic index is built again: {why}")));
    out
}

pub(crate) fn sync(e: &mut Keeps, a: &Args, _now_ms: i64) -> OpResult<Outcome> {
    let model = e.meaning.model().ok_or_else(|| no_model(a.op))?;
    let tables = tables_of(&e.sees(), a)?;
    let brought = e.meaning.bring(e.index, e.store, &model, true, (!tables.is_empty()).then_some(&tables[..]))?;
    let mut out = json!({"ok": true, "op": a.op, "model": model.name, "model_id": model.id});
    if !tables.is_empty() {
        out["tables"] = tables.into();
    }
    if let (Value::Object(o), Ok(Value::Object(c))) = (&mut out, serde_json::to_value(brought.counts)) {
        o.extend(c);
    }
    if let Some(why) = &brought.rebuilt {
        out["rebuilt"] = why.clone().into();
    }
    Ok(outcome(out, brought))
}

/// The tables `table` and `tables` name, qualified.
fn tables_of(e: &Sees, a: &Args) -> OpResult<Vec<String>> {
    let mut tables = a.list("tables");
    tables.extend(a.str("table").map(str::to_string));
    tables.iter().map(|t| super::read::table(e, a.op, t)).collect()
}

/// The paths a search may answer: the rows of `table`/`tables` (those `where`
/// picks), or every note.
fn scope(e: &Sees, a: &Args) -> OpResult<Option<HashSet<String>>> {
    let tables = tables_of(e, a)?;
    if tables.is_empty() {
        if a.get("where").is_some() {
            return fail(Failure::bad_input(a.op, "where: name the table it reads", "Give table with where."));
        }
        return Ok(None);
    }
    let mut paths = HashSet::default();
    for q in &tables {
        let mut map = serde_json::Map::new();
        map.insert("table".into(), q.clone().into());
        if let Some(w) = a.get("where") {
            map.insert("where".into(), w.clone());
        }
        let all = e.index.vault.rows.get(q).map_or(0, |r| r.len());
        map.insert("limit".into(), all.max(1).into());
        map.insert("columns".into(), json!([]));
        // A bad filter is this operation's refusal, not select_rows'.
        let rows = super::read::select(e, &Args { op: a.op, map })
            .map_err(|s| s.map_failure(|f| Failure { op: a.op.into(), ..f }))?;
        for r in rows["rows"].as_array().into_iter().flatten() {
            if let Some(p) = r["path"].as_str() {
                paths.insert(p.to_string());
            }
        }
    }
    Ok(Some(paths))
}

/// What a search looks for: words, or the note at a path (`like`).
enum Sought {
    Query(String),
    Like(String),
}

fn sought(a: &Args) -> OpResult<Sought> {
    match (a.str("query").map(str::trim), a.str("like")) {
        (Some(_), Some(_)) => {
            fail(Failure::bad_input(a.op, "query and like: give one", "Search by words or by a note."))
        }
        (None, Some(p)) => Ok(Sought::Like(p.to_string())),
        (Some(""), None) => fail(Failure::bad_input(a.op, "query is empty", "Say what you look for in a few words.")),
        (Some(q), None) if q.chars().count() > MAX_QUERY => fail(Failure::bad_input(
            a.op,
            format!("query is {} characters: at most {MAX_QUERY}", q.chars().count()),
            "Say what you look for in a few words, or give like (a note's path) for the notes like a note.",
        )),
        (Some(q), None) => Ok(Sought::Query(q.to_string())),
        (None, None) => fail(Failure::bad_input(
            a.op,
            "query or like is required",
            "Give query (what you look for, in a few words) or like (a note's path: notes like it).",
        )),
    }
}

fn weight(a: &Args) -> OpResult<Option<f64>> {
    let Some(w) = a.get("weight") else { return Ok(None) };
    match w.as_f64() {
        Some(x) if (0.0..=1.0).contains(&x) => Ok(Some(x)),
        _ => fail(Failure::bad_input(
            a.op,
            format!("weight {w}: a number from 0 (words only) to 1 (meaning only)"),
            "Leave it out: the settings set it (words weigh more for names and codes).",
        )),
    }
}

pub(crate) fn search(e: &mut Keeps, a: &Args, _now_ms: i64) -> OpResult<Outcome> {
    let sought = sought(a)?;
    let limit = a.int("limit").unwrap_or(10);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return fail(Failure::bad_input(a.op, format!("limit {limit}: 1 to {MAX_LIMIT}"), "Ask for 10, say."));
    }
    let weight = weight(a)?;
    let scope = scope(&e.sees(), a)?;
    let model = e.meaning.model().ok_or_else(|| no_model(a.op))?;
    let brought = e.meaning.bring(e.index, e.store, &model, false, None)?;
    let index = e.meaning.index().expect("made above");
    let keep = |p: &str| scope.as_ref().is_none_or(|s| s.contains(p));
    let (mut answer, hits) = match &sought {
        Sought::Query(q) => {
            let code = search::has_code(q);
            let s = &e.settings;
            let w = weight.unwrap_or(if code { s.semantic_code_weight } else { s.semantic_weight });
            (json!({"query": q, "weight": w}), index.corpus.search_in(&model, q, Some(w as f32), limit as usize, keep))
        }
        Sought::Like(p) => match index.corpus.similar(p, limit as usize, keep) {
            Some(hits) => (json!({"like": p, "weight": 1.0}), hits),
            None => {
                let why = format!("like: no note at {p}");
                return fail(Failure::bad_input(a.op, why, "Give the vault path of a note, e.g. notes/plan.md."));
            }
        },
    };
    let results: Vec<Value> = hits
        .iter()
        .map(|h| {
            let mut r = json!({"path": h.path, "score": h.score, "semantic": h.semantic, "lexical": h.lexical, "passage": h.passage});
            if let Some(t) = e.index.schema.table_of_path(&h.path) {
                r["table"] = t.into();
                if let Some(row) = e.index.vault.row(&h.path) {
                    r["values"] = Value::Object(row.values.to_map());
                }
            }
            r
        })
        .collect();
    answer["results"] = results.into();
    Ok(outcome(answer, brought))
}
