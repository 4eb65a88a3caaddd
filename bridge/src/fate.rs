//! What became of the calls whose writes the disk refused once their answers
//! were made (group commit, see `queue`): a full disk, a failed sync, a store
//! folder replaced. The engine answered them as done; their answers say what
//! stands instead. An answer of ok means the write is on disk.

use datanotes_core::error::{Failure, Kind};
use datanotes_core::Outcome;
use serde_json::{json, Value};
use std::ops::RangeInclusive;
use std::sync::{Mutex, PoisonError};

/// Each with the disk's word.
#[derive(Debug, Clone, PartialEq)]
pub enum Fate {
    /// Nothing of the call stands: its texts were never put in place.
    RolledBack(String),
    /// Its first files stand, the rest do not.
    CutShort(String),
    /// All of it stands, but the disk did not confirm it (a failed sync).
    Unconfirmed(String),
}

/// The fates of the last calls given up, by the calls they concern (a call
/// asks right after its own writes, so a few suffice).
#[derive(Default)]
pub struct Fates(Mutex<Vec<(RangeInclusive<u64>, Fate)>>);

const AT_MOST: usize = 1024;

impl Fates {
    /// The calls `calls` (numbered by `Queue::seal`) met `fate`.
    pub fn set(&self, calls: RangeInclusive<u64>, fate: Fate) {
        if calls.is_empty() {
            return;
        }
        let mut fates = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if fates.len() >= AT_MOST {
            fates.remove(0);
        }
        fates.push((calls, fate));
    }

    /// The call `ticket`'s fate, if its writes were refused: the gravest, as a
    /// call rolled back may also have been in a sync that failed.
    pub fn of(&self, ticket: u64) -> Option<Fate> {
        let fates = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let found = fates.iter().filter(|(calls, _)| calls.contains(&ticket)).map(|(_, f)| f);
        found.max_by_key(|f| f.gravity()).cloned()
    }
}

impl Fate {
    fn gravity(&self) -> u8 {
        match self {
            Fate::Unconfirmed(_) => 1,
            Fate::RolledBack(_) => 2,
            Fate::CutShort(_) => 3,
        }
    }

    /// Whether the engine read the vault again after it (the call's writes
    /// were given up).
    pub fn reopened(&self) -> bool {
        !matches!(self, Fate::Unconfirmed(_))
    }

    /// The answer of the call `op`, which the engine answered `answer`.
    pub fn outcome(&self, op: &str, answer: &Value) -> Outcome {
        let id = answer.get("migration_id").and_then(Value::as_str);
        let f = match self {
            Fate::RolledBack(e) => {
                let mut f = Failure::refused(
                    op,
                    vec![format!("the disk refused its files once the engine had planned it: {e}")],
                    "Nothing of it was written, and the engine read the vault again. Make room on the disk (or mend it: see the system's log), then send it again.",
                );
                f.kind = Kind::RolledBack;
                return Outcome::failed(&f);
            }
            Fate::CutShort(e) => Failure::unsure(
                op,
                vec![format!("the disk refused its files part way ({e}): the first are in place, the rest are not")],
                match id {
                    Some(id) => format!("The engine read the vault again and holds what stands. Make room on the disk (or mend it), then list_migrations shows {id} as cut short, and undo_migration puts its notes back."),
                    None => "The engine read the vault again and holds what stands: read the rows back before sending it again.".into(),
                },
            ),
            Fate::Unconfirmed(e) => Failure::unsure(
                op,
                vec![format!("it is in place, but the disk did not confirm it ({e}): a power cut may undo it")],
                "It stands now: read it back rather than send it again. Check the disk (the system's log, free space); until it confirms writes, none is answered ok.",
            ),
        };
        Outcome::failed(&f.with_details(json!({"migration_id": id})))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_gets_its_gravest_fate_and_every_one_says_it_is_not_ok() {
        let fates = Fates::default();
        fates.set(10..=12, Fate::Unconfirmed("EIO".into()));
        fates.set(11..=11, Fate::CutShort("ENOSPC".into()));
        fates.set(12..=14, Fate::RolledBack("ENOSPC".into()));
        assert_eq!(fates.of(10), Some(Fate::Unconfirmed("EIO".into())));
        assert_eq!(fates.of(11), Some(Fate::CutShort("ENOSPC".into())));
        assert_eq!(fates.of(12), Some(Fate::RolledBack("ENOSPC".into())));
        assert_eq!(fates.of(15), None);
        let done = json!({"ok": true, "migration_id": "m1"});
        for f in [fates.of(10), fates.of(11), fates.of(12)].into_iter().flatten() {
            let out = f.outcome("update_row", &done);
            assert_eq!(out.answer["ok"], false, "{}", out.answer);
            assert_ne!(out.status.http(), 200);
        }
        let cut = fates.of(11).unwrap().outcome("update_row", &done);
        assert!(cut.answer["error"].as_str().unwrap().contains("the first are in place"), "{}", cut.answer);
        assert_eq!(cut.answer["migration_id"], "m1");
        assert_eq!(fates.of(12).unwrap().outcome("update_row", &done).status.http(), 503);
    }
}
