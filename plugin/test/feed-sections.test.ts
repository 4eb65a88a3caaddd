// Issue 11: the history panel's Journal redo, Database (rewind) and Changes
// (the live feed) sections, on the real engine and the film diary.

import { App, WorkspaceLeaf } from "obsidian-test-mocks/obsidian";
import { beforeEach, describe, expect, test, vi } from "vitest";
import { redoLast, undoLast } from "../src/commands";
import { moments } from "../src/feed-sections";
import { type EngineDoor, HistoryView } from "../src/history-view";
import type { DryRunModal } from "../src/table-history";
import { CHARADE, filmDiary, keepModalsOpen, openFilms, door } from "./engine";

beforeEach(() => keepModalsOpen());

const METROPOLIS = "datanotes/main/public/film/Metropolis.md";
const ANN = "datanotes/main/public/person/Ann.md";


function openView(d: EngineDoor): { view: HistoryView; app: App } {
	const app = App.createConfigured__();
	const leaf = WorkspaceLeaf.create2__(app);
	return { view: new HistoryView(leaf.asOriginalType3__(), d), app };
}

function all(view: HistoryView, cls: string): HTMLElement[] {
	return Array.from(view.contentEl.querySelectorAll<HTMLElement>(cls));
}

describe("redo", () => {
	test("Undo steps back through writes, Redo puts them back in turn, and a new write ends what can be redone", async () => {
		const { host, fs, clock } = await openFilms();
		const d = door(host);
		await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 4 } });
		clock.advance(1000);
		await host.call("update_row", { table: "film", path: CHARADE, set: { minutes: 114 } });
		const text = () => fs.files.get(CHARADE)?.text ?? "";
		expect(await redoLast(d)).toBe("Datanotes: nothing to redo.");
		expect(await undoLast(d)).toBe("Datanotes: Undid: changed minutes of Charade.");
		expect(text()).toContain("minutes: 113");
		expect(await undoLast(d)).toBe("Datanotes: Undid: changed rating of Charade.");
		expect(text()).toContain("rating: 5");
		expect(await undoLast(d)).toBe("Datanotes: nothing to undo.");
		expect(await redoLast(d)).toBe("Datanotes: Redid: changed rating of Charade.");
		expect(text()).toContain("rating: 4");
		expect(text()).toContain("minutes: 113");
		expect(await redoLast(d)).toBe("Datanotes: Redid: changed minutes of Charade.");
		expect(text()).toContain("minutes: 114");
		expect(await redoLast(d)).toBe("Datanotes: nothing to redo.");
		// Writes that changed nothing (an agent setting what a row holds, no
		// rows inserted) are journaled but neither taken by Undo nor end Redo.
		const noop = await host.call("update_row", { table: "film", path: CHARADE, set: { minutes: 114 } });
		expect(noop.status).toBe("ok");
		await host.call("insert_rows", { table: "film", rows: [] });
		const journal = await d.call("list_migrations", { limit: 2 });
		expect((journal.answer as { migrations: { notes_changed: number; files_changed: number }[] }).migrations.map((m) => [m.notes_changed, m.files_changed])).toEqual([
			[0, 0],
			[0, 0],
		]);
		expect(await undoLast(d)).toBe("Datanotes: Undid: changed minutes of Charade.");
		expect(text()).toContain("minutes: 113");
		await host.call("update_row", { table: "film", path: CHARADE, set: { minutes: 113 } });
		expect(await redoLast(d)).toBe("Datanotes: Redid: changed minutes of Charade.");
		expect(text()).toContain("minutes: 114");
		// Undo, then a new write: the undo can no longer be redone.
		expect(await undoLast(d)).toMatch(/^Datanotes: Undid: /);
		await host.call("update_row", { table: "film", path: METROPOLIS, set: { rating: 4 } });
		expect(await redoLast(d)).toBe("Datanotes: nothing to redo.");
		// A schema change counts no note either, and is undone all the same.
		const check = await host.call("add_check", { table: "film", name: "positive_year", check: { year: { gt: 0 } } });
		expect(check.status).toBe("ok");
		expect(await undoLast(d)).toBe("Datanotes: Undid: added a rule to film.");
		expect(fs.files.get("datanotes/metastore.yaml")?.text ?? "").not.toContain("positive_year");
	});

	test("the Journal shows Redo on an undone entry, and it puts the write back", async () => {
		const { host, fs } = await openFilms();
		await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 4 } });
		expect(await undoLast(door(host))).toMatch(/^Datanotes: Undid: /);
		const { view } = openView(door(host));
		await view.onOpen();
		const undone = all(view, ".datanotes-history-row").find((r) => r.classList.contains("is-undone"));
		const redo = undone?.querySelector<HTMLButtonElement>(".datanotes-history-redo");
		expect(redo?.textContent).toBe("Redo");
		redo?.click();
		expect(redo?.textContent).toBe("Confirm redo");
		expect(fs.files.get(CHARADE)?.text).toContain("rating: 5");
		redo?.click();
		await vi.waitFor(() => expect(fs.files.get(CHARADE)?.text).toContain("rating: 4"));
		await vi.waitFor(() => expect(all(view, ".datanotes-history-redo")).toHaveLength(0));
		await view.onClose();
	});
});

describe("the Database section", () => {
	test("lists moments across tables, and rewinds to before an operation through the dry run, as one write undo reverts", async () => {
		const { host, fs, clock } = await openFilms();
		clock.advance(1000);
		const up = await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 4 } });
		clock.advance(1000);
		const ins = await host.call("insert_row", { table: "person", values: { name: "Ann" } });
		expect(ins.status).toBe("ok");
		const { view } = openView(door(host));
		await view.onOpen();
		await view.show("database");
		await vi.waitFor(() => expect(all(view, ".datanotes-moment").length).toBeGreaterThan(2));
		const rows = all(view, ".datanotes-moment");
		// In the journal's words while it keeps the entry.
		const said = (r: HTMLElement) => r.querySelector(".datanotes-history-text > span")?.textContent;
		expect(said(rows[0])).toBe("Added Ann to person");
		expect(said(rows[1])).toBe("Changed rating of Charade");
		expect(rows.map(said)).toContain("film, as it was before its history began");
		const id = (up.answer as { migration_id: string }).migration_id;
		expect(rows[1].dataset.migrationId).toBe(id);

		const charade = fs.files.get(CHARADE)?.text;
		const modal = view.database()?.rewind(id) as DryRunModal;
		await modal.ready;
		expect(modal.contentEl.textContent).toContain("0 rows created, 1 changed, 1 deleted.");
		// Each row of every table the rewind touches, by what would change in it.
		const notes = Array.from(modal.contentEl.querySelectorAll(".datanotes-restore-note")).map((li) => [li.querySelector(".datanotes-restore-title")?.textContent, ...Array.from(li.querySelectorAll(".datanotes-diff-columns li")).map((c) => c.textContent)]);
		expect(notes).toContainEqual(["Charade", "rating: 4 → 5"]);
		expect(notes).toContainEqual(["Ann (added since: goes to the archive)", "name: Ann"]);
		expect(notes).toHaveLength(2);
		expect(fs.files.get(CHARADE)?.text).toBe(charade);
		expect(fs.files.has(ANN)).toBe(true);
		modal.contentEl.querySelector<HTMLButtonElement>(".datanotes-restore-confirm")?.click();
		await vi.waitFor(() => expect(fs.files.has(ANN)).toBe(false));
		expect(fs.files.get(CHARADE)?.text).toBe(filmDiary.get(CHARADE));
		expect(await undoLast(door(host))).toBe("Datanotes: Undid: rewound the database to an earlier moment.");
		expect(fs.files.has(ANN)).toBe(true);
		// The undo's moment names what it undid.
		await view.show("database");
		await vi.waitFor(() => expect(all(view, ".datanotes-moment")[0]?.querySelector(".datanotes-history-text > span")?.textContent).toBe("Undid: rewound the database to an earlier moment (person, film)"));
		expect(fs.files.get(CHARADE)?.text).toBe(charade);
		await view.onClose();
	});

	test("moments join an operation's commits across tables", () => {
		const c = (table: string, migration_id: string | null, operation = "UPDATE") => ({ version: 1, timestamp: "2026-12-02T12:00:00Z", operation, operation_metrics: {}, migration_id, table });
		expect(moments([c("main.public.film", "m1"), c("main.public.person", "m1"), c("main.public.film", null, "EXTERNAL_EDIT")]).map((m) => m.tables)).toEqual([
			["film", "person"],
			["film"],
		]);
	});
});

describe("the Changes section", () => {
	test("the feed newest first, hand edits told apart with the rules they broke, filters by source and table, and it stays current", async () => {
		const { host, fs, clock } = await openFilms();
		await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 4 } });
		fs.handWrite(METROPOLIS, (filmDiary.get(METROPOLIS) as string).replace("rating: 5", "rating: 9"));
		await host.observe({ kind: "modified", path: METROPOLIS });
		clock.advance(10_000);
		await host.tick();
		const { view, app } = openView(door(host));
		const opened = vi.spyOn(app.workspace, "openLinkText").mockResolvedValue();
		await view.onOpen();
		await view.show("changes");
		await vi.waitFor(() => expect(all(view, ".datanotes-event")).toHaveLength(2));
		const [hand, engine] = all(view, ".datanotes-event");
		expect(hand.classList.contains("is-hand-edit")).toBe(true);
		expect(hand.textContent).toContain("edited by hand");
		expect(hand.textContent).toContain("rating: 5 → 9");
		expect(hand.textContent).toContain("breaks the rule “rating is empty, or rating is at least 1 and at most 5” (here rating is 9)");
		expect(engine.textContent).toContain("film · in Obsidian");
		expect(engine.textContent).not.toContain("update_row");
		expect(engine.textContent).toContain("rating: 5 → 4");
		hand.querySelector<HTMLElement>(".datanotes-diff-path")?.click();
		expect(opened).toHaveBeenCalledWith(METROPOLIS, "", false);

		await view.changes()?.filter("", "engine");
		expect(all(view, ".datanotes-event").map((e) => e.querySelector(".datanotes-diff-path")?.getAttribute("title"))).toEqual([CHARADE]);
		await view.changes()?.filter("person", "all");
		expect(all(view, ".datanotes-event")).toHaveLength(0);
		expect(view.contentEl.textContent).toContain("No changes here yet.");

		// A new write shows at once: the panel redraws when the engine says so.
		await view.changes()?.filter("", "all");
		await host.call("insert_row", { table: "person", values: { name: "Ann" } });
		await vi.waitFor(() => expect(all(view, ".datanotes-event")[0]?.querySelector(".datanotes-diff-path")?.getAttribute("title")).toBe(ANN));
		await view.onClose();
	});

	test("a hand edit that breaks the rule of rows linking to it names each of them, the rule in words", async () => {
		const { host, fs, clock } = await openFilms();
		const silent = "datanotes/main/public/genre/Silent film.md";
		fs.handWrite(silent, (filmDiary.get(silent) as string).replace("kind: era", "kind: cinema"));
		await host.observe({ kind: "modified", path: silent });
		clock.advance(10_000);
		await host.tick();
		const { view } = openView(door(host));
		await view.onOpen();
		await view.show("changes");
		await vi.waitFor(() => expect(all(view, ".datanotes-event")).toHaveLength(1));
		const rules = Array.from(all(view, ".datanotes-event")[0].querySelectorAll(".datanotes-problem-rules li")).map((li) => li.textContent);
		const rule = 'the rule “kind is "cinema" and parent is empty, or kind is "era" and parent.kind is "cinema", or kind is "genre" and parent.kind is "era"”';
		expect(rules[0]).toBe(`breaks ${rule} (here kind is "cinema", parent is Cinema, parent.kind is "cinema")`);
		expect(rules.slice(1)).toEqual(
			["Expressionism", "Slapstick comedy", "Soviet montage"].map(
				(g) => `${g} breaks ${rule} (here kind is "genre", parent is Silent film, parent.kind is "cinema") (after the edit of Silent film, a row it links to)`,
			),
		);
		await view.onClose();
	});
});

describe("the Journal", () => {
	test("marks a rolled-back write, says how many notes each changed, and pages past the first 50", async () => {
		const { host, fs } = await openFilms();
		fs.held.add(METROPOLIS);
		const failed = await host.call("update_rows", { table: "film", where: { status: "watched" }, set: { minutes: 1 } });
		expect(failed.status).toBe("rolled_back");
		fs.held.delete(METROPOLIS);
		for (let i = 0; i < 55; i++) await host.call("update_row", { table: "film", path: CHARADE, set: { minutes: 100 + i } });
		const { view } = openView(door(host));
		await view.onOpen();
		const rows = () => all(view, ".datanotes-history-row");
		expect(rows()).toHaveLength(50);
		expect(rows()[0].textContent).toContain("1 note");
		const more = view.contentEl.querySelector<HTMLButtonElement>(".datanotes-more");
		expect(more?.textContent).toBe("Show 50 more");
		more?.click();
		// 55 writes, and the failed write's entries (its own and its rollback's).
		const total = ((await host.call("list_migrations", { limit: 1 })).answer as { total: number }).total;
		expect(total).toBeGreaterThan(55);
		await vi.waitFor(() => expect(rows()).toHaveLength(total));
		const rolled = rows().find((r) => r.classList.contains("is-rolled_back"));
		expect(rolled?.textContent).toContain("Changed 5 rows of film");
		expect(rolled?.textContent).toContain("rolled back");
		expect(view.contentEl.querySelector(".datanotes-more")).toBeNull();
		await view.onClose();
	});
});

describe("a Journal entry", () => {
	test("expands to what it did to each note, and a refused undo stays under it with a link to each note in conflict", async () => {
		const { host, clock } = await openFilms();
		const many = await host.call("update_rows", { table: "film", where: { year: { lt: 1930 } }, set: { status: "watched" } });
		expect(many.status).toBe("ok");
		clock.advance(1000);
		await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 4 } });
		clock.advance(1000);
		await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 3 } });
		const { view, app } = openView(door(host));
		const opened = vi.spyOn(app.workspace, "openLinkText").mockResolvedValue();
		await view.onOpen();
		const rowOf = (id: string) => all(view, ".datanotes-history-row").find((r) => r.dataset.migrationId === id) as HTMLElement;
		const detailsOf = (id: string) => all(view, ".datanotes-history-details").find((r) => r.dataset.migrationId === id) as HTMLElement;

		const manyId = (many.answer as { migration_id: string }).migration_id;
		rowOf(manyId).querySelector<HTMLElement>(".datanotes-expand")?.click();
		await vi.waitFor(() => expect(detailsOf(manyId).querySelectorAll(".datanotes-note-change").length).toBeGreaterThan(1));
		const events = Array.from(detailsOf(manyId).querySelectorAll(".datanotes-note-change"));
		expect(events.some((e) => e.textContent?.includes("status: to watch → watched"))).toBe(true);
		// A second click folds it.
		rowOf(manyId).querySelector<HTMLElement>(".datanotes-expand")?.click();
		expect(detailsOf(manyId).querySelectorAll(".datanotes-note-change")).toHaveLength(0);

		// Undoing the older rating change would overwrite the newer: refused, shown under it.
		const older = all(view, ".datanotes-history-row")[1];
		const olderId = older.dataset.migrationId as string;
		older.querySelector<HTMLButtonElement>(".datanotes-history-undo")?.click();
		older.querySelector<HTMLButtonElement>(".datanotes-history-undo")?.click();
		await vi.waitFor(() => expect(detailsOf(olderId)?.querySelector(".datanotes-history-refusal pre")?.textContent).toMatch(/^undo_migration refused/));
		const refusal = detailsOf(olderId).querySelector(".datanotes-history-refusal") as HTMLElement;
		expect(refusal.textContent).toContain("Hint:");
		refusal.querySelector<HTMLElement>(".datanotes-diff-path")?.click();
		expect(opened).toHaveBeenCalledWith(CHARADE, "", false);
		await view.onClose();
	});
});

describe("an engine that goes away", () => {
	test("is shown in the panel, which asks again and recovers when it answers", async () => {
		const { host } = await openFilms();
		await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 4 } });
		const real = door(host);
		let away = true;
		const calls: string[] = [];
		const flaky: EngineDoor = {
			...real,
			call: (name, args) => {
				calls.push(name);
				if (away) return Promise.reject(new Error("the engine holding the vault (process 4242) did not answer: ECONNREFUSED"));
				return real.call(name, args);
			},
		};
		const { view } = openView(flaky);
		view.retryMs = 20;
		await view.onOpen();
		expect(view.contentEl.querySelector(".datanotes-error")?.textContent).toContain("did not answer");
		const asked = calls.length;
		await vi.waitFor(() => expect(calls.length).toBeGreaterThan(asked));
		away = false;
		await vi.waitFor(() => expect(all(view, ".datanotes-history-row")).toHaveLength(1));
		expect(view.contentEl.querySelector(".datanotes-error")).toBeNull();
		// Recovered: it stops asking.
		const settled = calls.length;
		await new Promise((r) => setTimeout(r, 100));
		expect(calls.length).toBe(settled);
		await view.onClose();
	});
});

describe("the Journal by keyboard", () => {
	test("the arrow keys move along the entries, Enter expands one, a body change shows its lines", async () => {
		const { host } = await openFilms();
		await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 4 } });
		await host.call("update_row", { table: "film", path: CHARADE, body: "Rewritten.\n" });
		const { view } = openView(door(host));
		document.body.appendChild(view.containerEl);
		await view.onOpen();
		const entries = all(view, ".datanotes-expand");
		expect(entries).toHaveLength(2);
		entries[0].focus();
		entries[0].dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowDown", bubbles: true }));
		expect(document.activeElement).toBe(entries[1]);
		entries[0].dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
		// The newest entry changed the body only: its lines, removed then added.
		await vi.waitFor(() => expect(all(view, ".datanotes-history-details")[0].textContent).toContain("+ Rewritten."));
		const lines = Array.from(all(view, ".datanotes-history-details")[0].querySelectorAll(".datanotes-body-diff div")).map((d) => d.textContent);
		expect(lines[0]).toMatch(/^- \[\[Audrey Hepburn\]\]/);
		expect(lines).toContain("+ Rewritten.");
		expect(all(view, ".datanotes-history-details")[0].querySelector(".datanotes-diff-columns li")).toBeNull();
		view.containerEl.remove();
		await view.onClose();
	});
});
