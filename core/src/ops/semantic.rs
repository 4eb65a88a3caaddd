//! sync_semantic_index and semantic_search (issue 19): search notes by meaning,
//! offline, fused with a lexical score (core/src/semantic). The index is kept in
//! the engine's memory and in the store (semantic/stored.rs), brought up to date
//! before each search (only the notes added or changed since are embedded) and,
//! when the `semanticIndex` setting says so, as notes change. It is derived, so
//! nothing is journaled and the engine can build it again at any time.

use super::args::Args;
use crate::edits::StoreWrite;
use crate::engine::{Engine, Outcome};
use crate::error::{fail, Failure, OpResult};
use crate::fxhash::FxHashSet as HashSet;
use crate::semantic::{search, stored, Index, Model, Synced, MODEL_FILE};
use serde_json::{json, Value};
use std::sync::Arc;

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

/// How bringing the index up to date went: its counts, and the stored index's
/// write, if any, and why it was built again, if it was.
struct Brought {
    counts: Synced,
    write: Option<StoreWrite>,
    rebuilt: Option<String>,
}

impl Engine {
    /// The model: the one the host gave, else (natively) the vendored one.
    pub(crate) fn semantic_model(&self) -> Option<Arc<Model>> {
        #[cfg(not(target_arch = "wasm32"))]
        return Some(self.semantic_model.clone().unwrap_or_else(Model::builtin));
        #[cfg(target_arch = "wasm32")]
        return self.semantic_model.clone();
    }

    /// The index brought up to date with the vault's notes, from what this
    /// engine holds, else from the stored index (which it asks the host for);
    /// the stored index is appended to, or written anew when `whole`, when it
    /// cannot be read, or when its lines far outnumber the notes. `tables`:
    /// only their rows are brought up to date (None: every note).
    fn semantic_index(&mut self, model: &Model, whole: bool, tables: Option<&[String]>) -> OpResult<Brought> {
        let path = stored::path(self.device.as_deref());
        let listed = self.store.exists(&path);
        let (mut from_store, mut rebuilt) = (None, None);
        if self.semantic.is_none() && listed {
            self.store.require([&path])?;
            match stored::read(self.store.text(&path).unwrap_or_default(), model) {
                Ok(s) => from_store = Some(s),
                Err(why) => rebuilt = Some(why),
            }
        }
        let schema = &self.index.schema;
        let in_scope =
            |p: &str| tables.is_none_or(|ts| schema.table_of_path(p).is_some_and(|t| ts.iter().any(|x| x == t)));
        let notes = self.index.vault.notes.iter().filter(|(p, _)| in_scope(p));
        let notes = notes.map(|(p, n)| (&**p, n.hash, n.text()));
        let (mut index, counts, changed) =
            Index::sync(self.semantic.take(), from_store.as_mut(), model, notes, in_scope);
        if let Some(s) = &from_store {
            index.stored_lines = s.lines;
        }
        let lines = index.stored_lines + changed.len();
        let write = if whole || !listed || rebuilt.is_some() || lines > 2 * counts.notes + 64 {
            index.stored_lines = 1 + index.corpus.docs.len();
            Some(StoreWrite::put(&path, stored::whole(&index, model)))
        } else if changed.is_empty() {
            None
        } else {
            index.stored_lines = lines;
            let text = changed.iter().map(|p| stored_line(&index, p, model)).collect::<String>();
            Some(StoreWrite::append(&path, text))
        };
        // Its text was read once: the index holds what it said.
        self.store.listed(&path);
        self.semantic = Some(index);
        Ok(Brought { counts, write, rebuilt })
    }

    /// Brings the stored index up to date with the notes the vault touched
    /// since, when the `semanticIndex` setting says so: after a write, and after
    /// a round of hand edits. Without the index in memory, the touched notes are
    /// embedded and appended all the same (a later line counts over an earlier).
    pub(crate) fn semantic_keep_up(&mut self) -> Vec<StoreWrite> {
        let touched = self.index.vault.take_touched();
        if !self.settings.semantic_index || touched.is_empty() {
            return vec![];
        }
        let Some(model) = self.semantic_model() else { return vec![] };
        let mut text = String::new();
        let mut paths: Vec<String> = touched.into_iter().collect();
        paths.sort();
        for p in &paths {
            let note = self.index.vault.notes.get(p.as_str()).map(|n| (n.hash, n.text()));
            match self.semantic.as_mut() {
                Some(index) => text.extend(index.update(&model, p, note)),
                None => text.push_str(&match note {
                    Some((hash, t)) => stored::line(&search::Doc::new(&model, p, t), &hash.hex(), &model),
                    None => stored::gone(p),
                }),
            }
        }
        if text.is_empty() {
            return vec![];
        }
        if let Some(index) = self.semantic.as_mut() {
            index.stored_lines += text.lines().count();
        }
        let path = stored::path(self.device.as_deref());
        let write = if self.store.exists(&path) {
            StoreWrite::append(&path, text)
        } else {
            StoreWrite::put(&path, stored::header(&model) + &text)
        };
        self.store.listed(&path);
        vec![write]
    }
}

/// A note's line in the stored index: as indexed, or gone.
fn stored_line(index: &Index, path: &str, model: &Model) -> String {
    match (index.corpus.get(path), index.hash(path)) {
        (Some(d), Some(h)) => stored::line(d, &h.hex(), model),
        _ => stored::gone(path),
    }
}

fn outcome(answer: Value, brought: Brought) -> Outcome {
    let mut out = Outcome::done(answer);
    out.store.extend(brought.write);
    out.log.extend(brought.rebuilt.map(|why| format!("the semantic index is built again: {why}")));
    out
}

pub(crate) fn sync(e: &mut Engine, a: &Args, _now_ms: i64) -> OpResult<Outcome> {
    let model = e.semantic_model().ok_or_else(|| no_model(a.op))?;
    let tables = tables_of(e, a)?;
    let brought = e.semantic_index(&model, true, (!tables.is_empty()).then_some(&tables[..]))?;
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
fn tables_of(e: &Engine, a: &Args) -> OpResult<Vec<String>> {
    let mut tables = a.list("tables");
    tables.extend(a.str("table").map(str::to_string));
    tables.iter().map(|t| super::read::table(e, a.op, t)).collect()
}

/// The paths a search may answer: the rows of `table`/`tables` (those `where`
/// picks), or every note.
fn scope(e: &Engine, a: &Args) -> OpResult<Option<HashSet<String>>> {
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

pub(crate) fn search(e: &mut Engine, a: &Args, _now_ms: i64) -> OpResult<Outcome> {
    let sought = sought(a)?;
    let limit = a.int("limit").unwrap_or(10);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return fail(Failure::bad_input(a.op, format!("limit {limit}: 1 to {MAX_LIMIT}"), "Ask for 10, say."));
    }
    let weight = weight(a)?;
    let scope = scope(e, a)?;
    let model = e.semantic_model().ok_or_else(|| no_model(a.op))?;
    let brought = e.semantic_index(&model, false, None)?;
    let index = e.semantic.as_ref().expect("made above");
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
