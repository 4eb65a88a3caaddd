//! `resolve_conflict`: one side of a conflict kept (conflicts.rs) — the original
//! or a sync tool's copy of it, or one side of the markers git left in a note —
//! as a journaled write that undo takes back.

use super::args::Args;
use super::context::Plans;
use crate::conflicts::{copy_of, git_sides, is_copy_message};
use crate::error::{fail, Failure, OpResult};
use crate::tx::Tx;
use crate::vault::State;

const HINT: &str = "check_table lists the conflicts (code \"conflict\", with both versions); give the path of a copy, or of a note with git's markers.";

pub(crate) fn resolve(e: &mut Plans, tx: &mut Tx, a: &Args) -> OpResult<String> {
    let (path, keep) = (a.req("path"), a.req("keep"));
    let Some(note) = e.index.vault.get(path) else {
        return fail(Failure::refused(a.op, vec![format!("no note at \"{path}\"")], HINT));
    };
    let text = note.text().to_string();
    if let Some((ours, theirs)) = git_sides(&text) {
        let side = match keep {
            "ours" => ours,
            "theirs" => theirs,
            _ => {
                return Err(
                    bad_keep(a.op, keep, "\"ours\" (the branch merged into) or \"theirs\" (the branch merged)").into()
                )
            }
        };
        e.index.tx_put(tx, path, side);
        return Ok(format!("keep {keep} in {path}"));
    }
    let is_copy = matches!(&note.state, State::Unreadable { message, .. } if is_copy_message(message));
    let Some(c) = copy_of(path).filter(|_| is_copy) else {
        return fail(Failure::refused(a.op, vec![format!("{path} is not in conflict")], HINT));
    };
    match keep {
        "original" => e.index.tx_trash(tx, path),
        "copy" => {
            e.index.tx_put(tx, &c.original, text);
            e.index.tx_trash(tx, path);
        }
        _ => {
            return fail(bad_keep(
                a.op,
                keep,
                "\"original\" (the copy goes to the trash) or \"copy\" (its text becomes the row's)",
            ))
        }
    }
    Ok(format!("keep the {keep} of {}", c.original))
}

fn bad_keep(op: &str, keep: &str, sides: &str) -> Failure {
    Failure::bad_input(op, format!("keep \"{keep}\" is not a side of this conflict"), format!("keep: {sides}."))
}
