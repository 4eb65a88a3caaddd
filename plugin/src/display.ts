// How the views show what the engine answers: times, values, table names, and
// the pieces every diff is drawn with (a change's head with a link to its note,
// a column's before and after).

import type { Migration } from "./types";

/** What made a version of a table, in words: the journal's summary of its
 * operation while the journal keeps it ("update film", `summaryOf`), else the
 * log's name for it (UPDATE, WRITE, …). */
export function versionWords(operation: string, summary?: string): string {
	if (operation === "EXTERNAL_EDIT") return "hand edit";
	// Version 0: the table as it stood when its log began (its first change).
	if (operation === "CONVERT") return "as it was before its history began";
	return summary ?? operation;
}

/** An entry's summary in words. An undo's own names the entry it undid by its
 * id ("undo 20261202T200510-insert_row-…"): while that entry is listed, it is
 * named by what it did ("undid insert_row insert into person"; an undo of an
 * undo "redid …"). */
export function summaryOf(m: Migration, all: Migration[]): string | undefined {
	const byId = (id: string | undefined) => (id === undefined ? undefined : all.find((o) => o.migration_id === id));
	const words = (o: Migration) => `${o.op}${o.summary ? ` ${o.summary}` : ""}`;
	const undone = byId(m.undoes);
	if (!undone) return m.summary;
	if (undone.undoes === undefined) return `undid ${words(undone)}`;
	const redone = byId(undone.undoes);
	return redone ? `redid ${words(redone)}` : m.summary;
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

/** A column's value in a diff. */
export function shown(v: unknown): string {
	if (v === undefined || v === null) return "(empty)";
	return typeof v === "string" ? v : JSON.stringify(v);
}

/** "notes/Plan.md" as "Plan". */
export function noteTitle(path: string): string {
	return (path.split("/").pop() ?? path).replace(/\.md$/i, "");
}

/** "main.public.film" as "film". */
export function shortTable(table: string | undefined): string {
	return (table ?? "").split(".").pop() ?? "";
}

/** A change's head: its kind, and the note's path as a link that opens it. */
export function changeHead(row: HTMLElement, kind: string, path: string | undefined, openNote: (path: string) => void): void {
	const head = row.createDiv({ cls: "datanotes-diff-head" });
	head.createSpan({ text: kind, cls: "datanotes-diff-kind" });
	if (path === undefined) return;
	const link = head.createEl("a", { text: path, cls: "datanotes-diff-path", href: "#" });
	link.addEventListener("click", (e) => {
		e.preventDefault();
		openNote(path);
	});
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
