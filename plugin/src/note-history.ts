// The history panel's "This note" section: it follows the active file. For a
// row, the versions of its table in which it changed (engine writes and hand
// edits: table_changes over the table's latest versions, kept to this row),
// with who and when and the column diff; a version picked is compared with
// the note as it is now, two picked with each other (note-compare.ts); "Show
// as of" shows the row at that version as a note reads (read only);
// "Restore…" writes the row back as it was, through update_row (journaled,
// undoable, refused when the note changed since); "Who set each property"
// (note-blame.ts) names the change that last set each property.
// Under the note's path, its "Similar notes" (meaning.ts), folded until opened.

import { type App, Component, MarkdownRenderer, Modal, Notice } from "obsidian";
import type { EngineDoor } from "./history-view";
import { drawRefusal, noteTitle, shown, type NotesOf, operationWords, readNotesOf, shortTable, versionWords } from "./display";
import { deviceWords, readDeviceNames } from "./device-name";
import { SimilarNotes } from "./meaning";
import { WhoSet } from "./note-blame";
import { drawDiffs, moveWithArrows, PanelSection, rowDiffs, showError } from "./table-history";
import { whoWords } from "./who";
import { drawMeta } from "./times";
import type { Migration, RowChange } from "./types";
import { bodyOf, drawComparison, type Layout, rowState } from "./note-compare";

export { bodyOf } from "./note-compare";

/** Versions of the table looked through at a time. */
export const WINDOW = 200;

/** A note's answer from read_note (the fields this section reads). */
interface NoteRead {
	path: string;
	_version?: string;
	table?: string;
	row_id?: string;
	values?: Record<string, unknown>;
	text?: string;
	body?: string;
}

/** One version in which the row changed. */
export interface RowVersion {
	version: number;
	timestamp: string;
	operation: string;
	changes: RowChange[];
}

/** The row's changes, grouped by version, newest first. */
export function rowVersions(changes: RowChange[], rowId: string): RowVersion[] {
	const byVersion = new Map<number, RowVersion>();
	for (const c of changes) {
		if (c.id !== rowId) continue;
		const v = byVersion.get(c._commit_version) ?? { version: c._commit_version, timestamp: c._commit_timestamp, operation: c._operation, changes: [] };
		v.changes.push(c);
		byVersion.set(c._commit_version, v);
	}
	return [...byVersion.values()].sort((a, b) => b.version - a.version);
}

export class NoteSection extends PanelSection {
	private path: string | null = null;
	private window = WINDOW;
	/** The versions picked to compare, in the order picked (two at most). */
	private picked: number[] = [];
	/** One column or two for the compared texts (kept across redraws). */
	readonly layout: Layout = { split: true };
	/** Counts comparisons drawn: an answer to an earlier pick is dropped. */
	private compared = 0;
	/** Notes like the active one: asked once per note, only while unfolded. */
	readonly similar: SimilarNotes;
	/** Who set each property of the row: asked only while unfolded. */
	readonly whoSet: WhoSet;

	constructor(
		private readonly app: App,
		private readonly door: EngineDoor,
	) {
		super();
		this.similar = new SimilarNotes(app, door);
		this.whoSet = new WhoSet(door);
	}

	/** Follows `path` (null: no file is open) from now on, and draws it. */
	show(into: HTMLElement | undefined, path: string | null): Promise<void> {
		if (path !== this.path) {
			this.window = WINDOW;
			this.picked = [];
		}
		this.path = path;
		return this.draw(into);
	}

	protected async drawInto(el: HTMLElement, mine: number): Promise<void> {
		const path = this.path;
		if (path === null || !path.endsWith(".md")) {
			el.empty();
			el.createEl("p", { text: "Open a note to see its history.", cls: "datanotes-muted" });
			return;
		}
		const read = await this.door.call("read_note", { path });
		if (mine !== this.generation) return;
		el.empty();
		el.createEl("h6", { text: noteTitle(path) }).setAttribute("title", path);
		// Not awaited: the history is not held up by the search.
		void this.similar.draw(el.createDiv(), path);
		if (read.status !== "ok") {
			drawRefusal(el, read);
			return;
		}
		const note = read.answer as NoteRead;
		if (!note.table || !note.row_id) {
			el.createEl("p", { text: "This note is not a row of a table: its history is the journal's and your editor's.", cls: "datanotes-muted" });
			return;
		}
		const table = note.table;
		const [history, journal, devices] = await Promise.all([
			this.door.call("describe_history", { table, limit: this.window }),
			this.door.call("list_migrations", { table: shortTable(table), limit: this.window }),
			readDeviceNames(this.door),
		]);
		const commits = history.status === "ok" ? history.answer.history : [];
		if (history.status === "ok" && commits.length === 0) {
			if (mine !== this.generation) return;
			// History on, no change since: not a refusal to show in red.
			el.createEl("p", { text: `A row of ${shortTable(table)}, which has no version yet: its history begins with its next change, by a write or by hand.`, cls: "datanotes-muted" });
			return;
		}
		const latest = commits[0]?.version ?? 0;
		const start = Math.max(0, latest - this.window + 1);
		const out = await this.door.call("table_changes", { table, start_version: start });
		if (mine !== this.generation) return;
		if (out.status !== "ok") {
			drawRefusal(el, out);
			return;
		}
		// What made each version and who: its operation's journal entry.
		const migrations = journal.status === "ok" ? journal.answer.migrations : [];
		const entries = new Map(commits.map((c) => [c.version, migrations.find((m) => m.migration_id === c.migration_id)]));
		const versions = rowVersions(out.answer.changes, note.row_id);
		// Only the entries that made the row's versions (and those they undid) are read.
		const made = versions.map((v) => entries.get(v.version)).filter((m) => m !== undefined);
		const byId = (id: string | undefined) => migrations.find((o) => o.migration_id === id);
		// An undo is named by what it undid; a redo by what it redid.
		const undone = made.flatMap((m) => [byId(m.undoes), byId(byId(m.undoes)?.undoes)]).filter((m) => m !== undefined);
		const notesOf = await readNotesOf(this.door, [...made, ...undone]);
		if (mine !== this.generation) return;
		el.createEl("p", { text: `A row of ${shortTable(table)}: the versions of its table in which it changed, newest first. Pick one to compare it with the note as it is now, or two to compare them.`, cls: "datanotes-muted" });
		const blame = el.createDiv();
		const compare = el.createDiv({ cls: "datanotes-note-compare" });
		const madeOn = (v: RowVersion) => {
			const device = commits.find((c) => c.version === v.version)?.device;
			return device ? `on ${deviceWords(device, devices)}` : "";
		};
		// A version no longer listed (looked through fewer) is no longer picked.
		this.picked = this.picked.filter((p) => versions.some((v) => v.version === p));
		const rows = versions.map((v, i) => this.drawVersion(el, v, note, i === 0, entries.get(v.version), migrations, notesOf, madeOn(v)));
		moveWithArrows(rows);
		this.pickable(rows, compare, note.path);
		await Promise.all([this.drawCompare(compare, note.path), this.whoSet.draw(blame, note.path, () => ({ migrations, notesOf, devices, now: this.now() }))]);
		if (versions.length === 0) el.createEl("p", { text: "No change in the versions looked through.", cls: "datanotes-muted" });
		if (start > 0) {
			const older = el.createEl("button", { text: `Look through ${WINDOW} older versions`, cls: "datanotes-more" });
			older.addEventListener("click", () => {
				this.window += WINDOW;
				void this.draw();
			});
		}
	}

	private drawVersion(el: HTMLElement, v: RowVersion, note: NoteRead, newest: boolean, entry: Migration | undefined, journal: Migration[], notesOf: NotesOf, on: string): HTMLElement {
		const row = el.createDiv({ cls: "datanotes-version datanotes-row-version" });
		row.tabIndex = 0;
		row.dataset.version = String(v.version);
		row.toggleClass("is-hand-edit", v.operation === "EXTERNAL_EDIT");
		const text = row.createDiv({ cls: "datanotes-history-text" });
		text.createSpan({ text: `v${v.version} `, cls: "datanotes-history-op" });
		text.createSpan({ text: versionWords(v.operation, entry && operationWords(entry, journal, notesOf)) });
		drawMeta(text, [whoWords(entry?.by), on, { time: v.timestamp }], this.now());
		// Version 0 holds the row as it stood when its table's log began: not inserted then.
		drawDiffs(text, rowDiffs(v.changes), () => undefined, v.operation === "CONVERT" ? "as it was" : undefined);
		const buttons = row.createDiv({ cls: "datanotes-row-buttons" });
		const show = buttons.createEl("button", { text: "Show as of", cls: "datanotes-show-as-of" });
		// A button acts; a click elsewhere on the row picks it.
		buttons.addEventListener("click", (e) => e.stopPropagation());
		show.addEventListener("click", () => void this.showAsOf(note.path, v.version).ready.catch((e: unknown) => showError(row, e)));
		if (!newest) {
			const restore = buttons.createEl("button", { text: "Restore…", cls: "datanotes-restore-row" });
			restore.addEventListener("click", () => this.restore(note, v.version));
		}
		return row;
	}

	/** A click or Enter on a version's row picks it, and compares what is picked in `compare`. */
	private pickable(rows: HTMLElement[], compare: HTMLElement, path: string): void {
		const mark = () => {
			for (const r of rows) r.toggleClass("is-selected", this.picked.includes(Number(r.dataset.version)));
		};
		for (const row of rows) {
			const pick = () => {
				this.pick(Number(row.dataset.version));
				mark();
				this.drawCompare(compare, path).catch((e: unknown) => showError(compare, e));
			};
			row.addEventListener("click", pick);
			row.addEventListener("keydown", (e) => {
				if (e.key === "Enter" && e.target === row) pick();
			});
		}
		mark();
	}

	/** Picks a version to compare; a third pick replaces the first. Picking it again unpicks it. */
	pick(version: number): void {
		if (this.picked.includes(version)) this.picked = this.picked.filter((v) => v !== version);
		else this.picked = [...this.picked, version].slice(-2);
	}

	/** The picked version against the note as it is now, or the older of two
	 * picked against the newer. Only the latest pick draws. */
	private async drawCompare(el: HTMLElement, path: string): Promise<void> {
		const mine = ++this.compared;
		const [from, to] = [Math.min(...this.picked), this.picked.length === 2 ? Math.max(...this.picked) : null];
		const reads = this.picked.length === 0 ? [] : await Promise.all([this.door.call("read_note", { path, version: from }), this.door.call("read_note", to === null ? { path } : { path, version: to })]);
		if (mine !== this.compared) return;
		el.empty();
		if (reads.length === 0) return;
		const [before, after] = reads;
		const toWords = to === null ? "now" : `version ${to}`;
		el.createEl("h6", { text: `From version ${from} to ${toWords}` });
		const refused = [before, after].find((o) => o.status !== "ok");
		if (refused) {
			drawRefusal(el, refused);
			return;
		}
		drawComparison(el, rowState(before.answer as NoteRead), rowState(after.answer as NoteRead), [`Version ${from}`, to === null ? "Now" : `Version ${to}`], this.layout);
	}

	/** The row as of a version, read only, in a modal: as a note reads. */
	showAsOf(path: string, version: number): AsOfModal {
		const modal = new AsOfModal(this.app, this.door, path, version);
		modal.open();
		return modal;
	}

	/** Asks, then writes the row back as it was at `version`. */
	restore(note: NoteRead, version: number): RestoreRowModal {
		const modal = new RestoreRowModal(this.app, this.door, note, version, () => void this.draw());
		modal.open();
		return modal;
	}
}

/** A row as it was, as a person reads a note: its properties as Obsidian
 * shows them (in words; not its front matter, whose table and id are the
 * engine's), then its body rendered as Obsidian renders Markdown. The note's
 * text as it was, front matter and all, is behind Details. */
export class AsOfModal extends Modal {
	/** Settles once the row is drawn (for the tests). */
	ready: Promise<void> = Promise.resolve();
	/** Owns what the Markdown renderer adds (embeds, links' hovers) while open. */
	private readonly component = new Component();

	constructor(
		app: App,
		private readonly door: EngineDoor,
		private readonly path: string,
		private readonly version: number,
	) {
		super(app);
	}

	onOpen(): void {
		this.setTitle(`${noteTitle(this.path)} as of version ${this.version}`);
		this.contentEl.addClass("datanotes-modal");
		this.component.load();
		const body = this.contentEl.createDiv({ cls: "datanotes-as-of" });
		this.ready = this.drawRow(body).catch((e: unknown) => showError(body, e));
	}

	private async drawRow(el: HTMLElement): Promise<void> {
		const out = await this.door.call("read_note", { path: this.path, version: this.version });
		if (out.status !== "ok") {
			drawRefusal(el, out);
			return;
		}
		const note = out.answer as NoteRead;
		const row = rowState(note);
		const props = el.createEl("ul", { cls: "datanotes-as-of-properties" });
		for (const [name, value] of Object.entries(row.values)) {
			const li = props.createEl("li");
			li.createSpan({ text: name, cls: "datanotes-as-of-name" });
			li.createSpan({ text: shown(value), cls: "datanotes-as-of-value" });
		}
		if (Object.keys(row.values).length === 0) props.createEl("li", { text: "No properties.", cls: "datanotes-muted" });
		const rendered = el.createDiv({ cls: "datanotes-as-of-body markdown-rendered datanotes-own-text" });
		if (row.body.trim() === "") rendered.createEl("p", { text: "No text.", cls: "datanotes-muted" });
		else await MarkdownRenderer.render(this.app, row.body, rendered, this.path, this.component);
		const details = el.createEl("details", { cls: "datanotes-as-of-details" });
		details.createEl("summary", { text: "Details" });
		details.createEl("pre", { text: note.text ?? "", cls: "datanotes-details" });
	}

	onClose(): void {
		this.component.unload();
		this.contentEl.empty();
	}
}

/** What a row's restore says: its title, its button, and its Notice once done. */
export interface RestoreWords {
	title: string;
	confirm: string;
	done: string;
}

/** "Restore Charade to version 3". */
export function restoreWords(title: string, version: number): RestoreWords {
	return { title: `Restore ${title} to version ${version}`, confirm: "Restore", done: `${title} is as it was at version ${version}.` };
}

/** "Restore this row to version N": what would change, then update_row on confirm. */
export class RestoreRowModal extends Modal {
	ready: Promise<void> = Promise.resolve();

	constructor(
		app: App,
		private readonly door: EngineDoor,
		private readonly note: NoteRead,
		private readonly version: number,
		private readonly restored: () => void,
		/** Its words: by default "Restore Charade to version 3". */
		private readonly words: RestoreWords = restoreWords(noteTitle(note.path), version),
	) {
		super(app);
	}

	onOpen(): void {
		this.setTitle(this.words.title);
		this.contentEl.addClass("datanotes-modal");
		const body = this.contentEl.createDiv();
		this.ready = this.plan(body).catch((e: unknown) => showError(body, e));
	}

	/** The update_row that puts the row back: the columns that differ (generated
	 * ones left to the engine), those to remove, and the body. */
	private async plan(body: HTMLElement): Promise<void> {
		const [now, then, db] = await Promise.all([
			this.door.call("read_note", { path: this.note.path }),
			this.door.call("read_note", { path: this.note.path, version: this.version }),
			this.door.call("describe_database", {}),
		]);
		if (now.status !== "ok" || then.status !== "ok" || db.status !== "ok") {
			const bad = now.status !== "ok" ? now : then.status !== "ok" ? then : db;
			drawRefusal(body, bad);
			return;
		}
		const current = now.answer as NoteRead;
		const old = then.answer as NoteRead;
		const table = db.answer.tables.find((t) => t.qualified === current.table);
		const columns = table?.columns ?? {};
		const generated = new Set(Object.entries(columns).filter(([, c]) => c.generated !== undefined).map(([n]) => n));
		const was = old.values ?? {};
		const is = current.values ?? {};
		const set: Record<string, unknown> = {};
		for (const [k, v] of Object.entries(was)) if (!generated.has(k) && JSON.stringify(is[k]) !== JSON.stringify(v)) set[k] = v;
		const remove = Object.keys(is).filter((k) => !generated.has(k) && !(k in was));
		const oldBody = bodyOf(old.text ?? "");
		const bodyChanged = current.body !== undefined && oldBody !== current.body;
		if (Object.keys(set).length === 0 && remove.length === 0 && !bodyChanged) {
			body.createEl("p", { text: "The row is as it was at that version: nothing to restore.", cls: "datanotes-muted" });
			return;
		}
		// What the row would hold: its properties now with those set and removed, and the body as it was.
		const after = { ...is, ...set };
		for (const k of remove) delete after[k];
		drawComparison(body, rowState(current), rowState({ values: after, body: bodyChanged ? oldBody : current.body }), ["Now", `Version ${this.version}`], { split: false });
		body.createEl("p", { text: "A journaled write: undo reverts it; it is refused if the note changes meanwhile.", cls: "datanotes-muted" });
		const buttons = body.createDiv({ cls: "modal-button-container" });
		buttons.createEl("button", { text: "Cancel" }).addEventListener("click", () => this.close());
		const go = buttons.createEl("button", { text: this.words.confirm, cls: "mod-warning datanotes-restore-confirm" });
		const args: Record<string, unknown> = { table: current.table, path: current.path, set, remove, if_match: current._version };
		if (bodyChanged) args.body = oldBody;
		go.addEventListener("click", () => void this.apply(go, body, args).catch((e: unknown) => showError(body, e)));
	}

	private async apply(go: HTMLButtonElement, body: HTMLElement, args: Record<string, unknown>): Promise<void> {
		go.disabled = true;
		const out = await this.door.call("update_row", args);
		if (out.status !== "ok") {
			drawRefusal(body, out);
			return;
		}
		new Notice(`Datanotes: ${this.words.done} Undo it from the journal.`);
		this.close();
		this.restored();
	}

	onClose(): void {
		this.contentEl.empty();
	}
}
