//! Store writes the host could not make after a write's notes were written (a full
//! disk, a folder made read-only): the engine keeps them, in order, and the host
//! writes them before anything else, so the journal, the logs and the change feed
//! get neither a gap nor a line out of order. Until they are in, writes are
//! refused: each would add records the disk cannot take.

use crate::edits::StoreWrite;
use crate::engine::Engine;
use crate::error::{Failure, Kind};
use serde::Serialize;
use serde_json::{json, Value};

#[derive(Default)]
pub(crate) struct Owed {
    writes: Vec<StoreWrite>,
    error: String,
}

/// What a host says when store writes are owed: a log line, and what the answer
/// of the call that made them adds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Behind {
    pub log: String,
    /// The store files not written (yet), in order.
    pub not_recorded: Vec<String>,
    pub warning: String,
}

impl Behind {
    /// Adds `not_recorded` and `warning` to an answer (an object).
    pub fn annotate(&self, answer: &mut Value) {
        if let Some(m) = answer.as_object_mut() {
            m.insert("not_recorded".into(), json!(self.not_recorded));
            m.insert("warning".into(), self.warning.clone().into());
        }
    }
}

impl Engine {
    /// The store writes still owed, oldest first, for the host to write before any
    /// other; what it cannot write it hands back with `owe`.
    pub fn take_owed(&mut self) -> Vec<StoreWrite> {
        std::mem::take(&mut self.owed.writes)
    }

    /// The host could not write `rest` (the first failed with `error`): kept, to be
    /// written first next time.
    pub fn owe(&mut self, rest: Vec<StoreWrite>, error: &str) -> Behind {
        self.owed.writes = rest;
        self.owed.error = error.to_string();
        let mut not_recorded: Vec<String> = vec![];
        for w in &self.owed.writes {
            if !not_recorded.contains(&w.path) {
                not_recorded.push(w.path.clone());
            }
        }
        let warning = format!(
            "the notes are written, but the store could not record it ({error}): {} of .datanotes wait in memory and are written before the next write. Free disk space now; if the engine stops first, the next open reports the write as cut short (undo_migration puts it back).",
            not_recorded.join(", ")
        );
        Behind { log: format!("WARN {warning}"), not_recorded, warning }
    }

    /// How many store writes are owed.
    pub fn owed(&self) -> usize {
        self.owed.writes.len()
    }

    /// A write refused while store writes are owed.
    pub(crate) fn owed_refusal(&self, op: &str) -> Option<Failure> {
        if self.owed.writes.is_empty() {
            return None;
        }
        let mut f = Failure::refused(
            op,
            vec![format!(
                "the store is behind: {} records of an earlier write could not be written ({})",
                self.owed.writes.len(),
                self.owed.error
            )],
            "Free disk space in the vault's .datanotes folder, then send the operation again: the records go first, then it.",
        );
        f.kind = Kind::RolledBack;
        Some(f)
    }
}
