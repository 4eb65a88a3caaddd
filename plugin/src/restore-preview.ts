// What a restore or a rewind would do to each row, by property (issue 53,
// point 4): "status: watched → to watch" rather than the notes' paths. The
// dry run says which notes the restore would write; the table's log says how
// each row differs between the version restored and now (table_changes over
// the versions since), and a restore undoes exactly that difference: a row
// changed since gets its earlier values back, a row added since goes to the
// archive, a row removed since comes back.

import type { EngineDoor } from "./history-view";
import { columnLine, noteTitle } from "./display";
import { type RowDiff, rowDiffs } from "./table-history";
import type { Commit } from "./types";

/** What a restore would do to one row. */
export interface RowRestore {
	kind: "changed" | "archived" | "back";
	/** Its properties: now (before) → as they were (after); those of a row going or coming back as they stand. */
	columns: { name: string; before?: unknown; after?: unknown }[];
}

/** A row's difference since the version restored, turned round: what the restore does to it. */
export function undoneBy(d: RowDiff): RowRestore {
	if (d.kind === "inserted") return { kind: "archived", columns: d.columns.map((c) => ({ name: c.name, before: c.after })) };
	if (d.kind === "deleted") return { kind: "back", columns: d.columns.map((c) => ({ name: c.name, after: c.before })) };
	return { kind: "changed", columns: d.columns.map((c) => ({ name: c.name, before: c.after, after: c.before })) };
}

/** For each table, the first version a restore undoes (by its arguments):
 * a table restored to version V undoes V+1 on; a rewind to before an
 * operation (before_migration) undoes, in every table, the commits from that
 * operation's on (the history is newest first across tables). */
export function versionsUndone(args: Record<string, unknown>, history: Commit[]): Map<string, number> {
	const out = new Map<string, number>();
	const id = args.before_migration;
	if (typeof id !== "string") {
		const latest = history[0]?.version ?? 0;
		const from = Number(args.version) + 1;
		if (typeof args.table === "string" && from <= latest) out.set(args.table, from);
		return out;
	}
	const last = history.map((c) => c.migration_id === id || (c as Commit & { batch?: string }).batch === id).lastIndexOf(true);
	for (const c of history.slice(0, last + 1)) {
		const table = c.table ?? "";
		out.set(table, Math.min(out.get(table) ?? c.version, c.version));
	}
	return out;
}

/** Each row a restore would change, by its path now (and its path as it was,
 * for a row that moved since). Best effort: a log that cannot be read leaves
 * the rows to their titles. */
export async function rowsRestored(door: EngineDoor, args: Record<string, unknown>): Promise<Map<string, RowRestore>> {
	const out = new Map<string, RowRestore>();
	// A table's restore reads its own versions; a rewind every table's.
	const history = await door.call("describe_history", typeof args.table === "string" ? { table: args.table, limit: 1 } : { limit: 1000 });
	if (history.status !== "ok") return out;
	const undone = versionsUndone(args, history.answer.history);
	await Promise.all(
		[...undone].map(async ([table, from]) => {
			const changes = await door.call("table_changes", { table, start_version: from });
			if (changes.status !== "ok") return;
			for (const d of rowDiffs(changes.answer.changes)) {
				const r = undoneBy(d);
				out.set(d.path, r);
				const moved = d.columns.find((c) => c.name === "path");
				if (moved && typeof moved.before === "string") out.set(moved.before, r);
			}
		}),
	);
	return out;
}

const KIND_WORDS: Record<RowRestore["kind"], string> = {
	changed: "",
	archived: "added since: goes to the archive",
	back: "removed since: comes back",
};

/** One note a restore writes: its title (the path on hover) and, for a row,
 * what changes in it by property; a note whose properties stay gets its text
 * back as it was. */
export function drawRestoredNote(list: HTMLElement, path: string, row: RowRestore | undefined): HTMLElement {
	const li = list.createEl("li", { cls: "datanotes-restore-note" });
	const head = li.createDiv({ cls: "datanotes-restore-title" });
	head.createSpan({ text: noteTitle(path) }).setAttribute("title", path);
	const what = row === undefined || (row.kind === "changed" && row.columns.length === 0) ? "its text, as it was" : KIND_WORDS[row.kind];
	if (what) head.createSpan({ text: ` (${what})`, cls: "datanotes-muted" });
	if (row === undefined) return li;
	const cols = li.createEl("ul", { cls: "datanotes-diff-columns" });
	const kind = row.kind === "archived" ? "deleted" : row.kind === "back" ? "inserted" : "updated";
	for (const c of row.columns) if (c.name !== "path") columnLine(cols, c.name, c, kind);
	return li;
}
