//! sync_semantic_index and semantic_search (issue 19): search notes by meaning,
//! offline, fused with a lexical score (core/src/semantic). The index is kept in
//! the engine's memory and brought up to date before each search (only the
//! notes added or changed since are embedded); it is derived, so nothing is
//! journaled and the engine can build it again at any time.

pub(crate) use imp::{search, sync};

#[cfg(not(target_arch = "wasm32"))]
mod imp {
    use super::super::args::Args;
    use crate::engine::{Engine, Outcome};
    use crate::error::{Failure, OpResult};
    use crate::semantic::{Index, Model, Synced};
    use serde_json::{json, Value};
    use std::collections::HashSet;

    /// Results a search answers at most.
    const MAX_LIMIT: i64 = 100;

    impl Engine {
        /// The index brought up to date with the vault's notes.
        fn semantic_index(&mut self, model: &Model) -> Synced {
            let notes = self.index.vault.notes.iter().map(|(p, n)| (p.as_str(), n.hash.as_str(), n.text.as_str()));
            let (index, counts) = Index::sync(self.semantic.take(), model, notes);
            self.semantic = Some(index);
            counts
        }
    }

    pub(crate) fn sync(e: &mut Engine, a: &Args, _now_ms: i64) -> OpResult<Outcome> {
        let model = Model::builtin();
        let counts = e.semantic_index(model);
        let mut out = json!({"ok": true, "op": a.op, "model": "potion-base-8M"});
        if let (Value::Object(o), Ok(Value::Object(c))) = (&mut out, serde_json::to_value(counts)) {
            o.extend(c);
        }
        Ok(Outcome::done(out))
    }

    /// The paths a search may answer: the rows of `table`/`tables` (those `where`
    /// picks), or every note.
    fn scope(e: &Engine, a: &Args) -> OpResult<Option<HashSet<String>>> {
        let mut tables = a.list("tables");
        if let Some(t) = a.str("table") {
            tables.push(t.to_string());
        }
        if tables.is_empty() {
            if a.get("where").is_some() {
                return Err(Failure::bad_input(a.op, "where: name the table it reads", "Give table with where."));
            }
            return Ok(None);
        }
        let mut paths = HashSet::new();
        for t in &tables {
            let q = super::super::read::table(e, a.op, t)?;
            let mut map = serde_json::Map::new();
            map.insert("table".into(), q.clone().into());
            if let Some(w) = a.get("where") {
                map.insert("where".into(), w.clone());
            }
            let all = e.index.vault.rows.get(&q).map_or(0, |r| r.len());
            map.insert("limit".into(), all.max(1).into());
            map.insert("columns".into(), json!([]));
            let rows = super::super::read::select(e, &Args { op: a.op, map })?;
            for r in rows["rows"].as_array().into_iter().flatten() {
                if let Some(p) = r["path"].as_str() {
                    paths.insert(p.to_string());
                }
            }
        }
        Ok(Some(paths))
    }

    pub(crate) fn search(e: &mut Engine, a: &Args, _now_ms: i64) -> OpResult<Outcome> {
        let model = Model::builtin();
        let query = a.req("query").trim().to_string();
        if query.is_empty() {
            return Err(Failure::bad_input(a.op, "query is empty", "Say what you look for in a few words."));
        }
        let limit = a.int("limit").unwrap_or(10);
        if !(1..=MAX_LIMIT).contains(&limit) {
            return Err(Failure::bad_input(a.op, format!("limit {limit}: 1 to {MAX_LIMIT}"), "Ask for 10, say."));
        }
        let weight = match a.get("weight") {
            None => None,
            Some(w) => match w.as_f64() {
                Some(x) if (0.0..=1.0).contains(&x) => Some(x as f32),
                _ => {
                    return Err(Failure::bad_input(
                        a.op,
                        format!("weight {w}: a number from 0 (words only) to 1 (meaning only)"),
                        "Leave it out: the query sets it (words weigh more for names and codes).",
                    ))
                }
            },
        };
        let scope = scope(e, a)?;
        e.semantic_index(model);
        let index = e.semantic.as_ref().expect("made above");
        let weight = weight.unwrap_or_else(|| crate::semantic::search::weight_for(&query));
        let keep = |p: &str| scope.as_ref().is_none_or(|s| s.contains(p));
        let hits = index.corpus.search_in(model, &query, Some(weight), limit as usize, keep);
        let results: Vec<Value> = hits
            .iter()
            .map(|h| {
                let mut r = json!({"path": h.path, "score": h.score, "semantic": h.semantic, "lexical": h.lexical, "passage": h.passage});
                if let Some(t) = e.index.schema.table_of_path(&h.path) {
                    r["table"] = t.into();
                    if let Some(row) = e.index.vault.row(&h.path) {
                        r["values"] = Value::Object(row.values.clone());
                    }
                }
                r
            })
            .collect();
        Ok(Outcome::done(json!({"query": query, "weight": weight, "results": results})))
    }
}

/// The plugin's wasm engine carries no model (its main.js is kept small).
#[cfg(target_arch = "wasm32")]
mod imp {
    use super::super::args::Args;
    use crate::engine::{Engine, Outcome};
    use crate::error::{Failure, OpResult};

    fn refused(op: &str) -> Failure {
        Failure::refused(
            op,
            vec!["this engine carries no embedding model (the Obsidian plugin's is kept small)".into()],
            "Search by meaning through the datanotes binary: its MCP tools, its HTTP API or `datanotes call semantic_search`.",
        )
    }

    pub(crate) fn sync(_: &mut Engine, a: &Args, _: i64) -> OpResult<Outcome> {
        Err(refused(a.op))
    }

    pub(crate) fn search(_: &mut Engine, a: &Args, _: i64) -> OpResult<Outcome> {
        Err(refused(a.op))
    }
}
