//! repair_links: after notes were renamed or moved by hand, the links to their
//! old paths are rewritten across the vault (those an editor already rewrote are
//! left alone).

use super::args::Args;
use super::context::Plans;
use crate::error::{fail, Failure, OpResult};
use crate::links;
use crate::tx::Tx;
use serde_json::Value;

pub(crate) fn run(e: &mut Plans, tx: &mut Tx, a: &Args) -> OpResult<String> {
    let moves: Vec<(String, String, Value)> = a
        .get("moves")
        .and_then(Value::as_array)
        .map(|ms| {
            ms.iter()
                .filter_map(|m| {
                    let from = m.get("old_path").or_else(|| m.get("from"))?.as_str()?.to_string();
                    let to = m.get("path").or_else(|| m.get("to"))?.as_str()?.to_string();
                    Some((from, to, m.clone()))
                })
                .collect()
        })
        .unwrap_or_default();
    if moves.is_empty() {
        return fail(Failure::bad_input(
            a.op,
            "moves is empty",
            "Give the moves: [{\"old_path\": \"Notes/A.md\", \"path\": \"Notes/B.md\"}].",
        ));
    }
    // A note moved on again (or removed) since: nothing to point its links to.
    let (moves, gone): (Vec<_>, Vec<_>) = moves.into_iter().partition(|(_, to, _)| e.index.vault.get(to).is_some());
    if moves.is_empty() {
        let (from, to, _) = &gone[0];
        return fail(Failure::refused(
            a.op,
            vec![format!("{to} (moved from {from}) is not in the vault")],
            "Name moves that happened: the note must be at its new path.",
        ));
    }
    for (from, to, _) in &moves {
        let old_stem = links::path_stem(from);
        let old_full = from.trim_end_matches(".md").to_lowercase();
        for src in e.index.vault.naming(from) {
            let text = e.index.vault.text(&src).unwrap_or_default().to_string();
            let new_text = links::rewrite(&text, |t| {
                let stem_match = links::target_stem(t) == old_stem;
                let path_form = t.contains('/');
                // A link an editor already rewrote, or one that names another note, stays.
                let dangling = e.index.vault.resolve(t, &src).is_none();
                let named_old = !path_form
                    || t.trim_end_matches(".md").to_lowercase() == old_full
                    || old_full.ends_with(&format!("/{}", t.trim_end_matches(".md").to_lowercase()));
                (stem_match && dangling && named_old).then(|| {
                    let lt = e.index.vault.link_text(to, &src);
                    if path_form {
                        to.trim_end_matches(".md").to_string()
                    } else {
                        lt
                    }
                })
            });
            if new_text != text {
                e.index.tx_put(tx, &src, new_text);
            }
        }
    }
    tx.cause = Some(moves.iter().map(|(_, _, m)| m.clone()).collect());
    Ok(match moves.as_slice() {
        [(from, to, _)] => format!("repair the links after the hand move of {from} to {to}"),
        _ => format!("repair the links after the hand moves of {} notes", moves.len()),
    })
}

/// sync_links: the links back of two-way link columns, after rows were edited
/// by hand (the engine runs it by itself): `rows` [{table, path, before: {column:
/// value}}], the link columns as they were before the hand edit.
pub(crate) fn sync(e: &mut Plans, tx: &mut Tx, a: &Args) -> OpResult<String> {
    let rows = a.get("rows").and_then(Value::as_array).cloned().unwrap_or_default();
    for (i, r) in rows.iter().enumerate() {
        let (Some(table), Some(path)) = (r.get("table").and_then(Value::as_str), r.get("path").and_then(Value::as_str))
        else {
            return fail(Failure::bad_input(a.op, format!("rows[{i}] needs table and path"), "rows: [{\"table\": \"main.public.film\", \"path\": \"…\", \"before\": {\"director\": \"[[Fritz Lang]]\"}}]."));
        };
        let q = super::read::table(&e.sees(), a.op, table)?;
        let before = r.get("before").and_then(Value::as_object).cloned().unwrap_or_default();
        e.index.sync_inverse_from(tx, &q, path, &before);
    }
    Ok(format!("keep the two-way links of {} hand-edited rows in step", rows.len()))
}
