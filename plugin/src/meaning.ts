// Search by meaning (issue 19): the "Search by meaning…" command, a suggest
// modal over semantic_search's results that opens the chosen note, and the
// history panel's "Similar notes" (semantic_search `like` the active note).
// Until the vault's store holds the model, the engine refuses both; the
// first run then shows how it gets there (model-install.ts): a button on a
// computer, word of its arrival on a phone.

import { type App, Keymap, Notice, type PaneType, setIcon, SuggestModal } from "obsidian";
import { noteTitle, shortTable } from "./display";
import type { EngineDoor } from "./history-view";
import { refusalText } from "./host";
import { drawModelSetup, meaningModelOf, ModelSetupModal } from "./model-install";
import { errorOf, isObject, type Outcome } from "./types";

/** One result of semantic_search, best first; scores from 0 to 1. */
export interface MeaningHit {
	path: string;
	score: number;
	semantic: number;
	lexical: number;
	passage: string;
	table?: string;
	values?: Record<string, unknown>;
}

/** semantic_search's answer (docs/reference/operations.md). */
export interface MeaningAnswer {
	query?: string;
	like?: string;
	weight: number;
	results: MeaningHit[];
}

/** Queries shorter than this are not sent. */
export const MIN_QUERY = 3;
/** Results the modal asks for. */
export const MODAL_LIMIT = 20;
/** Similar notes the panel lists. */
export const SIMILAR_LIMIT = 5;
/** A passage is cut to about this many characters. */
const PASSAGE = 140;

/** What a search came to: results, or the text to show instead (`needsModel`:
 * refused for want of the model, which the first run installs). */
export type Found = { hits: MeaningHit[] } | { said: string; refused: boolean; needsModel?: boolean };

/** A passage on one line, cut to about `max` characters. */
export function trimPassage(text: string, max = PASSAGE): string {
	const line = text.replace(/\s+/g, " ").trim();
	return line.length <= max ? line : `${line.slice(0, max - 1).trimEnd()}…`;
}

/** A score (0 to 1) as a percentage. */
export function percent(score: number): string {
	return `${Math.round(Math.max(0, Math.min(1, score)) * 100)}%`;
}

/** A refusal as a person reads it: its reasons, then its way out (the engine's
 * hint); the whole refusal text when the answer has no hint. */
export function wayOut(out: Outcome): string {
	const a = out.answer;
	const hint = typeof a === "object" && a !== null && "hint" in a && typeof a.hint === "string" ? a.hint : null;
	if (hint === null) return refusalText(out);
	// The refusal text (core/src/error.rs): a head line, one line per reason, "Hint: …", "Docs: …".
	const reasons = (errorOf(a) ?? "")
		.split("\n")
		.slice(1)
		.filter((l) => l.trim() !== "" && !l.startsWith("Hint: ") && !l.startsWith("Docs: "))
		.map((l) => {
			const s = l.trim();
			return `${s.charAt(0).toUpperCase()}${s.slice(1)}${/[.!?]$/.test(s) ? "" : "."}`;
		});
	return [...reasons, hint].join(" ");
}

/** Runs semantic_search; a refusal or a failure comes back as its text. */
export async function searchByMeaning(door: EngineDoor, args: { query: string } | { like: string }, limit: number): Promise<Found> {
	let out: Outcome;
	try {
		out = await door.call("semantic_search", { ...args, limit });
	} catch (e) {
		// An engine that went away throws (a forwarded call).
		return { said: e instanceof Error ? e.message : String(e), refused: false };
	}
	if (out.status !== "ok") {
		const needsModel = isObject(out.answer) && typeof out.answer.needs_model === "string";
		return { said: out.status === "refused" ? wayOut(out) : refusalText(out), refused: out.status === "refused", needsModel };
	}
	return { hits: (out.answer as MeaningAnswer).results ?? [] };
}

/** Opens the note at `path` (in a new tab for a modifier click); says so when it is gone. */
export async function openPath(app: App, path: string, where: PaneType | boolean = false): Promise<void> {
	const file = app.vault.getFileByPath(path);
	if (!file) {
		new Notice(`Datanotes: ${noteTitle(path)} is no longer in the vault.`);
		return;
	}
	await app.workspace.getLeaf(where).openFile(file);
}

/** "Search by meaning…": as the person types (after a pause), semantic_search
 * over the vault; choosing a result opens its note. */
export class MeaningModal extends SuggestModal<MeaningHit> {
	/** The pause after the last key before the engine is asked (ms). */
	debounceMs = 200;
	/** What the empty list says before anything was asked. */
	static readonly PROMPT = `Type at least ${MIN_QUERY} characters: what the notes are about, in a few words.`;
	private timer: number | null = null;
	/** Counts the queries typed: only the newest one's answer is shown. */
	private asked = 0;
	/** The lists Obsidian waits for: each gets the newest query's results. */
	private waiting: ((hits: MeaningHit[]) => void)[] = [];

	constructor(
		app: App,
		private readonly door: EngineDoor,
	) {
		super(app);
		this.setPlaceholder("Search notes by meaning…");
		this.emptyStateText = MeaningModal.PROMPT;
		this.setInstructions([
			{ command: "↑↓", purpose: "to navigate" },
			{ command: "↵", purpose: "to open" },
			{ command: "esc", purpose: "to dismiss" },
		]);
	}

	getSuggestions(query: string): MeaningHit[] | Promise<MeaningHit[]> {
		const q = query.trim();
		const mine = ++this.asked;
		if (this.timer !== null) window.clearTimeout(this.timer);
		this.timer = null;
		if (q.length < MIN_QUERY) {
			this.emptyStateText = MeaningModal.PROMPT;
			this.settle([]);
			return [];
		}
		return new Promise((resolve) => {
			this.waiting.push(resolve);
			this.timer = window.setTimeout(() => {
				this.timer = null;
				void this.search(q, mine);
			}, this.debounceMs);
		});
	}

	private async search(query: string, mine: number): Promise<void> {
		const found = await searchByMeaning(this.door, { query }, MODAL_LIMIT);
		// A newer query is on its way: its answer settles every list waiting.
		if (mine !== this.asked) return;
		if ("hits" in found) {
			this.emptyStateText = "No note matches.";
			this.settle(found.hits);
		} else if (found.needsModel) {
			// The first run: the model's setup, then this search again.
			this.settle([]);
			this.close();
			new ModelSetupModal(this.app, meaningModelOf(this.app), () => {
				const again = new MeaningModal(this.app, this.door);
				again.open();
				again.inputEl.value = query;
				again.inputEl.dispatchEvent(new Event("input"));
			}).open();
		} else {
			this.emptyStateText = found.said;
			this.settle([]);
		}
	}

	private settle(hits: MeaningHit[]): void {
		const waiting = this.waiting;
		this.waiting = [];
		for (const resolve of waiting) resolve(hits);
	}

	renderSuggestion(hit: MeaningHit, el: HTMLElement): void {
		el.addClass("mod-complex", "datanotes-meaning-hit");
		const content = el.createDiv({ cls: "suggestion-content" });
		const title = content.createDiv({ cls: "suggestion-title" });
		title.createSpan({ text: noteTitle(hit.path) });
		if (hit.table) title.createSpan({ text: shortTable(hit.table), cls: "datanotes-meaning-table" });
		const passage = trimPassage(hit.passage ?? "");
		if (passage !== "") content.createDiv({ text: passage, cls: "suggestion-note datanotes-meaning-passage" });
		const aux = el.createDiv({ cls: "suggestion-aux" });
		const score = aux.createSpan({ text: percent(hit.score), cls: "datanotes-meaning-score" });
		score.setAttribute("aria-label", `Score ${percent(hit.score)} (meaning ${percent(hit.semantic)}, words ${percent(hit.lexical)})`);
	}

	onChooseSuggestion(hit: MeaningHit, evt: MouseEvent | KeyboardEvent): void {
		void openPath(this.app, hit.path, Keymap.isModEvent(evt));
	}

	onClose(): void {
		super.onClose();
		if (this.timer !== null) window.clearTimeout(this.timer);
		this.timer = null;
		this.settle([]);
	}
}

/** The history panel's "Similar notes" for the active note: folded until the
 * person opens it (nothing is asked of the engine before), then up to five
 * notes like it, each a link. It is asked once per note: the panel's redraws
 * (each write, each tick with a change) reuse that answer, and folding and
 * opening it again asks anew. */
export class SimilarNotes {
	/** Open or folded; stays so from note to note. */
	open = false;
	/** The answer for one note (asked once, shared by the draws meanwhile). */
	private cached: { path: string; found: Promise<Found> } | null = null;
	/** Stops the model's first run looking for the model (the last one drawn). */
	private stopLooking: () => void = () => undefined;

	constructor(
		private readonly app: App,
		private readonly door: EngineDoor,
	) {}

	/** Draws the part for `path` into `box` (a fresh element each panel draw). */
	draw(box: HTMLElement, path: string): Promise<void> {
		this.stopLooking();
		box.empty();
		box.addClass("datanotes-similar");
		const head = box.createDiv({ cls: "datanotes-similar-head" });
		head.tabIndex = 0;
		head.setAttribute("role", "button");
		head.setAttribute("aria-expanded", String(this.open));
		setIcon(head.createSpan({ cls: "datanotes-similar-icon" }), this.open ? "chevron-down" : "chevron-right");
		head.createSpan({ text: "Similar notes" });
		const toggle = () => {
			this.open = !this.open;
			if (!this.open) this.cached = null;
			void this.draw(box, path);
		};
		head.addEventListener("click", toggle);
		head.addEventListener("keydown", (e) => {
			if (e.key !== "Enter" && e.key !== " ") return;
			e.preventDefault();
			toggle();
		});
		if (!this.open) return Promise.resolve();
		const list = box.createDiv({ cls: "datanotes-similar-list" });
		list.createEl("p", { text: "Looking for notes like this one…", cls: "datanotes-muted" });
		return this.fill(list, path);
	}

	private async fill(list: HTMLElement, path: string): Promise<void> {
		if (this.cached?.path !== path) this.cached = { path, found: searchByMeaning(this.door, { like: path }, SIMILAR_LIMIT) };
		const cached = this.cached;
		const found = await cached.found;
		// A failure other than a refusal (an engine that went away, say) is asked again next time.
		if (!("hits" in found) && !found.refused && this.cached === cached) this.cached = null;
		list.empty();
		if (!("hits" in found) && found.needsModel) {
			// The first run: Install here, or word of its arrival; then the search again.
			this.stopLooking = drawModelSetup(list.createDiv(), meaningModelOf(this.app), () => {
				this.cached = null;
				void this.fill(list, path);
			});
			return;
		}
		if (!("hits" in found)) {
			list.createEl("p", { text: found.said, cls: `datanotes-muted datanotes-similar-${found.refused ? "hint" : "failed"}` });
			return;
		}
		if (found.hits.length === 0) {
			list.createEl("p", { text: "No similar notes.", cls: "datanotes-muted" });
			return;
		}
		for (const hit of found.hits) {
			const row = list.createDiv({ cls: "datanotes-similar-row" });
			const link = row.createEl("a", { text: noteTitle(hit.path), cls: "datanotes-similar-link", href: "#" });
			link.setAttribute("aria-label", hit.path);
			link.dataset.path = hit.path;
			link.addEventListener("click", (e) => {
				e.preventDefault();
				void openPath(this.app, hit.path, Keymap.isModEvent(e));
			});
			row.createSpan({ text: percent(hit.score), cls: "datanotes-similar-score" });
		}
	}
}
