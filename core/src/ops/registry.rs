//! The one list of operations: name, title, kind, arguments and the function
//! that runs each. MCP tools, HTTP routes, the OpenAPI document, the command
//! line and the engine's dispatch all read it.

use super::answers::{self, Answer};
use super::args::Args;
use super::{bases, changes, conflicts, history, journal, read, repair, rows, semantic, suggest, tables, views};
use crate::engine::{Engine, Outcome};
use crate::error::OpResult;
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

/// A write's handler: plans note edits inside a transaction, answers a summary.
pub(crate) type WriteFn = fn(&mut Engine, &mut Tx, &Args) -> OpResult<String>;

/// How an operation runs: the function that does it, by what it may change.
#[derive(Clone, Copy)]
pub(crate) enum Handler {
    /// Answers from the index (and the log, whose files it may ask the host for).
    Read(fn(&Engine, &Args) -> OpResult<Value>),
    /// Changes the store alone (settings, webhooks, old log files), at the host's
    /// time: no note is touched, nothing is journaled.
    Store(fn(&mut Engine, &Args, i64) -> OpResult<Outcome>),
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
}

impl Facts {
    const DEFAULT: Facts = Facts {
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
    };
}

impl std::fmt::Debug for OpSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpSpec").field("name", &self.name).field("access", &self.access).finish_non_exhaustive()
    }
}

const fn p(name: &'static str, ty: Ty, required: bool, description: &'static str) -> Param {
    Param { name, ty, required, description }
}

const TABLE: Param = p("table", Ty::Str, true, "The table, short (film) or qualified (main.public.film).");
const TABLE_OPT: Param = p("table", Ty::Str, false, "The table, short or qualified; all tables when absent.");
const DRY: Param = p("dry_run", Ty::Bool, false, "Plan and answer without writing anything.");

macro_rules! op {
    ($name:literal, $title:literal, $access:ident, $journaled:literal, $desc:literal, [$($param:expr),* $(,)?], $kind:ident($handler:path) $(, $fact:ident: $value:expr)* $(,)?) => {
        OpSpec { name: $name, title: $title, access: Access::$access, journaled: $journaled, description: $desc, params: &[$($param),*], run: Handler::$kind($handler),
            facts: Facts { $($fact: $value,)* ..Facts::DEFAULT } }
    };
}

pub static OPS: &[OpSpec] = &[
    op!("describe_database", "Describe Database", Read, false,
        "Changes nothing. Answers the tables with their description, columns, checks (and check_descriptions: what some of them mean, in words), row_count and unreadable_count (rows whose front matter cannot be read), the views (name, table, columns, where, order_by, description), each with its Obsidian Bases file (base), the database settings, and the names the vault's devices were given (devices: {device id: name}, see configure_database's deviceName). While metastore.yaml cannot be read: schema_error, and a hint saying what the tables listed are.",
        [TABLE_OPT], Read(read::describe), texts: Texts::None, answer: Some(&answers::DESCRIBE_DATABASE)),
    op!("read_docs", "Read Docs", Read, false,
        "Changes nothing. Answers a docs page as Markdown (page, text), the offline form of the pages named by refusals' Docs lines; without page, the index (pages).",
        [p("page", Ty::Str, false, "A page such as reference/operations#insert_row (a Docs line's address works too); the index when absent.")], Read(read::docs), texts: Texts::None, answer: Some(&answers::READ_DOCS)),
    op!("create_table", "Create Table", Write, true,
        "Declare a table: its columns (as in metastore.yaml), CHECKs, the column or template naming its notes, whether it keeps history. Over a folder that holds notes, they become its rows as written: the answer counts them (rows_found) and those that break its rules (rows_breaking_rules, with a hint). Answers summary, notes_changed, planned_edits and migration_id (with dry_run: the same, nothing written). Undo: undo_migration with its migration_id removes the table from the schema again (the notes stay as they are).",
        [TABLE, p("description", Ty::Str, false, "What the table holds."),
         p("columns", Ty::Obj, false, "{column: definition} as in metastore.yaml, e.g. {\"title\": {\"type\": \"text\", \"required\": true}}."),
         p("checks", Ty::Obj, false, "{name: filter} CHECK constraints in the filter language."),
         p("check_descriptions", Ty::Obj, false, "{name: text} what some checks mean, one line each (200 characters at most), shown to people in place of the rule."),
         p("name_from", Ty::Str, false, "The column, or a template such as \"{year} {title}\", that names each row's note."),
         p("history", Ty::Bool, false, "Keep a transaction log (default true)."),
         p("folder", Ty::Str, false, "A vault folder outside datanotes/ whose notes are the rows."), DRY], Write(tables::create_table), log_operation: "CREATE TABLE", answer: Some(&answers::CREATE_TABLE)),
    op!("drop_table", "Drop Table", Destructive, true,
        "Drop a table: its definition leaves the schema and its notes move to datanotes/_archive/ (nothing is deleted). Answers summary, notes_changed, planned_edits and migration_id (with dry_run: the same, nothing written). Undo: undo_migration with its migration_id brings the table and its notes back.",
        [TABLE, p("mode", Ty::Str, false, "\"archive\" (the default)."), DRY], Write(tables::drop_table), log_operation: "DROP TABLE"),
    op!("rename_table", "Rename Table", Write, true,
        "Rename a table: its folder moves, every row's table key follows, links from other tables' definitions follow. Answers summary, notes_changed, planned_edits and migration_id (with dry_run: the same, nothing written). Undo: undo_migration with its migration_id renames it back.",
        [TABLE, p("new_name", Ty::Str, true, "The new name, short (in the same catalog and schema) or qualified."), DRY], Write(tables::rename_table), renames_table: true),
    op!("add_column", "Add Column", Write, true,
        "Add a column. Rows get its default when it is required or dense; a generated column is computed for every row. Answers summary, notes_changed, planned_edits and migration_id (with dry_run: the same, nothing written). Undo: undo_migration with its migration_id removes the column and the values it wrote.",
        [TABLE, p("column", Ty::Str, true, "The column's name."), p("definition", Ty::Obj, true, "As in metastore.yaml, e.g. {\"type\": \"integer\"}."), DRY], Write(tables::add_column), log_operation: "ADD COLUMNS"),
    op!("drop_column", "Drop Column", Destructive, true,
        "Drop a column: it leaves the schema and its key leaves every row's front matter. Answers summary, notes_changed, planned_edits and migration_id (with dry_run: the same, nothing written). Undo: undo_migration with its migration_id brings the column and every row's value back.",
        [TABLE, p("column", Ty::Str, true, "The column to drop."), DRY], Write(tables::drop_column)),
    op!("rename_column", "Rename Column", Write, true,
        "Rename a column in the schema, in the table's checks and templates, and in every row's front matter. Answers summary, notes_changed, planned_edits and migration_id (with dry_run: the same, nothing written). Undo: undo_migration with its migration_id renames it back everywhere.",
        [TABLE, p("column", Ty::Str, true, "The column."), p("new_name", Ty::Str, true, "Its new name."), DRY], Write(tables::rename_column)),
    op!("alter_column", "Alter Column", Write, true,
        "Replace a column's definition in the schema; refused when rows would break it. Answers summary, notes_changed, planned_edits and migration_id (with dry_run: the same, nothing written). Undo: undo_migration with its migration_id puts the old definition back.",
        [TABLE, p("column", Ty::Str, true, "The column."), p("definition", Ty::Obj, true, "The whole new definition."), DRY], Write(tables::alter_column)),
    op!("rename_value", "Rename Value", Write, true,
        "Rename a value of an enum column, in the schema and in every row. Answers summary, notes_changed, planned_edits and migration_id (with dry_run: the same, nothing written). Undo: undo_migration with its migration_id renames it back.",
        [TABLE, p("column", Ty::Str, true, "The enum column."), p("from", Ty::Str, true, "The old value."), p("to", Ty::Str, true, "The new value."), DRY], Write(tables::rename_value)),
    op!("add_check", "Add Check", Write, true,
        "Add a CHECK constraint (a filter every row must match); refused when rows break it. Answers summary, notes_changed, planned_edits and migration_id (with dry_run: the same, nothing written). Undo: undo_migration with its migration_id removes it.",
        [TABLE, p("name", Ty::Str, true, "The constraint's name."), p("check", Ty::Obj, true, "The filter."),
         p("description", Ty::Str, false, "What the rule means, in one line a person reads in place of it (200 characters at most), e.g. \"Ratings run from 1 to 5\"."), DRY], Write(tables::add_check)),
    op!("drop_check", "Drop Check", Destructive, true,
        "Drop a CHECK constraint from the schema: rows are no longer held to it. Answers summary, notes_changed, planned_edits and migration_id (with dry_run: the same, nothing written). Undo: undo_migration with its migration_id puts it back.",
        [TABLE, p("name", Ty::Str, true, "The constraint's name."), DRY], Write(tables::drop_check)),
    op!("create_view", "Create View", Write, true,
        "Save a query over a table as a view (kept in metastore.yaml beside the tables): its columns, where and order_by as select_rows takes them. select_rows reads it by name, narrowing it further with its own where, order_by and limit; writes go to the table. Follows rename_table, rename_column and rename_value; a drop_column or drop_table it depends on is refused until it is dropped. Answers summary, notes_changed, planned_edits and migration_id (with dry_run: the same, nothing written). Undo: undo_migration with its migration_id drops the view again.",
        [p("name", Ty::Str, true, "The view's name, short (to_watch) or qualified; no table or view may have it."),
         p("table", Ty::Str, true, "The table it reads, short or qualified."),
         p("columns", Ty::StrList, false, "The columns it shows, in order (all when absent)."),
         p("where", Ty::Obj, false, "The rows it shows: a filter as in select_rows."),
         p("order_by", Ty::StrOrList, false, "Its order: a column, \"-column\" or \"column desc\", or a list of them."),
         p("description", Ty::Str, false, "What the view shows."), DRY], Write(views::create_view)),
    op!("write_bases", "Write Bases Files", Write, true,
        "Write the Obsidian Bases file of every table and view (datanotes/bases/<name>.base) that is missing or out of step with metastore.yaml (after a hand edit of it, or with bases turned off before). A file a person has edited is kept, and listed in bases_kept. Schema operations keep the files of what they change on their own. Answers summary, notes_changed, planned_edits and migration_id (with dry_run: the same, nothing written). Undo: undo_migration with its migration_id puts the files back as they were.",
        [DRY], Write(bases::write_bases)),
    op!("drop_view", "Drop View", Destructive, true,
        "Drop a view: it leaves metastore.yaml; the table and its rows stay as they are. Answers summary, notes_changed, planned_edits and migration_id (with dry_run: the same, nothing written). Undo: undo_migration with its migration_id brings the view back.",
        [p("name", Ty::Str, true, "The view, short or qualified."), DRY], Write(views::drop_view)),
    op!("rename_view", "Rename View", Write, true,
        "Rename a view: its name in metastore.yaml and its Obsidian Bases file (datanotes/bases/<name>.base) move to the new name; the table, its rows and the view's columns, where and order_by stay as they are, and select_rows reads it by the new name only. Answers summary, notes_changed, planned_edits and migration_id (with dry_run: the same, nothing written). Undo: undo_migration with its migration_id renames it back.",
        [p("name", Ty::Str, true, "The view, short or qualified."), p("new_name", Ty::Str, true, "The new name, short (in the same catalog and schema) or qualified."), DRY], Write(views::rename_view)),
    op!("select_rows", "Select Rows", Read, false,
        "Changes nothing. Read rows of a table or a view: columns, where (the filter language), order_by (\"year\", \"-year\" or \"year desc\", or a list), limit (default 100), offset. Answers total and rows, each with its path.",
        [p("table", Ty::Str, true, "The table or view, short (film) or qualified (main.public.film)."), p("columns", Ty::StrList, false, "The columns to return (all when absent)."),
         p("where", Ty::Obj, false, "A filter: {\"col\": value}, {\"col\": {\"gt\": 1}}, {\"and\": [...]}, dotted paths through links; each value of its column's type (1950, not \"1950\": refused)."),
         p("order_by", Ty::StrOrList, false, "A column, \"-column\" or \"column desc\", or a list of them."),
         p("limit", Ty::Int, false, "At most this many rows (default 100, max 10000)."),
         p("offset", Ty::Int, false, "Skip this many rows."),
         p("version", Ty::Int, false, "Read the table as of this version (time travel)."),
         p("timestamp", Ty::Str, false, "Read the table as of this moment (time travel).")], Read(views::select_rows), texts: Texts::None, answer: Some(&answers::SELECT_ROWS)),
    op!("suggest_rows", "Suggest Rows", Read, false,
        "Changes nothing. Answers the rows of a table whose note name matches query (the whole name, its start, a word's start, anywhere, or its letters in order), best first, each with its path, name and the link that names it from `from`. For a link field as a person types, or to find a link's target.",
        [TABLE, p("query", Ty::Str, false, "What was typed (all rows, by name, when absent)."),
         p("limit", Ty::Int, false, "At most this many (default 20, max 200)."),
         p("from", Ty::Str, false, "The note the link goes in, so that the link resolves from there (default: the vault's root).")], Read(suggest::suggest_rows), texts: Texts::None, answer: Some(&answers::SUGGEST_ROWS)),
    op!("read_note", "Read Note", Read, false,
        "Changes nothing. Answers a note's text (path, _version, text, body), and for a row its table, row_id and values; with version, the row as of that version of its table.",
        [p("path", Ty::Str, true, "The note's vault path."), p("version", Ty::Int, false, "The version of the row's table to read it at.")], Read(read::read_note), texts: Texts::OwnNote, answer: Some(&answers::READ_NOTE)),
    op!("insert_row", "Insert Row", Write, true,
        "Insert one row: a new note in the table's folder named from its name_from, checked against every rule of the table. Answers summary, notes_changed, planned_edits and migration_id (with dry_run: the same, nothing written). Undo: undo_migration with its migration_id moves the note to the trash.",
        [TABLE, p("values", Ty::Obj, true, "{column: value}."), p("body", Ty::Str, false, "The note's Markdown body."), DRY], Write(rows::insert_row), log_operation: "WRITE"),
    op!("insert_rows", "Insert Rows", Write, true,
        "Insert several rows, each a new note, checked as a whole: all are written or none. Answers summary, notes_changed, planned_edits and migration_id (with dry_run: the same, nothing written). Undo: undo_migration with its migration_id moves them to the trash.",
        [TABLE, p("rows", Ty::Arr, true, "A list of {column: value}."), DRY], Write(rows::insert_rows), log_operation: "WRITE"),
    op!("update_row", "Update Row", Write, true,
        "Change one row: set columns, remove columns, replace the body. Only those keys change; every other byte of the note stays. Answers summary, notes_changed, planned_edits and migration_id (with dry_run: the same, nothing written). Undo: undo_migration with its migration_id puts the old values and body back.",
        [TABLE, p("path", Ty::Str, true, "The row's note path."), p("set", Ty::Obj, false, "{column: value}."),
         p("remove", Ty::StrList, false, "Columns to remove."), p("body", Ty::Str, false, "The new body."),
         p("if_match", Ty::Str, false, "The row's _version from the read you write from: refused, nothing written, when the note changed since."), DRY], Write(rows::update_row), log_operation: "UPDATE"),
    op!("update_rows", "Update Rows", Write, true,
        "Change every row matching a filter. When none matches only because text compares case-sensitively, the answer's hint says so. Answers summary, notes_changed, planned_edits and migration_id (with dry_run: the same, nothing written). Undo: undo_migration with its migration_id puts the old values back.",
        [TABLE, p("where", Ty::Obj, true, "The rows to change."), p("set", Ty::Obj, false, "{column: value}."),
         p("remove", Ty::StrList, false, "Columns to remove."),
         p("if_match", Ty::Obj, false, "{path: _version} of rows read before: refused when one changed since."), DRY], Write(rows::update_rows), log_operation: "UPDATE"),
    op!("delete_rows", "Delete Rows", Destructive, true,
        "Delete rows by filter or paths: archived (moved to datanotes/_archive/, the default) or moved to the trash. When a filter matches none only because text compares case-sensitively, the answer's hint says so. Answers summary, notes_changed, planned_edits and migration_id (with dry_run: the same, nothing written). Undo: undo_migration with its migration_id brings the rows back.",
        [TABLE, p("where", Ty::Obj, false, "The rows to delete."), p("paths", Ty::StrList, false, "Or their paths."),
         p("mode", Ty::Str, false, "\"archive\" (default) or \"trash\"."),
         p("if_match", Ty::Obj, false, "{path: _version} of rows read before: refused when one changed since."), DRY], Write(rows::delete_rows), log_operation: "DELETE"),
    op!("merge_rows", "Merge Rows", Write, true,
        "Upsert: each row updates the row with the same key columns, or is inserted as a new note; checked as a whole. Answers summary, notes_changed, planned_edits and migration_id (with dry_run: the same, nothing written). Undo: undo_migration with its migration_id puts back the rows it updated and removes those it inserted.",
        [TABLE, p("rows", Ty::Arr, true, "A list of {column: value}."), p("key", Ty::StrList, true, "The columns that match a row."), DRY], Write(rows::merge_rows), log_operation: "MERGE"),
    op!("batch", "Batch", Destructive, true,
        "Several write operations as one, checked as a whole: all are written or none. Answers summary, notes_changed, planned_edits and migration_id (with dry_run: the same, nothing written). Undo: undo_migration with its migration_id (the batch's) reverts all of it as one.",
        [p("operations", Ty::Arr, true, "[{\"op\": name, \"args\": {...}}]."), DRY], Write(super::batch), log_operation: "BATCH", batch: true),
    op!("check_table", "Check Table", Read, false,
        "Changes nothing. Answers every rule the rows of a table (or of every table) break now: types, enums, required, unique, links, CHECKs, generated values, unreadable front matter. A CHECK's violation has value: what the row holds at each path the rule reads.",
        [TABLE_OPT], Read(read::check), texts: Texts::None, answer: Some(&answers::CHECK_TABLE)),
    op!("infer_table", "Infer Table", Read, false,
        "Changes nothing. Answers the front matter keys a table's rows (or a folder's notes) use that the table does not declare, with statistics and the type each suggests.",
        [TABLE_OPT, p("folder", Ty::Str, false, "A vault folder of notes with no table yet.")], Read(read::infer), texts: Texts::All, answer: Some(&answers::INFER_TABLE)),
    op!("recompute_columns", "Recompute Columns", Write, true,
        "Bring generated columns up to date: each row whose generated value is stale gets the value its template computes, in its front matter. Answers summary, notes_changed, planned_edits and migration_id (with dry_run: the same, nothing written). Undo: undo_migration with its migration_id puts the old values back.",
        [TABLE, p("columns", Ty::StrList, false, "The generated columns (all when absent)."), DRY], Write(rows::recompute_columns), log_operation: "RECOMPUTE"),
    op!("list_migrations", "List Migrations", Read, false,
        "Changes nothing. Answers the operation journal, newest first: total and migrations, each with migration_id (for undo_migration), op, summary, table, executed_at, notes_changed, files_changed, undone, undoes, files_failed, by, and members (a batch's operations). Filters: op, table (a substring of the table's name), since (ISO date). limit default 50. Entries older than journalRetentionDays (90) are dropped at start.",
        [p("limit", Ty::Int, false, "At most this many (default 50)."), p("op", Ty::Str, false, "Only this operation, e.g. update_rows."),
         p("table", Ty::Str, false, "Only operations on tables whose name holds this."), p("since", Ty::Str, false, "Only operations at or after this ISO date or date-time.")], Read(journal::list), texts: Texts::None, answer: Some(&answers::LIST_MIGRATIONS)),
    op!("show_migration", "Show Migration", Read, false,
        "Changes nothing. Answers one journal entry and what it did to each note: kind (created, changed, moved, removed, trashed), path, from, the front matter keys it changed ({key: {before, after}}) and body_diff (the body's changed lines: \"  \" kept, \"- \" removed, \"+ \" added, 3 lines of context). From the texts the journal keeps for undo.",
        [p("migration_id", Ty::Str, true, "The entry (list_migrations gives the ids).")], Read(journal::show), answer: Some(&answers::SHOW_MIGRATION)),
    op!("undo_migration", "Undo Migration", Destructive, true,
        "Revert a journaled operation by its migration_id: the notes, schema and Bases files it changed are put back as they were. Answers summary, planned_edits, undoes and a migration_id of its own. Refused (nothing written) when a value it wrote changed since (the conflicts are listed) or when the revert would break a rule. Undo: an undo is journaled, so undo_migration with its own migration_id is a redo.",
        [p("migration_id", Ty::Str, true, "From list_migrations or a write's answer."), DRY], Write(journal::undo), log_operation: "UNDO", puts_back: true, answer: Some(&answers::UNDO)),
    op!("describe_history", "Describe History", Read, false,
        "Changes nothing. Answers DESCRIBE HISTORY: a table's versions, newest first (version, timestamp, operation, operation_metrics, migration_id, batch); without table, the commits of every logged table, dropped ones included, with their table. limit (default 50), since (ISO date or date-time).",
        [TABLE_OPT, p("limit", Ty::Int, false, "At most this many commits (default 50)."), p("since", Ty::Str, false, "Only commits at or after this ISO date or date-time.")], Read(history::describe), answer: Some(&answers::DESCRIBE_HISTORY)),
    op!("table_changes", "Table Changes", Read, false,
        "Changes nothing. Answers the change data feed between two versions (both included; end defaults to the latest): one entry per row change with its values and _change_type (insert, delete, update_preimage, update_postimage, metadata), _commit_version, _commit_timestamp, _operation, path.",
        [TABLE, p("start_version", Ty::Int, true, "The first version."), p("end_version", Ty::Int, false, "The last version (the latest when absent).")], Read(history::changes), answer: Some(&answers::TABLE_CHANGES)),
    op!("restore_table", "Restore Table", Destructive, true,
        "RESTORE TABLE to a version or timestamp: rows and definition as they were (rows added since are archived, changed rows get their old content, removed rows come back, a dropped table is re-created). A new version of the table. Answers summary, notes_changed, planned_edits and migration_id (with dry_run: the same, nothing written), with the counts creates, texts and deletes. Run with dry_run first. Undo: undo_migration with its migration_id puts the table back as it was before the restore.",
        [TABLE, p("version", Ty::Int, false, "The version to go back to."), p("timestamp", Ty::Str, false, "Or the moment."), DRY], Write(history::restore_table), log_operation: "RESTORE", answer: Some(&answers::RESTORE_TABLE)),
    op!("restore_database", "Restore Database", Destructive, true,
        "RESTORE DATABASE to a timestamp, or to before_migration (a migration_id or a batch): every logged table as it was; tables created since are dropped into the archive, tables dropped since come back; unchanged and skipped (no log) listed. Answers summary, notes_changed, planned_edits and migration_id (with dry_run: the same, nothing written), with tables ({table: counts}), unchanged and skipped. Run with dry_run first. Undo: undo_migration with its migration_id reverts it as one.",
        [p("timestamp", Ty::Str, false, "The moment."), p("before_migration", Ty::Str, false, "Or just before this operation."), DRY], Write(history::restore_database), log_operation: "RESTORE", answer: Some(&answers::RESTORE_DATABASE)),
    op!("vacuum_table", "Vacuum Table", Destructive, false,
        "Delete a table's log history older than retain_from_version (default: keep only the latest version); time travel before it becomes impossible. Answers the files deleted (dry_run, the default: the files that would be) and the blobs no version needs. Undo: none, what it deletes is gone for good; it is not journaled, so run it only on the user's explicit request.",
        [TABLE, p("retain_from_version", Ty::Int, false, "The oldest version to keep."), p("dry_run", Ty::Bool, false, "List what would go (default true).")], Store(history::vacuum), drops_history: true, answer: Some(&answers::VACUUM_TABLE)),
    op!("sync_semantic_index", "Sync Semantic Index", Write, false,
        "Bring the semantic index up to date and write it to the store anew: every note of the vault (rows and plain notes) embedded by an offline model, only those added or changed since (or read back from the stored index). Answers model, model_id, notes, passages, embedded, stored, unchanged, removed, and rebuilt (why) when the stored index could not be used. Changes the stored index alone, no note. Undo: none needed (not journaled), the index is derived and built again at any time; semantic_search brings it up to date by itself, and the semanticIndex setting keeps it up as notes change.",
        [p("table", Ty::Str, false, "Only this table's rows (short or qualified); the other notes stay as they are."),
         p("tables", Ty::StrList, false, "Only these tables' rows.")], Store(semantic::sync), texts: Texts::All, needs_model: true, timed_by_host: true, answer: Some(&answers::SYNC_SEMANTIC_INDEX)),
    op!("semantic_search", "Semantic Search", Read, false,
        "Changes no note (it brings the stored semantic index up to date first). Find notes by meaning (\"car needs servicing\" finds \"oil change and tyre rotation due\"), offline: an embedding model's score fused with a word score (BM25), each over the best note's, so exact names and codes still win; or the notes like one note (like). Answers results, best first, each with path, score, semantic, lexical, the passage that matched, and for a row its table and values. English.",
        [p("query", Ty::Str, false, "What to look for, in your own words, up to 2,000 characters (or give like)."),
         p("like", Ty::Str, false, "Or a note's path: the notes nearest it in meaning, itself left out."),
         p("table", Ty::Str, false, "Only rows of this table (short or qualified)."),
         p("tables", Ty::StrList, false, "Only rows of these tables."),
         p("where", Ty::Obj, false, "Only rows this filter picks (the filter language of select_rows); needs table."),
         p("limit", Ty::Int, false, "How many results (default 10, at most 100)."),
         p("weight", Ty::Any, false, "The weight of meaning against words, 0 to 1: 1 ranks by meaning alone, 0 by words alone. Default: the settings semanticWeight (0.97) for words, semanticCodeWeight (0.5) for a query with a code or number.")], Store(semantic::search), texts: Texts::All, needs_model: true, answer: Some(&answers::SEMANTIC_SEARCH)),
    op!("resolve_conflict", "Resolve Conflict", Write, true,
        "Keep one side of a conflict: a sync tool's copy of a row (Syncthing, Dropbox, iCloud, OneDrive) or a note git left conflict markers in. Neither is a row until resolved; check_table lists them (code conflict) with both versions. Answers summary, notes_changed, planned_edits and migration_id (with dry_run: the same, nothing written). Undo: undo_migration with its migration_id brings the other side back.",
        [p("path", Ty::Str, true, "The copy's path, or the note with git's markers."),
         p("keep", Ty::Str, true, "A copy: \"original\" (the copy goes to the trash) or \"copy\" (its text becomes the row's, the copy goes to the trash). Git's markers: \"ours\" or \"theirs\"."), DRY], Write(conflicts::resolve)),
    op!("repair_links", "Repair Links", Write, true,
        "Rewrite the links to notes renamed or moved by hand (outside the engine), across the vault; links an editor already rewrote stay. The engine runs it by itself once the vault is quiet (setting repairLinksOnHandMove). Answers summary, notes_changed, planned_edits and migration_id (with dry_run: the same, nothing written). Undo: undo_migration with its migration_id puts the old links back.",
        [p("moves", Ty::Arr, true, "[{\"old_path\": \"Notes/Film night.md\", \"path\": \"Notes/Friday film night.md\"}]."), DRY], Write(repair::run), log_operation: "UPDATE", rewrites_plain_notes: true),
    op!("sync_links", "Sync Links", Write, true,
        "Keep two-way links (columns with inverse) in step after rows were edited by hand: the rows they stopped linking to lose their link back, those they link to now gain one. The engine runs it by itself about 3 s after such a hand edit. Answers summary, notes_changed, planned_edits and migration_id (with dry_run: the same, nothing written). Undo: undo_migration with its migration_id puts the links back as they were.",
        [p("rows", Ty::Arr, true, "[{\"table\", \"path\", \"before\": {link column: value before the hand edit}}]."), DRY], Write(repair::sync)),
    op!("list_changes", "List Changes", Read, false,
        "Changes nothing. Answers the change feed across all tables: numbered row changes (seq), oldest first, from engine writes and from hand edits (source: external), each with table, kind (insert, update, delete, move, metastore, unreadable), op, path, old_path, row_id, changes ({column: {before, after}}), values, actor, migration_id, and for hand edits the violations they break. tool_call events only when kinds includes tool_call. Pass the returned last as since next time (head is the newest); wait_ms (max 60000) waits for a new change; limit max 5000; gap: true means older changes were dropped: re-read the tables. where filters rows as in select_rows, on the values after the change.",
        [p("since", Ty::Int, false, "Events after this seq (default 0)."), p("tables", Ty::StrList, false, "Only these tables."),
         p("kinds", Ty::StrList, false, "Only these kinds: insert, update, delete, move, metastore, unreadable, tool_call."),
         p("columns", Ty::StrList, false, "Only changes to these columns."), p("where", Ty::Obj, false, "A filter on the row's values after the change."),
         p("exclude_actor", Ty::Str, false, "Leave out the changes of this actor (your own)."),
         p("migration_id", Ty::Str, false, "Only the changes of this operation (list_migrations gives the ids)."), p("limit", Ty::Int, false, "At most this many (default 500, max 5000)."),
         p("wait_ms", Ty::Int, false, "Wait up to this long for a new change (long poll; max 60000).")], Read(changes::list), texts: Texts::None, long_poll: true, answer: Some(&answers::LIST_CHANGES)),
    op!("list_webhooks", "List Webhooks", Read, false,
        "Changes nothing. Answers the webhooks of the change feed: id, url, filter (tables, kinds, columns, exclude_actor, where), cursor (last change delivered), status (ok, failing, disabled), last_delivery, last_error. Secrets are not shown.",
        [], Read(changes::list_hooks), texts: Texts::None, answer: Some(&answers::LIST_WEBHOOKS)),
    op!("create_webhook", "Create Webhook", Destructive, false,
        "Push row changes to a URL: batches of up to 100 events POSTed as {webhook, events, last}, signed with X-Datanotes-Signature: sha256=<HMAC-SHA256 of the body>, retried with backoff until a 2xx. Starts from now unless since. Answers the webhook with its secret, shown only here. Only on the user's explicit request: it sends the database's changes to that address. Undo: delete_webhook with its id stops it (not journaled).",
        [p("url", Ty::Str, true, "Where to POST."), p("tables", Ty::StrList, false, "Only these tables."),
         p("kinds", Ty::StrList, false, "Only these kinds."), p("columns", Ty::StrList, false, "Only changes to these columns."),
         p("exclude_actor", Ty::Str, false, "Leave out this actor's changes."), p("where", Ty::Obj, false, "A filter on the values after the change."),
         p("since", Ty::Int, false, "Deliver from this seq on (default: from now).")], Store(changes::create_hook), open_world: true, answer: Some(&answers::WEBHOOK)),
    op!("confirm_webhook", "Confirm Webhook", Destructive, false,
        "Let this device deliver a webhook that arrived in a store file no device owns (list_webhooks shows it with status waiting): until confirmed nothing is sent to it, since anyone who can write to the vault can put one there. It delivers from now on; answers the webhook with a new secret, shown only here. Only on the user's explicit request. Undo: delete_webhook with its id stops it (not journaled).",
        [p("id", Ty::Str, true, "The waiting webhook's id.")], Store(changes::confirm_hook), open_world: true, answer: Some(&answers::WEBHOOK)),
    op!("delete_webhook", "Delete Webhook", Destructive, false,
        "Stop and remove a webhook (by id from list_webhooks): nothing more is sent to its URL. Answers the webhook removed (deleted). Undo: create_webhook with the same url and filter (not journaled; it gets a new secret).",
        [p("id", Ty::Str, true, "The webhook's id.")], Store(changes::delete_hook), answer: Some(&answers::DELETE_WEBHOOK)),
    op!("configure_database", "Configure Database", Write, false,
        "Read or change the engine's settings: autoRecompute, repairLinksOnHandMove, journalRetentionDays, bases, semanticIndex, semanticWeight, semanticCodeWeight; and this device's name (deviceName). Answers changed and the settings now (without arguments it changes nothing). Undo: configure_database again with the values the settings held before (not journaled).",
        [p("autoRecompute", Ty::Bool, false, "Recompute generated columns after hand edits (default true)."),
         p("repairLinksOnHandMove", Ty::Bool, false, "Rewrite links after a note is renamed or moved by hand (default true)."),
         p("journalRetentionDays", Ty::Int, false, "Days the journal keeps entries (default 90)."),
         p("bases", Ty::Bool, false, "Keep an Obsidian Bases file for each table and view in datanotes/bases/ (default true)."),
         p("semanticIndex", Ty::Bool, false, "Keep the stored semantic index up to date as notes change, engine writes and hand edits (default false: a search brings it up to date)."),
         p("semanticWeight", Ty::Any, false, "Search by meaning: the weight of meaning against words, 0 to 1, for a query of words (default 0.97)."),
         p("semanticCodeWeight", Ty::Any, false, "The same for a query holding a code or number, such as INV-2219 (default 0.5)."),
         p("deviceName", Ty::Str, false, "The name this device shows by on every device of the vault, in place of its id (one line, 64 characters at most), e.g. \"Linux laptop\". Kept in this device's settings file; needs a device id.")], Store(read::configure), texts: Texts::All, answer: Some(&answers::CONFIGURE_DATABASE)),
];

pub fn spec(name: &str) -> Option<&'static OpSpec> {
    OPS.iter().find(|o| o.name == name)
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
    /// The JSON Schema of the arguments.
    pub fn input_schema(&self) -> Value {
        let mut props = Map::new();
        let mut required = vec![];
        for p in self.params {
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
        self.params.iter().map(|p| p.name).collect()
    }
}

/// The registry as JSON, for front doors and docs.
pub fn describe() -> Value {
    Value::Array(
        OPS.iter()
            .map(|o| {
                json!({
                    "name": o.name, "title": o.title, "description": o.description,
                    "readOnly": o.access == Access::Read, "destructive": o.access == Access::Destructive,
                    "journaled": o.journaled, "params": o.param_names(), "inputSchema": o.input_schema(),
                    "outputSchema": o.output_schema(),
                    "longPoll": o.facts.long_poll, "needsModel": o.facts.needs_model,
                    "openWorld": o.facts.open_world, "timedByHost": o.facts.timed_by_host,
                    "dropsHistory": o.facts.drops_history,
                })
            })
            .collect(),
    )
}
