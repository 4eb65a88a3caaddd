// The history side panel: its tabs (Journal, Table, This note, Database,
// Changes), each section drawn by its own module (journal.ts, table-history.ts,
// note-history.ts, feed-sections.ts) and drawn again when the engine says
// something changed; times in it stay relative to the panel's clock.

import { ItemView, setIcon, type WorkspaceLeaf } from "obsidian";
import { fullTextTitles } from "./full-text";
import { ChangesSection, DatabaseSection } from "./feed-sections";
import { focusIn, restoreFocus } from "./focus-keys";
import { JournalSection } from "./journal";
import { NoteSection } from "./note-history";
import { PanelSection, TableSection } from "./table-history";
import { refreshTimes } from "./times";
import type { AnswerOf, Migration, Outcome } from "./types";

export { confirmed, undidWords } from "./journal";

export const VIEW_TYPE_HISTORY = "datanotes-history";

/** What the panel needs of the engine: calls, and word of each change. */
export interface EngineDoor {
	call<K extends string>(name: K, args?: unknown): Promise<Outcome<AnswerOf<K>>>;
	/** Calls `fn` after each write or tick that changed something; returns the unsubscribe. */
	onChange(fn: () => void): () => void;
	/** This device's id, when the engine has one: the panel names it by its name (device-name.ts). */
	thisDevice?(): string | undefined;
}

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
	/** The interval that says the relative times again, while open. */
	private times: number | null = null;
	private readonly openNote = (path: string): void => void this.app.workspace.openLinkText(path, "", false);
	/** The panel's clock: relative times ("5 minutes ago") and "today" are as of it. */
	now: () => number = () => Date.now();
	/** How often the relative times are said again (ms). */
	static readonly TIMES_MS = 60_000;
	readonly journal: JournalSection;
	private tableSection: TableSection | null = null;
	private databaseSection: DatabaseSection | null = null;
	private changesSection: ChangesSection | null = null;
	private noteSection: NoteSection | null = null;
	/** Counts refreshes: an answer that comes back after a newer one is dropped. */
	private generation = 0;

	constructor(
		leaf: WorkspaceLeaf,
		private readonly door: EngineDoor,
		/** Opens a row's form: a refused undo's way out. */
		editRow?: (path: string) => void,
	) {
		super(leaf);
		this.register(fullTextTitles(this.contentEl));
		this.journal = new JournalSection(door, this.openNote, () => this.now(), () => this.refresh(), editRow);
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
		// "5 minutes ago" stays true while nothing changes. (A block body:
		// eslint-plugin-obsidianmd's no-sample-code rule throws on `() => f(…)` here.)
		this.times = this.registerInterval(
			window.setInterval(() => {
				refreshTimes(this.contentEl, this.now());
			}, HistoryView.TIMES_MS),
		);
		await this.refresh();
	}

	async onClose(): Promise<void> {
		this.closed = true;
		if (this.times !== null) window.clearInterval(this.times);
		this.times = null;
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
		const mine = ++this.generation;
		if (this.section === "journal") {
			const loaded = await this.journal.load();
			if (loaded === null || mine !== this.generation) return;
			// Drawn anew: the focus goes back where it was (an entry, the search box).
			const focus = focusIn(this.contentEl);
			const el = this.frame();
			this.journal.draw(el, loaded);
			restoreFocus(el, focus);
			return;
		}
		const el = this.frame();
		if (this.section === "table") {
			this.tableSection ??= this.clocked(new TableSection(this.app, this.door, openNote));
			await this.tableSection.draw(el);
		} else if (this.section === "note") {
			this.noteSection ??= this.clocked(new NoteSection(this.app, this.door));
			await this.noteSection.show(el, this.app.workspace.getActiveFile()?.path ?? null);
		} else if (this.section === "database") {
			this.databaseSection ??= this.clocked(new DatabaseSection(this.app, this.door));
			await this.databaseSection.draw(el);
		} else {
			this.changesSection ??= this.clocked(new ChangesSection(this.door, openNote));
			await this.changesSection.draw(el);
		}
	}

	/** A section that tells times by the panel's clock. */
	private clocked<S extends PanelSection>(section: S): S {
		section.now = () => this.now();
		return section;
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

	/** Undoes one journal entry (journal.ts), and draws the panel again. */
	undo(m: Migration, button?: HTMLButtonElement, said?: string): Promise<Outcome | null> {
		return this.journal.undo(m, button, said);
	}
}
