// The shapes the wasm engine (core/src/wasm.rs) takes and gives, as JSON values.

/** A planned change to a note; `expect` is the SHA-256 (hex) of the text the
 * file must hold before the change (null: it must not exist yet). */
export type Edit =
	| { kind: "write"; path: string; text: string; expect: string | null }
	| { kind: "move"; from: string; to: string; expect: string }
	| { kind: "trash"; path: string; expect: string }
	| { kind: "delete"; path: string; expect: string };

/** A file of the store (`.datanotes/`, path relative to it) to write, append or delete. */
/** The notes' cache to write, under the store: its text as UTF-8 bytes. */
export interface CacheFile {
	path: string;
	bytes: Uint8Array;
	/** A segment to append to the file (the notes changed since it was read), not the file whole. */
	append: boolean;
}

export interface StoreWrite {
	path: string;
	text: string;
	delete?: boolean;
	append?: boolean;
}

/** A webhook POST the engine plans; its result goes back through `delivered`. */
export interface Delivery {
	webhook: string;
	url: string;
	body: string;
	headers: [string, string][];
	last: number;
}

/** How a turn ended (core/src/step.rs `Status`, named by serde). */
export type Status = "ok" | "bad_input" | "refused" | "rolled_back" | "internal";

/** How a turn ended: its status, its answer, and what the host must do besides.
 * A success answers `A`; anything else answers an error (see `errorOf`). Each
 * operation has its own answer: `Answers` types those the plugin reads. */
export type Outcome<A = unknown> = OutcomeBase & ({ status: "ok"; answer: A } | { status: Exclude<Status, "ok">; answer: unknown });

interface OutcomeBase {
	/** The step: the turn is done (what comes from the engine says so; an
	 * outcome the host makes itself may leave it out). */
	step?: "done";
	status: Status;
	http: number;
	store: StoreWrite[];
	log: string[];
	deliveries: Delivery[];
}

/** A journal entry as list_migrations gives it (the fields the plugin shows). */
export interface Migration {
	migration_id: string;
	op: string;
	summary?: string;
	table?: string | null;
	executed_at?: string;
	by?: string;
	undone?: boolean;
	/** Set on an undo: the entry it undid (an undo of an undo is a redo). */
	undoes?: string;
	/** The device whose engine wrote it, once devices sync one vault (its id: shown by its name). */
	device?: string;
	/** Absent when done: "pending", "rolled_back" or "rollback_incomplete". */
	status?: string;
	notes_changed?: number;
	files_changed?: number;
}

/** The engine's settings as configure_database answers them. */
export interface EngineSettings {
	autoRecompute: boolean;
	repairLinksOnHandMove: boolean;
	journalRetentionDays: number;
	/** Keep an Obsidian Bases file for each table and view. */
	bases: boolean;
}

/** A table as describe_database lists it (the fields the plugin reads). */
export interface TableInfo {
	name: string;
	qualified: string;
	description?: string;
	row_count: number;
	history: boolean;
	/** The folder of its rows, with a trailing slash. */
	folder?: string;
	columns?: Record<string, ColumnInfo>;
	/** Its CHECK constraints: name → filter. */
	checks?: Record<string, unknown>;
	/** What some of its checks mean, in a person's words: name → text. */
	check_descriptions?: Record<string, string>;
	/** The column or template naming its notes. */
	name_from?: string;
	/** Its Obsidian Bases file (datanotes/bases/…). */
	base: string;
}

/** A column's definition, as metastore.yaml writes it. */
export interface ColumnInfo {
	type: string;
	/** A list's item type. */
	items?: string;
	/** A link's table. */
	table?: string;
	values?: string[];
	required?: boolean;
	unique?: boolean;
	generated?: string;
	description?: string;
}

/** A view (a saved query over a table) as describe_database lists it. */
export interface ViewInfo {
	name: string;
	qualified: string;
	table: string;
	description?: string;
	base: string;
}

/** A version of a table, as describe_history gives it. */
export interface Commit {
	version: number;
	timestamp: string;
	operation: string;
	operation_metrics: Record<string, number>;
	migration_id: string | null;
	table?: string;
	/** The device whose engine made it, once devices sync one vault. */
	device?: string;
}

/** One row change between two versions (table_changes): the row's columns, and these. */
export type RowChange = Record<string, unknown> & {
	id?: string;
	path: string;
	_change_type: "insert" | "delete" | "update_preimage" | "update_postimage" | "metadata";
	_commit_version: number;
	_commit_timestamp: string;
	_operation: string;
};

/** A write's answer (a dry run's too): what it did or would do. */
export interface WriteAnswer {
	ok: boolean;
	summary?: string;
	migration_id?: string;
	notes_changed: number;
	files_changed: number;
	planned_edits?: { path: string; create?: boolean; move_to?: string; delete?: boolean; trash?: boolean }[];
	dry_run?: boolean;
}

/** A row's broken rules, as check_table and the feed's hand edits give them. */
export interface RowViolations {
	path: string;
	table?: string;
	/** `description`: a CHECK's, when the schema gives it one (shown in place of the rule). */
	violations: { code: string; message: string; constraint?: string; column?: string; index?: number; value?: unknown; description?: string }[];
}

/** What check_table says of a conflict (code "conflict"): a sync tool's copy of
 * a row (`original`, `tool`) or a note with git's markers (`ours`, `theirs`),
 * and the columns where the two sides differ. */
export interface ConflictValue {
	original?: string;
	tool?: string;
	ours?: Record<string, unknown>;
	theirs?: Record<string, unknown>;
	differences: Record<string, { before: unknown; after: unknown }>;
}

/** A change feed event (list_changes). */
export interface FeedEvent {
	seq: number;
	at: string;
	table?: string;
	kind: "insert" | "update" | "delete" | "move" | "metastore" | "unreadable" | "tool_call";
	op?: string;
	source: "engine" | "external";
	path?: string;
	old_path?: string;
	row_id?: string;
	changes?: Record<string, { before?: unknown; after?: unknown }>;
	values?: Record<string, unknown>;
	actor?: string;
	migration_id?: string;
	violations?: RowViolations[];
}

/** What a journal entry did to one note (show_migration). */
export interface NoteChange {
	path: string;
	from?: string;
	kind: "created" | "changed" | "moved" | "removed" | "trashed";
	changes: Record<string, { before?: unknown; after?: unknown }>;
	/** The body's changed lines: "  " kept, "- " removed, "+ " added. */
	body_diff?: string[];
}

/** The answers of the operations the plugin reads, by operation name. */
export interface Answers {
	list_migrations: { migrations: Migration[]; total: number };
	configure_database: { settings: EngineSettings; changed?: boolean; device_name?: string | null };
	/** `devices`: the names the vault's devices were given, by device id. */
	describe_database: { tables: TableInfo[]; views: ViewInfo[]; devices?: Record<string, string> };
	write_bases: WriteAnswer & { bases_kept?: string[] };
	describe_history: { table?: string; history: Commit[] };
	table_changes: { table: string; start_version: number; end_version: number; changes: RowChange[] };
	restore_table: WriteAnswer & { restored_to?: number; creates?: number; texts?: number; deletes?: number };
	check_table: { table: string | null; rows_checked: number; total: number; violations: RowViolations[]; store_problems?: string[] };
	list_changes: { events: FeedEvent[]; last: number; head: number; gap?: boolean };
	show_migration: Migration & { notes: NoteChange[] };
}

/** The answer type of operation `K`: typed for those in `Answers`, else unknown. */
export type AnswerOf<K extends string> = K extends keyof Answers ? Answers[K] : unknown;

/** An outcome of operation `name`, typed as the plugin reads it. The engine's
 * answer shapes are fixed by its reference (docs/reference/operations.md), and
 * plugin/test reads each of `Answers` from the real engine. */
export function answered<K extends string>(name: K, out: Outcome): Outcome<AnswerOf<K>> {
	void name;
	return out as Outcome<AnswerOf<K>>;
}

/** A JSON object (not null, not a list). */
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The refusal text of an error answer (`{ error: "..." }`), or null. */
export function errorOf(answer: unknown): string | null {
	if (typeof answer !== "object" || answer === null || !("error" in answer)) return null;
	return typeof answer.error === "string" ? answer.error : null;
}

/** Read these store files, hand them to `provide`, and make the same call again. */
export interface Need {
	step: "need";
	need: string[];
}

/** Read these notes (the engine reads a note outside the tables only when a
 * turn needs its text), hand them to `readNotes`, and make the same call again. */
export interface ReadNotes {
	step: "read_notes";
	notes: string[];
}

/** A write: persist `store`, apply `edits` in order, report them to `finish`. */
export interface Apply {
	step: "apply";
	answer: unknown;
	edits: Edit[];
	store: StoreWrite[];
	log: string[];
}

/** What a call, a finish, a tick or a reconcile gives back (core/src/engine.rs `Step`). */
export type Step = Outcome | Need | ReadNotes | Apply;

/** A vault change as the engine takes it. */
export interface VaultEvent {
	kind: "created" | "modified" | "removed" | "renamed";
	path: string;
	from?: string;
	text?: string;
	mtime?: number;
}

/** A note (or metastore.yaml) as the engine takes it at open. */
export interface NoteFile {
	path: string;
	text: string;
	mtime: number;
}

/** A note listed at open and not read: the engine says which to read (`toRead`). */
export interface NoteListed {
	path: string;
	size: number;
	mtime: number;
}

/** A store file listed at open: its text, or null when listed without reading. */
export type StoreFile = [string, string | null];

/** An MCP tool call, for the change feed (a `tool_call` event). */
export interface ToolCall {
	tool: string;
	args: unknown;
	ok: boolean;
	duration_ms: number;
	/** The answer, or the error text. */
	value: unknown;
	served_by: string;
	actor: { credential: string; client: string; session: string | null };
}

/** Why an edit was not made, as the engine takes it (edits.rs `EditError`). */
export type EditFailure =
	| { kind: "changed" | "missing" | "exists"; path: string }
	| { kind: "io"; path?: string; message: string }
	| { kind: "not_tried" };

/** Thrown by a file system whose file no longer holds the text a write was
 * planned from (the check just before it lands). */
export class ChangedSince extends Error {
	constructor(readonly path: string) {
		super(`${path} changed since the engine read it`);
	}
}

/** An operation of the registry (WasmEngine.operations()). */
export interface OperationInfo {
	name: string;
	title: string;
	description: string;
	readOnly: boolean;
	destructive: boolean;
	journaled: boolean;
	/** Facts the registry gives (registry.rs `Facts`): a host acts on these, never on a name. */
	longPoll: boolean;
	needsModel: boolean;
	openWorld: boolean;
	timedByHost: boolean;
	inputSchema: {
		type: "object";
		properties?: Record<string, { type?: string | string[]; description?: string; items?: { type?: string }; anyOf?: { type?: string }[] }>;
		required?: string[];
	};
}

/** Store writes the host could not make after a write's notes (owed.rs). */
export interface Behind {
	log: string;
	not_recorded: string[];
	warning: string;
}

/** A value, or a promise of it: the engine answers at once in this thread, or
 * later from a worker (worker-engine.ts). */
export type Awaitable<T> = T | Promise<T>;

/** A model the engine searches by meaning with. */
export interface SemanticModel {
	model: string;
	id: string;
}

/** The engine as the host drives it: WasmEngine's methods, typed. Those that
 * answer may answer later (a worker); those that do not are posted in order. */
export interface EngineApi {
	call(name: string, args: unknown, actor: string, nowMs: number): Awaitable<Step>;
	/** The registry: each operation with the facts a host acts on (long poll, meaning model, timing). */
	operations(): Awaitable<OperationInfo[]>;
	finish(results: (EditFailure | null)[]): Awaitable<Step>;
	storeFailed(op: string, error: string): Awaitable<Outcome>;
	needUnmet(op: string, paths: string[]): Awaitable<Outcome>;
	provide(files: StoreFile[]): void;
	/** Awaited: the engine's next deadline may change with it. */
	observe(event: VaultEvent, nowMs: number): Awaitable<void>;
	tick(nowMs: number): Awaitable<Step>;
	reconcile(nowMs: number): Awaitable<Step>;
	/** Store files another device wrote, as a sync brought them: log lines. */
	storeSynced(files: StoreFile[], nowMs: number): Awaitable<string[]>;
	/** The model to search by meaning with, as the store holds it
	 * (models/potion-base-8M.dnmodel): its name and id; throws when damaged. */
	setSemanticModel(bytes: Uint8Array): Awaitable<SemanticModel>;
	/** As of the last answer (a worker sends it with each). */
	nextDeadline(): number | undefined;
	setGitBusy(busy: boolean): void;
	feedHead(): number;
	seed(entropy: Uint8Array): void;
	delivered(webhook: string, last: number, status: number | null | undefined, error: string | null | undefined, nowMs: number): Awaitable<StoreWrite[]>;
	warnings(): Awaitable<string[]>;
	takeUpkeep(): Awaitable<StoreWrite[]>;
	/** The notes' cache to write after open (derived), or null. */
	takeCache(): Awaitable<CacheFile | null>;
	/** The notes listed at open to read before the engine starts: those the
	 * notes' cache does not vouch for. */
	toRead(): Awaitable<string[]>;
	/** The rows opened from the notes' cache and not read yet: the host reads
	 * them in the background (`Host.readRows`); a turn that needs one first
	 * asks for it (a `read_notes` step). */
	unreadRows(): Awaitable<string[]>;
	/** Builds the lookups by name, link and unique value, which the first
	 * command needing them would otherwise build while it waits (about 130 ms
	 * at 100k notes): called before the rows are read (`Host.readRows`). */
	warmLookups(): Awaitable<void>;
	/** Texts the engine asked for (`toRead`, a `read_notes` step); `gone`: those
	 * no longer in the vault. `listed`: those of `toRead`, read right after the
	 * listing (a text of the size and mtime the cache vouched for is not hashed). */
	readNotes(files: NoteFile[], gone: string[], listed?: boolean): Awaitable<void>;
	takeOwed(): Awaitable<StoreWrite[]>;
	owe(rest: StoreWrite[], error: string): Awaitable<Behind>;
	recordToolCall(call: ToolCall, nowMs: number): Awaitable<StoreWrite[]>;
	free(): void;
}
