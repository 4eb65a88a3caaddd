// Issue 11, the history panel's "This note" section: a row's versions (engine
// writes and hand edits) with who and the column diff, read as of a version,
// restored as a journaled write; a plain note says so. On the real engine.

import type { TFile } from "obsidian";
import { App, WorkspaceLeaf } from "obsidian-test-mocks/obsidian";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { undoLast } from "../src/commands";
import { type EngineDoor, HistoryView } from "../src/history-view";
import type { Host } from "../src/host";
import { type MeaningHit, wayOut } from "../src/meaning";
import { ARRIVES } from "../src/model-install";
import { MarkdownRenderer } from "obsidian-test-mocks/obsidian";
import { bodyOf, type RestoreRowModal } from "../src/note-history";
import type { Outcome } from "../src/types";
import { CHARADE, filmDiary, keepModalsOpen, openFilms, door } from "./engine";

beforeEach(() => keepModalsOpen());

const METROPOLIS = "datanotes/main/public/film/Metropolis.md";
const charade = filmDiary.get(CHARADE) as string;


function rows(view: HistoryView): HTMLElement[] {
	return Array.from(view.contentEl.querySelectorAll<HTMLElement>(".datanotes-row-version"));
}

/** The panel on This note, with Charade the active file, once its two versions show. */
async function charadesHistory(host: Host): Promise<HistoryView> {
	const app = App.createConfigured__();
	const view = new HistoryView(WorkspaceLeaf.create2__(app).asOriginalType3__(), door(host));
	vi.spyOn(app.workspace, "getActiveFile").mockReturnValue({ path: CHARADE } as never);
	await view.onOpen();
	await view.show("note");
	await vi.waitFor(() => expect(rows(view)).toHaveLength(2));
	return view;
}

describe("This note", () => {
	test("follows the active file: a row's versions newest first, hand edits marked, who and the column diff; a plain note says so", async () => {
		const { host, fs, clock } = await openFilms();
		await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 4 } });
		fs.handWrite(CHARADE, fs.files.get(CHARADE)?.text.replace("minutes: 113", "minutes: 115") as string);
		await host.observe({ kind: "modified", path: CHARADE });
		clock.advance(10_000);
		await host.tick();
		await host.call("update_row", { table: "film", path: METROPOLIS, set: { rating: 4 } });

		const app = App.createConfigured__();
		const view = new HistoryView(WorkspaceLeaf.create2__(app).asOriginalType3__(), door(host));
		let active: string | null = CHARADE;
		vi.spyOn(app.workspace, "getActiveFile").mockImplementation(() => (active ? ({ path: active } as TFile) : null) as never);
		await view.onOpen();
		await view.show("note");
		// v2 the hand edit, v1 the update, v0 the table's first version (the row as it came).
		await vi.waitFor(() => expect(rows(view)).toHaveLength(3));
		const [hand, engine, first] = rows(view);
		expect(first.dataset.version).toBe("0");
		expect(first.querySelector(".datanotes-diff-kind")?.textContent).toBe("as it was");
		expect(hand.dataset.version).toBe("2");
		expect(hand.classList.contains("is-hand-edit")).toBe(true);
		expect(hand.textContent).toContain("minutes: 113 → 115");
		expect(engine.dataset.version).toBe("1");
		expect(engine.textContent).toContain("v1 Changed rating of Charade");
		expect(engine.textContent).toContain("in Obsidian");
		expect(engine.textContent).toContain("rating: 5 → 4");
		// The newest version is the row as it is: nothing to restore there.
		expect(hand.querySelector(".datanotes-restore-row")).toBeNull();
		expect(engine.querySelector(".datanotes-restore-row")).not.toBeNull();

		active = "datanotes/metastore.yaml";
		app.workspace.trigger("file-open", null);
		await vi.waitFor(() => expect(view.contentEl.textContent).toContain("Open a note to see its history."));
		active = "Notes/Film night.md";
		app.workspace.trigger("file-open", null);
		await vi.waitFor(() => expect(view.contentEl.textContent).toContain("This note is not a row of a table"));
		await view.onClose();
	});

	test("a row of a table never written shows the version its log began with, and a hand edit adds one", async () => {
		const { host, fs, clock } = await openFilms();
		const app = App.createConfigured__();
		const view = new HistoryView(WorkspaceLeaf.create2__(app).asOriginalType3__(), door(host));
		vi.spyOn(app.workspace, "getActiveFile").mockReturnValue({ path: CHARADE } as never);
		await view.onOpen();
		await view.show("note");
		// The open began the table's log: the row as it was found (v0).
		await vi.waitFor(() => expect(rows(view).map((r) => r.dataset.version)).toEqual(["0"]));
		expect(view.contentEl.querySelector(".datanotes-error")).toBeNull();
		// A hand edit is the next version.
		fs.handWrite(CHARADE, charade.replace("minutes: 113", "minutes: 115"));
		await host.observe({ kind: "modified", path: CHARADE });
		clock.advance(10_000);
		await host.tick();
		await view.show("note");
		await vi.waitFor(() => expect(rows(view).map((r) => r.dataset.version)).toEqual(["1", "0"]));
		await view.onClose();
	});

	test("show as of a version reads it; restore writes the row back through update_row, and undo reverts it", async () => {
		const { host, fs } = await openFilms();
		await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 4, tags: ["seen-2026"] }, body: "Rewritten.\n" });
		const view = await charadesHistory(host);
		const section = view.note();
		const render = vi.spyOn(MarkdownRenderer, "render");
		const shown = section?.showAsOf(CHARADE, 0);
		await shown?.ready;
		// Its properties as Obsidian shows them, in words (not the front matter, whose table and id are the engine's)...
		const props = Array.from(shown?.contentEl.querySelectorAll(".datanotes-as-of-properties li") ?? []).map((li) => Array.from(li.children).map((c) => c.textContent).join(": "));
		expect(props).toEqual(["title: Charade", "year: 1963", "minutes: 113", "status: watched", "rating: 5", "tags: seen-2026, film-night", "director: Stanley Donen", "genres: Thriller"]);
		expect(shown?.titleEl.textContent).toBe("Charade as of version 0");
		// ...then its body as it was, rendered by Obsidian's Markdown renderer from the note's place.
		expect(render).toHaveBeenCalledTimes(1);
		expect(render.mock.calls[0][1]).toBe(bodyOf(charade));
		expect(render.mock.calls[0][3]).toBe(CHARADE);
		expect(shown?.contentEl.querySelector(".datanotes-as-of-body")).toBe(render.mock.calls[0][2]);
		// The id only behind Details, with the note's whole text as it was.
		const outside = shown?.contentEl.cloneNode(true) as HTMLElement;
		outside.querySelector("details")?.remove();
		expect(outside.textContent).not.toMatch(/01a0c046|\bid\b|table:/);
		expect(shown?.contentEl.querySelector("details pre")?.textContent).toBe(charade);
		shown?.close();

		const now = fs.files.get(CHARADE)?.text;
		const modal = section?.restore({ path: CHARADE }, 0) as RestoreRowModal;
		await modal.ready;
		const text = modal.contentEl.textContent ?? "";
		// Each property that would change, now → then, and the text's lines: "- " now, "+ " as it was.
		const planned = Array.from(modal.contentEl.querySelectorAll(".datanotes-compare-properties li")).map((li) => li.textContent);
		expect(planned).toEqual(["rating: 4 → 5", "tags: seen-2026 → seen-2026, film-night"]);
		const lines = Array.from(modal.contentEl.querySelectorAll(".datanotes-compare-unified .datanotes-body-diff > div")).map((d) => d.textContent);
		expect(lines).toEqual(["- Rewritten.", `+ ${bodyOf(charade).trimEnd()}`]);
		expect(text).not.toMatch(/datanotes\/|\.md\b|update_row/);
		expect(fs.files.get(CHARADE)?.text).toBe(now);
		modal.contentEl.querySelector<HTMLButtonElement>(".datanotes-restore-confirm")?.click();
		await vi.waitFor(() => expect(fs.files.get(CHARADE)?.text).toBe(charade));
		expect(await undoLast(door(host))).toMatch(/^Datanotes: Undid: changed .* of Charade\.$/);
		expect(fs.files.get(CHARADE)?.text).toBe(now);
		await view.onClose();
	});

	test("a restore that finds the note changed since shows why and writes nothing", async () => {
		const { host, fs } = await openFilms();
		await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 4 } });
		const view = await charadesHistory(host);
		const modal = view.note()?.restore({ path: CHARADE }, 0) as RestoreRowModal;
		await modal.ready;
		// Meanwhile the note is edited by hand.
		const edited = (fs.files.get(CHARADE)?.text as string).replace("minutes: 113", "minutes: 120");
		fs.handWrite(CHARADE, edited);
		await host.observe({ kind: "modified", path: CHARADE });
		modal.contentEl.querySelector<HTMLButtonElement>(".datanotes-restore-confirm")?.click();
		// The engine's plan expected the text it knew; the host found another and
		// nothing was written (rolled back).
		await vi.waitFor(() => expect(modal.contentEl.querySelector(".datanotes-error p")?.textContent).toBe("The write could not finish and was rolled back: nothing changed."));
		expect(modal.contentEl.querySelector(".datanotes-error details pre")?.textContent).toMatch(/^update_row could not finish and was rolled back/);
		expect(fs.files.get(CHARADE)?.text).toBe(edited);
		await view.onClose();
	});

	test("two versions picked are compared in words: each property before → after, the text line by line; one picked, with the note now", async () => {
		const { host, fs, clock } = await openFilms();
		await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 4 } });
		fs.handWrite(CHARADE, (fs.files.get(CHARADE)?.text as string).replace("minutes: 113", "minutes: 115"));
		await host.observe({ kind: "modified", path: CHARADE });
		clock.advance(10_000);
		await host.tick();
		const told = bodyOf(charade).trimEnd();
		await host.call("update_row", { table: "film", path: CHARADE, set: { tags: ["seen-2027"] }, body: `${told}\nSeen again in 2027.\n` });
		const d = door(host);
		const call = vi.spyOn(d, "call");
		const app = App.createConfigured__();
		const view = new HistoryView(WorkspaceLeaf.create2__(app).asOriginalType3__(), d);
		vi.spyOn(app.workspace, "getActiveFile").mockReturnValue({ path: CHARADE } as never);
		await view.onOpen();
		await view.show("note");
		await vi.waitFor(() => expect(rows(view).map((r) => r.dataset.version)).toEqual(["3", "2", "1", "0"]));
		const compare = () => view.contentEl.querySelector(".datanotes-note-compare") as HTMLElement;
		const row = (v: number) => rows(view).find((r) => r.dataset.version === String(v)) as HTMLElement;
		const props = () => Array.from(compare().querySelectorAll(".datanotes-compare-properties li")).map((li) => li.textContent);
		const lines = () => Array.from(compare().querySelectorAll(".datanotes-compare-unified .datanotes-body-diff > div")).map((d) => d.textContent);
		const reads = () => call.mock.calls.filter((c) => c[0] === "read_note").map((c) => c[1]);
		expect(compare().textContent).toBe("");

		// One picked: that version against the note as it is now.
		call.mockClear();
		row(0).click();
		await vi.waitFor(() => expect(compare().querySelector("h6")?.textContent).toBe("From version 0 to now"));
		expect(reads()).toEqual([{ path: CHARADE, version: 0 }, { path: CHARADE }]);
		expect(row(0).classList.contains("is-selected")).toBe(true);
		expect(props()).toEqual(["minutes: 113 → 115", "rating: 5 → 4", "tags: seen-2026, film-night → seen-2027"]);
		expect(lines()).toEqual([`  ${told}`, "+ Seen again in 2027."]);

		// Two picked (in any order): the older against the newer.
		call.mockClear();
		row(2).click();
		await vi.waitFor(() => expect(compare().querySelector("h6")?.textContent).toBe("From version 0 to version 2"));
		expect(reads()).toEqual([{ path: CHARADE, version: 0 }, { path: CHARADE, version: 2 }]);
		expect(props()).toEqual(["minutes: 113 → 115", "rating: 5 → 4"]);
		expect(compare().textContent).toContain("The text is the same.");
		// Each side's words: before struck, after added.
		const li = compare().querySelector(".datanotes-compare-properties li") as HTMLElement;
		expect(li.querySelector(".datanotes-diff-before")?.textContent).toBe("113");
		expect(li.querySelector(".datanotes-diff-after")?.textContent).toBe("115");

		// A third pick replaces the first; picking one again unpicks it.
		row(3).click();
		await vi.waitFor(() => expect(compare().querySelector("h6")?.textContent).toBe("From version 2 to version 3"));
		expect(props()).toEqual(["tags: seen-2026, film-night → seen-2027"]);
		expect(rows(view).filter((r) => r.classList.contains("is-selected")).map((r) => r.dataset.version)).toEqual(["3", "2"]);
		row(2).click();
		await vi.waitFor(() => expect(compare().querySelector("h6")?.textContent).toBe("From version 3 to now"));
		expect(compare().textContent).toContain("No property differs.");
		expect(compare().textContent).toContain("The text is the same.");
		// Enter picks too; a button on the row acts without picking.
		row(1).dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
		await vi.waitFor(() => expect(compare().querySelector("h6")?.textContent).toBe("From version 1 to version 3"));
		row(0).querySelector<HTMLButtonElement>(".datanotes-restore-row")?.click();
		await new Promise((r) => setTimeout(r, 20));
		expect(compare().querySelector("h6")?.textContent).toBe("From version 1 to version 3");

		// Side by side where the pane is wide (styles.css), one column on a click; the choice stays across redraws.
		const box = compare().querySelector(".datanotes-compare") as HTMLElement;
		const toggle = box.querySelector<HTMLButtonElement>(".datanotes-compare-layout") as HTMLButtonElement;
		expect(box.classList.contains("is-split")).toBe(true);
		expect(toggle.textContent).toBe("One column");
		const cells = Array.from(box.querySelectorAll(".datanotes-compare-grid > div")).map((c) => c.textContent);
		expect(cells).toEqual(["Version 1", "Version 3", told, told, "", "Seen again in 2027."]);
		toggle.click();
		expect(box.classList.contains("is-split")).toBe(false);
		expect(toggle.textContent).toBe("Side by side");
		expect(toggle.getAttribute("aria-pressed")).toBe("false");
		expect(view.note()?.layout.split).toBe(false);

		// No path, id, operation name or JSON in what a person reads (the note's own text aside).
		const seen = compare().cloneNode(true) as HTMLElement;
		for (const own of Array.from(seen.querySelectorAll(".datanotes-own-text"))) own.remove();
		expect(seen.textContent).not.toMatch(/datanotes\/|\.md\b|read_note|[{}[\]]|01a0c046/);
		await view.onClose();
	});

	test("who set each property: folded until opened, then each property with the change that last set it, in words", async () => {
		const { host, fs, clock } = await openFilms();
		expect((await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 4 } }, "reader/claude-code")).status).toBe("ok");
		fs.handWrite(CHARADE, (fs.files.get(CHARADE)?.text as string).replace("minutes: 113", "minutes: 115"));
		await host.observe({ kind: "modified", path: CHARADE });
		clock.advance(10_000);
		await host.tick();
		const d = door(host);
		const call = vi.spyOn(d, "call");
		const app = App.createConfigured__();
		const view = new HistoryView(WorkspaceLeaf.create2__(app).asOriginalType3__(), d);
		vi.spyOn(app.workspace, "getActiveFile").mockReturnValue({ path: CHARADE } as never);
		await view.onOpen();
		await view.show("note");
		await vi.waitFor(() => expect(rows(view)).toHaveLength(3));
		const head = () => view.contentEl.querySelector<HTMLElement>(".datanotes-blame-head") as HTMLElement;
		expect(head().textContent).toBe("Who set each property");
		expect(head().getAttribute("aria-expanded")).toBe("false");
		expect(call.mock.calls.filter((c) => c[0] === "blame_row")).toEqual([]);

		head().click();
		await vi.waitFor(() => expect(view.contentEl.querySelectorAll(".datanotes-blame-property").length).toBe(8));
		expect(call.mock.calls.filter((c) => c[0] === "blame_row").map((c) => c[1])).toEqual([{ path: CHARADE }]);
		const said = () =>
			Object.fromEntries(
				Array.from(view.contentEl.querySelectorAll(".datanotes-blame-property")).map((li) => [li.firstElementChild?.textContent, li.querySelector(".datanotes-history-meta")?.textContent]),
			);
		const words = said();
		// An agent's write by its words and its token; a hand edit; the row as its history began.
		expect(words["rating: 4"]).toMatch(/^v1 · Changed rating of Charade · by claude-code \(token reader\) · /);
		expect(words["minutes: 115"]).toMatch(/^v2 · Edited by hand · /);
		expect(words["title: Charade"]).toBe("v0 · As it was before its history began");
		expect(words["tags: seen-2026, film-night"]).toBe("v0 · As it was before its history began");
		expect(view.contentEl.querySelector(".datanotes-blame-property.is-hand-edit")?.firstElementChild?.textContent).toBe("minutes: 115");
		const text = (view.contentEl.querySelector(".datanotes-blame") as HTMLElement).textContent ?? "";
		expect(text).not.toMatch(/blame_row|update_row|EXTERNAL_EDIT|datanotes\/|\.md\b|[{}[\]]|01a0c046/);

		// Open it stays across a redraw (another write), and says the new change.
		await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 3 } });
		await vi.waitFor(() => expect(said()["rating: 3"]).toMatch(/^v3 · Changed rating of Charade · in Obsidian · /));
		head().dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
		await vi.waitFor(() => expect(view.contentEl.querySelectorAll(".datanotes-blame-property")).toHaveLength(0));
		expect(head().getAttribute("aria-expanded")).toBe("false");
		await view.onClose();
	});

	test("bodyOf keeps what follows the front matter", () => {
		expect(bodyOf("---\na: 1\n---\nBody.\n")).toBe("Body.\n");
		expect(bodyOf("---\r\na: 1\r\n---\r\nBody.\r\n")).toBe("Body.\r\n");
		expect(bodyOf("No front matter.\n")).toBe("No front matter.\n");
		expect(bodyOf("---\na: 1\n---")).toBe("");
	});
});

describe("Similar notes", () => {
	afterEach(() => vi.restoreAllMocks());

	const SHERLOCK = "datanotes/main/public/film/Sherlock Jr..md";
	const similar = (view: HistoryView) => view.contentEl.querySelector<HTMLElement>(".datanotes-similar");
	const head = (view: HistoryView) => view.contentEl.querySelector<HTMLElement>(".datanotes-similar-head") as HTMLElement;
	const links = (view: HistoryView) => Array.from(view.contentEl.querySelectorAll<HTMLAnchorElement>(".datanotes-similar-link"));
	const searches = (call: { mock: { calls: unknown[][] } }) => call.mock.calls.filter((c) => c[0] === "semantic_search").map((c) => c[1]);

	/** The panel on This note over `d`, with `active()` the active file, in an app holding the film diary. */
	async function panel(d: EngineDoor, active: () => string | null): Promise<{ app: App; view: HistoryView }> {
		const app = App.createConfigured__({ files: Object.fromEntries(filmDiary) });
		const view = new HistoryView(WorkspaceLeaf.create2__(app).asOriginalType3__(), d);
		vi.spyOn(app.workspace, "getActiveFile").mockImplementation(() => {
			const path = active();
			return (path ? ({ path } as TFile) : null) as never;
		});
		await view.onOpen();
		await view.show("note");
		await vi.waitFor(() => expect(similar(view)).not.toBeNull());
		return { app, view };
	}

	test("folded until opened; then, with no model in the store, a muted line with the engine's way out (no error box)", async () => {
		const { host } = await openFilms();
		await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 4 } });
		const real = door(host);
		// The engine's refusal (core/src/ops/semantic.rs no_model, as core/src/error.rs words it).
		const hint = "Install it once with the datanotes binary: `datanotes install-model --vault <vault>` copies the model (8 MB, offline) into the vault's .datanotes/models/, where your sync tool carries it to your other devices.";
		const refused = {
			ok: false,
			op: "semantic_search",
			error: `semantic_search refused — nothing was written:\nthis vault's store holds no model to search by meaning with (model.bin)\nHint: ${hint}\nDocs: https://datanotes.dev/reference/operations.md#semantic_search (offline: read_docs("reference/operations#semantic_search"))`,
			hint,
		};
		const d: EngineDoor = {
			call: (async (name: string, args?: unknown) =>
				name === "semantic_search" ? { status: "refused", answer: refused, http: 409, store: [], log: [], deliveries: [] } : real.call(name, args)) as EngineDoor["call"],
			onChange: real.onChange,
		};
		const call = vi.spyOn(d, "call");
		const { view } = await panel(d, () => CHARADE);
		expect(head(view).textContent).toBe("Similar notes");
		expect(head(view).getAttribute("aria-expanded")).toBe("false");
		expect(view.contentEl.querySelector(".datanotes-similar-list")).toBeNull();
		await vi.waitFor(() => expect(rows(view)).toHaveLength(2));
		expect(searches(call)).toEqual([]);

		head(view).click();
		await vi.waitFor(() => expect(view.contentEl.querySelector(".datanotes-similar-hint")).not.toBeNull());
		expect(head(view).getAttribute("aria-expanded")).toBe("true");
		expect(searches(call)).toEqual([{ like: CHARADE, limit: 5 }]);
		const line = view.contentEl.querySelector(".datanotes-similar-hint") as HTMLElement;
		expect(line.textContent).toBe(`This vault's store holds no model to search by meaning with (model.bin). ${hint}`);
		expect(line.classList.contains("datanotes-muted")).toBe(true);
		expect(view.contentEl.querySelector(".datanotes-error")).toBeNull();
		expect(links(view)).toHaveLength(0);
		// The row's history is drawn as before, below.
		expect(rows(view)).toHaveLength(2);
		await view.onClose();
	});

	test("on the real engine, whose store holds no model: the model's first run, in words, in place of the list", async () => {
		const { host } = await openFilms();
		await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 4 } });
		const { view } = await panel(door(host), () => CHARADE);
		head(view).click();
		await vi.waitFor(() => expect(view.contentEl.querySelector(".datanotes-model-setup")).not.toBeNull());
		const setup = view.contentEl.querySelector(".datanotes-model-setup") as HTMLElement;
		// A panel whose plugin runs no program (as on a phone): the model arrives with the vault.
		expect(setup.textContent).toContain("Search by meaning needs its model");
		expect(setup.textContent).toContain(ARRIVES);
		expect(setup.textContent).not.toMatch(/install-model|\.datanotes|\.dnmodel|`/);
		expect(view.contentEl.querySelector(".datanotes-similar-hint")).toBeNull();
		expect(view.contentEl.querySelector(".datanotes-error")).toBeNull();
		await view.onClose();
	});

	test("lists the engine's notes as links with their scores; asked once per note, again when another note opens", async () => {
		const { host } = await openFilms();
		const real = door(host);
		const hits: MeaningHit[] = [
			{ path: METROPOLIS, score: 0.912, semantic: 0.912, lexical: 0, passage: "A city of workers below." },
			{ path: SHERLOCK, score: 0.5, semantic: 0.5, lexical: 0, passage: "A projectionist.", table: "main.public.film" },
		];
		const answer = (args: { like: string }): Outcome => ({ status: "ok", answer: { like: args.like, weight: 1, results: args.like === CHARADE ? hits : hits.slice(1) }, http: 200, store: [], log: [], deliveries: [] });
		const d: EngineDoor = {
			call: (async (name: string, args?: unknown) => (name === "semantic_search" ? answer(args as { like: string }) : real.call(name, args))) as EngineDoor["call"],
			onChange: real.onChange,
		};
		await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 4 } });
		const call = vi.spyOn(d, "call");
		let active = CHARADE;
		const { view } = await panel(d, () => active);
		head(view).click();
		await vi.waitFor(() => expect(links(view)).toHaveLength(2));
		expect(links(view).map((a) => a.textContent)).toEqual(["Metropolis", "Sherlock Jr."]);
		expect(links(view).map((a) => a.dataset.path)).toEqual([METROPOLIS, SHERLOCK]);
		expect(Array.from(view.contentEl.querySelectorAll(".datanotes-similar-score")).map((e) => e.textContent)).toEqual(["91%", "50%"]);
		expect(searches(call)).toEqual([{ like: CHARADE, limit: 5 }]);

		// A click opens the note.
		const opened = vi.spyOn(WorkspaceLeaf.prototype, "openFile");
		links(view)[0].click();
		await vi.waitFor(() => expect(opened).toHaveBeenCalledTimes(1));
		expect((opened.mock.calls[0][0] as { path: string }).path).toBe(METROPOLIS);

		// A write redraws the section (one more version): the answer is reused, not asked again.
		await vi.waitFor(() => expect(rows(view)).toHaveLength(2));
		await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 3 } });
		await vi.waitFor(() => expect(rows(view)).toHaveLength(3));
		await vi.waitFor(() => expect(links(view)).toHaveLength(2));
		expect(searches(call)).toHaveLength(1);

		// Another note: it stays open, and asks for that note.
		active = METROPOLIS;
		view.app.workspace.trigger("file-open", null);
		await vi.waitFor(() => expect(links(view)).toHaveLength(1));
		expect(searches(call)).toEqual([
			{ like: CHARADE, limit: 5 },
			{ like: METROPOLIS, limit: 5 },
		]);
		// Folded: nothing listed; opened again: asked anew.
		head(view).click();
		expect(links(view)).toHaveLength(0);
		expect(head(view).getAttribute("aria-expanded")).toBe("false");
		head(view).click();
		await vi.waitFor(() => expect(links(view)).toHaveLength(1));
		expect(searches(call)).toHaveLength(3);
		// A note that is no row of a table has its similar notes too.
		active = "Notes/Film night.md";
		view.app.workspace.trigger("file-open", null);
		await vi.waitFor(() => expect(view.contentEl.textContent).toContain("This note is not a row of a table"));
		await vi.waitFor(() => expect(searches(call)).toHaveLength(4));
		await view.onClose();
	});
});
