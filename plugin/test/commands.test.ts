// The dialogs behind "Run operation…" (the picker, then the operation's form), on the real engine.

import type { App as AppOriginal } from "obsidian";
import { App } from "obsidian-test-mocks/obsidian";
import { expect, test } from "vitest";
import { operations } from "../src/engine";
import { OperationSuggestModal } from "../src/modals";
import { kindOf, OperationFormModal } from "../src/op-form";
import { type Named, TableSuggest } from "../src/table-suggest";
import type { OperationInfo } from "../src/types";
import { definitionLookup } from "../src/commands";
import { ans, CHARADE, door, openFilms } from "./engine";

function op(name: string): OperationInfo {
	const found = operations().find((o) => o.name === name);
	if (!found) throw new Error(`no operation ${name}`);
	return found;
}

/** The form of `name` on the film diary's tables and views; `calls` logs each run's arguments. */
async function formOf(name: string) {
	const opened = await openFilms();
	const db = ans(await opened.host.call("describe_database", {}));
	const calls: unknown[] = [];
	const app = App.createConfigured__().asOriginalType__() as AppOriginal;
	const tables: Named[] = [...db.tables, ...db.views];
	const form = new OperationFormModal(app, op(name), tables, (args) => (calls.push(args), opened.host.call(name, args)), definitionLookup(door(opened.host)));
	form.onOpen();
	return { ...opened, form, calls, tables };
}

function field(form: OperationFormModal, name: string): HTMLInputElement & HTMLSelectElement & HTMLTextAreaElement {
	const el = form.contentEl.querySelector(`.datanotes-field[data-param="${name}"]`)?.querySelector("input, select, textarea");
	if (!el) throw new Error(`no field ${name}`);
	return el as HTMLInputElement & HTMLSelectElement & HTMLTextAreaElement;
}

function put(el: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement, value: string): void {
	el.value = value;
	el.dispatchEvent(new Event("input"));
}

/** An input inside an argument's field (the parts of a column's definition). */
function part(form: OperationFormModal, name: string, selector: string): HTMLInputElement & HTMLSelectElement & HTMLTextAreaElement {
	const el = form.contentEl.querySelector(`.datanotes-field[data-param="${name}"] ${selector}`);
	if (!el) throw new Error(`no ${selector} in ${name}`);
	return el as HTMLInputElement & HTMLSelectElement & HTMLTextAreaElement;
}

function choose(form: OperationFormModal, name: string, selector: string, value: string): void {
	const el = part(form, name, selector);
	el.value = value;
	el.dispatchEvent(new Event("change"));
}

/** A name typed in a field and left (its change event). */
function name(form: OperationFormModal, param: string, value: string): void {
	const el = field(form, param);
	el.value = value;
	el.dispatchEvent(new Event("change"));
}

const text = (form: OperationFormModal, cls: string) => form.contentEl.querySelector(cls)?.textContent ?? "";

test("the operation picker lists the registry and filters it", async () => {
	await openFilms();
	const app = App.createConfigured__().asOriginalType__() as AppOriginal;
	const picker = new OperationSuggestModal(app, operations(), () => undefined);
	expect(picker.getSuggestions("").length).toBe(operations().length);
	expect(picker.getSuggestions("undo").map((o) => o.name)).toEqual(["undo_migration"]);
	expect(picker.getSuggestions("select rows").map((o) => o.name)).toEqual(["select_rows"]);
});

test("every operation has a form made from its registry schema: a field per argument, required ones first", async () => {
	await openFilms();
	const app = App.createConfigured__().asOriginalType__() as AppOriginal;
	const tables = [{ name: "film", qualified: "main.public.film" }];
	for (const o of operations()) {
		const form = new OperationFormModal(app, o, tables, () => Promise.reject(new Error("not run")));
		form.onOpen();
		const params = Object.keys(o.inputSchema.properties ?? {}).filter((p) => p !== "dry_run");
		const shown = Array.from(form.contentEl.querySelectorAll<HTMLElement>(".datanotes-field")).map((f) => f.dataset.param);
		const required = new Set(o.inputSchema.required ?? []);
		expect(shown, o.name).toEqual([...params.filter((p) => required.has(p)), ...params.filter((p) => !required.has(p))]);
		// Every argument gets an input of its kind: only `weight`-like values are free JSON.
		for (const p of params) {
			const kind = kindOf(p, o.inputSchema.properties?.[p] ?? {});
			if (kind === "any") expect(["weight", "semanticWeight", "semanticCodeWeight", "value", "values"], `${o.name}.${p}`).toContain(p);
		}
		expect(form.contentEl.querySelector(".datanotes-op-check") !== null, o.name).toBe(o.inputSchema.properties?.dry_run !== undefined);
	}
});

test("a read from the form: the table picked, a filter read back in words, the answer below", async () => {
	const { form, calls, tables } = await formOf("select_rows");
	// The table is typed, the tables then the views suggested.
	const table = field(form, "table");
	const suggest = new TableSuggest(App.createConfigured__().asOriginalType__() as AppOriginal, table, tables);
	expect(suggest.getSuggestions("").map((t) => t.name)).toEqual(["film", "genre", "person", "watch", "to_watch"]);
	expect(suggest.getSuggestions("PER").map((t) => t.name)).toEqual(["person"]);
	suggest.selectSuggestion(tables[0]);
	expect(table.value).toBe("film");
	put(field(form, "where"), '{"title": "Charade"}');
	expect(text(form, ".datanotes-op-words")).toBe('Reads: title is "Charade"');
	put(field(form, "columns"), "title\nyear\n");
	put(field(form, "limit"), "5");
	await form.submit(false);
	expect(calls).toEqual([{ table: "film", where: { title: "Charade" }, columns: ["title", "year"], limit: 5 }]);
	expect(JSON.parse(text(form, ".datanotes-result")).rows[0].path).toBe(CHARADE);
	expect(text(form, ".datanotes-op-note")).toBe("");
});

test("a schema write: Check is a dry run that writes nothing, Run writes it and says Undo takes it back", async () => {
	const { form, calls, fs } = await formOf("add_column");
	const before = fs.files.get("datanotes/metastore.yaml")?.text;
	field(form, "table").value = "film";
	put(field(form, "column"), "country");
	choose(form, "definition", ".is-type select", "text");
	await form.submit(true);
	expect(calls.at(-1)).toEqual({ table: "film", column: "country", definition: { type: "text" }, dry_run: true });
	expect(JSON.parse(text(form, ".datanotes-result")).dry_run).toBe(true);
	expect(text(form, ".datanotes-op-note")).toBe("Checked: add column country to film. Nothing was written; Run writes it.");
	expect(fs.files.get("datanotes/metastore.yaml")?.text).toBe(before);
	await form.submit(false);
	expect(text(form, ".datanotes-op-note")).toBe("Done: add column country to film. Undo last write takes it back.");
	expect(fs.files.get("datanotes/metastore.yaml")?.text).toContain("country");
});

test("a write whose filter matches nothing says it changed no note, and why when case is why", async () => {
	const { form, fs } = await formOf("update_rows");
	const before = fs.files.get(CHARADE)?.text;
	field(form, "table").value = "film";
	put(field(form, "where"), '{"title": "charade"}');
	put(field(form, "set"), '{"rating": 4}');
	await form.submit(true);
	expect(text(form, ".datanotes-op-note")).toMatch(/^Checked: update film\. It would change no note: no row matches as written: text compares case-sensitively, and 1 row would with case ignored: \{"title":"Charade"\} \(datanotes\/main\/public\/film\/Charade\.md\); write the filter as the rows hold it\.$/);
	await form.submit(false);
	expect(text(form, ".datanotes-op-note")).toMatch(/^Done: update film\. It changed no note: no row matches as written/);
	put(field(form, "where"), '{"title": "Vertigo"}');
	await form.submit(false);
	expect(text(form, ".datanotes-op-note")).toBe("Done: update film. It changed no note.");
	expect(fs.files.get(CHARADE)?.text).toBe(before);
	put(field(form, "where"), '{"title": "Charade"}');
	await form.submit(false);
	expect(text(form, ".datanotes-op-note")).toBe("Done: update film. Undo last write takes it back.");
	expect(fs.files.get(CHARADE)?.text).toContain("rating: 4");
});

test("a write's hint follows its line: a table made over a folder whose note breaks its rules", async () => {
	const { form } = await formOf("create_table");
	field(form, "table").value = "night";
	put(field(form, "folder"), "Notes");
	put(field(form, "columns"), '{"rating": {"type": "integer", "required": true}}');
	await form.submit(true);
	const said = "the rules of night, kept as written: check_table {\"table\": \"night\"} lists what each breaks.";
	expect(text(form, ".datanotes-op-note")).toMatch(/^Checked: create table night\. Nothing was written; Run writes it\. The note already in Notes\/ breaks /);
	expect(text(form, ".datanotes-op-note").endsWith(said)).toBe(true);
	await form.submit(false);
	expect(text(form, ".datanotes-op-note")).toMatch(/^Done: create table night\. Undo last write takes it back\. The note already in Notes\/ breaks /);
});

test("a column's definition as fields: what its type needs shown, the rest as JSON, and back from JSON", async () => {
	const { form } = await formOf("add_column");
	const shown = () =>
		Array.from(form.contentEl.querySelectorAll<HTMLElement>(".datanotes-op-def-row"))
			.filter((r) => !r.classList.contains("datanotes-hidden"))
			.map((r) => r.firstElementChild?.textContent);
	expect(shown()).toEqual(["Type", "Required", "Unique", "Description", "Default", "Other options (JSON)"]);
	field(form, "table").value = "film";
	put(field(form, "column"), "cast");
	choose(form, "definition", ".is-type select", "list");
	choose(form, "definition", ".is-items select", "link");
	expect(shown()).toEqual(["Type", "Items", "Table", "Required", "Unique", "Description", "Default", "Other options (JSON)"]);
	put(part(form, "definition", ".is-table input"), "person");
	put(part(form, "definition", ".is-description input"), "Who plays in it");
	expect(form.args()).toEqual({ table: "film", column: "cast", definition: { type: "list", items: "link", table: "person", description: "Who plays in it" } });
	expect(ans((await form.submit(true)) ?? { answer: null }).dry_run).toBe(true);

	choose(form, "definition", ".is-type select", "enum");
	expect(shown()).toContain("Values");
	expect(shown()).not.toContain("Table");
	put(part(form, "definition", ".is-values textarea"), "calm\n tense \n\n");
	put(part(form, "definition", ".is-default input"), "calm");
	(part(form, "definition", ".is-required input") as HTMLInputElement).checked = true;
	put(part(form, "definition", ".is-more textarea"), '{"dense": true}');
	expect(form.args()?.definition).toEqual({ type: "enum", values: ["calm", "tense"], required: true, description: "Who plays in it", default: "calm", dense: true });
	put(part(form, "definition", ".is-default input"), "4");
	expect((form.args()?.definition as { default: unknown }).default).toBe(4);

	// Bad JSON in the other options is said under the field; nothing runs.
	put(part(form, "definition", ".is-more textarea"), "{dense");
	expect(form.args()).toBeNull();
	expect(form.contentEl.querySelector('.datanotes-field[data-param="definition"]')?.nextElementSibling?.textContent).toMatch(/^other options: not JSON/);

	// From JSON: each key to its field, a type the list lacks kept as written, the rest to the other options.
	put(part(form, "definition", ".is-more textarea"), "");
	form.toggleJson();
	const json = form.contentEl.querySelector<HTMLTextAreaElement>("textarea.datanotes-args") as HTMLTextAreaElement;
	json.value = JSON.stringify({ table: "film", column: "x", definition: { type: "strng", unique: true, inverse: "films" } });
	form.toggleJson();
	expect(part(form, "definition", ".is-type select").value).toBe("strng");
	expect((part(form, "definition", ".is-unique input") as HTMLInputElement).checked).toBe(true);
	expect(part(form, "definition", ".is-more textarea").value).toBe('{"inverse":"films"}');
	expect(form.args()?.definition).toEqual({ type: "strng", unique: true, inverse: "films" });
	// A value its field would not give back as written stays in the other options.
	form.toggleJson();
	json.value = JSON.stringify({ table: "film", column: "x", definition: { type: "text", required: false, default: "4", description: " padded" } });
	form.toggleJson();
	expect(text(form, ".datanotes-op-mode")).toBe("Edit as JSON");
	expect(JSON.parse(part(form, "definition", ".is-more textarea").value)).toEqual({ required: false, default: "4", description: " padded" });
	expect(form.args()?.definition).toEqual({ type: "text", required: false, default: "4", description: " padded" });
	form.toggleJson();
	json.value = JSON.stringify({ table: "film", column: "x", definition: { type: "strng", unique: true, inverse: "films" } });
	form.toggleJson();
	await form.submit(false);
	expect(text(form, ".datanotes-result")).toMatch(/strng/);
	expect(form.contentEl.querySelector(".datanotes-result")?.classList.contains("datanotes-error")).toBe(true);
});

test("alter_column starts from the column's definition, so one option changed keeps the others", async () => {
	const { form, calls } = await formOf("alter_column");
	name(form, "table", "film");
	name(form, "column", "status");
	await form.filled;
	expect(form.args()?.definition).toEqual({ type: "enum", values: ["watched", "to watch"] });
	// Another column: filled again, as nothing was edited.
	name(form, "column", "title");
	await form.filled;
	expect(form.args()?.definition).toEqual({ type: "text", required: true, unique: true });
	// Edited, it is kept when the column changes.
	put(part(form, "definition", ".is-description input"), "The film's title");
	name(form, "column", "year");
	await form.filled;
	expect(form.args()?.definition).toEqual({ type: "text", required: true, unique: true, description: "The film's title" });
	name(form, "column", "title");
	await form.submit(false);
	expect(calls.at(-1)).toEqual({ table: "film", column: "title", definition: { type: "text", required: true, unique: true, description: "The film's title" } });
	expect(text(form, ".datanotes-op-note")).toBe("Done: alter column title of film. Undo last write takes it back.");

	// A column the table does not have fills nothing.
	const other = await formOf("alter_column");
	name(other.form, "table", "film");
	name(other.form, "column", "budget");
	await other.form.filled;
	expect(other.form.args()).toEqual({ table: "film", column: "budget" });
});

test("refusals, unreadable fields and what a field sends as typed", async () => {
	const { form, calls } = await formOf("add_check");
	field(form, "table").value = "film";
	put(field(form, "name"), "recent");
	put(field(form, "check"), '{"year": {"gte": 1950}}');
	expect(text(form, ".datanotes-op-words")).toBe("Reads: year is at least 1950");
	await form.submit(true);
	// Rows break it: refused, with the rows, nothing written.
	// The rows it would break, each with the rule in words and what the row holds, then the hint.
	const lines = text(form, ".datanotes-result").split("\n");
	expect(lines[0]).toBe("add_check refused — nothing was written:");
	expect(lines[1]).toBe("datanotes/main/public/film/Battleship Potemkin.md: year is at least 1950 (here year is 1925)");
	expect(lines).toHaveLength(1 + 6 + 2);
	expect(lines.at(-2)).toMatch(/^Hint: /);
	expect(text(form, ".datanotes-op-note")).toBe("");
	expect(form.contentEl.querySelector(".datanotes-result")?.classList.contains("datanotes-error")).toBe(true);
	// JSON that does not read is said beside its field, and nothing runs.
	put(field(form, "check"), "{year");
	expect(text(form, ".datanotes-op-words")).toBe("");
	expect(await form.submit(false)).toBeNull();
	expect(calls).toHaveLength(1);
	expect(form.contentEl.querySelector('.datanotes-field[data-param="check"]')?.nextElementSibling?.textContent).toMatch(/^not JSON/);

	// A number field sends what is not a number as typed, for the engine to refuse.
	const changes = await formOf("list_changes");
	put(field(changes.form, "since"), "two");
	put(field(changes.form, "kinds"), "insert\nupdate");
	await changes.form.submit(false);
	expect(changes.calls).toEqual([{ since: "two", kinds: ["insert", "update"] }]);
	expect(text(changes.form, ".datanotes-result")).toMatch(/^list_changes: bad arguments — nothing was written:\nargument "since" must be an integer/);

	// Yes, no, or the default for a boolean.
	const settings = await formOf("configure_database");
	expect(Array.from(field(settings.form, "bases").options).map((o) => o.text)).toEqual(["Default", "Yes", "No"]);
	field(settings.form, "bases").value = "false";
	expect(settings.form.args()).toEqual({ bases: false });
});

test("the whole arguments as JSON and back to the form, what is typed carried both ways", async () => {
	const { form, calls } = await formOf("select_rows");
	field(form, "table").value = "film";
	put(field(form, "where"), '{"year": {"lt": 1930}}');
	form.toggleJson();
	const json = form.contentEl.querySelector<HTMLTextAreaElement>("textarea.datanotes-args") as HTMLTextAreaElement;
	expect(JSON.parse(json.value)).toEqual({ table: "film", where: { year: { lt: 1930 } } });
	expect(text(form, ".datanotes-op-mode")).toBe("Edit as a form");
	json.value = '{"table": "main.public.person", "order_by": "born", "limit": 2}';
	await form.submit(false);
	expect(calls.at(-1)).toEqual({ table: "main.public.person", order_by: "born", limit: 2 });
	expect(JSON.parse(text(form, ".datanotes-result")).rows).toHaveLength(2);
	form.toggleJson();
	expect(field(form, "table").value).toBe("main.public.person");
	expect(field(form, "order_by").value).toBe("born");
	expect(field(form, "limit").value).toBe("2");
	expect(field(form, "where").value).toBe("");
	// What the form cannot give back as written stays in JSON, saying so.
	form.toggleJson();
	json.value = JSON.stringify({ table: "film", limit: 2, bogus: true, columns: ["title", ""] });
	form.toggleJson();
	expect(text(form, ".datanotes-op-mode")).toBe("Edit as a form");
	expect(text(form, ".datanotes-result")).toBe("The form cannot show bogus, columns as written: edit the arguments here.");
	// JSON that does not read stays in JSON, saying why.
	json.value = "{not json";
	expect(await form.submit(false)).toBeNull();
	expect(text(form, ".datanotes-result")).toMatch(/^The arguments are not JSON/);
	form.toggleJson();
	expect(text(form, ".datanotes-op-mode")).toBe("Edit as a form");
});
