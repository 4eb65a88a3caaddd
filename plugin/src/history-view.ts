// The history side panel: the operation journal, newest first (list_migrations),
// with an Undo button per entry (undo_migration). A refusal shows in a Notice.

import { ItemView, Notice, setIcon, type WorkspaceLeaf } from "obsidian";
import { changedNothing, drawRefusal, formatTime, noteLink, type NotesOf, operationWords, readNotesOf, refusalShort } from "./display";
import { type DeviceNames, deviceWords, readDeviceNames } from "./device-name";
import { fullTextTitles } from "./full-text";
import { ChangesSection, DatabaseSection, drawNoteChange } from "./feed-sections";
import { NoteSection } from "./note-history";
import { moveWithArrows, showError, TableSection } from "./table-history";
import type { AnswerOf, Migration, Outcome } from "./types";

export const VIEW_TYPE_HISTORY = "datanotes-history";

const lowerFirst = (s: string): string => s.charAt(0).toLowerCase() + s.slice(1);

/** What undoing an entry of these words did: undoing an undo redoes. */
export function undidWords(words: string): string {
	if (words.startsWith("Undid: ")) return `Redid: ${words.slice(7)}.`;
	if (words.startsWith("Redid: ")) return `Undid: ${words.slice(7)}.`;
	return `Undid: ${lowerFirst(words)}.`;
}

/** What the panel needs of the engine: calls, and word of each change. */
export interface EngineDoor {
	call<K extends string>(name: K, args?: unknown): Promise<Outcome<AnswerOf<K>>>;
	/** Calls `fn` after each write or tick that changed something; returns the unsubscribe. */
	onChange(fn: () => void): () => void;
	/** This device's id, when the engine has one: the panel names it by its name (device-name.ts). */
	thisDevice?(): string | undefined;
}

/** How many entries the panel lists at a time. */
const LIMIT = 50;

/** A journal entry's status other than done, in words. */
const STATUS: Record<string, string> = {
	pending: "pending: not finished",
	rolled_back: "rolled back",
	rollback_incomplete: "rollback incomplete",
};

/** The panel's sections. */
export type Section = "journal" | "table" | "note" | "database" | "changes";

const SECTIONS: [Section, string][] = [
	["journal", "Journal"],
	["table", "Table"],
	["note", "This note"],
	["database", "Database"],
	["changes", "Changes"],
];

/** Each section's icon (Lucide names, as Obsidian's setIcon takes them). */
const ICONS: Record<Section, string> = {
	journal: "list",
	table: "table",
	note: "file-text",
	database: "database",
	changes: "activity",
};

/** A button that writes asks first: the first click turns it into `ask`, the
 * second runs `act`; it turns back after 4 s, or when the focus leaves it. */
export function confirmed(button: HTMLButtonElement, ask: string, act: () => void): void {
	const label = button.textContent ?? "";
	let armed = false;
	let timer: number | null = null;
	const disarm = () => {
		armed = false;
		button.setText(label);
		button.removeClass("mod-warning");
		if (timer !== null) window.clearTimeout(timer);
		timer = null;
	};
	button.addEventListener("click", () => {
		if (!armed) {
			armed = true;
			button.setText(ask);
			button.addClass("mod-warning");
			timer = window.setTimeout(disarm, 4000);
			return;
		}
		disarm();
		act();
	});
	button.addEventListener("blur", () => {
		if (armed) disarm();
	});
}

/** Left and Right move the focus along a tab list (wrapping round), Home and
 * End to its ends; the rows below move with Up and Down (moveWithArrows). */
export function moveAlongTabs(tabs: HTMLElement[]): void {
	tabs.forEach((tab, i) => {
		tab.addEventListener("keydown", (e) => {
			const n = tabs.length;
			const to = e.key === "ArrowRight" ? (i + 1) % n : e.key === "ArrowLeft" ? (i + n - 1) % n : e.key === "Home" ? 0 : e.key === "End" ? n - 1 : -1;
			if (to < 0) return;
			e.preventDefault();
			tabs[to].focus();
		});
	});
}

export class HistoryView extends ItemView {
	private unsubscribe: (() => void) | null = null;
	private section: Section = "journal";
	/** How long the panel waits before asking a silent engine again (ms). */
	retryMs = 5000;
	private retry: number | null = null;
	private closed = false;
	/** Refused undos, by entry: shown under it until an undo of it succeeds. */
	private refusals = new Map<string, Outcome>();
	private readonly openNote = (path: string): void => void this.app.workspace.openLinkText(path, "", false);
	/** Journal entries asked for: a page, and a page more each "Show more". */
	private limit = LIMIT;
	private tableSection: TableSection | null = null;
	private databaseSection: DatabaseSection | null = null;
	private changesSection: ChangesSection | null = null;
	private noteSection: NoteSection | null = null;
	/** Counts refreshes: an answer that comes back after a newer one is dropped. */
	private generation = 0;
	/** What the listed entries did to their notes (their words name the row). */
	private notesOf: NotesOf = () => undefined;
	/** The entries listed: an undo's Notice names what it undid by them. */
	private listed: Migration[] = [];
	/** The devices' names, for each entry's device. */
	private devices: DeviceNames = { names: {} };

	constructor(
		leaf: WorkspaceLeaf,
		private readonly door: EngineDoor,
	) {
		super(leaf);
		this.register(fullTextTitles(this.contentEl));
	}

	getViewType(): string {
		return VIEW_TYPE_HISTORY;
	}

	getDisplayText(): string {
		return "Datanotes history";
	}

	getIcon(): string {
		return "history";
	}

	async onOpen(): Promise<void> {
		this.closed = false;
		this.unsubscribe = this.door.onChange(() => void this.refresh());
		// "This note" follows the active file.
		this.registerEvent(
			this.app.workspace.on("file-open", () => {
				if (this.section === "note") void this.refresh();
			}),
		);
		await this.refresh();
	}

	async onClose(): Promise<void> {
		this.closed = true;
		if (this.retry !== null) window.clearTimeout(this.retry);
		this.retry = null;
		this.unsubscribe?.();
		this.unsubscribe = null;
	}

	/** Shows a section and draws it. */
	async show(section: Section): Promise<void> {
		this.section = section;
		await this.refresh();
	}

	/** The section shown. */
	shown(): Section {
		return this.section;
	}

	/** The tabs, and the element a section draws into. In a narrow pane (a
	 * sidebar) the tabs show only their icons (styles.css, by the panel's
	 * width); each keeps its name as its aria-label, which Obsidian shows as a
	 * tooltip. The tabs are one stop for Tab: Left and Right (Home, End) move
	 * along them, Enter or Space shows one. */
	private frame(): HTMLElement {
		const el = this.contentEl;
		// A redraw replaces the tabs: the one focused is focused again.
		const focused = el.querySelector<HTMLElement>(".datanotes-tab:focus")?.dataset.section;
		el.empty();
		el.addClass("datanotes-history");
		const tabs = el.createDiv({ cls: "datanotes-tabs" });
		tabs.setAttribute("role", "tablist");
		tabs.setAttribute("aria-label", "History sections");
		const all: HTMLElement[] = [];
		for (const [id, label] of SECTIONS) {
			const tab = tabs.createEl("button", { cls: "datanotes-tab" });
			tab.dataset.section = id;
			setIcon(tab.createSpan({ cls: "datanotes-tab-icon" }), ICONS[id]);
			tab.createSpan({ text: label, cls: "datanotes-tab-label" });
			tab.setAttribute("role", "tab");
			tab.setAttribute("aria-label", label);
			tab.setAttribute("aria-selected", String(id === this.section));
			tab.tabIndex = id === this.section ? 0 : -1;
			if (id === this.section) tab.addClass("is-active");
			tab.addEventListener("click", () => void this.show(id));
			all.push(tab);
		}
		moveAlongTabs(all);
		const label = SECTIONS.find(([id]) => id === this.section)?.[1] ?? "";
		const section = el.createDiv({ cls: `datanotes-section datanotes-section-${this.section}` });
		section.setAttribute("role", "tabpanel");
		section.setAttribute("aria-label", label);
		if (focused) all.find((t) => t.dataset.section === focused)?.focus();
		return section;
	}

	/** Reads the section's data again and redraws the panel. */
	async refresh(): Promise<void> {
		try {
			await this.redraw();
		} catch (e) {
			// An engine that went away throws (a forwarded call); say so in the panel.
			this.frame().createEl("pre", { text: e instanceof Error ? e.message : String(e), cls: "datanotes-error" });
		}
		this.retryIfFailed();
	}

	/** While the panel shows an error (an engine that went away, say), it asks
	 * again every `retryMs`, and recovers when the engine answers. */
	private retryIfFailed(): void {
		if (this.retry !== null) window.clearTimeout(this.retry);
		this.retry = null;
		if (this.closed || this.contentEl.querySelector(".datanotes-error") === null) return;
		this.retry = window.setTimeout(() => {
			this.retry = null;
			void this.refresh();
		}, this.retryMs);
	}

	private async redraw(): Promise<void> {
		const openNote = this.openNote;
		if (this.section !== "journal") {
			++this.generation;
			const el = this.frame();
			if (this.section === "table") {
				this.tableSection ??= new TableSection(this.app, this.door, openNote);
				await this.tableSection.draw(el);
			} else if (this.section === "note") {
				this.noteSection ??= new NoteSection(this.app, this.door);
				await this.noteSection.show(el, this.app.workspace.getActiveFile()?.path ?? null);
			} else if (this.section === "database") {
				this.databaseSection ??= new DatabaseSection(this.app, this.door);
				await this.databaseSection.draw(el);
			} else {
				this.changesSection ??= new ChangesSection(this.door, openNote);
				await this.changesSection.draw(el);
			}
			return;
		}
		const mine = ++this.generation;
		let out: Outcome<AnswerOf<"list_migrations">>;
		try {
			out = await this.door.call("list_migrations", { limit: this.limit });
		} catch (e) {
			if (mine === this.generation) this.draw(null, e instanceof Error ? e.message : String(e));
			return;
		}
		if (mine !== this.generation) return;
		if (out.status !== "done") return this.draw(null, out);
		const [notesOf, devices] = await Promise.all([readNotesOf(this.door, out.answer.migrations), readDeviceNames(this.door)]);
		if (mine !== this.generation) return;
		this.notesOf = notesOf;
		this.devices = devices;
		this.listed = out.answer.migrations;
		this.draw(out.answer.migrations, null, out.answer.total);
	}

	/** The Table section, while it is shown (for the tests). */
	table(): TableSection | null {
		return this.section === "table" ? this.tableSection : null;
	}

	/** The This note section, while it is shown. */
	note(): NoteSection | null {
		return this.section === "note" ? this.noteSection : null;
	}

	/** The Database section, while it is shown. */
	database(): DatabaseSection | null {
		return this.section === "database" ? this.databaseSection : null;
	}

	/** The Changes section, while it is shown. */
	changes(): ChangesSection | null {
		return this.section === "changes" ? this.changesSection : null;
	}

	/** `error`: a refusal, or what went wrong otherwise (an engine gone). */
	private draw(migrations: Migration[] | null, error: string | Outcome | null, total?: number): void {
		const el = this.frame();
		const head = el.createDiv({ cls: "datanotes-history-head" });
		head.createEl("h4", { text: "History" });
		const again = head.createEl("button", { text: "Refresh", cls: "datanotes-history-refresh" });
		again.addEventListener("click", () => void this.refresh());
		if (typeof error === "string") {
			el.createEl("pre", { text: error, cls: "datanotes-error" });
			return;
		}
		if (error !== null) {
			drawRefusal(el, error);
			return;
		}
		if (!migrations || migrations.length === 0) {
			el.createEl("p", { text: "No operations yet: writes through Datanotes are listed here.", cls: "datanotes-muted" });
			return;
		}
		if (typeof total === "number" && total > migrations.length) {
			el.createEl("p", { text: `The newest ${migrations.length} of ${total}.`, cls: "datanotes-muted" });
		}
		const list = el.createDiv({ cls: "datanotes-history-list" });
		for (const m of migrations) this.drawRow(list, m, migrations);
		moveWithArrows(Array.from(list.querySelectorAll<HTMLElement>(".datanotes-expand")));
		if (typeof total === "number" && total > migrations.length) {
			const more = el.createEl("button", { text: `Show ${LIMIT} more`, cls: "datanotes-more" });
			more.addEventListener("click", () => {
				this.limit += LIMIT;
				void this.refresh();
			});
		}
	}

	private drawRow(list: HTMLElement, m: Migration, all: Migration[]): void {
		const row = list.createDiv({ cls: "datanotes-history-row" });
		if (m.undone) row.addClass("is-undone");
		row.dataset.migrationId = m.migration_id;
		const text = row.createDiv({ cls: "datanotes-history-text" });
		const words = operationWords(m, all, this.notesOf);
		text.createSpan({ text: words, cls: "datanotes-history-summary" });
		// Notes changed, and notes made, moved or removed.
		const n = (m.notes_changed ?? 0) + (m.files_changed ?? 0);
		const notes = m.notes_changed === undefined ? "" : changedNothing(m) ? "changed nothing" : n === 1 ? "1 note" : `${n} notes`;
		// The device that wrote it by its name (the engine names it only once devices sync one vault).
		const on = m.device ? `on ${deviceWords(m.device, this.devices)}` : "";
		const meta = [m.by ?? "", on, formatTime(m.executed_at), notes].filter((s) => s !== "");
		if (m.undone) meta.push("undone");
		// A write that did not finish: the engine says how it ended.
		const status = m.status ? STATUS[m.status] ?? m.status : null;
		if (status) {
			meta.push(status);
			row.addClass(`is-${m.status}`);
		}
		text.createDiv({ text: meta.join(" · "), cls: "datanotes-history-meta" });
		// Below the row: what the entry did to each note (a click on the text), and
		// the last refusal of its undo.
		const details = list.createDiv({ cls: "datanotes-history-details" });
		details.dataset.migrationId = m.migration_id;
		const refused = this.refusals.get(m.migration_id);
		if (refused) this.drawRefusal(details, refused);
		text.addClass("datanotes-expand");
		text.tabIndex = 0;
		text.setAttribute("aria-expanded", "false");
		const expand = () => void this.expand(m, text, details).catch((e: unknown) => showError(details, e));
		text.addEventListener("click", expand);
		text.addEventListener("keydown", (e) => {
			if (e.key === "Enter") expand();
		});
		// Nothing to undo (Undo in the palette steps over it too).
		if (changedNothing(m)) return;
		const undo = row.createEl("button", { text: "Undo", cls: "datanotes-history-undo" });
		undo.setAttribute("aria-label", `Undo: ${lowerFirst(words)}`);
		if (m.undone) undo.disabled = true;
		confirmed(undo, "Confirm undo", () => void this.undo(m, undo));
		// An undone write is redone by undoing its undo (an undone undo is not
		// offered: Undo on the redo does that).
		const undoneBy = m.undone && m.undoes === undefined ? all.find((u) => u.undoes === m.migration_id && !u.undone) : undefined;
		if (undoneBy) {
			const redo = row.createEl("button", { text: "Redo", cls: "datanotes-history-redo" });
			redo.setAttribute("aria-label", `Redo: ${lowerFirst(words)}`);
			confirmed(redo, "Confirm redo", () => void this.undo(undoneBy, redo, `Redid: ${lowerFirst(words)}.`));
		}
	}

	/** Shows (or hides) what an entry did to each note (show_migration): the
	 * columns before and after, the body's changed lines. */
	async expand(m: Migration, text: HTMLElement, details: HTMLElement): Promise<void> {
		const open = text.getAttribute("aria-expanded") === "true";
		text.setAttribute("aria-expanded", String(!open));
		details.querySelector(".datanotes-history-changes")?.remove();
		if (open) return;
		const box = details.createDiv({ cls: "datanotes-history-changes" });
		box.createEl("p", { text: "Reading what it changed…", cls: "datanotes-muted" });
		const out = await this.door.call("show_migration", { migration_id: m.migration_id });
		box.empty();
		if (out.status !== "done") {
			drawRefusal(box, out);
			return;
		}
		if (out.answer.notes.length === 0) box.createEl("p", { text: "It changed no note (a schema change, say).", cls: "datanotes-muted" });
		for (const n of out.answer.notes) drawNoteChange(box, n, this.openNote);
	}

	/** A refused undo under its entry: the refusal, and a link to each note it names. */
	private drawRefusal(details: HTMLElement, out: Outcome): void {
		const box = details.createDiv({ cls: "datanotes-history-refusal" });
		drawRefusal(box, out);
		const text = typeof out.answer === "object" && out.answer !== null && "error" in out.answer ? String(out.answer.error) : "";
		const paths = [...text.matchAll(/^conflict (.+?\.md):/gm)].map((x) => x[1]);
		for (const path of [...new Set(paths)]) noteLink(box, path, this.openNote);
	}

	/** Undoes one entry (`said`: what the Notice says it did, for a redo); a refusal
	 * (a value changed since, a rule it would break) shows in a Notice. */
	async undo(m: Migration, button?: HTMLButtonElement, said?: string): Promise<Outcome | null> {
		if (button) button.disabled = true;
		let out: Outcome | null = null;
		try {
			out = await this.door.call("undo_migration", { migration_id: m.migration_id });
			if (out.status === "done") {
				this.refusals.delete(m.migration_id);
				new Notice(`Datanotes: ${said ?? undidWords(operationWords(m, this.listed.some((o) => o.migration_id === m.migration_id) ? this.listed : [m], this.notesOf))}`);
			} else {
				// Kept under the entry until an undo of it succeeds.
				this.refusals.set(m.migration_id, out);
				new Notice(`Datanotes: ${refusalShort(out)}`, 15000);
			}
		} catch (e) {
			new Notice(`Datanotes: ${e instanceof Error ? e.message : String(e)}`, 15000);
		}
		await this.refresh();
		return out;
	}
}
