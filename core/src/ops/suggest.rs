//! suggest_rows: the rows of a table whose note name matches what is typed, best
//! first, each with the link that names it: for a form's link field as a person
//! types, and for an agent looking for a link's target.

use super::args::Args;
use super::context::Sees;
use super::read::table;
use crate::error::OpResult;
use serde_json::{json, Value};

/// How well `name` matches `query` (both lower case): the whole name, its start,
/// the start of a word, anywhere, or its letters in order; None when not at all.
fn score(name: &str, query: &str) -> Option<u32> {
    if query.is_empty() {
        return Some(0);
    }
    if name == query {
        return Some(1000);
    }
    if name.starts_with(query) {
        return Some(900 - (name.len() - query.len()).min(99) as u32);
    }
    if let Some(i) = name.find(query) {
        let word = name[..i].ends_with([' ', '-', '_', '.', '(']);
        return Some(if word { 700 } else { 500 } - i.min(99) as u32);
    }
    // The letters in order, fewer gaps better.
    let mut gaps = 0u32;
    let mut rest = name.chars();
    for q in query.chars() {
        loop {
            match rest.next() {
                Some(c) if c == q => break,
                Some(_) => gaps += 1,
                None => return None,
            }
        }
    }
    Some(300u32.saturating_sub(gaps.min(299)))
}

pub(crate) fn suggest_rows(e: &Sees, a: &Args) -> OpResult<Value> {
    let q = table(e, a.op, a.req("table"))?;
    let limit = a.int_in("limit", 20, 1..=200, "limit takes 1 to 200.")?;
    let query = a.str("query").unwrap_or("").trim().to_lowercase();
    let from = a.str("from").unwrap_or("");
    let vault = &e.index.vault;
    let mut hits: Vec<(u32, &str, &str)> = vault
        .table_rows(&q)
        .filter_map(|p| {
            let stem = p.rsplit('/').next().unwrap_or(p);
            let stem = stem.strip_suffix(".md").unwrap_or(stem);
            score(&stem.to_lowercase(), &query).map(|s| (s, stem, p))
        })
        .collect();
    let total = hits.len();
    let best = |a: &(u32, &str, &str), b: &(u32, &str, &str)| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1));
    // Only the best `limit` are sorted: a keystroke over a large table stays cheap.
    let k = (limit as usize).min(total);
    if k < total {
        hits.select_nth_unstable_by(k, best);
        hits.truncate(k);
    }
    hits.sort_unstable_by(best);
    let rows: Vec<Value> = hits
        .iter()
        .map(|(s, stem, p)| json!({"path": p, "name": stem, "link": format!("[[{}]]", vault.link_text(p, from)), "score": s}))
        .collect();
    Ok(json!({"table": q, "total": total, "rows": rows}))
}

#[cfg(test)]
mod tests {
    use super::score;

    #[test]
    fn better_matches_score_higher() {
        let s = |n: &str| score(n, "char").unwrap_or(0);
        assert!(s("char") > s("charade") && s("charade") > s("the charlatan"));
        assert!(s("the charlatan") > s("richard") && s("richard") > s("c-h-a-r"));
        assert!(s("c-h-a-r") > 0);
        assert_eq!(score("metropolis", "char"), None);
        assert_eq!(score("anything", ""), Some(0));
    }
}
