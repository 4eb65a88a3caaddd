//! What a turn of the engine answers: the next [`Step`] for the host, and how
//! the turn ended ([`Outcome`]). Below every subsystem, so that each can answer
//! a step without knowing the engine.

use crate::edits::{Edit, StoreWrite};
use crate::error::{Failure, Kind};
use crate::feed::webhook::Delivery;
use serde::Serialize;
use serde_json::{json, Value};

/// What the host does next, after a call, a finish, a tick or a reconcile.
#[derive(Debug, Clone)]
#[must_use]
pub enum Step {
    /// The turn is over: write the outcome's store, then answer.
    Done(Outcome),
    /// Read these store files (paths under `.datanotes/`), hand them to `provide`
    /// (None for a file that is absent), and make the same call again.
    Need(Vec<String>),
    /// Read these notes (an engine opened from the store's cache reads a note's
    /// text only for a turn that needs it), hand them to `read_notes`, and make
    /// the same call again.
    ReadNotes(Vec<String>),
    /// A write: persist `store`, apply `edits` in order, report them to `finish`.
    Apply(Apply),
}

/// A write to carry out.
#[derive(Debug, Clone, Serialize)]
pub struct Apply {
    /// The write's answer as planned (for a rollback, `rolling_back: true`).
    pub answer: Value,
    pub edits: Vec<Edit>,
    /// Store files to write before the first edit.
    pub store: Vec<StoreWrite>,
    /// Lines for the host's log (what automatic writes before this one met).
    pub log: Vec<String>,
}

/// How a turn ended: its status, its answer, and what the host must do besides.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub status: Status,
    pub answer: Value,
    /// Store files to write before the answer goes out.
    pub store: Vec<StoreWrite>,
    /// Lines for the host's log (warnings: what hand edits broke).
    pub log: Vec<String>,
    /// Webhook deliveries to make (from `tick`); report each with `delivered`.
    pub deliveries: Vec<Delivery>,
}

/// How a turn ended. Its wire name is serde's: `ok`, `bad_input`, `refused`,
/// `rolled_back`, `internal` (the step that carries it is `done`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Done as asked (HTTP 200).
    Ok,
    /// The arguments are not what the operation takes (HTTP 400).
    BadInput,
    /// Understood and refused: nothing was written (HTTP 409).
    Refused,
    /// A write could not finish and was rolled back (HTTP 503).
    RolledBack,
    /// A defect of ours (HTTP 500).
    Internal,
}

impl Status {
    pub fn http(self) -> u16 {
        match self {
            Status::Ok => 200,
            Status::BadInput => 400,
            Status::Refused => 409,
            Status::RolledBack => 503,
            Status::Internal => 500,
        }
    }

    pub fn exit_code(self) -> i32 {
        match self {
            Status::Ok => 0,
            Status::BadInput => 2,
            _ => 1,
        }
    }
}

impl Outcome {
    pub fn done(answer: Value) -> Outcome {
        Outcome { status: Status::Ok, answer, store: vec![], log: vec![], deliveries: vec![] }
    }

    pub fn failed(f: &Failure) -> Outcome {
        let status = match f.kind {
            Kind::BadInput => Status::BadInput,
            Kind::Refused => Status::Refused,
            Kind::RolledBack => Status::RolledBack,
            Kind::Internal | Kind::Unsure => Status::Internal,
        };
        Outcome { status, ..Outcome::done(f.to_json()) }
    }

    /// The outcome as JavaScript hosts read it, with its HTTP status.
    pub fn to_json(&self) -> Value {
        let mut v = serde_json::to_value(self).unwrap_or_default();
        v["http"] = self.status.http().into();
        v
    }
}

impl Step {
    /// The step as JavaScript hosts read it: what to do next in `step`
    /// (`need`, `read_notes`, `apply`, `done`), and for a turn that is done,
    /// how it ended in `status` (`ok`, `refused`, …): `{step: "need", need}`,
    /// `{step: "apply", answer, edits, store, log}`, `{step: "done", status,
    /// answer, …}`.
    pub fn to_json(&self) -> Value {
        match self {
            Step::Done(o) => {
                let mut v = o.to_json();
                v["step"] = "done".into();
                v
            }
            Step::Need(paths) => json!({"step": "need", "need": paths}),
            Step::ReadNotes(paths) => json!({"step": "read_notes", "notes": paths}),
            Step::Apply(a) => {
                let mut v = serde_json::to_value(a).unwrap_or_default();
                v["step"] = "apply".into();
                v
            }
        }
    }
}
