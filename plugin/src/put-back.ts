// "Put back" (issue 53, point 4): a hand edit broke a rule, and the person
// wants the row as it was before it. The table's log holds that version: the
// row's newest hand edit is a version of its table, and the version before it
// is the row as it was. The restore is the row's Restore… (note-history.ts):
// its preview by property first, then update_row with if_match, journaled,
// so Undo last write takes it back.

import type { App } from "obsidian";
import type { EngineDoor } from "./history-view";
import { noteTitle, refusalShort } from "./display";
import { RestoreRowModal, rowVersions } from "./note-history";

/** Versions of the table looked through for the row's hand edit. */
const LOOK_BACK = 50;

/** The version of `path`'s table just before the row's newest hand edit, or
 * why there is none, in words. */
export async function beforeHandEdit(door: EngineDoor, path: string): Promise<number | string> {
	const read = await door.call("read_note", { path });
	if (read.status !== "ok") return refusalShort(read);
	const note = read.answer as { table?: string; row_id?: string };
	if (!note.table || !note.row_id) return `${noteTitle(path)} is not a row of a table.`;
	const history = await door.call("describe_history", { table: note.table, limit: 1 });
	if (history.status !== "ok") return refusalShort(history);
	const latest = history.answer.history[0]?.version ?? 0;
	const changes = await door.call("table_changes", { table: note.table, start_version: Math.max(0, latest - LOOK_BACK + 1) });
	if (changes.status !== "ok") return refusalShort(changes);
	const edit = rowVersions(changes.answer.changes, note.row_id).find((v) => v.operation === "EXTERNAL_EDIT");
	// Version 0 is the row as the log began with it: nothing before it to put back.
	if (!edit || edit.version === 0) return `Datanotes keeps no version of ${noteTitle(path)} from before your edit.`;
	return edit.version - 1;
}

/** Puts the row back as it was before its newest hand edit: the preview, then the write on confirm. */
export async function putBack(app: App, door: EngineDoor, path: string, told: (text: string) => void): Promise<RestoreRowModal | null> {
	const version = await beforeHandEdit(door, path);
	if (typeof version === "string") {
		told(version);
		return null;
	}
	const title = noteTitle(path);
	const modal = new RestoreRowModal(app, door, { path }, version, () => undefined, {
		title: `Put back ${title} as it was before your edit`,
		confirm: "Put back",
		done: `${title} is as it was before your edit.`,
	});
	modal.open();
	return modal;
}
