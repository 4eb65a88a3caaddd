// Issue 11, the history panel's Table section: a table's versions, the rows
// changed between two of them, and a restore through the dry run's modal, on the
// real engine and the film diary.

import { App, WorkspaceLeaf } from "obsidian-test-mocks/obsidian";
import { beforeEach, describe, expect, test, vi } from "vitest";
import { undoLast } from "../src/commands";
import { type EngineDoor, HistoryView } from "../src/history-view";
import { DryRunModal, rowDiffs } from "../src/table-history";
import { versionsUndone } from "../src/restore-preview";
import type { RowChange } from "../src/types";
import { ans, CHARADE, filmDiary, keepModalsOpen, openFilms, door } from "./engine";

beforeEach(() => keepModalsOpen());

const SUNRISE = "datanotes/main/public/film/Sunrise.md";


function openView(d: EngineDoor): HistoryView {
	const app = App.createConfigured__();
	const leaf = WorkspaceLeaf.create2__(app);
	return new HistoryView(leaf.asOriginalType3__(), d);
}

function versions(view: HistoryView): HTMLElement[] {
	return Array.from(view.contentEl.querySelectorAll<HTMLElement>(".datanotes-version"));
}

function version(view: HistoryView, n: number): HTMLElement {
	const row = versions(view).find((r) => r.dataset.version === String(n));
	if (!row) throw new Error(`no version ${n} in ${versions(view).map((r) => r.textContent).join(" | ")}`);
	return row;
}

function changesText(view: HistoryView): string {
	return view.contentEl.querySelector(".datanotes-table-changes")?.textContent ?? "";
}

/** The film diary after two writes: v1 updates Charade's rating, v2 inserts Sunrise. */
async function twoWrites() {
	const films = await openFilms();
	const up = await films.host.call("update_row", { table: "film", path: CHARADE, set: { rating: 4 } });
	expect(up.status).toBe("ok");
	const ins = await films.host.call("insert_row", { table: "film", values: { title: "Sunrise", year: 1927, status: "to watch" } });
	expect(ins.status, JSON.stringify(ins.answer)).toBe("ok");
	return films;
}

describe("what a restore undoes", () => {
	const c = (table: string, version: number, migration_id: string | null, batch?: string) => ({ version, timestamp: "", operation: "UPDATE", operation_metrics: {}, migration_id, table, batch });
	test("a table restored to a version undoes the versions after it; a rewind, every table's commits from the operation's on", () => {
		expect([...versionsUndone({ table: "film", version: 2 }, [c("film", 5, "m5"), c("film", 4, "m4")])]).toEqual([["film", 3]]);
		expect([...versionsUndone({ table: "film", version: 5 }, [c("film", 5, "m5")])]).toEqual([]);
		const all = [c("person", 7, "m9"), c("film", 9, "m8"), c("film", 8, null), c("person", 6, "b1-a", "b1"), c("film", 7, "b1-b", "b1"), c("film", 6, "m1")];
		expect(new Map(versionsUndone({ before_migration: "m8" }, all))).toEqual(new Map([["person", 7], ["film", 9]]));
		// A batch by its id: each of its tables from its commit on.
		expect(new Map(versionsUndone({ before_migration: "b1" }, all))).toEqual(new Map([["person", 6], ["film", 7]]));
		expect(versionsUndone({ before_migration: "unknown" }, all).size).toBe(0);
	});
});

describe("rowDiffs", () => {
	const row = (type: RowChange["_change_type"], version: number, values: Record<string, unknown>, path = "a.md"): RowChange => ({
		id: "r1",
		path,
		_change_type: type,
		_commit_version: version,
		_commit_timestamp: "",
		_operation: "",
		...values,
	});

	test("an update shows only the columns that differ; two updates net out; one that ends where it began is left out", () => {
		const changes = [
			row("update_preimage", 1, { title: "A", rating: 5, year: 1963 }),
			row("update_postimage", 1, { title: "A", rating: 4, year: 1963 }),
			row("update_preimage", 2, { title: "A", rating: 4, year: 1963 }),
			row("update_postimage", 2, { title: "A", rating: 3, year: 1964 }),
		];
		expect(rowDiffs(changes)).toEqual([
			{
				kind: "updated",
				path: "a.md",
				columns: [
					{ name: "rating", before: 5, after: 3 },
					{ name: "year", before: 1963, after: 1964 },
				],
			},
		]);
		const back = [row("update_preimage", 1, { rating: 5 }), row("update_postimage", 1, { rating: 4 }), row("update_preimage", 2, { rating: 4 }), row("update_postimage", 2, { rating: 5 })];
		expect(rowDiffs(back)).toEqual([]);
	});

	test("inserts and deletes carry the values; an insert deleted within the range is not there; a move shows its path", () => {
		expect(rowDiffs([row("insert", 1, { title: "B" }, "b.md")])).toEqual([{ kind: "inserted", path: "b.md", columns: [{ name: "title", after: "B" }] }]);
		expect(rowDiffs([row("delete", 1, { title: "B" }, "b.md")])).toEqual([{ kind: "deleted", path: "b.md", columns: [{ name: "title", before: "B" }] }]);
		expect(rowDiffs([row("insert", 1, { title: "B" }), row("delete", 2, { title: "B" })])).toEqual([]);
		const moved = rowDiffs([row("update_preimage", 1, { title: "C" }, "c.md"), row("update_postimage", 1, { title: "D" }, "d.md")]);
		expect(moved[0].columns).toEqual([
			{ name: "path", before: "c.md", after: "d.md" },
			{ name: "title", before: "C", after: "D" },
		]);
	});
});

describe("the Table section", () => {
	test("lists the table's versions newest first, hand edits marked; one picked version shows what changed since", async () => {
		const { host, fs, clock } = await twoWrites();
		// A hand edit that breaks the rating rule: a version of its own.
		fs.handWrite("datanotes/main/public/film/Metropolis.md", (filmDiary.get("datanotes/main/public/film/Metropolis.md") as string).replace("rating: 5", "rating: 2"));
		await host.observe({ kind: "modified", path: "datanotes/main/public/film/Metropolis.md" });
		clock.advance(10_000);
		await host.tick();
		const view = openView(door(host));
		await view.onOpen();
		await view.show("table");
		await vi.waitFor(() => expect(versions(view).length).toBe(4));
		expect(versions(view).map((r) => r.dataset.version)).toEqual(["3", "2", "1", "0"]);
		expect(version(view, 3).classList.contains("is-hand-edit")).toBe(true);
		expect(version(view, 3).textContent).toContain("Edited by hand");
		// What made each: the journal's summary of its operation, in words.
		expect(version(view, 1).textContent).toContain("v1 Changed rating of Charade");
		expect(version(view, 2).textContent).toContain("v2 Added Sunrise to film");
		expect(version(view, 1).textContent).toContain("1 updated");
		expect(version(view, 0).textContent).toContain("v0 As it was before its history began");
		// Who made it, from the journal; a hand edit has no actor.
		expect(version(view, 1).textContent).toContain("in Obsidian");
		expect(version(view, 3).textContent).not.toContain("in Obsidian");
		expect(changesText(view)).toContain("Pick a version");
		// The table's columns and rules, in words, folded above its versions.
		const schema = view.contentEl.querySelector(".datanotes-table-schema") as HTMLDetailsElement;
		expect(schema.querySelector("summary")?.textContent).toBe("Columns and rules of film");
		expect(Array.from(schema.querySelectorAll(".datanotes-schema-columns li")).map((li) => li.textContent)).toEqual([
			"title: text, required, unique",
			"year: integer, required",
			"minutes: integer",
			"status: enum (watched, to watch)",
			"rating: integer: 1 to 5 stars",
			"tags: list of text",
			"director: link to person",
			"genres: list of links to genre",
		]);
		expect(schema.querySelector(".datanotes-schema-rules li")?.textContent).toBe("rating is empty, or rating is at least 1 and at most 5");
		expect(schema.textContent).toContain("New notes are named from title.");
		expect(schema.open).toBe(false);
		schema.open = true;
		schema.dispatchEvent(new Event("toggle"));

		version(view, 0).click();
		await vi.waitFor(() => expect(changesText(view)).toContain("1 inserted, 2 updated, 0 deleted"));
		expect(changesText(view)).toContain("From version 0 to now");
		// Unfolded, the columns stay so when the section draws again.
		await view.show("table");
		expect(view.contentEl.querySelector<HTMLDetailsElement>(".datanotes-table-schema")?.open).toBe(true);
		const charade = Array.from(view.contentEl.querySelectorAll(".datanotes-diff")).find((d) => d.querySelector(".datanotes-diff-path")?.getAttribute("title") === CHARADE);
		expect(charade?.textContent).toContain("rating: 5 → 4");
		expect(charade?.classList.contains("is-updated")).toBe(true);
		const sunrise = view.contentEl.querySelector(".datanotes-diff.is-inserted");
		// A row by its note's title, its path on hover.
		expect(sunrise?.querySelector(".datanotes-diff-path")?.textContent).toBe("Sunrise");
		expect(sunrise?.querySelector(".datanotes-diff-path")?.getAttribute("title")).toBe(SUNRISE);
		expect(sunrise?.textContent).toContain("title: Sunrise");
	});

	test("a table never written shows the version its log began with at the open; the first write is version 1", async () => {
		const { host } = await openFilms();
		const view = openView(door(host));
		await view.onOpen();
		await view.show("table");
		// The open began the log: version 0, the table as it was found.
		await vi.waitFor(() => expect(versions(view).map((r) => r.dataset.version)).toEqual(["0"]));
		// The first write: version 1.
		expect((await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 4 } })).status).toBe("ok");
		await view.show("table");
		await vi.waitFor(() => expect(versions(view).map((r) => r.dataset.version)).toEqual(["1", "0"]));
		expect(changesText(view)).toContain("Pick a version");
	});

	test("two picked versions compare them; the arrow keys move along the versions and Enter picks", async () => {
		const { host } = await twoWrites();
		const view = openView(door(host));
		await view.onOpen();
		await view.show("table");
		await vi.waitFor(() => expect(versions(view).length).toBe(3));
		version(view, 0).click();
		version(view, 1).click();
		await vi.waitFor(() => expect(changesText(view)).toContain("From version 0 to version 1"));
		await vi.waitFor(() => expect(changesText(view)).toContain("0 inserted, 1 updated, 0 deleted"));
		expect(changesText(view)).not.toContain(SUNRISE);

		// Focus needs the panel in the document.
		document.body.appendChild(view.containerEl);
		const rows = versions(view);
		rows[0].focus();
		rows[0].dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowDown", bubbles: true }));
		expect(document.activeElement).toBe(rows[1]);
		// Enter on version 1, picked already: unpicked, so version 0 alone remains.
		rows[1].dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
		await vi.waitFor(() => expect(changesText(view)).toContain("From version 0 to now"));
		expect(rows[1].classList.contains("is-selected")).toBe(false);
		view.containerEl.remove();
	});

	test("restore to a version: the modal shows the dry run, changes nothing until confirmed, then the restore is a version that undo reverts", async () => {
		const { host, fs } = await twoWrites();
		const view = openView(door(host));
		await view.onOpen();
		await view.show("table");
		await vi.waitFor(() => expect(versions(view).length).toBe(3));
		const before = { charade: fs.files.get(CHARADE)?.text, sunrise: fs.files.get(SUNRISE)?.text };
		const modal = view.table()?.restore(0) as DryRunModal;
		await modal.ready;
		const text = modal.contentEl.textContent ?? "";
		expect(text).toContain("0 rows created, 1 changed, 1 deleted.");
		expect(modal.titleEl.textContent).toBe("Restore film to version 0");
		// Each row by its title and what would change in it, property by property (now → as it was).
		const notes = Array.from(modal.contentEl.querySelectorAll(".datanotes-restore-note"));
		const said = (li: Element) => [li.querySelector(".datanotes-restore-title")?.textContent, ...Array.from(li.querySelectorAll(".datanotes-diff-columns li")).map((c) => c.textContent)];
		expect(notes.map(said)).toEqual([
			["Sunrise (added since: goes to the archive)", "title: Sunrise", "year: 1927", "status: to watch"],
			["Charade", "rating: 4 → 5"],
		]);
		expect(notes[1].querySelector("[title]")?.getAttribute("title")).toBe(CHARADE);
		expect(text).not.toContain(CHARADE);
		// The dry run wrote nothing.
		expect(fs.files.get(CHARADE)?.text).toBe(before.charade);
		expect(fs.files.get(SUNRISE)?.text).toBe(before.sunrise);

		modal.contentEl.querySelector<HTMLButtonElement>(".datanotes-restore-confirm")?.click();
		await vi.waitFor(() => expect(fs.files.get(CHARADE)?.text).toContain("rating: 5"));
		expect(fs.files.has(SUNRISE)).toBe(false);
		await vi.waitFor(() => expect(versions(view)[0]?.textContent).toContain("v3 Restored film to version 0"));
		expect(versions(view)[0].dataset.version).toBe("3");

		expect(await undoLast(door(host))).toBe("Datanotes: Undid: restored film to version 0.");
		expect(fs.files.get(CHARADE)?.text).toBe(before.charade);
		expect(fs.files.get(SUNRISE)?.text).toBe(before.sunrise);
	});

	test("a table with more versions than a page shows the newest 50 and a button for more", async () => {
		const { host } = await openFilms();
		for (let i = 0; i < 55; i++) {
			const out = await host.call("update_row", { table: "film", path: CHARADE, set: { minutes: 100 + i } });
			expect(out.status).toBe("ok");
		}
		const calls: unknown[] = [];
		const d = door(host);
		const counting: EngineDoor = { ...d, call: (name, args) => (calls.push([name, args]), d.call(name, args)) };
		const view = openView(counting);
		await view.onOpen();
		await view.show("table");
		await vi.waitFor(() => expect(versions(view).length).toBe(50));
		expect(calls).toContainEqual(["describe_history", { table: "film", limit: 51 }]);
		const more = view.contentEl.querySelector<HTMLButtonElement>(".datanotes-more");
		expect(more?.textContent).toBe("Show 50 more");
		more?.click();
		await vi.waitFor(() => expect(versions(view).length).toBe(56));
		expect(view.contentEl.querySelector(".datanotes-more")).toBeNull();
		expect(ans(await host.call("describe_history", { table: "film", limit: 1 })).history[0].version).toBe(55);
	});
});
