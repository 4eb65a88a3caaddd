// Issue 19, search by meaning in Obsidian: the "Search by meaning…" modal over
// semantic_search (a fake engine's answers for the results, the real engine for
// the refusal of a vault whose store holds no model).

import type { App as AppOriginal } from "obsidian";
import { App } from "obsidian-test-mocks/obsidian";
import { afterEach, describe, expect, test, vi } from "vitest";
import { registerCommands } from "../src/commands";
import type { EngineDoor } from "../src/history-view";
import { noteTitle } from "../src/display";
import { MeaningModal, type MeaningHit, percent, trimPassage, wayOut } from "../src/meaning";
import { meaningModel, meaningModelOf, ModelSetupModal } from "../src/model-install";
import type { Outcome } from "../src/types";
import { CHARADE, door, filmDiary, keepModalsOpen, openFilms } from "./engine";

const SHERLOCK = "datanotes/main/public/film/Sherlock Jr..md";
const NIGHT = "Notes/Film night.md";

const HITS: MeaningHit[] = [
	{ path: CHARADE, score: 1, semantic: 0.91, lexical: 0.4, passage: "A widow in Paris,\n  chased for a fortune her husband stole. ".repeat(8), table: "main.public.film", values: { title: "Charade" } },
	{ path: SHERLOCK, score: 0.873, semantic: 0.8, lexical: 0.1, passage: "A projectionist dreams himself into the film.", table: "main.public.film" },
	{ path: NIGHT, score: 0.42, semantic: 0.5, lexical: 0, passage: "Who brings what." },
];

function outcome(status: Outcome["status"], answer: unknown): Outcome {
	return { status, answer, http: status === "ok" ? 200 : 409, store: [], log: [], deliveries: [] } as Outcome;
}

/** A door whose semantic_search answers `answer` (a function of the arguments). */
function fakeDoor(answer: (args: Record<string, unknown>) => Outcome | Promise<Outcome>) {
	const call = vi.fn(async (name: string, args?: unknown) => {
		if (name !== "semantic_search") throw new Error(`unexpected call ${name}`);
		return answer(args as Record<string, unknown>);
	});
	return { door: { call, onChange: () => () => undefined } as unknown as EngineDoor, call };
}

function filmApp(): App {
	return App.createConfigured__({ files: Object.fromEntries(filmDiary) });
}

function modalOn(app: App, d: EngineDoor): MeaningModal {
	const modal = new MeaningModal(app.asOriginalType__() as AppOriginal, d);
	modal.debounceMs = 5;
	return modal;
}

function rendered(modal: MeaningModal, hit: MeaningHit): HTMLElement {
	const el = createDiv();
	modal.renderSuggestion(hit, el);
	return el;
}

afterEach(() => vi.restoreAllMocks());

describe("Search by meaning", () => {
	test("lists the engine's results: title, table, passage cut short, score", async () => {
		const { door: d, call } = fakeDoor(() => outcome("ok", { query: "a widow in paris", weight: 0.95, results: HITS }));
		const modal = modalOn(filmApp(), d);
		const hits = await modal.getSuggestions("  a widow in paris ");
		expect(call).toHaveBeenCalledTimes(1);
		expect(call).toHaveBeenCalledWith("semantic_search", { query: "a widow in paris", limit: 20 });
		expect(hits.map((h) => h.path)).toEqual([CHARADE, SHERLOCK, NIGHT]);

		const first = rendered(modal, hits[0]);
		expect(first.querySelector(".suggestion-title")?.textContent).toBe("Charadefilm");
		expect(first.querySelector(".datanotes-meaning-table")?.textContent).toBe("film");
		const passage = first.querySelector(".datanotes-meaning-passage")?.textContent ?? "";
		expect(passage.startsWith("A widow in Paris, chased for a fortune")).toBe(true);
		expect(passage.length).toBeLessThanOrEqual(140);
		expect(passage.endsWith("…")).toBe(true);
		expect(first.querySelector(".datanotes-meaning-score")?.textContent).toBe("100%");

		const second = rendered(modal, hits[1]);
		expect(second.querySelector(".suggestion-title")?.textContent).toBe("Sherlock Jr.film");
		expect(second.querySelector(".datanotes-meaning-score")?.textContent).toBe("87%");
		// A note that is no row: no table.
		const third = rendered(modal, hits[2]);
		expect(third.querySelector(".datanotes-meaning-table")).toBeNull();
		expect(third.querySelector(".datanotes-meaning-passage")?.textContent).toBe("Who brings what.");
		expect(modal.emptyStateText).toBe("No note matches.");
	});

	test("choosing a result opens its note", async () => {
		const app = filmApp();
		const { door: d } = fakeDoor(() => outcome("ok", { query: "dreams", weight: 0.95, results: HITS }));
		const modal = modalOn(app, d);
		const hits = await modal.getSuggestions("dreams");
		const leaf = app.workspace.getLeaf(false);
		const opened = vi.spyOn(leaf, "openFile");
		modal.onChooseSuggestion(hits[1], new KeyboardEvent("keydown", { key: "Enter" }));
		await vi.waitFor(() => expect(opened).toHaveBeenCalledTimes(1));
		expect((opened.mock.calls[0][0] as { path: string }).path).toBe(SHERLOCK);
	});

	test("queries under three characters do not call the engine", async () => {
		const { door: d, call } = fakeDoor(() => outcome("ok", { query: "x", weight: 0.95, results: HITS }));
		const modal = modalOn(filmApp(), d);
		expect(modal.getSuggestions("")).toEqual([]);
		expect(modal.getSuggestions("ab")).toEqual([]);
		expect(modal.getSuggestions("  ab  ")).toEqual([]);
		await new Promise((r) => setTimeout(r, 30));
		expect(call).not.toHaveBeenCalled();
		expect(modal.emptyStateText).toBe(MeaningModal.PROMPT);
	});

	test("typing fast asks once, for the last query; every list waiting gets its results", async () => {
		const { door: d, call } = fakeDoor((args) => outcome("ok", { query: args.query, weight: 0.95, results: args.query === "silent comedy" ? HITS.slice(1, 2) : HITS }));
		const modal = modalOn(filmApp(), d);
		modal.debounceMs = 50;
		const lists = [modal.getSuggestions("sil"), modal.getSuggestions("silent"), modal.getSuggestions("silent comedy")];
		const answers = await Promise.all(lists);
		expect(call).toHaveBeenCalledTimes(1);
		expect(call).toHaveBeenCalledWith("semantic_search", { query: "silent comedy", limit: 20 });
		for (const a of answers) expect(a.map((h) => h.path)).toEqual([SHERLOCK]);
	});

	test("an answer that comes back after a newer query was typed is not shown", async () => {
		const pending = new Map<string, (o: Outcome) => void>();
		const { door: d, call } = fakeDoor((args) => new Promise<Outcome>((r) => pending.set(args.query as string, r)));
		const modal = modalOn(filmApp(), d);
		const lists: MeaningHit[][] = [];
		void Promise.resolve(modal.getSuggestions("widow")).then((h) => (lists[0] = h));
		await vi.waitFor(() => expect(call).toHaveBeenCalledTimes(1));
		void Promise.resolve(modal.getSuggestions("film night")).then((h) => (lists[1] = h));
		await vi.waitFor(() => expect(call).toHaveBeenCalledTimes(2));
		// The older answer arrives first: nothing is shown from it.
		pending.get("widow")?.(outcome("ok", { query: "widow", weight: 0.95, results: HITS.slice(0, 1) }));
		await new Promise((r) => setTimeout(r, 20));
		expect(lists).toEqual([]);
		pending.get("film night")?.(outcome("ok", { query: "film night", weight: 0.95, results: HITS.slice(2) }));
		await vi.waitFor(() => expect(lists).toHaveLength(2));
		expect(lists.map((l) => l.map((h) => h.path))).toEqual([[NIGHT], [NIGHT]]);
	});

	test("a vault whose store holds no model: the search gives way to the model's first run, then comes back with what was typed", async () => {
		keepModalsOpen();
		const { host } = await openFilms();
		const refusal = await host.call("semantic_search", { query: "a widow in paris", limit: 20 });
		expect(refusal.status).toBe("refused");
		// The engine says why for programs, not only in its text.
		expect((refusal.answer as { needs_model?: string }).needs_model).toBe("models/potion-base-8M.dnmodel");
		const app = filmApp();
		const model = meaningModel({ app: app.asOriginalType__() as AppOriginal, cp: null, binary: () => null, vault: null });
		const present = vi.spyOn(model, "present").mockResolvedValue(false);
		const setup = vi.spyOn(ModelSetupModal.prototype, "onOpen");
		const modal = modalOn(app, door(host));
		const closed = vi.spyOn(modal, "close");
		expect(await modal.getSuggestions("a widow in paris")).toEqual([]);
		expect(closed).toHaveBeenCalled();
		expect(setup).toHaveBeenCalledTimes(1);
		const first = setup.mock.contexts[0] as ModelSetupModal;
		// No file, no command: where the model comes from, in words.
		const said = first.contentEl.textContent ?? "";
		expect(said).toContain("Search by meaning needs its model");
		expect(said).not.toMatch(/install-model|\.datanotes|\.dnmodel|`/);
		// Once it arrives, the search opens again with the query typed.
		const reopened = vi.spyOn(MeaningModal.prototype, "onOpen");
		present.mockResolvedValue(true);
		await vi.waitFor(() => expect(reopened).toHaveBeenCalledTimes(1), { timeout: 8000 });
		const again = reopened.mock.contexts[0] as MeaningModal;
		expect(again.inputEl.value).toBe("a widow in paris");
		first.close();
	}, 15000);

	test("a failure other than a refusal shows the engine's text; an engine that went away its message", async () => {
		const bad = { ok: false, op: "semantic_search", error: "semantic_search: bad arguments — nothing was written:\nlimit 500: 1 to 100\nHint: Ask for 10, say.", hint: "Ask for 10, say." };
		let { door: d } = fakeDoor(() => outcome("bad_input", bad));
		let modal = modalOn(filmApp(), d);
		expect(await modal.getSuggestions("anything")).toEqual([]);
		expect(modal.emptyStateText).toBe(bad.error);
		({ door: d } = fakeDoor(() => Promise.reject(new Error("the engine stopped"))));
		modal = modalOn(filmApp(), d);
		expect(await modal.getSuggestions("anything")).toEqual([]);
		expect(modal.emptyStateText).toBe("the engine stopped");
	});

	test("the command opens the modal", () => {
		keepModalsOpen();
		const app = filmApp();
		const commands = new Map<string, () => void>();
		const plugin = { addCommand: (c: { id: string; callback: () => void }) => commands.set(c.id, c.callback) };
		const { door: d } = fakeDoor(() => outcome("ok", { results: [] }));
		const opened = vi.spyOn(MeaningModal.prototype, "onOpen");
		registerCommands(plugin as never, { app: app.asOriginalType__() as AppOriginal, door: d, operations: () => [], openHistory: async () => undefined, openProblems: async () => undefined, checkTables: async () => undefined, model: meaningModelOf(app.asOriginalType__() as AppOriginal) });
		commands.get("search-by-meaning")?.();
		expect(opened).toHaveBeenCalledTimes(1);
	});

	test("titles, passages, scores and the way out, as shown", () => {
		expect(noteTitle("a/b/Plan.md")).toBe("Plan");
		expect(noteTitle("Sherlock Jr..md")).toBe("Sherlock Jr.");
		expect(trimPassage("  one\n\ntwo  ")).toBe("one two");
		expect(trimPassage("x".repeat(200))).toHaveLength(140);
		expect(percent(0.873)).toBe("87%");
		expect(percent(1.2)).toBe("100%");
		const refused = {
			ok: false,
			op: "semantic_search",
			error: "semantic_search refused — nothing was written:\nno model here\nHint: Install it.\nDocs: https://datanotes.dev/reference/operations.md#semantic_search",
			hint: "Install it.",
		};
		expect(wayOut(outcome("refused", refused))).toBe("No model here. Install it.");
		expect(wayOut(outcome("refused", { error: "refused, no hint" }))).toBe("refused, no hint");
	});
});
