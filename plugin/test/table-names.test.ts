// Issue 53, point 1: a table by its name or its description, never
// main.public.…; nor a note by its path, nor an operation's name in a Notice.
// A link's table may be written qualified in metastore.yaml (rename_table
// writes it so); a suggestion, a column in words, a form's offer and its
// errors say its name.

import type { App as AppOriginal } from "obsidian";
import { App, Notice } from "obsidian-test-mocks/obsidian";
import { afterEach, expect, test, vi } from "vitest";
import { baseChoices, writeBases } from "../src/bases";
import { readRow } from "../src/row-form";
import { columnWords } from "../src/rule-words";
import { TableSuggest } from "../src/table-suggest";
import { CHARADE, door, openFilms } from "./engine";
import { loadFilms } from "./plugin-harness";

afterEach(() => vi.restoreAllMocks());

const QUALIFIED = /main\.public\.|datanotes\/|\.md\b|\.base\b|[a-z]+_[a-z_]+ makes/;

test("a link's table written qualified reads as its name", async () => {
	expect(columnWords({ type: "link", table: "main.public.person" })).toBe("link to person");
	expect(columnWords({ type: "list", items: "link", table: "main.public.genre" })).toBe("list of links to genre");
	const { host } = await openFilms();
	expect((await host.call("rename_table", { table: "person", new_name: "people" })).status).toBe("ok");
	const db = await door(host).call("describe_database", {});
	if (db.status !== "ok") throw new Error("describe_database");
	const film = db.answer.tables.find((t) => t.name === "film");
	// As metastore.yaml now writes it, and as a person reads it.
	expect(film?.columns?.director.table).toBe("main.public.people");
	expect(columnWords(film?.columns?.director ?? { type: "text" })).toBe("link to people");
});

test("a table suggested by its name and description; by its qualified name only where two schemas share the name", () => {
	const app = App.createConfigured__({ files: {} }).asOriginalType__() as AppOriginal;
	const tables = [
		{ name: "film", qualified: "main.public.film", description: "Classic films" },
		{ name: "person", qualified: "main.public.person" },
		{ name: "note", qualified: "main.public.note" },
		{ name: "note", qualified: "main.work.note" },
	];
	const suggest = new TableSuggest(app, createEl("input"), tables);
	const shown = (i: number) => {
		const el = createDiv();
		suggest.renderSuggestion(tables[i], el);
		return el.textContent;
	};
	expect(shown(0)).toBe("film Classic films");
	expect(shown(1)).toBe("person");
	expect(shown(2)).toBe("main.public.note");
	expect(shown(3)).toBe("main.work.note");
});

test("a row that is not there, a view's base and the Bases files: names, not paths", async () => {
	const { host } = await openFilms();
	const d = door(host);
	const missing = await readRow(d, "main.public.film", "datanotes/main/public/film/Vampyr.md");
	expect(missing).toBe("Vampyr is not a row of film: its front matter may not be readable (the Problems view says why).");
	const refused = await readRow(d, "main.public.flim", CHARADE);
	expect(typeof refused === "string" && !QUALIFIED.test(refused), String(refused)).toBe(true);
	const choices = await baseChoices(d);
	if (typeof choices === "string") throw new Error(choices);
	expect(choices.find((c) => c.name === "to_watch")?.description).not.toMatch(QUALIFIED);
	expect(await writeBases(d)).toBe("Datanotes: 5 Bases files written.");
	expect(await writeBases(d)).toBe("Datanotes: every Bases file was up to date.");
});

test("New row… and New view… with no table say what makes one, by its command's name", async () => {
	const loaded = await loadFilms();
	try {
		const { plugin } = loaded;
		// A vault whose tables are all dropped (the film diary's, in the order their links allow).
		expect((await plugin.door.call("drop_view", { name: "to_watch" })).status).toBe("ok");
		for (const t of ["watch", "film", "genre", "person"]) {
			const out = await plugin.door.call("drop_table", { table: t });
			expect(out.status, JSON.stringify(out.answer)).toBe("ok");
		}
		const said = vi.spyOn(Notice.prototype, "constructor__");
		expect(await plugin.rowForms.newView()).toBeNull();
		await plugin.rowForms.pickTable();
		const notices = said.mock.calls.map((c) => String(c[0]));
		expect(notices).toEqual(["Datanotes: there are no tables yet: New table… makes one.", "Datanotes: there are no tables yet: New table… makes one."]);
		for (const n of notices) expect(n).not.toMatch(QUALIFIED);
	} finally {
		loaded.unload();
	}
});
