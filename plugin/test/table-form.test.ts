// "Make a table of this folder…" and "New table…", through the plugin on
// obsidian-test-mocks' vault with the real engine: columns proposed from the
// notes' front matter, kept, retyped and marked required, checked by the
// engine, written (undoable), and the notes that break a rule counted.

import { Notice, type TFile } from "obsidian-test-mocks/obsidian";
import { afterEach, expect, test, vi } from "vitest";
import { undoLast } from "../src/commands";
import { seenText, type TableFormModal, tableNameOf } from "../src/table-form";
import { keepModalsOpen } from "./engine";
import { loadFilms } from "./plugin-harness";

let unload: (() => void) | null = null;
afterEach(() => {
	unload?.();
	unload = null;
	vi.restoreAllMocks();
});

const READING = {
	"Reading/Dune.md": "---\ntitle: Dune\nyear: 1965\nread: true\nshelf: sf\n---\nGood.\n",
	"Reading/Emma.md": "---\ntitle: Emma\nyear: 1815\nshelf: classics\n---\n",
};

async function vault(extra: Record<string, string> = READING) {
	keepModalsOpen();
	const loaded = await loadFilms(extra);
	unload = loaded.unload;
	await loaded.plugin.rowForms.refresh();
	return loaded;
}

/** The row of a proposed (or added) column. */
function column(form: TableFormModal, name: string): HTMLElement {
	const row = Array.from(form.contentEl.querySelectorAll<HTMLElement>(".datanotes-table-column")).find(
		(r) => r.querySelector<HTMLInputElement>('input[type="text"]')?.value === name,
	);
	if (!row) throw new Error(`no column ${name}`);
	return row;
}

function set(el: HTMLInputElement | HTMLSelectElement, value: string | boolean, event = "change"): void {
	if (typeof value === "boolean") (el as HTMLInputElement).checked = value;
	else el.value = value;
	el.dispatchEvent(new Event(event));
}

const error = (form: TableFormModal) => form.contentEl.querySelector(".datanotes-form-error")?.textContent ?? "";

test("a table's name from its folder's", () => {
	expect(tableNameOf("Reading")).toBe("reading");
	expect(tableNameOf("Notes/Books 2026/")).toBe("books_2026");
	expect(tableNameOf("Café Crème")).toBe("cafe_creme");
	expect(tableNameOf("2026 trips")).toBe("t_2026_trips");
	expect(seenText({ name: "t", type: "text", stats: { present: 2, filled: 2, examples: ["Dune", 3] } }, 3)).toBe("in 2 of 3 notes, e.g. Dune, 3");
});

test("a folder's context menu offers to make it a table, but not a table's folder, the engine's or one holding a table", async () => {
	const { app } = await vault();
	const items: string[] = [];
	const menu = { addItem: (fn: (i: unknown) => void) => fn({ setTitle: (t: string) => (items.push(t), { setIcon: () => ({ onClick: () => undefined }) }) }) };
	for (const path of ["Reading", "Notes", "datanotes/main/public/film", "datanotes", "datanotes/main"]) {
		items.length = 0;
		app.workspace.trigger("file-menu", menu, app.vault.getAbstractFileByPath(path));
		expect(items, path).toEqual(path === "Reading" || path === "Notes" ? ["Make a table of this folder…"] : path.endsWith("film") ? ["New row…"] : []);
	}
});

test("a folder's notes made a table: columns proposed from what they hold, the engine's check, Create, Undo", async () => {
	const { plugin, app } = await vault();
	const text = () => app.vault.read(app.vault.getAbstractFileByPath("Reading/Dune.md") as TFile);
	const form = (await plugin.rowForms.newTable("Reading")) as TableFormModal;
	await form.ready;
	expect(form.contentEl.querySelector<HTMLInputElement>('input[type="text"]')?.value).toBe("reading");
	const rows = Array.from(form.contentEl.querySelectorAll<HTMLElement>(".datanotes-table-column"));
	expect(rows.map((r) => [r.querySelector<HTMLInputElement>('input[type="text"]')?.value, r.querySelector("select")?.value])).toEqual([
		["read", "boolean"],
		["shelf", "text"],
		["title", "text"],
		["year", "integer"],
	]);
	// Every note has a title and a year: proposed required; read is on one note only.
	const required = (name: string) => (column(form, name).querySelector(".datanotes-table-required input") as HTMLInputElement).checked;
	expect(["read", "shelf", "title", "year"].map(required)).toEqual([false, true, true, true]);
	expect(column(form, "shelf").querySelector(".datanotes-table-seen")?.textContent).toBe("in 2 of 2 notes, e.g. sf, classics");
	// The engine's dry run of the proposal: how the notes stand against it.
	expect(form.contentEl.querySelector(".datanotes-op-note")?.textContent).toBe("2 notes read. All 2 keep the table's rules as they stand.");
	expect(error(form)).toBe("");

	// Read is left out; shelf becomes an enum of the values the notes hold.
	set(column(form, "read").querySelector('input[type="checkbox"]') as HTMLInputElement, false);
	set(column(form, "shelf").querySelector("select") as HTMLSelectElement, "enum");
	expect((column(form, "shelf").querySelectorAll('input[type="text"]')[1] as HTMLInputElement).value).toBe("sf, classics");
	expect(form.args(false)).toEqual({
		table: "reading",
		folder: "Reading",
		name_from: "title",
		columns: {
			shelf: { type: "enum", values: ["sf", "classics"], required: true },
			title: { type: "text", required: true },
			year: { type: "integer", required: true },
		},
		dry_run: false,
	});
	expect(await form.check()).toBe(true);
	expect(form.contentEl.querySelector(".datanotes-op-note")?.textContent).toBe("2 notes read. All 2 keep the table's rules as they stand.");

	const before = await text();
	expect(await form.submit()).toBe(true);
	const read = await plugin.door.call("select_rows", { table: "reading", order_by: "year" });
	expect((read.answer as { rows: { title: string; shelf: string }[] }).rows.map((r) => [r.title, r.shelf])).toEqual([
		["Emma", "classics"],
		["Dune", "sf"],
	]);
	// The notes are as they were.
	expect(await text()).toBe(before);
	expect(await undoLast(plugin.door)).toMatch(/^Datanotes: Undid: created table readi/);
	expect((await plugin.door.call("select_rows", { table: "reading" })).status).not.toBe("ok");
});

test("the engine's refusal above the form; a rule the notes already break is counted once the table is made", async () => {
	const { plugin, app } = await vault();
	const form = (await plugin.rowForms.newTable("Reading")) as TableFormModal;
	await form.ready;
	const name = form.contentEl.querySelector<HTMLInputElement>('input[type="text"]') as HTMLInputElement;
	set(name, "Bad Name", "input");
	expect(await form.check()).toBe(false);
	expect(error(form)).toMatch(/Bad Name/);
	set(name, "reading", "input");

	// A link column needs the table it links to: refused until named.
	set(column(form, "shelf").querySelector("select") as HTMLSelectElement, "link");
	const target = column(form, "shelf").querySelectorAll('input[type="text"]')[1] as HTMLInputElement;
	expect(target.placeholder).toBe("The table it links to");
	// Its tables are suggested then, not while it holds an enum's values.
	const shelf = form.rows.find((r) => r.name.value === "shelf");
	expect(shelf?.suggest.getSuggestions("per").map((t) => t.name)).toEqual(["person"]);
	expect(await form.check()).toBe(false);
	set(column(form, "shelf").querySelector("select") as HTMLSelectElement, "enum");
	expect(shelf?.suggest.getSuggestions("per")).toEqual([]);
	set(column(form, "shelf").querySelector("select") as HTMLSelectElement, "text");
	// Read required: Emma has none, so one row breaks a rule once made.
	set(column(form, "read").querySelector(".datanotes-table-required input") as HTMLInputElement, true);
	expect(await form.check()).toBe(true);
	expect(form.contentEl.querySelector(".datanotes-op-note")?.textContent).toBe(
		"2 notes read. 1 of them breaks the table's rules as they stand: kept as written, and listed by Open problems once made.",
	);
	const told = vi.spyOn(Notice.prototype, "constructor__");
	expect(await form.submit()).toBe(true);
	const checked = await plugin.door.call("check_table", { table: "reading" });
	expect((checked.answer as { total: number }).total).toBe(1);
	await vi.waitFor(() => expect(told.mock.calls.map((c) => String(c[0])).join("\n")).toMatch(/table reading created \(Undo last write takes it back\)\. 1 row breaks a rule: Open problems lists them\./));
	expect(app.vault.getAbstractFileByPath("Reading/Emma.md")).not.toBeNull();
});

test("New table… from the palette: no folder, the columns added by hand", async () => {
	const { plugin } = await vault({});
	const form = (await plugin.rowForms.newTable(null)) as TableFormModal;
	await form.ready;
	expect(form.contentEl.querySelectorAll(".datanotes-table-column")).toHaveLength(0);
	set(form.contentEl.querySelector<HTMLInputElement>('input[type="text"]') as HTMLInputElement, "trip", "input");
	(form.contentEl.querySelector(".datanotes-add-column") as HTMLButtonElement).click();
	(form.contentEl.querySelector(".datanotes-add-column") as HTMLButtonElement).click();
	const [a, b] = Array.from(form.contentEl.querySelectorAll<HTMLElement>(".datanotes-table-column"));
	set(a.querySelector('input[type="text"]') as HTMLInputElement, "place", "input");
	set(b.querySelector('input[type="text"]') as HTMLInputElement, "tags", "input");
	set(b.querySelector("select") as HTMLSelectElement, "list");
	const naming = Array.from(form.contentEl.querySelectorAll("select")).find((s) => Array.from(s.options).some((o) => o.text === "None")) as HTMLSelectElement;
	expect(Array.from(naming.options).map((o) => o.value)).toEqual(["", "place"]);
	set(naming, "place");
	expect(form.args(true)).toEqual({ table: "trip", columns: { place: { type: "text" }, tags: { type: "list", items: "text" } }, name_from: "place", dry_run: true });
	// A column added by hand can be removed.
	(b.querySelector("button") as HTMLButtonElement).click();
	expect(Object.keys(form.args(true).columns as object)).toEqual(["place"]);
	expect(await form.submit()).toBe(true);
	const made = await plugin.door.call("insert_row", { table: "trip", values: { place: "Lisbon" } });
	expect(made.status).toBe("ok");
	expect((made.answer as { planned_edits: { path: string }[] }).planned_edits[0].path).toBe("datanotes/main/public/trip/Lisbon.md");
});
