//! Store writes the host could not make after a write's notes were written (a full
//! disk, a folder made read-only): the engine keeps them, in order, and the host
//! writes them before anything else, so the journal, the logs and the change feed
//! get neither a gap nor a line out of order. Until they are in, writes are
//! refused: each would add records the disk cannot take.

use crate::edits::StoreWrite;
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

impl Owed {
    /// The store writes still owed, oldest first, for the host to write before any
    /// other; what it cannot write it hands back with `owe`.
    pub fn take(&mut self) -> Vec<StoreWrite> {
        std::mem::take(&mut self.writes)
    }

    /// The host could not write `rest` (the first failed with `error`): kept, to be
    /// written first next time.
    pub fn owe(&mut self, rest: Vec<StoreWrite>, error: &str) -> Behind {
        self.writes = rest;
        self.error = error.to_string();
        let mut not_recorded: Vec<String> = vec![];
        // A journal entry owed twice was not written even pending (a host that
        // writes after its lock, as serve does, swaps the notes in regardless):
        // a stop then leaves nothing that names the write.
        let mut unjournaled = false;
        for w in &self.writes {
            if !not_recorded.contains(&w.path) {
                not_recorded.push(w.path.clone());
            } else if w.path.starts_with("journal/") {
                unjournaled = true;
            }
        }
        let after_a_stop = if unjournaled {
            "the next open finds the notes' new texts as hand edits, as its journal entry waits too"
        } else {
            "the next open reports the write as cut short (undo_migration puts it back)"
        };
        let warning = format!(
            "the notes are written, but the store could not record it ({error}): {} of .datanotes wait in memory and are written before the next write. Free disk space now; if the engine stops first, {after_a_stop}.",
            not_recorded.join(", ")
        );
        Behind { log: format!("WARN {warning}"), not_recorded, warning }
    }

    /// How many store writes are owed.
    pub fn len(&self) -> usize {
        self.writes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.writes.is_empty()
    }

    /// A write refused while store writes are owed.
    pub(crate) fn refusal(&self, op: &str) -> Option<Failure> {
        if self.is_empty() {
            return None;
        }
        let mut f = Failure::refused(
            op,
            vec![format!(
                "the store is behind: {} records of an earlier write could not be written ({})",
                self.writes.len(),
                self.error
            )],
            "Free disk space in the vault's .datanotes folder, then send the operation again: the records go first, then it.",
        );
        f.kind = Kind::RolledBack;
        Some(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn the_warning_says_what_a_stop_leaves_by_whether_the_journal_entry_got_in() {
        let mut e = Owed::default();
        let done = vec![StoreWrite::put("log/t/1.json", "{}"), StoreWrite::put("journal/a.json", "done")];
        let b = e.owe(done, "full");
        assert!(b.warning.contains("reports the write as cut short"), "{}", b.warning);
        assert_eq!(b.not_recorded, ["log/t/1.json", "journal/a.json"]);
        let both = vec![StoreWrite::put("journal/a.json", "pending"), StoreWrite::put("journal/a.json", "done")];
        let b = e.owe(both, "full");
        assert!(b.warning.contains("as hand edits, as its journal entry waits too"), "{}", b.warning);
        assert_eq!(b.not_recorded, ["journal/a.json"]);
    }
}
