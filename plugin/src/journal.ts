// The history panel's Journal section: the operation journal, newest first
// (list_migrations), each entry in words with who, where and when (relative,
// the date on hover), an Undo button (undo_migration) and, unfolded, what it
// did to each note (show_migration; long lists and diffs fold). A search box
// and filters by who, device and time narrow it (journal-filter.ts). The
// keyboard: Up and Down (Home, End) move along the entries, Enter or Space
// unfolds one, Escape folds it; Down in the search box goes to the entries.

import { Notice } from "obsidian";
import { changedNothing, drawRefusal, noteLink, type NotesOf, operationWords, readNotesOf, refusalShort } from "./display";
import { type DeviceNames, deviceWords, readDeviceNames } from "./device-name";
import { drawNoteChange } from "./feed-sections";
import { refusalNotice } from "./notice-buttons";
import { drawFolded, NOTES } from "./fold";
import type { EngineDoor } from "./history-view";
import { deviceOptions, isFiltered, type JournalFilter, matches, NO_FILTER, readTitlesOf, searchText, timeRange, type When, WHEN_WORDS } from "./journal-filter";
import { whoOptions, whoWords } from "./who";
import { focusIn, restoreFocus } from "./focus-keys";
import { moveWithArrows, showError } from "./table-history";
import { drawMeta } from "./times";
import type { AnswerOf, Migration, Outcome } from "./types";

/** How many entries the journal shows at a time. */
export const LIMIT = 50;
/** How many entries a search or filter looks through at a time. */
export const WINDOW = 200;
/** How long the search waits after a key before it looks (ms). */
export const TYPING_MS = 150;

/** A journal entry's status other than done, in words. */
const STATUS: Record<string, string> = {
	pending: "pending: not finished",
	rolled_back: "rolled back",
	rollback_incomplete: "rollback incomplete",
};

const lowerFirst = (s: string): string => s.charAt(0).toLowerCase() + s.slice(1);

/** What undoing an entry of these words did: undoing an undo redoes. */
export function undidWords(words: string): string {
	if (words.startsWith("Undid: ")) return `Redid: ${words.slice(7)}.`;
	if (words.startsWith("Redid: ")) return `Undid: ${words.slice(7)}.`;
	return `Undid: ${lowerFirst(words)}.`;
}

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

/** The entries read for a draw, and what their words need; or why not. */
export type Loaded =
	| { error: string | Outcome }
	| {
			migrations: Migration[];
			total: number;
			/** Whether a search or filter chose them (a window of entries, matched here). */
			filtered: boolean;
			notesOf: NotesOf;
			devices: DeviceNames;
			titles: (migrationId: string) => string[];
	  };

type Entries = Exclude<Loaded, { error: unknown }>;

export class JournalSection {
	filter: JournalFilter = { ...NO_FILTER };
	/** Entries shown: a page, and a page more each "Show more". */
	private limit = LIMIT;
	/** Entries a search looks through: a window, and a window more each "Look further back". */
	private window = WINDOW;
	/** Refused undos, by entry: shown under it until an undo of it succeeds. */
	private refusals = new Map<string, Outcome>();
	/** Entries unfolded: they stay so when the journal is drawn again. */
	private expanded = new Set<string>();
	/** Counts reads: an answer that comes back after a newer read began is dropped. */
	private reads = 0;
	private typing: number | null = null;
	/** The entries listed: an undo's Notice names what it undid by them. */
	private listed: Migration[] = [];
	private notesOf: NotesOf = () => undefined;
	private devices: DeviceNames = { names: {} };
	/** What a redraw after a filter change replaces: the list, the filters' choices. */
	private results: HTMLElement | null = null;
	private count: HTMLElement | null = null;
	private choices: { who: HTMLSelectElement; when: HTMLSelectElement; device: HTMLSelectElement; dates: HTMLElement; from: HTMLInputElement; to: HTMLInputElement } | null = null;
	private search: HTMLInputElement | null = null;
	private clear: HTMLElement | null = null;

	constructor(
		private readonly door: EngineDoor,
		private readonly openNote: (path: string) => void,
		/** The panel's clock, for relative times and "today". */
		private readonly now: () => number,
		/** Reads and draws the whole panel again. */
		private readonly refresh: () => Promise<void>,
		/** Opens a row's form (a refused undo's way out). */
		private readonly editRow?: (path: string) => void,
	) {}

	/** Reads the entries to show (with the filter: a window of them, from the
	 * filter's first moment); null when a later read began meanwhile. */
	async load(): Promise<Loaded | null> {
		const mine = ++this.reads;
		const filtered = isFiltered(this.filter);
		const { since } = timeRange(this.filter, this.now());
		const args: Record<string, unknown> = { limit: filtered ? this.window : this.limit };
		if (filtered && since !== undefined) args.since = new Date(since).toISOString();
		let out: Outcome<AnswerOf<"list_migrations">>;
		try {
			out = await this.door.call("list_migrations", args);
		} catch (e) {
			return mine === this.reads ? { error: e instanceof Error ? e.message : String(e) } : null;
		}
		if (mine !== this.reads) return null;
		if (out.status !== "ok") return { error: out };
		const migrations = out.answer.migrations;
		const searching = this.filter.query.trim() !== "";
		const [notesOf, devices, titles] = await Promise.all([
			readNotesOf(this.door, migrations),
			readDeviceNames(this.door),
			searching ? readTitlesOf(this.door, migrations) : () => [],
		]);
		if (mine !== this.reads) return null;
		return { migrations, total: out.answer.total, filtered, notesOf, devices, titles };
	}

	/** Draws the section into `el` from what `load` read. */
	draw(el: HTMLElement, loaded: Loaded): void {
		const head = el.createDiv({ cls: "datanotes-history-head" });
		head.createEl("h4", { text: "History" });
		const again = head.createEl("button", { text: "Refresh", cls: "datanotes-history-refresh" });
		again.addEventListener("click", () => void this.refresh());
		this.results = this.count = this.choices = this.search = this.clear = null;
		if ("error" in loaded) {
			if (typeof loaded.error === "string") el.createEl("pre", { text: loaded.error, cls: "datanotes-error" });
			else drawRefusal(el, loaded.error);
			return;
		}
		if (!loaded.filtered && loaded.migrations.length === 0) {
			el.createEl("p", { text: "No operations yet: writes through Datanotes are listed here.", cls: "datanotes-muted" });
			return;
		}
		this.drawFilters(el, loaded);
		this.count = el.createEl("p", { cls: "datanotes-muted datanotes-journal-count" });
		this.count.setAttribute("aria-live", "polite");
		this.results = el.createDiv({ cls: "datanotes-journal-results" });
		this.drawResults(this.results, loaded);
	}

	/** The search box, then Who, When and (when several wrote) Device; the days of "Between dates…". */
	private drawFilters(el: HTMLElement, loaded: Entries): void {
		const bar = el.createDiv({ cls: "datanotes-journal-filters" });
		bar.setAttribute("role", "search");
		const box = bar.createDiv({ cls: "search-input-container datanotes-journal-search" });
		const input = box.createEl("input", { type: "search", placeholder: "Search the journal" });
		input.setAttribute("aria-label", "Search the journal: words of an entry, a table, a note's title");
		input.spellcheck = false;
		input.value = this.filter.query;
		input.dataset.focusKey = "search";
		this.search = input;
		const clear = (this.clear = box.createDiv({ cls: "search-input-clear-button" }));
		clear.setAttribute("aria-label", "Clear the search");
		clear.toggleClass("datanotes-hidden", input.value === "");
		clear.addEventListener("click", () => {
			input.value = "";
			input.dispatchEvent(new Event("input"));
			input.focus();
		});
		input.addEventListener("input", () => {
			clear.toggleClass("datanotes-hidden", input.value === "");
			this.typed(input.value);
		});
		input.addEventListener("keydown", (e) => {
			if (e.key === "ArrowDown") {
				e.preventDefault();
				this.entries()[0]?.focus();
			} else if (e.key === "Escape" && input.value !== "") {
				e.preventDefault();
				clear.click();
			}
		});
		const choices = bar.createDiv({ cls: "datanotes-journal-choices" });
		const who = select(choices, "who", "Who wrote it", [["", "Anyone"], ...whoOptions(loaded.migrations, this.filter.who)], this.filter.who, (v) => void this.choose({ who: v }));
		const when = select(choices, "when", "When", WHEN_WORDS, this.filter.when, (v) => void this.choose({ when: v as When }));
		const device = select(choices, "device", "On which device", [["", "Any device"], ...deviceOptions(loaded.migrations, loaded.devices, this.filter.device)], this.filter.device, (v) => void this.choose({ device: v }));
		device.toggleClass("datanotes-hidden", device.options.length <= 2 && this.filter.device === "");
		const dates = bar.createDiv({ cls: "datanotes-journal-dates" });
		dates.toggleClass("datanotes-hidden", this.filter.when !== "dates");
		const from = dateInput(dates, "from", "From", this.filter.from, (v) => void this.choose({ from: v }));
		const to = dateInput(dates, "to", "To", this.filter.to, (v) => void this.choose({ to: v }));
		this.choices = { who, when, device, dates, from, to };
	}

	/** The search waits for a pause in the typing, then looks. */
	private typed(query: string): void {
		// Kept at once: a redraw meanwhile (the engine changed something) draws the box with it.
		this.filter.query = query;
		if (this.typing !== null) window.clearTimeout(this.typing);
		this.typing = window.setTimeout(() => {
			this.typing = null;
			void this.choose({ query });
		}, TYPING_MS);
	}

	/** Narrows the journal (a search, a filter); the filters stay as they are
	 * drawn, the entries are read and drawn again. */
	async choose(change: Partial<JournalFilter>): Promise<void> {
		this.filter = { ...this.filter, ...change };
		this.limit = LIMIT;
		this.window = WINDOW;
		await this.update();
	}

	/** Reads the entries again and draws them under the filters drawn. */
	private async update(): Promise<void> {
		const results = this.results;
		if (results === null) return this.refresh();
		const loaded = await this.load().catch((e: unknown) => ({ error: e instanceof Error ? e.message : String(e) }));
		if (loaded === null || results !== this.results) return;
		if ("error" in loaded) return this.refresh();
		const focus = focusIn(results);
		this.showChoices(loaded);
		this.drawResults(results, loaded);
		restoreFocus(results, focus);
	}

	/** The filters drawn as the filter is now (it may have been chosen from
	 * elsewhere than they): the choices the entries read offer, the days
	 * shown only for "Between dates…". */
	private showChoices(loaded: Entries): void {
		const c = this.choices;
		if (c === null) return;
		const f = this.filter;
		if (this.search && this.search.value !== f.query) this.search.value = f.query;
		this.clear?.toggleClass("datanotes-hidden", f.query === "");
		fill(c.who, [["", "Anyone"], ...whoOptions(loaded.migrations, f.who)], f.who);
		fill(c.device, [["", "Any device"], ...deviceOptions(loaded.migrations, loaded.devices, f.device)], f.device);
		c.device.toggleClass("datanotes-hidden", c.device.options.length <= 2 && f.device === "");
		c.when.value = f.when;
		c.dates.toggleClass("datanotes-hidden", f.when !== "dates");
		c.from.value = f.from;
		c.to.value = f.to;
	}

	/** The entries the filter picks, a page of them, and the buttons for more. */
	private drawResults(box: HTMLElement, loaded: Entries): void {
		box.empty();
		const all = loaded.migrations;
		this.listed = all;
		this.notesOf = loaded.notesOf;
		this.devices = loaded.devices;
		const now = this.now();
		const picked = loaded.filtered ? all.filter((m) => matches(m, this.filter, searchText(m, operationWords(m, all, loaded.notesOf), loaded.titles(m.migration_id), loaded.devices), now)) : all;
		const shown = picked.slice(0, this.limit);
		this.count?.setText(countWords(loaded, picked.length));
		const list = box.createDiv({ cls: "datanotes-history-list" });
		for (const m of shown) this.drawRow(list, m, all);
		const entries = this.entries();
		moveWithArrows(entries);
		// Up from the first entry goes back to the search box.
		entries[0]?.addEventListener("keydown", (e) => {
			if (e.key !== "ArrowUp" || !this.search) return;
			e.preventDefault();
			this.search.focus();
		});
		const more = loaded.filtered ? picked.length > shown.length : loaded.total > all.length;
		if (more) {
			button(box, `Show ${LIMIT} more`, "more", () => void this.showMore(loaded));
		}
		// The engine gave the newest of the entries since the filter's first moment: older ones may match too.
		if (loaded.filtered && all.length < loaded.total) {
			button(box, "Look further back", "further", () => {
				this.window += WINDOW;
				void this.update();
			});
		}
		if (loaded.filtered && picked.length === 0) {
			button(box, "Clear the search and filters", "clear", () => {
				this.filter = { ...NO_FILTER };
				this.limit = LIMIT;
				this.window = WINDOW;
				void this.refresh();
			});
		}
		for (const el of entries) if (el.dataset.migrationId && this.expanded.has(el.dataset.migrationId)) el.click();
	}

	/** A page more of entries; the focus goes to the first of them. */
	private async showMore(loaded: Entries): Promise<void> {
		const first = this.limit;
		this.limit += LIMIT;
		if (loaded.filtered && this.results) this.drawResults(this.results, loaded);
		else await this.update();
		this.entries()[first]?.focus();
	}

	/** The entries' texts drawn, which take the focus and unfold. */
	private entries(): HTMLElement[] {
		return this.results ? Array.from(this.results.querySelectorAll<HTMLElement>(".datanotes-expand")) : [];
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
		// A write that did not finish: the engine says how it ended.
		const status = m.status ? STATUS[m.status] ?? m.status : "";
		if (status) row.addClass(`is-${m.status}`);
		drawMeta(text, [whoWords(m.by), on, { time: m.executed_at }, notes, m.undone ? "undone" : "", status], this.now());
		// Below the row: what the entry did to each note (a click on the text), and
		// the last refusal of its undo.
		const details = list.createDiv({ cls: "datanotes-history-details" });
		details.dataset.migrationId = m.migration_id;
		const refused = this.refusals.get(m.migration_id);
		if (refused) this.drawRefusal(details, refused);
		this.unfolds(text, m, details);
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

	/** An entry's text unfolds what it did (a click, Enter or Space) and folds it (again, or Escape). */
	private unfolds(text: HTMLElement, m: Migration, details: HTMLElement): void {
		text.addClass("datanotes-expand");
		text.tabIndex = 0;
		text.dataset.migrationId = m.migration_id;
		text.dataset.focusKey = `entry ${m.migration_id}`;
		text.setAttribute("role", "button");
		text.setAttribute("aria-expanded", "false");
		const toggle = () => void this.expand(m, text, details).catch((e: unknown) => showError(details, e));
		text.addEventListener("click", toggle);
		text.addEventListener("keydown", (e) => {
			const open = text.getAttribute("aria-expanded") === "true";
			if (e.key === "Enter" || e.key === " " || (e.key === "Escape" && open)) {
				e.preventDefault();
				toggle();
			}
		});
	}

	/** Shows (or hides) what an entry did to each note (show_migration): the
	 * columns before and after, the body's changed lines; many notes fold. */
	async expand(m: Migration, text: HTMLElement, details: HTMLElement): Promise<void> {
		const open = text.getAttribute("aria-expanded") === "true";
		text.setAttribute("aria-expanded", String(!open));
		details.querySelector(".datanotes-history-changes")?.remove();
		if (open) {
			this.expanded.delete(m.migration_id);
			return;
		}
		this.expanded.add(m.migration_id);
		const box = details.createDiv({ cls: "datanotes-history-changes" });
		box.createEl("p", { text: "Reading what it changed…", cls: "datanotes-muted" });
		const out = await this.door.call("show_migration", { migration_id: m.migration_id });
		box.empty();
		if (out.status !== "ok") {
			drawRefusal(box, out);
			return;
		}
		if (out.answer.notes.length === 0) box.createEl("p", { text: "It changed no note (a schema change, say).", cls: "datanotes-muted" });
		const list = box.createDiv({ cls: "datanotes-history-notes" });
		drawFolded(box, list, out.answer.notes, (into, n) => drawNoteChange(into, n, this.openNote), NOTES);
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
			if (out.status === "ok") {
				this.refusals.delete(m.migration_id);
				const listed = this.listed.some((o) => o.migration_id === m.migration_id) ? this.listed : [m];
				new Notice(`Datanotes: ${said ?? undidWords(operationWords(m, listed, this.notesOf))}`);
			} else {
				// Kept under the entry until an undo of it succeeds.
				this.refusals.set(m.migration_id, out);
				refusalNotice(`Datanotes: ${refusalShort(out)}`, out, this.editRow);
			}
		} catch (e) {
			new Notice(`Datanotes: ${e instanceof Error ? e.message : String(e)}`, 15000);
		}
		await this.refresh();
		return out;
	}
}

/** How many entries are listed, in words: of all, or those matching. */
function countWords(loaded: Entries, picked: number): string {
	const all = loaded.migrations.length;
	if (!loaded.filtered) return loaded.total > all ? `The newest ${all} of ${loaded.total}.` : "";
	const n = picked === 0 ? "No entry matches" : picked === 1 ? "1 entry matches" : `${picked} entries match`;
	return all < loaded.total ? `${n} among the newest ${all} of ${loaded.total} entries.` : `${n}.`;
}

/** A labelled choice (Obsidian's dropdown look); its label is for screen readers and tooltips. */
function select(el: HTMLElement, key: string, label: string, options: [string, string][], value: string, chosen: (v: string) => void): HTMLSelectElement {
	const s = el.createEl("select", { cls: `dropdown datanotes-journal-${key}` });
	s.setAttribute("aria-label", label);
	s.dataset.focusKey = key;
	fill(s, options, value);
	s.addEventListener("change", () => chosen(s.value));
	return s;
}

/** A select's options anew, `value` chosen. */
function fill(s: HTMLSelectElement, options: [string, string][], value: string): void {
	s.empty();
	for (const [v, words] of options) s.createEl("option", { text: words, value: v });
	s.value = value;
}

/** A day's input, labelled. */
function dateInput(el: HTMLElement, key: string, label: string, value: string, chosen: (v: string) => void): HTMLInputElement {
	const wrap = el.createEl("label", { cls: "datanotes-journal-day" });
	wrap.createSpan({ text: label });
	const input = wrap.createEl("input", { type: "date" });
	input.value = value;
	input.dataset.focusKey = key;
	input.addEventListener("change", () => chosen(input.value));
	return input;
}

/** A button under the entries, keyed so that the focus comes back to it after a redraw. */
function button(el: HTMLElement, text: string, key: string, act: () => void): HTMLButtonElement {
	const b = el.createEl("button", { text, cls: "datanotes-more" });
	b.dataset.focusKey = key;
	b.addEventListener("click", act);
	return b;
}
