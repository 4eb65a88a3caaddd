//! The Obsidian Bases files kept beside the schema (crate::bases): written in
//! the write that changes what they show, so that undo puts them back.

use super::args::Args;
use super::context::Plans;
use crate::bases::{files, is_engines};
use crate::error::{fail, Failure, OpResult};
use crate::schema::Schema;
use crate::tx::Tx;
use std::collections::BTreeSet;

/// Brings the base files in step with the schema: those whose text the change
/// from `old` alters (every one when `all`). Each is written, or moved to the
/// trash when its table or view is gone; one a person has edited is kept, and
/// named in the answer's `bases_kept`.
pub(crate) fn follow(e: &mut Plans, tx: &mut Tx, old: &Schema, all: bool) -> (usize, Vec<String>) {
    let was = files(old);
    let want = files(&e.index.schema);
    let paths: BTreeSet<&String> = was.keys().chain(want.keys()).collect();
    let (mut written, mut kept) = (0, vec![]);
    for path in paths {
        let (w, n) = (was.get(path), want.get(path));
        if !all && w == n {
            continue;
        }
        let now = e.index.vault.text(path).map(str::to_string);
        match (now, n) {
            (Some(t), Some(n)) if t == *n => continue,
            (None, None) => continue,
            (Some(t), _) if !is_engines(&t) => {
                kept.push(path.clone());
                continue;
            }
            (_, Some(n)) => e.index.tx_put(tx, path, n.clone()),
            (Some(_), None) => e.index.tx_trash(tx, path),
        }
        written += 1;
    }
    if !kept.is_empty() {
        tx.extra.insert("bases_kept".into(), kept.clone().into());
    }
    (written, kept)
}

/// After a write: the Bases files of what its schema change altered, when bases
/// are on (an undo puts back its own from the journal).
pub(crate) fn after_schema_change(e: &mut Plans, tx: &mut Tx) {
    if !e.settings.bases || super::spec::find(e.ops, &tx.op).is_some_and(|s| s.facts.puts_back) {
        return;
    }
    if let Some((old, _)) = tx.schema_before.clone() {
        follow(e, tx, &old, false);
    }
}

/// write_bases: every base file the schema calls for, as `follow` keeps them.
pub(crate) fn write_bases(e: &mut Plans, tx: &mut Tx, a: &Args) -> OpResult<String> {
    if !e.settings.bases {
        return fail(Failure::refused(
            a.op,
            vec!["bases are turned off".into()],
            "configure_database {\"bases\": true} turns them on; schema operations then keep them too.",
        ));
    }
    let schema = e.index.schema.clone();
    let (written, kept) = follow(e, tx, &schema, true);
    Ok(format!("write bases ({written} written, {} kept as edited)", kept.len()))
}
