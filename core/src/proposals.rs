//! Proposals: named sets of staged writes that wait for a person's decision.
//! A write given `proposal` is planned as usual, over the tables as the
//! proposal's earlier writes leave them, and kept here instead of applied.
//!
//! Each proposal is a file of this device's, `proposals/<name>.<device>.jsonl`:
//! a line opening it, a line per staged write (the notes' texts before and
//! after, as a journal entry keeps them), and a line per decision. A decision
//! made on another device (a rejection) is a line in that device's file of the
//! same name. Lines are sealed with the device key as journal entries are
//! (seal.rs); what a sync brings is checked before it is believed (trust.rs),
//! and a proposal that fails is listed with why, and never applied.
//! An acceptance is not a line here: it is the journal entry of the
//! accept_proposal write (`Entry::proposal`), so that it stands or falls with
//! that write, and an undo of it opens the proposal again.

use crate::edits::StoreWrite;
use crate::index::Index;
use crate::journal::{Change, EntryStatus, Journal};
use crate::seal::Key;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};

pub const DIR: &str = "proposals/";

/// The longest proposal name.
const NAME_MAX: usize = 64;

/// A decision other than acceptance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Rejected,
    Withdrawn,
}

/// One line of a proposal's file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Line {
    Open {
        format: u32,
        name: String,
        author: String,
        #[serde(default)]
        device: Option<String>,
        created_ms: i64,
        #[serde(default)]
        message: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seal: Option<String>,
    },
    Write {
        n: usize,
        op: String,
        args: Value,
        summary: String,
        at_ms: i64,
        changes: Vec<Change>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seal: Option<String>,
    },
    Decided {
        decision: Decision,
        by: String,
        #[serde(default)]
        message: Option<String>,
        at_ms: i64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seal: Option<String>,
    },
}

impl Line {
    fn seal_mut(&mut self) -> &mut Option<String> {
        match self {
            Line::Open { seal, .. } | Line::Write { seal, .. } | Line::Decided { seal, .. } => seal,
        }
    }

    /// What its seal covers: the line less its seal.
    fn unsealed(&self) -> Line {
        let mut l = self.clone();
        *l.seal_mut() = None;
        l
    }

    /// The line as written, sealed under `key` (unsealed without one).
    fn text(mut self, key: &Key) -> String {
        *self.seal_mut() = key.seal(&self.unsealed());
        let mut t = serde_json::to_string(&self).unwrap_or_default();
        t.push('\n');
        t
    }
}

/// A write kept in a proposal.
#[derive(Debug, Clone)]
pub struct Staged {
    pub n: usize,
    pub op: String,
    pub args: Value,
    pub summary: String,
    pub at_ms: i64,
    pub changes: Vec<Change>,
}

/// A decision, with who made it and their message.
#[derive(Debug, Clone)]
pub struct Decided {
    pub decision: Decision,
    pub by: String,
    pub message: Option<String>,
    pub at_ms: i64,
}

#[derive(Debug, Clone, Default)]
pub struct Proposal {
    pub name: String,
    pub author: String,
    /// The device it was made on (None: a vault of one device).
    pub device: Option<String>,
    pub message: Option<String>,
    pub created_ms: i64,
    pub writes: Vec<Staged>,
    pub decided: Option<Decided>,
    /// Why it cannot be believed (damaged or forged): listed, never applied.
    pub problem: Option<String>,
    /// Lines read from its files, with the device each file names, to check
    /// those in this device's name against its key once the host gives it
    /// (`set_key`).
    unchecked: Vec<(Option<String>, Line)>,
}

impl Proposal {
    /// A proposal not made yet, of that name (its view is the vault's).
    pub fn named(name: &str) -> Proposal {
        Proposal { name: name.into(), ..Proposal::default() }
    }
}

/// Which (write, note path) pairs of a proposal accepted writes took.
pub type Picked = BTreeSet<(usize, String)>;

/// The proposals of the vault, every device's.
#[derive(Debug, Default)]
pub struct Proposals {
    list: BTreeMap<String, Proposal>,
    key: Key,
    device: Option<String>,
    /// The proposal files as read and written since: one that a sync brings
    /// anew replaces its text, and the proposals are read again from them.
    files: BTreeMap<String, String>,
}

/// Whether `name` can name a proposal (it names its file too): 1 to 64
/// letters, digits, `-` and `_`.
pub fn valid_name(name: &str) -> bool {
    (1..=NAME_MAX).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'))
}

/// The file of a proposal written by `device`.
pub fn file(name: &str, device: Option<&str>) -> String {
    match device {
        Some(d) => format!("{DIR}{name}.{d}.jsonl"),
        None => format!("{DIR}{name}.jsonl"),
    }
}

/// A proposal file's name and device, if its path is one.
fn file_parts(path: &str) -> Option<(&str, Option<&str>)> {
    let stem = path.strip_prefix(DIR)?.strip_suffix(".jsonl")?;
    let (name, device) = match stem.split_once('.') {
        Some((n, d)) => (n, Some(d)),
        None => (stem, None),
    };
    let ok = valid_name(name) && device.is_none_or(crate::trust::is_device);
    ok.then_some((name, device))
}

/// Why a staged write read from a file cannot be believed, if it cannot.
fn write_problem(op: &str, args: &Value, changes: &[Change], stageable: &dyn Fn(&str) -> bool) -> Option<String> {
    if !stageable(op) {
        return Some(format!("it stages {op:?}, which is not a write a proposal holds"));
    }
    if !args.is_object() {
        return Some("its arguments are not an object".into());
    }
    for c in changes {
        for p in std::iter::once(&c.path).chain(c.from.iter()) {
            if let Some(why) = crate::trust::note_path_problem(p) {
                return Some(format!("it changes {why}"));
            }
        }
        if c.before_blob.is_some() || c.after_blob.is_some() {
            return Some("it names blobs, which no proposal keeps".into());
        }
    }
    None
}

impl Proposals {
    /// Reads the proposals' files among the store's (path, text). A line that
    /// cannot be read, or claims what its file cannot hold, marks its proposal
    /// damaged (listed with why, never applied). `stageable`: whether an
    /// operation may be staged.
    pub fn load(files: &[(String, String)], stageable: &dyn Fn(&str) -> bool) -> (Proposals, Vec<String>) {
        let mut p = Proposals::default();
        for (path, text) in files.iter().filter(|(p, _)| p.starts_with(DIR)) {
            let Some((name, device)) = file_parts(path) else { continue };
            p.files.insert(path.clone(), text.clone());
            for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
                let taken = serde_json::from_str::<Line>(line)
                    .map_err(|e| format!("line {} cannot be read ({e})", i + 1))
                    .and_then(|l| p.take(name, device, l, stageable));
                if let Err(why) = taken {
                    p.damage(name, format!("{path}: {why}"));
                }
            }
        }
        let warnings = p.list.values().filter_map(|x| x.problem.clone()).collect();
        (p, warnings)
    }

    fn damage(&mut self, name: &str, why: String) {
        let pr =
            self.list.entry(name.to_string()).or_insert_with(|| Proposal { name: name.into(), ..Proposal::default() });
        pr.problem.get_or_insert(why);
    }

    /// Takes a line of `name`'s file written by `device`.
    fn take(
        &mut self,
        name: &str,
        device: Option<&str>,
        line: Line,
        stageable: &dyn Fn(&str) -> bool,
    ) -> Result<(), String> {
        let pr =
            self.list.entry(name.to_string()).or_insert_with(|| Proposal { name: name.into(), ..Proposal::default() });
        let origin = !pr.author.is_empty();
        match &line {
            Line::Open { name: n, author, device: d, created_ms, message, .. } => {
                if n != name {
                    return Err(format!("it opens the proposal {n:?} in the file of {name:?}"));
                }
                if d.as_deref() != device {
                    return Err(format!("it claims the device {d:?}, not its file's"));
                }
                if origin {
                    return Err("a second device opens a proposal of the same name".into());
                }
                if author.is_empty() || author.len() > 200 {
                    return Err("its author is no actor's name".into());
                }
                pr.author = author.clone();
                pr.device = d.clone();
                pr.created_ms = *created_ms;
                pr.message = message.clone();
            }
            Line::Write { n, op, args, summary, at_ms, changes, .. } => {
                if !origin || pr.device.as_deref() != device {
                    return Err("it stages a write outside the file that opened the proposal".into());
                }
                if let Some(why) = write_problem(op, args, changes, stageable) {
                    return Err(why);
                }
                if *n != pr.writes.len() + 1 {
                    return Err(format!("its write {n} is out of order"));
                }
                let s = Staged {
                    n: *n,
                    op: op.clone(),
                    args: args.clone(),
                    summary: summary.clone(),
                    at_ms: *at_ms,
                    changes: changes.clone(),
                };
                pr.writes.push(s);
            }
            Line::Decided { decision, by, message, at_ms, .. } => {
                if *decision == Decision::Withdrawn && (!origin || *by != pr.author) {
                    return Err(format!("it is withdrawn by {by:?}, who is not its author"));
                }
                let d = Decided { decision: *decision, by: by.clone(), message: message.clone(), at_ms: *at_ms };
                pr.decided.get_or_insert(d);
            }
        }
        pr.unchecked.push((device.map(str::to_string), line));
        Ok(())
    }

    /// This device and its key: the lines of its files that its key did not
    /// seal are another writer's forgery, and their proposals are damaged.
    pub fn set_key(&mut self, device: Option<&str>, key: Key) {
        self.device = device.map(str::to_string);
        self.key = key;
        if !self.key.is_set() {
            return;
        }
        for pr in self.list.values_mut() {
            let lines = std::mem::take(&mut pr.unchecked);
            let own = |d: &Option<String>| d.is_some() && *d == self.device;
            let forged = lines
                .iter()
                .filter(|(d, _)| own(d))
                .any(|(_, l)| !self.key.verifies(&l.unsealed(), l.clone().seal_mut().as_deref()));
            if forged {
                pr.problem.get_or_insert_with(|| {
                    format!(
                        "{} holds lines in this device's name that this device did not seal (forged)",
                        file(&pr.name, pr.device.as_deref())
                    )
                });
            }
        }
    }

    /// Store files another device's sync brought while the engine runs: its
    /// proposal files are taken (this device's own are left: it wrote them),
    /// and every proposal is read again from the files. Answers log lines.
    pub fn arrived<'a>(
        &mut self,
        files: impl Iterator<Item = (&'a str, &'a str)>,
        stageable: &dyn Fn(&str) -> bool,
    ) -> Vec<String> {
        let mut came = false;
        for (path, text) in files {
            let own = file_parts(path).is_some_and(|(_, d)| d.is_some() && d == self.device.as_deref());
            if file_parts(path).is_some() && !own {
                self.files.insert(path.to_string(), text.to_string());
                came = true;
            }
        }
        if !came {
            return vec![];
        }
        let files: Vec<(String, String)> = self.files.iter().map(|(p, t)| (p.clone(), t.clone())).collect();
        let (mut fresh, warnings) = Proposals::load(&files, stageable);
        fresh.set_key(self.device.as_deref(), self.key.clone());
        *self = fresh;
        warnings
    }

    pub fn get(&self, name: &str) -> Option<&Proposal> {
        self.list.get(name)
    }

    pub fn all(&self) -> impl Iterator<Item = &Proposal> {
        self.list.values()
    }

    /// Why `actor` cannot stage into `name` from this device, if it cannot.
    pub fn stage_problem(&self, name: &str, journal: &Journal) -> Option<String> {
        if !valid_name(name) {
            return Some(format!("{name:?} cannot name a proposal: use 1 to {NAME_MAX} letters, digits, - and _"));
        }
        let pr = self.list.get(name)?;
        if let Some(why) = &pr.problem {
            return Some(format!("the proposal {name} cannot be believed: {why}"));
        }
        if pr.device != self.device {
            return Some(format!("the proposal {name} was made on another device"));
        }
        if let Some(d) = &pr.decided {
            return Some(format!("the proposal {name} was {} by {}", decision_word(d.decision), d.by));
        }
        if !picked(journal, name).is_empty() {
            return Some(format!("the proposal {name} was accepted already"));
        }
        None
    }

    /// Keeps a write in `name` (opening it, with `actor` its author, when it is
    /// new): the store lines to append, and whether it was opened now.
    pub fn stage(
        &mut self,
        name: &str,
        actor: &str,
        message: Option<&str>,
        s: Staged,
        now_ms: i64,
    ) -> (StoreWrite, bool) {
        let mut text = String::new();
        let new = !self.list.contains_key(name);
        if new {
            let open = Line::Open {
                format: 1,
                name: name.into(),
                author: actor.into(),
                device: self.device.clone(),
                created_ms: now_ms,
                message: message.map(str::to_string),
                seal: None,
            };
            text.push_str(&open.text(&self.key));
            let pr = Proposal {
                name: name.into(),
                author: actor.into(),
                device: self.device.clone(),
                message: message.map(str::to_string),
                created_ms: now_ms,
                ..Proposal::default()
            };
            self.list.insert(name.into(), pr);
        }
        let pr = self.list.get_mut(name).expect("opened above");
        let mut s = s;
        s.n = pr.writes.len() + 1;
        let line = Line::Write {
            n: s.n,
            op: s.op.clone(),
            args: s.args.clone(),
            summary: s.summary.clone(),
            at_ms: s.at_ms,
            changes: s.changes.clone(),
            seal: None,
        };
        text.push_str(&line.text(&self.key));
        pr.writes.push(s);
        let path = file(name, self.device.as_deref());
        self.files.entry(path.clone()).or_default().push_str(&text);
        (StoreWrite::append(path, text), new)
    }

    /// Records a rejection or withdrawal made on this device: the line to append.
    pub fn decide(
        &mut self,
        name: &str,
        decision: Decision,
        by: &str,
        message: Option<&str>,
        now_ms: i64,
    ) -> StoreWrite {
        let line =
            Line::Decided { decision, by: by.into(), message: message.map(str::to_string), at_ms: now_ms, seal: None };
        let text = line.text(&self.key);
        if let Some(pr) = self.list.get_mut(name) {
            pr.decided = Some(Decided { decision, by: by.into(), message: message.map(str::to_string), at_ms: now_ms });
        }
        let path = file(name, self.device.as_deref());
        self.files.entry(path.clone()).or_default().push_str(&text);
        StoreWrite::append(path, text)
    }
}

pub fn decision_word(d: Decision) -> &'static str {
    match d {
        Decision::Rejected => "rejected",
        Decision::Withdrawn => "withdrawn",
    }
}

/// What the journal's standing acceptances of `name` took: (write, path).
pub fn picked(journal: &Journal, name: &str) -> Picked {
    let mut out = Picked::new();
    for e in &journal.entries {
        let Some(p) = e.proposal.as_ref().filter(|p| p.get("name").and_then(Value::as_str) == Some(name)) else {
            continue;
        };
        if e.undone || e.rollback || !matches!(e.status, EntryStatus::Done | EntryStatus::Pending) {
            continue;
        }
        for pair in p.get("picked").and_then(Value::as_array).into_iter().flatten() {
            if let (Some(n), Some(path)) = (pair.get(0).and_then(Value::as_u64), pair.get(1).and_then(Value::as_str)) {
                out.insert((n as usize, path.to_string()));
            }
        }
    }
    out
}

/// The change feed's proposal_accepted event of an accept's journal entry.
pub fn accepted_event(e: &crate::journal::Entry, p: &Value) -> crate::feed::Event {
    let rows = p.get("picked").and_then(Value::as_array).map_or(0, Vec::len);
    crate::feed::Event {
        at: e.executed_at.clone(),
        at_ms: e.executed_ms,
        kind: crate::feed::EventKind::ProposalAccepted,
        op: Some(e.op.clone()),
        actor: Some(e.by.clone().into()),
        migration_id: Some(e.migration_id.clone()),
        proposal: Some(serde_json::json!({
            "name": p.get("name"), "author": p.get("author"), "message": p.get("message"), "rows": rows,
        })),
        ..Default::default()
    }
}

/// The tables as each proposal would leave them, built when first read and
/// again once the vault (or the proposal) moved on.
#[derive(Default)]
pub struct Views {
    map: HashMap<String, View>,
}

pub struct View {
    /// The tables as they would be.
    pub index: Index,
    /// The (write, path) pairs that would not land over the vault as it is
    /// now: the properties in conflict (merge3.rs).
    pub conflicts: BTreeMap<(usize, String), Vec<Value>>,
    /// The vault's generation and schema it was built over.
    base: (u64, Option<String>),
    /// How many of the proposal's writes it holds, and how many pairs were accepted then.
    writes: usize,
    picked: usize,
}

impl Views {
    /// The view of `pr`, over `real` (the vault now): its writes not
    /// accepted yet, each met with the notes as they are (merge3.rs).
    pub fn view(&mut self, pr: &Proposal, real: &Index, picked: &Picked) -> &mut View {
        let base = (real.vault.generation, real.metastore.clone());
        let fresh = self
            .map
            .get(&pr.name)
            .is_some_and(|v| v.base == base && v.writes == pr.writes.len() && v.picked == picked.len());
        if !fresh {
            // One view at a time: each is a copy of the whole index.
            self.map.clear();
            let mut index = real.clone();
            let mut conflicts = BTreeMap::new();
            // A proposal that cannot be believed is shown, never applied, not even to a view.
            let believed = if pr.problem.is_none() { &pr.writes[..] } else { &[] };
            for s in believed {
                for c in s.changes.iter().filter(|c| !picked.contains(&(s.n, c.path.clone()))) {
                    if let Some(why) = crate::merge3::apply_to_vault(&mut index, c) {
                        conflicts.insert((s.n, c.path.clone()), why);
                    }
                }
            }
            let v = View { index, conflicts, base, writes: pr.writes.len(), picked: picked.len() };
            self.map.insert(pr.name.clone(), v);
        }
        self.map.get_mut(&pr.name).expect("built above")
    }

    /// The view of `name` took its newest write, planned over it.
    pub fn took_write(&mut self, name: &str) {
        if let Some(v) = self.map.get_mut(name) {
            v.writes += 1;
        }
    }
}
