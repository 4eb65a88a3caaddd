//! What an operation is, as the registry (registry.rs) lists each: its name,
//! kind, arguments, facts and the function that runs it. The handlers and the
//! docs read these types; only the engine and the front doors read the list.

use super::answers::{self, Answer};
use super::args::Args;
use super::context::{Keeps, Plans, Sees};
use crate::error::OpResult;
use crate::step::Outcome;
use crate::tx::Tx;
use serde_json::{json, Map, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
    Destructive,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    Str,
    Int,
    Bool,
    Obj,
    Arr,
    StrList,
    /// A string or a list of strings (order_by).
    StrOrList,
    Any,
}

#[derive(Debug)]
pub struct Param {
    pub name: &'static str,
    pub ty: Ty,
    pub required: bool,
    pub description: &'static str,
}

/// A read's handler: answers from what it sees.
pub(crate) type ReadFn = fn(&Sees, &Args) -> OpResult<Value>;

/// A write's handler: plans note edits inside a transaction, answers a summary.
pub(crate) type WriteFn = fn(&mut Plans, &mut Tx, &Args) -> OpResult<String>;

/// How an operation runs: the function that does it, by what it may change.
#[derive(Clone, Copy)]
pub(crate) enum Handler {
    /// Answers from the index (and the log, whose files it may ask the host for).
    Read(ReadFn),
    /// Changes the store alone (settings, webhooks, old log files), at the host's
    /// time: no note is touched, nothing is journaled.
    Store(fn(&mut Keeps, &Args, i64) -> OpResult<Outcome>),
    /// Plans note edits inside a write transaction; answers the write's summary.
    /// The transaction turns them into edits, a journal entry and log commits.
    Write(WriteFn),
}

/// The note texts an operation needs read before it runs (an engine opened
/// from the notes' cache has read none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Texts {
    /// None: it answers from the rows and links alone.
    None,
    /// The note its `path` names (as of a version, the log's blobs).
    OwnNote,
    /// Every row's text.
    Rows,
    /// Every note's, plain notes too (embedding them, inferring a table).
    All,
}

pub struct OpSpec {
    pub name: &'static str,
    pub title: &'static str,
    pub access: Access,
    pub journaled: bool,
    pub description: &'static str,
    pub params: &'static [Param],
    pub(crate) run: Handler,
    /// Facts a front door acts on, here rather than in a list of names there.
    pub facts: Facts,
}

/// What the front doors and the engine must know of an operation beyond its
/// arguments: each is read from here, never from its name.
#[derive(Debug, Clone, Copy)]
pub struct Facts {
    pub texts: Texts,
    /// The operation of the table log's commit it writes (Delta Lake's names).
    pub log_operation: &'static str,
    /// It may hold the call until something happens (`wait_ms`).
    pub long_poll: bool,
    /// It needs the meaning model (an embedding model the host provides).
    pub needs_model: bool,
    /// It sends the database's data outside the vault (MCP's openWorldHint).
    pub open_world: bool,
    /// Its answer carries `duration_ms`, which only the host can time.
    pub timed_by_host: bool,
    /// It deletes history for good: the host drops its own copies of old
    /// texts too (the binary's spare files).
    pub drops_history: bool,
    /// It runs other operations as one (its commits carry its id as `batch`).
    pub batch: bool,
    /// It puts back the files of an earlier write as they were, the Bases
    /// files too (nothing else writes those for it).
    pub puts_back: bool,
    /// It renames a table (journal entries from before `renamed` was recorded
    /// are read by this).
    pub renames_table: bool,
    /// It rewrites plain notes too (links in them): the feed reports those.
    pub rewrites_plain_notes: bool,
    /// The shape of its answer; a write without one answers the write's shape.
    pub answer: Option<&'static Answer>,
    /// A write that may be staged into a proposal instead of applied: it
    /// takes `proposal` (and `proposal_message`), added here for all of them.
    pub stageable: bool,
    /// A read that may see the tables as a proposal would leave them: it
    /// takes `proposal`.
    pub through_proposal: bool,
}

/// The arguments every stageable write takes (`Facts::stageable`).
pub static STAGE_PARAMS: [Param; 2] = [
    Param {
        name: "proposal",
        ty: Ty::Str,
        required: false,
        description: "Stage the write into this proposal (made on first use, you its author) instead of applying it: the notes stay as they are until a person accepts it (accept_proposal). 1 to 64 letters, digits, - and _.",
    },
    Param {
        name: "proposal_message",
        ty: Ty::Str,
        required: false,
        description: "With proposal, when it opens the proposal: why, in a line the reviewing person reads.",
    },
];

/// The argument of a read through a proposal (`Facts::through_proposal`).
pub static THROUGH_PARAM: Param = Param {
    name: "proposal",
    ty: Ty::Str,
    required: false,
    description: "Read the tables as they would be if this proposal (list_proposals) were accepted.",
};

impl Facts {
    pub(crate) const DEFAULT: Facts = Facts {
        texts: Texts::Rows,
        log_operation: "ALTER TABLE",
        long_poll: false,
        needs_model: false,
        open_world: false,
        timed_by_host: false,
        drops_history: false,
        batch: false,
        puts_back: false,
        renames_table: false,
        rewrites_plain_notes: false,
        answer: None,
        stageable: false,
        through_proposal: false,
    };
}

impl std::fmt::Debug for OpSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpSpec").field("name", &self.name).field("access", &self.access).finish_non_exhaustive()
    }
}

fn ty_schema(ty: Ty) -> Value {
    match ty {
        Ty::Str => json!({"type": "string"}),
        Ty::Int => json!({"type": "integer"}),
        Ty::Bool => json!({"type": "boolean"}),
        Ty::Obj => json!({"type": "object"}),
        Ty::Arr => json!({"type": "array"}),
        Ty::StrList => json!({"type": "array", "items": {"type": "string"}}),
        Ty::StrOrList => json!({"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}),
        Ty::Any => json!({}),
    }
}

impl OpSpec {
    /// Its arguments: its own, and those its facts add (a proposal's).
    pub fn all_params(&self) -> Vec<&'static Param> {
        let mut all: Vec<&'static Param> = self.params.iter().collect();
        if self.facts.stageable {
            all.extend(STAGE_PARAMS.iter());
        } else if self.facts.through_proposal && !all.iter().any(|p| p.name == THROUGH_PARAM.name) {
            all.push(&THROUGH_PARAM);
        }
        all
    }

    /// The JSON Schema of the arguments.
    pub fn input_schema(&self) -> Value {
        let mut props = Map::new();
        let mut required = vec![];
        for p in self.all_params() {
            let mut s = ty_schema(p.ty);
            s["description"] = p.description.into();
            props.insert(p.name.into(), s);
            if p.required {
                required.push(p.name);
            }
        }
        json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
    }

    /// The shape of its answer when it is done: its own, or a write's.
    pub fn answer(&self) -> Option<&'static Answer> {
        match (self.facts.answer, self.run) {
            (Some(a), _) => Some(a),
            (None, Handler::Write(_)) => Some(&answers::WRITE),
            (None, _) => None,
        }
    }

    /// The JSON Schema of its answer when it is done (HTTP 200).
    pub fn answer_schema(&self) -> Value {
        self.answer().map_or_else(|| json!({"type": "object"}), |a| a.schema(self.name))
    }

    /// The JSON Schema of every answer it gives, done or refused (MCP's
    /// outputSchema: a refusal is an `isError` result of the same shape as
    /// HTTP's 4xx and 5xx answers).
    pub fn output_schema(&self) -> Value {
        json!({"type": "object", "anyOf": [self.answer_schema(), answers::refusal_schema()]})
    }

    pub fn param_names(&self) -> Vec<&'static str> {
        self.all_params().iter().map(|p| p.name).collect()
    }
}

/// The operation of that name among `ops`.
pub fn find(ops: &'static [OpSpec], name: &str) -> Option<&'static OpSpec> {
    ops.iter().find(|o| o.name == name)
}
