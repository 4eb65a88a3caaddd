// How the views show what the engine answers: times, values, table names, and
// the pieces every diff is drawn with (a change's head with a link to its note,
// a column's before and after).

import type { EngineDoor } from "./history-view";
import { refusalText } from "./host";
import { errorOf, isObject, type Migration, type NoteChange, type Outcome } from "./types";

/** The words for what the table's log calls an operation, when no journal
 * entry says more (a hand edit, the first version, a write the journal no
 * longer keeps). */
const LOG_WORDS: Record<string, string> = {
	EXTERNAL_EDIT: "Edited by hand",
	// Version 0: the table as it stood when its log began (its first change).
	CONVERT: "As it was before its history began",
	WRITE: "Wrote rows",
	UPDATE: "Changed rows",
	DELETE: "Removed rows",
	MERGE: "Added or changed rows",
	RESTORE: "Restored an earlier version",
};

/** What made a version of a table, in words: its journal entry's words while
 * the journal keeps it ("Changed rating of Charade", `operationWords`), else
 * the log's operation in words. */
export function versionWords(operation: string, words?: string): string {
	if (operation === "EXTERNAL_EDIT" || operation === "CONVERT") return LOG_WORDS[operation];
	return words ?? LOG_WORDS[operation] ?? "Changed the table";
}

/** What a journal entry did to each note, by entry id (show_migration), for
 * the entries whose words name a row. */
export type NotesOf = (migrationId: string) => NoteChange[] | undefined;

/** "a", "a and b", "a, b and c". */
export function listWords(items: string[]): string {
	if (items.length <= 1) return items.join("");
	return `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}`;
}

const rowsWord = (n: number): string => (n === 1 ? "1 row" : `${n} rows`);
const lower = (s: string): string => s.charAt(0).toLowerCase() + s.slice(1);
const upper = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

/** A note's own columns in a change (not the bookkeeping ones: its table, its id). */
export function ownColumns(changes: Record<string, unknown>): string[] {
	return Object.keys(changes).filter((k) => k !== "table" && k !== "id");
}

/** The first verb of the engine's summary, said as done. */
const DONE: Record<string, string> = {
	add: "Added",
	alter: "Changed",
	create: "Created",
	delete: "Removed",
	drop: "Removed",
	insert: "Added",
	keep: "Kept",
	merge: "Merged",
	recompute: "Recomputed",
	rename: "Renamed",
	restore: "Restored",
	trash: "Removed",
	update: "Changed",
	write: "Wrote",
};

/** A journal entry in words: "Changed rating of Charade", "Added Sunrise to
 * film", "Removed 3 rows from film", "Undid: changed rating of Charade",
 * "Restored film to version 3". Built from its operation, its table and (when
 * `notesOf` has them) the notes it changed; an undo names the entry it undid
 * by its words while that entry is listed in `all` (an undo of an undo:
 * "Redid: …"). Never the operation's name or an id. */
export function operationWords(m: Migration, all: Migration[] = [], notesOf: NotesOf = () => undefined): string {
	const byId = (id: string) => all.find((o) => o.migration_id === id);
	if (m.undoes !== undefined) {
		const undone = byId(m.undoes);
		if (!undone) return "Undid an earlier operation";
		if (undone.undoes === undefined) return `Undid: ${lower(operationWords(undone, all, notesOf))}`;
		const redone = byId(undone.undoes);
		return redone ? `Redid: ${lower(operationWords(redone, all, notesOf))}` : "Redid an earlier operation";
	}
	const summary = m.summary ?? "";
	const table = shortTable(m.table ?? undefined) || (/ (?:into|of) (\S+)$/.exec(summary)?.[1] ?? "");
	const notes = notesOf(m.migration_id);
	const one = notes?.length === 1 ? notes[0] : undefined;
	const counted = Number(/(\d+) rows/.exec(summary)?.[1] ?? NaN);
	const n = Number.isNaN(counted) ? (m.notes_changed ?? 0) + (m.files_changed ?? 0) : counted;
	const on = table ? ` ${table}` : " a table";
	switch (m.op) {
		case "insert_row":
		case "insert_rows":
			if (one) return `Added ${noteTitle(one.path)} to${on}`;
			return m.op === "insert_row" ? `Added a row to${on}` : `Added ${rowsWord(n)} to${on}`;
		case "update_row":
		case "update_rows": {
			if (one) {
				const title = noteTitle(one.path);
				if (one.from && noteTitle(one.from) !== title) return `Renamed ${noteTitle(one.from)} to ${title}`;
				const cols = ownColumns(one.changes);
				if (cols.length === 0) return `Changed the text of ${title}`;
				return cols.length > 3 ? `Changed ${cols.length} values of ${title}` : `Changed ${listWords(cols)} of ${title}`;
			}
			if (m.notes_changed === 0 && m.files_changed === 0) return `Changed nothing in${on}`;
			return m.op === "update_row" ? `Changed a row of${on}` : `Changed ${rowsWord(n)} of${on}`;
		}
		case "delete_rows":
			if (one) return `Removed ${noteTitle(one.path)} from${on}`;
			return `Removed ${rowsWord(n)} from${on}`;
		case "merge_rows":
			return `Added or changed ${rowsWord(n)} of${on}`;
		// The proposal's name is its author's word for it: shown under Details.
		case "accept_proposal":
			return `Accepted proposed changes to ${rowsWord(n)}`;
		case "restore_table": {
			const v = /to version (\d+)/.exec(summary)?.[1];
			return v === undefined ? `Restored${on} to an earlier version` : `Restored${on} to version ${v}`;
		}
		case "restore_database":
			return "Rewound the database to an earlier moment";
		case "resolve_conflict":
			return one ? `Resolved a conflict in ${noteTitle(one.path)}` : "Resolved a conflict";
		case "batch":
			return `Made ${/batch of (\d+)/.exec(summary)?.[1] ?? "several"} changes at once`;
		case "repair_links":
		case "sync_links":
			return "Kept two-way links in step";
		// A rule's name is the schema's id for it: the rule is said where it is shown.
		case "add_check":
			return `Added a rule to${on}`;
		case "drop_check":
			return `Removed a rule of${on}`;
	}
	if (/^roll back /.test(summary)) return "Rolled back an unfinished write";
	if (summary === "") return table ? `Changed ${table}` : "Changed the database";
	// The engine's summary ("create view silent of film"), its verb as done; an id in it as words.
	const [verb, ...rest] = summary.replace(/\d{8}T\d{6}-\S+/g, "an earlier operation").split(" ");
	return [DONE[verb] ?? upper(verb), ...rest].join(" ");
}

/** What journal entries did to their notes, as read, by door: an entry's
 * notes never change once it is written, so each is asked for once. */
const notesRead = new WeakMap<EngineDoor, Map<string, NoteChange[]>>();
/** Entries kept per door before the oldest are let go. */
const NOTES_KEPT = 2000;

/** Reads what each of `migrations` did to its notes, for the entries whose
 * words name a row (one note changed; not one left pending or rolled back,
 * whose notes may yet change): one show_migration each, the first time. An
 * entry that cannot be read is left to its counts. */
export async function readNotesOf(door: EngineDoor, migrations: Migration[]): Promise<NotesOf> {
	let read = notesRead.get(door);
	if (!read) notesRead.set(door, (read = new Map<string, NoteChange[]>()));
	const kept = read;
	const ids = migrations.filter((m) => m.migration_id && m.status === undefined && !kept.has(m.migration_id) && (m.notes_changed ?? 0) + (m.files_changed ?? 0) === 1).map((m) => m.migration_id);
	await Promise.all(
		ids.map(async (id) => {
			try {
				const out = await door.call("show_migration", { migration_id: id });
				if (out.status === "ok") kept.set(id, out.answer.notes);
			} catch {
				// Left to its counts.
			}
		}),
	);
	for (const id of kept.keys()) {
		if (kept.size <= NOTES_KEPT) break;
		kept.delete(id);
	}
	return (id) => kept.get(id);
}

/** An ISO time as this machine writes times; "" for none or for the epoch (a
 * table's first version, made before any clock was asked); the text itself
 * when it is not a time. */
export function formatTime(iso: string | undefined): string {
	if (!iso) return "";
	const d = new Date(iso);
	if (Number.isNaN(d.getTime())) return iso;
	return d.getTime() === 0 ? "" : d.toLocaleString();
}

/** A column's value as Obsidian shows a property: a list as its items
 * separated by commas, a link ("[[Stanley Donen]]", "[[person/Ann|Ann]]") as
 * what it shows, yes or no; nothing as "(empty)". Never JSON. */
export function shown(v: unknown): string {
	if (v === undefined || v === null) return "(empty)";
	if (typeof v === "string") return linkText(v);
	if (typeof v === "boolean") return v ? "yes" : "no";
	if (typeof v === "number") return String(v);
	if (Array.isArray(v)) return v.length === 0 ? "(empty)" : v.map((x) => shown(x)).join(", ");
	if (isObject(v)) return Object.entries(v).map(([k, x]) => `${k}: ${shown(x)}`).join("; ");
	return typeof v === "bigint" ? v.toString() : "";
}

/** A wiki link as Obsidian shows it: its alias, else its note's title. Other text as it is. */
export function linkText(s: string): string {
	const m = /^\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|([^\]]+))?\]\]$/.exec(s.trim());
	if (!m) return s;
	return m[2] ?? noteTitle(m[1]);
}

/** "notes/Plan.md" as "Plan". */
export function noteTitle(path: string): string {
	return (path.split("/").pop() ?? path).replace(/\.md$/i, "");
}

/** "main.public.film" as "film". */
export function shortTable(table: string | undefined): string {
	return (table ?? "").split(".").pop() ?? "";
}

/** A change's head: its kind, and the note as a link that opens it. */
export function changeHead(row: HTMLElement, kind: string, path: string | undefined, openNote: (path: string) => void): void {
	const head = row.createDiv({ cls: "datanotes-diff-head" });
	head.createSpan({ text: kind, cls: "datanotes-diff-kind" });
	if (path === undefined) return;
	noteLink(head, path, openNote);
}

/** A link to a note, named by its title; its path shows on hover. */
export function noteLink(el: HTMLElement, path: string, openNote: (path: string) => void): HTMLAnchorElement {
	const link = el.createEl("a", { text: noteTitle(path), cls: "datanotes-diff-path", href: "#" });
	link.setAttribute("title", path);
	link.addEventListener("click", (e) => {
		e.preventDefault();
		openNote(path);
	});
	return link;
}

/** Where a note moved from, in words: its old title, or "another folder"
 * when only its folder changed. */
export function movedFrom(from: string, to: string | undefined): string {
	if (to !== undefined && /(^|\/)_archive\//.test(to) && !/(^|\/)_archive\//.test(from)) return "moved to the archive";
	return to !== undefined && noteTitle(from) === noteTitle(to) ? "moved from another folder" : `renamed from ${noteTitle(from)}`;
}

/** One column's change in a diff's list: "name: before → after"; an inserted
 * row's columns have no before, a deleted row's no after. */
export function columnLine(list: HTMLElement, name: string, change: { before?: unknown; after?: unknown }, kind: "inserted" | "updated" | "deleted" = "updated"): void {
	const li = list.createEl("li");
	li.createSpan({ text: `${name}: `, cls: "datanotes-diff-column" });
	if (kind !== "inserted") li.createSpan({ text: shown(change.before), cls: "datanotes-diff-before" });
	if (kind === "updated") li.appendText(" → ");
	if (kind !== "deleted") li.createSpan({ text: shown(change.after), cls: "datanotes-diff-after" });
}

/** Operations that change rows' notes and nothing else. */
const ROW_WRITES = new Set(["insert_row", "insert_rows", "update_row", "update_rows", "delete_rows", "merge_rows"]);

/** A row write that changed no note (an update to the values a row already
 * held, insert_rows of no rows): the journal keeps it, but there is nothing to
 * undo. Only row writes are judged by their counts: a schema operation
 * (add_check, say) changes metastore.yaml, which the counts leave out, and
 * reports 0 and 0 too. */
export function changedNothing(m: Migration): boolean {
	return ROW_WRITES.has(m.op) && m.notes_changed === 0 && m.files_changed === 0;
}

/** A refusal as a person reads it: one sentence of what happened, one of
 * what to do, and the engine's whole text for Details. */
export interface Refusal {
	said: string;
	todo: string;
	details: string;
}

/** Paths of notes and wiki links in a text as the notes' titles (a link's alias when it has one). */
export function pathsAsTitles(text: string): string {
	return text
		.replace(/\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|([^\]]+))?\]\]/g, (_, target: string, alias?: string) => alias ?? noteTitle(target)).replace(/(?:[\w.-]+\/)+(?:[^/\n:"]*\/)*([^/\n:"]+?)\.md\b/g, "$1").replace(/\bmain\.public\./g, "");
}

/** An operation's name (the registry's are a verb, "_", then more). */
const OP_NAME = /\b(?:describe|read|create|drop|rename|add|alter|write|select|suggest|insert|update|delete|merge|check|infer|recompute|list|show|undo|restore|vacuum|sync|semantic|resolve|repair|confirm|configure)_[a-z_]+\b/;

/** Words only a program reads: an operation's name, JSON, an id, a link to the docs. */
const ENGINE_WORDS = new RegExp(`${OP_NAME.source}|[{}[\\]]|\\d{8}T\\d{6}-|[0-9a-f]{8}-[0-9a-f]{4}-|https?:|\\bHint:|\\bDocs:`);

const sentence = (s: string): string => {
	const t = s.trim();
	return t === "" ? "" : `${t.charAt(0).toUpperCase()}${t.slice(1)}${/[.!?]$/.test(t) ? "" : "."}`;
};

/** What a refusal says, for a person (`refusalText` is the engine's whole
 * text, for Details). What happened: the engine's first reason when it reads
 * as words (paths as titles), or what kind of refusal it is; what to do: the
 * engine's hint when it reads as words, else where to look. */
export function refusalWords(out: Outcome): Refusal {
	const details = refusalText(out);
	// The engine's text with the rules in words (rule-words.ts).
	const text = errorOf(out.answer) === null ? "" : details;
	const hint = isObject(out.answer) && typeof out.answer.hint === "string" ? out.answer.hint : "";
	const reasons = text
		.split("\n")
		.slice(1)
		.map((l) => l.trim())
		.filter((l) => l !== "" && !l.startsWith("Hint: ") && !l.startsWith("Docs: "));
	// An undo refused because a note changed since.
	const conflicts = reasons.map((l) => /^conflict (.+?\.md): "(.+)" changed since the operation$/.exec(l)).filter((m) => m !== null);
	if (conflicts.length > 0) {
		const first = conflicts[0];
		const more = conflicts.length > 1 ? ` (and ${conflicts.length - 1} more)` : "";
		return {
			said: `Nothing was undone: the ${first[2]} of ${noteTitle(first[1])} changed since${more}, and undoing would overwrite it.`,
			todo: "Undo the later changes first, or change the row by hand.",
			details,
		};
	}
	// "<a new row's id>: …": the new row; "where: {…} compares …": the condition.
	let reason = withoutFilter(pathsAsTitles(reasons[0] ?? "").replace(/^[0-9a-f]{8}-[0-9a-f-]{27,}\.?\w*:\s*/, "the new row: "));
	// "… cannot be read: <the parser's words>": what cannot be read.
	if (ENGINE_WORDS.test(reason) && !ENGINE_WORDS.test(reason.split(": ")[0])) reason = reason.split(": ")[0];
	const kind =
		out.status === "rolled_back"
			? "The write could not finish and was rolled back: nothing changed."
			: out.status === "internal"
				? "Datanotes ran into an error of its own: nothing was written."
				: out.status === "bad_input"
					? "Datanotes could not take what was asked: nothing was written."
					: "Datanotes refused: nothing was written.";
	const said = out.status !== "rolled_back" && reason !== "" && !ENGINE_WORDS.test(reason) ? `Nothing was written: ${reason}${/[.!?]$/.test(reason) ? "" : "."}` : kind;
	const how = pathsAsTitles(hint.replace(/, or main\.public\.\w+\)/g, ")"))
		// "(list_migrations lists them, newest first)": the tool's way, not the person's.
		.replace(new RegExp(`\\s*\\([^)]*${OP_NAME.source}[^)]*\\)`, "g"), "")
		.replace(new RegExp(`\\s*(?:with|through|by|using) ${OP_NAME.source}`, "g"), "");
	// The hint's sentences a person can act on; those for a program (an operation, JSON) are left to Details.
	const plain = how
		.replace(/([.!?;])\s+/g, "$1\n")
		.split("\n")
		.filter((t) => t.trim() !== "" && !ENGINE_WORDS.test(t))
		.join(" ")
		.replace(/;$/, ".");
	const broke = isObject(out.answer) && Array.isArray(out.answer.violations);
	const todo = plain.trim() !== "" ? sentence(plain) : broke ? "Change the values so that the row keeps its table's rules." : "Details has the engine's whole answer.";
	return { said, todo, details };
}

/** An argument's filter dropped from a reason ("where: {…} compares minutes…"
 * is "the condition compares minutes…"): the JSON is for Details. */
function withoutFilter(reason: string): string {
	const m = /^(\w+): \{/.exec(reason);
	if (!m) return reason;
	for (let end = reason.indexOf("} "); end > 0; end = reason.indexOf("} ", end + 1)) {
		try {
			JSON.parse(reason.slice(m[0].length - 1, end + 1));
		} catch {
			continue;
		}
		return `${m[1] === "where" ? "the condition" : m[1]} ${reason.slice(end + 2)}`;
	}
	return reason;
}

/** A refusal's two sentences, for a Notice. */
export function refusalShort(out: Outcome): string {
	const r = refusalWords(out);
	return `${r.said} ${r.todo}`;
}

/** A refusal drawn in `el`: what happened, what to do, and the engine's
 * text folded under Details. */
export function drawRefusal(el: HTMLElement, out: Outcome): HTMLElement {
	const r = refusalWords(out);
	const box = el.createDiv({ cls: "datanotes-error datanotes-refusal" });
	box.createEl("p", { text: r.said });
	box.createEl("p", { text: r.todo, cls: "datanotes-muted" });
	const details = box.createEl("details");
	details.createEl("summary", { text: "Details" });
	details.createEl("pre", { text: r.details, cls: "datanotes-details" });
	return box;
}
