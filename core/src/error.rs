//! Errors are values: a kind (which HTTP status and exit code it maps to), the
//! reasons, a hint with the way out and the page of the docs that explains it.

use serde_json::{json, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The arguments are not what the operation takes (HTTP 400).
    BadInput,
    /// The operation was understood and refused: nothing was written (HTTP 409).
    Refused,
    /// A write could not finish and was rolled back (HTTP 503).
    RolledBack,
    /// A defect of ours (HTTP 500).
    Internal,
    /// A write the host's disk cut short or did not confirm after the engine
    /// had made it: part or all of it may stand, as the reasons say (HTTP 500).
    Unsure,
}

impl Kind {
    /// Its name in a refusal's answer (`kind`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::BadInput => "bad_input",
            Kind::Refused => "refused",
            Kind::RolledBack => "rolled_back",
            Kind::Internal => "internal",
            Kind::Unsure => "unsure",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Failure {
    pub kind: Kind,
    pub op: String,
    /// One line each.
    pub reasons: Vec<String>,
    pub hint: String,
    /// A docs page and anchor, e.g. "guides/history/journal-and-undo#undo-refuses".
    pub docs: Option<String>,
    /// Structured details for programs (violations, conflicts, current values).
    pub details: Option<Value>,
}

/// Why a turn stopped before its answer: it failed (the answer says why), or
/// it needs store files the host has not read yet (the host reads them and
/// the turn runs again: `Step::Need`). A need is never a failure. Which files:
/// every one the turn asked the store for and lacked (`Store::take_wanted`),
/// one list however many reads stopped on one.
#[derive(Debug, Clone)]
pub enum Stop {
    Failed(Failure),
    Need,
}

impl From<Failure> for Stop {
    fn from(f: Failure) -> Stop {
        Stop::Failed(f)
    }
}

impl Stop {
    /// The failure changed by `f` (a batch names the operation in it that
    /// failed); a need goes on as it is.
    pub fn map_failure(self, f: impl FnOnce(Failure) -> Failure) -> Stop {
        match self {
            Stop::Failed(x) => Stop::Failed(f(x)),
            need => need,
        }
    }

    /// What a log line says of it.
    pub fn text(&self) -> String {
        match self {
            Stop::Failed(f) => f.text(),
            Stop::Need => "store files not read yet".to_string(),
        }
    }
}

pub type OpResult<T> = Result<T, Stop>;

/// A failure as an operation's result.
pub fn fail<T>(f: Failure) -> OpResult<T> {
    Err(Stop::Failed(f))
}

impl Failure {
    pub fn bad_input(op: &str, reason: impl Into<String>, hint: impl Into<String>) -> Self {
        Failure {
            kind: Kind::BadInput,
            op: op.to_string(),
            reasons: vec![reason.into()],
            hint: hint.into(),
            docs: Some(format!("reference/operations#{op}")),
            details: None,
        }
    }

    pub fn refused(op: &str, reasons: Vec<String>, hint: impl Into<String>) -> Self {
        Failure {
            kind: Kind::Refused,
            op: op.to_string(),
            reasons,
            hint: hint.into(),
            docs: Some(format!("reference/operations#{op}")),
            details: None,
        }
    }

    pub fn internal(op: &str, reason: impl Into<String>) -> Self {
        Failure {
            kind: Kind::Internal,
            op: op.to_string(),
            reasons: vec![reason.into()],
            hint: "This is a defect of Datanotes: nothing was written. Report it with the operation and its arguments."
                .into(),
            docs: None,
            details: None,
        }
    }

    /// A write the disk cut short or did not confirm (see `Kind::Unsure`).
    pub fn unsure(op: &str, reasons: Vec<String>, hint: impl Into<String>) -> Self {
        Failure {
            kind: Kind::Unsure,
            op: op.to_string(),
            reasons,
            hint: hint.into(),
            docs: Some("reference/operations#answers".into()),
            details: None,
        }
    }

    pub fn with_docs(mut self, page: &str) -> Self {
        self.docs = Some(page.to_string());
        self
    }

    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// The text a person or an agent reads, as the seeds print refusals.
    pub fn text(&self) -> String {
        let head = match self.kind {
            Kind::BadInput => format!("{}: bad arguments — nothing was written:", self.op),
            Kind::Refused => format!("{} refused — nothing was written:", self.op),
            Kind::RolledBack => format!("{} failed and was rolled back — nothing is left changed:", self.op),
            Kind::Internal => format!("{} failed unexpectedly — nothing was written:", self.op),
            Kind::Unsure => format!("{} did not reach the disk as answered — what stands:", self.op),
        };
        let mut out = head;
        for r in &self.reasons {
            out.push('\n');
            out.push_str(r);
        }
        out.push_str("\nHint: ");
        out.push_str(&self.hint);
        if let Some(page) = &self.docs {
            let (path, anchor) = match page.split_once('#') {
                Some((p, a)) => (p, format!("#{a}")),
                None => (page.as_str(), String::new()),
            };
            out.push_str(&format!("\nDocs: https://datanotes.dev/{path}.md{anchor} (offline: read_docs(\"{page}\"))"));
        }
        out
    }

    /// The answer a program reads.
    pub fn to_json(&self) -> Value {
        let mut v = json!({
            "ok": false,
            "op": self.op,
            "error": self.text(),
            "hint": self.hint,
            "reasons": self.reasons,
            "kind": self.kind.name(),
        });
        if let Some(page) = &self.docs {
            v["docs"] = page.clone().into();
        }
        if let Some(d) = &self.details {
            if let (Some(obj), Some(extra)) = (v.as_object_mut(), d.as_object()) {
                for (k, x) in extra {
                    obj.insert(k.clone(), x.clone());
                }
            }
        }
        v
    }

    pub fn exit_code(&self) -> i32 {
        match self.kind {
            Kind::BadInput => 2,
            _ => 1,
        }
    }
}
