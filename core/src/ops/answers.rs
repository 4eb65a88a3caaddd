//! The shapes of the operations' answers and of a refusal, as JSON Schema: the
//! registry names each operation's answer here, and MCP's outputSchema and the
//! OpenAPI document's responses are generated from it. Each shape names the
//! fields the operation always answers (required) and those it answers at
//! times; an answer may carry more (additionalProperties), so that a field
//! added to an answer never breaks a client.

use serde_json::{json, Map, Value};

/// A field's type.
#[derive(Debug, Clone, Copy)]
pub enum A {
    Str,
    Int,
    Num,
    Bool,
    /// `true`: what a done write (and a setting or webhook change) answers as `ok`.
    True,
    Obj,
    Arr,
    StrList,
    /// A list of objects that each hold these keys.
    Objs(&'static [&'static str]),
    /// A string, or null when there is none.
    StrOrNull,
    Any,
}

#[derive(Debug)]
pub struct Field {
    pub name: &'static str,
    pub ty: A,
    pub description: &'static str,
}

/// What an operation answers when it is done.
#[derive(Debug)]
pub struct Answer {
    /// It is a write's answer (ok, op, summary, notes_changed, …) plus the fields below.
    pub write: bool,
    pub required: &'static [Field],
    pub optional: &'static [Field],
}

const fn f(name: &'static str, ty: A, description: &'static str) -> Field {
    Field { name, ty, description }
}

const fn reads(required: &'static [Field], optional: &'static [Field]) -> Answer {
    Answer { write: false, required, optional }
}

const fn writes(required: &'static [Field], optional: &'static [Field]) -> Answer {
    Answer { write: true, required, optional }
}

const OK: Field = f("ok", A::True, "Done.");
const OP: Field = f("op", A::Str, "The operation.");

/// Every journaled write's answer (write_op in ops/mod.rs builds it).
const WRITE_REQUIRED: &[Field] = &[
    OK,
    OP,
    f("summary", A::Str, "What the write did, in a few words."),
    f("notes_changed", A::Int, "Rows whose front matter or body changed."),
    f("files_changed", A::Int, "Files created, moved or trashed."),
    f(
        "planned_edits",
        A::Objs(&["path"]),
        "Per file: set and remove (front matter keys), create, move_to, trash, schema or base.",
    ),
];
const WRITE_OPTIONAL: &[Field] = &[
    f("migration_id", A::Str, "The journal entry: undo_migration with it reverts the write (absent on a dry run)."),
    f("commits", A::Objs(&["table", "version", "operation"]), "The table log versions it made."),
    f("dry_run", A::Bool, "Nothing was written: the answer says what would be."),
    f("hint", A::Str, "What to look at next (e.g. a filter that matched nothing only by case)."),
    f("bases_kept", A::StrList, "Bases files a person edited, left as they are."),
    f("staged", A::Bool, "Nothing was written: the write waits in a proposal for a person's review."),
    f("proposal", A::Str, "The proposal it was staged into, or accept_proposal took."),
    f("write", A::Int, "Its number in the proposal (show_proposal's n)."),
];

pub const WRITE: Answer = writes(&[], &[]);

pub const CREATE_TABLE: Answer = writes(
    &[],
    &[
        f("rows_found", A::Int, "Notes already in the folder, now rows."),
        f("rows_breaking_rules", A::Int, "Of those, the ones that break the table's rules (check_table lists them)."),
    ],
);

pub const UNDO: Answer = writes(
    &[
        f("undoes", A::Str, "The migration_id it reverted."),
        f("conflicts", A::Arr, "Values changed since (empty on a done undo)."),
        f("failed", A::Arr, "Files that could not be put back (empty on a done undo)."),
    ],
    &[],
);

pub const RESTORE_TABLE: Answer = writes(
    &[
        f("table", A::Str, "The table, qualified."),
        f("restored_to", A::Int, "The version it now holds again."),
        f("action", A::Str, "restore, or recreate for a dropped table."),
        f("creates", A::Int, "Rows that come back."),
        f("texts", A::Int, "Rows that get their old text."),
        f("deletes", A::Int, "Rows added since, archived."),
    ],
    &[],
);

pub const RESTORE_DATABASE: Answer = writes(
    &[
        f("restored_to", A::Str, "The moment the database goes back to."),
        f("tables", A::Obj, "{table: {action, version, creates, texts, deletes, archived}}."),
        f("unchanged", A::StrList, "Tables with nothing to take back."),
        f("skipped", A::Objs(&["table", "reason"]), "Tables it could not take back, and why."),
    ],
    &[],
);

pub const DESCRIBE_DATABASE: Answer = reads(
    &[
        f(
            "tables",
            A::Objs(&["name", "qualified", "folder", "columns", "checks", "row_count", "unreadable_count"]),
            "The tables.",
        ),
        f("views", A::Objs(&["name", "qualified", "table"]), "The views."),
        f("settings", A::Obj, "The database settings (configure_database)."),
        f("devices", A::Obj, "{device id: name} of the vault's devices."),
    ],
    &[
        f("schema_error", A::Str, "Why metastore.yaml cannot be read."),
        f("hint", A::Str, "What the tables listed are while it cannot."),
    ],
);

pub const READ_DOCS: Answer = reads(
    &[f("text", A::StrOrNull, "The page (or section) as Markdown; null when there is no such page.")],
    &[
        f("page", A::Str, "The page read."),
        f("pages", A::StrList, "The pages there are."),
        f("error", A::Str, "Why there is no such page, and the page meant."),
    ],
);

pub const SELECT_ROWS: Answer = reads(
    &[
        f("table", A::Str, "The table, qualified."),
        f("total", A::Int, "Rows that match, over every page."),
        f("rows", A::Objs(&["path"]), "The page of rows: path, _version (for if_match) and the columns."),
    ],
    &[
        f("next_offset", A::Int, "The offset of the next page, when there is one."),
        f("view", A::Str, "The view read, qualified."),
        f("version", A::Int, "The version read (time travel)."),
        f("hint", A::Str, "Why a filter may have matched nothing."),
    ],
);

pub const SUGGEST_ROWS: Answer = reads(
    &[
        f("table", A::Str, "The table, qualified."),
        f("total", A::Int, "Rows that match."),
        f("rows", A::Objs(&["path", "name", "link", "score"]), "Best first."),
    ],
    &[],
);

pub const READ_NOTE: Answer = reads(
    &[f("path", A::Str, "The note's path."), f("text", A::Str, "The note's whole text.")],
    &[
        f("_version", A::Str, "The note's version token (update_row's if_match)."),
        f("body", A::Str, "The text after the front matter."),
        f("table", A::Str, "The table of a row."),
        f("row_id", A::StrOrNull, "A row's id."),
        f("values", A::Obj, "A row's columns."),
        f("version", A::Int, "The table version it was read at."),
        f("unreadable", A::Str, "Why a row's front matter cannot be read."),
    ],
);

pub const CHECK_TABLE: Answer = reads(
    &[
        f("table", A::StrOrNull, "The table asked for; null for every table."),
        f("rows_checked", A::Int, "Rows checked."),
        f("total", A::Int, "Violations found."),
        f("violations", A::Objs(&["path"]), "Per row that breaks a rule: what it breaks."),
    ],
    &[
        f("tables_checked", A::Int, "Tables checked (without table)."),
        f("store_problems", A::Arr, "Store files that were not taken in, and why."),
    ],
);

pub const INFER_TABLE: Answer = reads(
    &[
        f("files", A::Int, "Notes read."),
        f("paths", A::StrList, "Their paths."),
        f("skipped", A::Objs(&["path", "reason"]), "Notes whose front matter cannot be read."),
        f("columns", A::Objs(&["name", "type"]), "Undeclared keys with statistics and a suggested type."),
        f("hints", A::StrList, "What to do with them."),
    ],
    &[],
);

pub const LIST_MIGRATIONS: Answer = reads(
    &[
        f("total", A::Int, "Entries that match."),
        f("migrations", A::Objs(&["migration_id", "op", "summary", "executed_at", "by"]), "Newest first."),
    ],
    &[],
);

pub const SHOW_MIGRATION: Answer = reads(
    &[
        f("migration_id", A::Str, "The entry."),
        f("op", A::Str, "Its operation."),
        f("summary", A::Str, "What it did."),
        f("executed_at", A::Str, "When."),
        f("by", A::Str, "Who."),
        f("notes", A::Objs(&["path", "kind"]), "What it did to each note."),
    ],
    &[f("undone", A::Bool, "It was undone."), f("undoes", A::Str, "The entry it undid.")],
);

pub const DESCRIBE_HISTORY: Answer = reads(
    &[f("history", A::Objs(&["version", "timestamp", "operation"]), "Commits, newest first.")],
    &[f("table", A::Str, "The table asked for."), f("tables", A::StrList, "Without table: the logged tables.")],
);

pub const TABLE_CHANGES: Answer = reads(
    &[
        f("table", A::Str, "The table, qualified."),
        f("start_version", A::Int, "The first version."),
        f("end_version", A::Int, "The last version."),
        f("changes", A::Objs(&["_change_type", "_commit_version"]), "One entry per row change."),
    ],
    &[],
);

pub const VACUUM_TABLE: Answer = reads(
    &[
        OK,
        OP,
        f("table", A::Str, "The table, qualified."),
        f("dry_run", A::Bool, "Nothing was deleted: files lists what would go."),
        f("retain_from_version", A::Int, "The oldest version kept."),
        f("files", A::StrList, "The log files deleted (or that would be)."),
        f("blobs", A::Int, "Note texts no version needs any more."),
    ],
    &[],
);

pub const SYNC_SEMANTIC_INDEX: Answer = reads(
    &[
        OK,
        OP,
        f("model", A::Str, "The embedding model."),
        f("model_id", A::Str, "Its id."),
        f("notes", A::Int, "Notes in the index."),
        f("passages", A::Int, "Passages in the index."),
        f("embedded", A::Int, "Passages embedded now."),
        f("stored", A::Int, "Passages written to the store."),
        f("unchanged", A::Int, "Notes unchanged since the last sync."),
        f("removed", A::Int, "Notes that left the index."),
    ],
    &[
        f("tables", A::StrList, "The tables synced."),
        f("rebuilt", A::Str, "Why the stored index could not be used."),
        f("duration_ms", A::Int, "How long it took."),
    ],
);

pub const SEMANTIC_SEARCH: Answer = reads(
    &[
        f("weight", A::Num, "The weight of meaning against words used."),
        f(
            "results",
            A::Objs(&["path", "score", "semantic", "lexical", "passage"]),
            "Best first; rows carry table and values.",
        ),
    ],
    &[f("query", A::Str, "The query."), f("like", A::Str, "The note the results are like.")],
);

pub const LIST_CHANGES: Answer = reads(
    &[
        f("events", A::Objs(&["seq", "kind"]), "Changes, oldest first."),
        f("last", A::Int, "Pass it as since next time."),
        f("head", A::Int, "The newest change's seq."),
    ],
    &[f("gap", A::Bool, "Older changes were dropped: read the tables again.")],
);

pub const LIST_WEBHOOKS: Answer =
    reads(&[f("webhooks", A::Objs(&["id", "url", "filter", "cursor", "status"]), "The webhooks (no secrets).")], &[]);

pub const WEBHOOK: Answer = reads(
    &[OK, OP, f("webhook", A::Obj, "The webhook: id, url, filter, cursor, status, and its secret (shown only here).")],
    &[],
);

pub const DELETE_WEBHOOK: Answer = reads(&[OK, OP, f("deleted", A::Obj, "The webhook removed.")], &[]);

pub const CONFIGURE_DATABASE: Answer = reads(
    &[
        OK,
        OP,
        f("changed", A::Bool, "A setting or the device's name changed."),
        f("settings", A::Obj, "The settings now."),
    ],
    &[f("device_name", A::StrOrNull, "This device's name.")],
);

fn ty(t: A) -> Value {
    match t {
        A::Str => json!({"type": "string"}),
        A::Int => json!({"type": "integer"}),
        A::Num => json!({"type": "number"}),
        A::Bool => json!({"type": "boolean"}),
        A::True => json!({"const": true}),
        A::Obj => json!({"type": "object"}),
        A::Arr => json!({"type": "array"}),
        A::StrList => json!({"type": "array", "items": {"type": "string"}}),
        A::Objs(keys) => json!({"type": "array", "items": {"type": "object", "required": keys}}),
        A::StrOrNull => json!({"type": ["string", "null"]}),
        A::Any => json!({}),
    }
}

fn object(description: &str, required: &[&Field], optional: &[&Field]) -> Value {
    let mut props = Map::new();
    for f in required.iter().chain(optional) {
        let mut s = ty(f.ty);
        s["description"] = f.description.into();
        props.insert(f.name.into(), s);
    }
    let required: Vec<&str> = required.iter().map(|f| f.name).collect();
    json!({"type": "object", "description": description, "properties": props, "required": required,
        "additionalProperties": true})
}

impl Answer {
    /// The JSON Schema of the answer of `op` when it is done.
    pub fn schema(&self, op: &str) -> Value {
        let base: &[Field] = if self.write { WRITE_REQUIRED } else { &[] };
        let opt: &[Field] = if self.write { WRITE_OPTIONAL } else { &[] };
        let required: Vec<&Field> = base.iter().chain(self.required).collect();
        let optional: Vec<&Field> = opt.iter().chain(self.optional).collect();
        let mut s = object(&format!("The answer of {op} when it is done."), &required, &optional);
        if self.write || self.required.iter().any(|f| f.name == "ok") {
            s["properties"]["op"]["const"] = op.into();
        }
        s
    }
}

const REFUSAL_REQUIRED: &[Field] = &[
    f("ok", A::Any, "false: nothing was written (or, rolled back, nothing is left changed)."),
    f("op", A::Str, "The operation refused (a batch names itself)."),
    f("error", A::Str, "Every reason, one a line, then Hint: (the way out) and Docs: (where to read more)."),
];

const REFUSAL_OPTIONAL: &[Field] = &[
    f("reasons", A::StrList, "Every reason, one a line."),
    f("hint", A::Str, "The way out: what to do next."),
    f("docs", A::Str, "The docs page that explains it, as read_docs takes it."),
    f("kind", A::Str, "bad_input (fix the arguments), refused (the engine's rules said no), rolled_back (send it again), internal (a defect), unsure (read the rows back)."),
    f("violations", A::Objs(&[]), "Per row: its path and the rules it breaks, each with code, column or constraint, index and message."),
    f("violations_total", A::Int, "Violations in all (the list may be cut short)."),
    f("conflicts", A::Arr, "Values changed since the write an undo reverts."),
    f("failed", A::Arr, "Files a write could not make, with why."),
    f("rolled_back", A::Bool, "The write was rolled back: nothing is left changed; send it again."),
    f("migration_id", A::Str, "The journal entry of a write that was rolled back or did not reach the disk."),
];

/// The JSON Schema of a refusal (or any failure): the answer HTTP gives with
/// 400, 409, 503 or 500 and MCP as an `isError` result.
pub fn refusal_schema() -> Value {
    let required: Vec<&Field> = REFUSAL_REQUIRED.iter().collect();
    let optional: Vec<&Field> = REFUSAL_OPTIONAL.iter().collect();
    let mut s = object(
        "A refusal: nothing was written. It says why, what to do next and where to read more.",
        &required,
        &optional,
    );
    s["properties"]["ok"] = json!({"const": false, "description": REFUSAL_REQUIRED[0].description});
    s
}
