// Row forms (issue 12, point 4), through the plugin on obsidian-test-mocks'
// vault with the real engine: a field per column, the engine's refusal beside
// the field it names, link suggestions, if_match and its reload.

import type { App as AppOriginal } from "obsidian";
import { TFile } from "obsidian-test-mocks/obsidian";
import { afterEach, expect, test, vi } from "vitest";
import { undoLast } from "../src/commands";
import type DatanotesPlugin from "../src/main";
import { CHECK_AFTER_MS, LinkSuggest, type RowFormModal } from "../src/row-form";
import type { ViewFormModal } from "../src/view-form";
import { CHARADE, keepModalsOpen } from "./engine";
import { loadFilms } from "./plugin-harness";

let unload: (() => void) | null = null;
afterEach(() => {
	unload?.();
	unload = null;
	vi.restoreAllMocks();
	vi.useRealTimers();
});

async function films() {
	keepModalsOpen();
	const loaded = await loadFilms();
	unload = loaded.unload;
	await loaded.plugin.rowForms.refresh();
	return loaded;
}

function table(plugin: DatanotesPlugin, name: string) {
	const t = plugin.rowForms.tableOfFolder(`datanotes/main/public/${name}`);
	if (!t) throw new Error(`no table ${name}`);
	return t;
}

/** The setting row of a column in a form. */
function row(modal: RowFormModal, column: string): HTMLElement {
	const found = modal.contentEl.querySelector<HTMLElement>(`.datanotes-field[data-column="${column}"]`);
	if (!found) throw new Error(`no field ${column}`);
	return found;
}

function input(modal: RowFormModal, column: string): HTMLInputElement {
	return row(modal, column).querySelector("input") as HTMLInputElement;
}

/** The error line under a column's field. */
function errorOf(modal: RowFormModal, column: string): string {
	return (row(modal, column).nextElementSibling as HTMLElement).textContent ?? "";
}

function type(el: HTMLInputElement | HTMLSelectElement, value: string): void {
	el.value = value;
	el.dispatchEvent(new Event(el instanceof HTMLSelectElement ? "change" : "input"));
}

test("a new row's form has a field per column, and the engine's refusal shows beside the field it names", async () => {
	const { app, plugin } = await films();
	const form = plugin.rowForms.newRow(table(plugin, "film"));
	// The fields, in schema order, with the right controls.
	const names = Array.from(form.contentEl.querySelectorAll<HTMLElement>(".datanotes-field")).map(
		(e) => `${e.dataset.column ?? ""}${e.querySelector(".datanotes-required") ? " *" : ""}`,
	);
	expect(names).toEqual(["title *", "year *", "minutes", "status", "rating", "tags", "director", "genres"]);
	expect(input(form, "year").type).toBe("number");
	const status = row(form, "status").querySelector("select") as HTMLSelectElement;
	expect(Array.from(status.options).map((o) => o.value)).toEqual(["", "watched", "to watch"]);
	expect(row(form, "tags").querySelector(".datanotes-list-add")).not.toBeNull();
	expect(row(form, "rating").textContent).toContain("1 to 5 stars");

	// Nothing typed yet: the dry run names the required fields under them.
	await form.check();
	expect(errorOf(form, "title")).toMatch(/required/);
	expect(errorOf(form, "year")).toMatch(/required/);
	expect(errorOf(form, "status")).toBe("");

	type(input(form, "title"), "Vampyr");
	type(input(form, "year"), "1932");
	type(status, "to watch");
	type(input(form, "rating"), "9");
	// The link field suggests people as you type, best match first.
	const director = input(form, "director");
	const suggest = new LinkSuggest(app.asOriginalType__() as AppOriginal, director, plugin.door, "person", "", () => undefined);
	const people = await suggest.getSuggestions("murn");
	expect(people.map((p) => p.name)).toEqual(["F. W. Murnau"]);
	// A name typed with a slip: the engine names the person meant, under the field.
	type(director, "F. W. Murnua");
	await form.check();
	expect(errorOf(form, "director")).toBe("[[F. W. Murnua]] does not resolve to a row of main.public.person (did you mean [[F. W. Murnau]]?)");
	suggest.selectSuggestion(people[0]);
	expect(director.value).toBe("[[F. W. Murnau]]");
	// A list: two tags.
	(row(form, "tags").querySelector(".datanotes-list-add") as HTMLButtonElement).click();
	(row(form, "tags").querySelector(".datanotes-list-add") as HTMLButtonElement).click();
	const tags = row(form, "tags").querySelectorAll<HTMLInputElement>(".datanotes-list-item input");
	type(tags[0], "vampires");
	type(tags[1], "silent");

	await form.check();
	expect(errorOf(form, "title")).toBe("");
	// The CHECK reads rating alone: told under it, in words.
	expect(form.contentEl.querySelector(".datanotes-form-error")?.textContent ?? "").toBe("");
	expect(errorOf(form, "rating")).toBe("rating_range: rating is empty, or rating is at least 1 and at most 5");
	expect(app.vault.getAbstractFileByPath("datanotes/main/public/film/Vampyr.md")).toBeNull();

	// Fixed, the row is written; the form closes and the note opens.
	type(input(form, "rating"), "4");
	await form.submit();
	const file = app.vault.getAbstractFileByPath("datanotes/main/public/film/Vampyr.md");
	expect(file).toBeInstanceOf(TFile);
	const text = await app.vault.read(file as TFile);
	expect(text).toContain("title: Vampyr\nyear: 1932\nstatus: to watch\nrating: 4\ntags:\n  - vampires\n  - silent\ndirector: \"[[F. W. Murnau]]\"\n");
	await vi.waitFor(() => expect(app.workspace.getActiveFile()?.path).toBe("datanotes/main/public/film/Vampyr.md"));

	// Undo last write undoes it.
	expect(await undoLast(plugin.door)).toBe("Datanotes: Undid: added Vampyr to film.");
	expect(app.vault.getAbstractFileByPath("datanotes/main/public/film/Vampyr.md")).toBeNull();
});

test("the edit form is filled from the row, writes with if_match, and offers a reload when the note changed", async () => {
	vi.useFakeTimers({ toFake: ["Date"], now: Date.UTC(2026, 11, 2, 12) });
	const { app, plugin, host } = await films();
	const charade = app.vault.getAbstractFileByPath(CHARADE) as TFile;
	expect(plugin.rowForms.tableOfPath(CHARADE)?.name).toBe("film");
	const form = (await plugin.rowForms.editRow(CHARADE)) as RowFormModal;
	expect(input(form, "title").value).toBe("Charade");
	expect(input(form, "year").value).toBe("1963");
	expect(Array.from(row(form, "genres").querySelectorAll<HTMLInputElement>(".datanotes-list-item input")).map((i) => i.value)).toEqual(["[[Thriller]]"]);

	type(input(form, "rating"), "4");
	expect(form.args(false).args).toMatchObject({ set: { rating: 4 }, remove: [], path: CHARADE });
	await form.submit();
	expect(await app.vault.read(charade)).toContain("\nrating: 4\n");

	// A form left open while the note is edited elsewhere is refused, then reloads.
	const stale = (await plugin.rowForms.editRow(CHARADE)) as RowFormModal;
	await app.vault.modify(charade, (await app.vault.read(charade)).replace("minutes: 113", "minutes: 114"));
	await vi.waitFor(() => expect(host.nextDeadline()).not.toBeNull());
	vi.setSystemTime((host.nextDeadline() as number) + 1);
	await host.tick();
	type(input(stale, "rating"), "3");
	await stale.submit();
	expect(stale.contentEl.querySelector(".datanotes-form-error")?.textContent).toBe("This note changed since the form opened: nothing was written.");
	expect(await app.vault.read(charade)).toContain("\nrating: 4\n");
	const reload = stale.contentEl.querySelector(".datanotes-form-reload button") as HTMLButtonElement;
	expect(reload.textContent).toBe("Reload");
	reload.click();
	await vi.waitFor(() => expect(input(stale, "minutes").value).toBe("114"));
	expect(input(stale, "rating").value).toBe("4");
	type(input(stale, "rating"), "3");
	await stale.submit();
	expect(await app.vault.read(charade)).toContain("\nminutes: 114\nstatus: watched\nrating: 3\n");
});

test("generated columns are read only, dates get pickers, a boolean a toggle, and the menus offer the forms", async () => {
	const { app, plugin } = await films();
	const watch = plugin.rowForms.newRow(table(plugin, "watch"));
	expect(input(watch, "occurred_at").type).toBe("datetime-local");
	expect(input(watch, "label").disabled).toBe(true);
	expect(row(watch, "label").textContent).toContain("computed: {film.title}");
	expect(row(watch, "where").querySelector("select")).not.toBeNull();
	watch.close();

	await plugin.door.call("add_column", { table: "film", column: "seen_in_cinema", definition: { type: "boolean" } });
	await plugin.door.call("add_column", { table: "film", column: "released", definition: { type: "date" } });
	await plugin.rowForms.refresh();
	const film = plugin.rowForms.newRow(table(plugin, "film"));
	expect(row(film, "seen_in_cinema").querySelector(".checkbox-container")).not.toBeNull();
	expect(input(film, "released").type).toBe("date");
	// An untouched toggle writes nothing; a touched one writes its value.
	expect(film.args(true).args.values).toEqual({});
	(row(film, "seen_in_cinema").querySelector(".checkbox-container") as HTMLElement).click();
	await new Promise((r) => setTimeout(r, CHECK_AFTER_MS + 50));
	expect(film.args(true).args.values).toEqual({ seen_in_cinema: true });
	film.close();

	// The table's folder offers New row…, a row's file menu Edit row….
	const items: string[] = [];
	const menu = { addItem: (fn: (i: unknown) => void) => fn({ setTitle: (t: string) => (items.push(t), { setIcon: () => ({ onClick: () => undefined }) }) }) };
	app.workspace.trigger("file-menu", menu, app.vault.getAbstractFileByPath("datanotes/main/public/film"));
	app.workspace.trigger("file-menu", menu, app.vault.getAbstractFileByPath(CHARADE));
	app.workspace.trigger("file-menu", menu, app.vault.getAbstractFileByPath("Notes/Film night.md"));
	expect(items).toEqual(["New row…", "Edit row…"]);
});

test("New view… makes a view from a table, conditions and an order, checked by the engine, and opens its base", async () => {
	const { app, plugin } = await films();
	const form = (await plugin.rowForms.newView()) as ViewFormModal;
	form.fill("Bad/Name", "main.public.film");
	expect(await form.check()).toBe(false);
	expect(form.contentEl.querySelector(".datanotes-form-error")?.textContent).toMatch(/is not a valid view name/);

	form.fill("long_films", "main.public.film", "Films over 100 minutes");
	const c = form.addCondition();
	c.column.value = "minutes";
	c.op.value = "gt";
	// Text where the column holds numbers would make a view of no row: the
	// engine says so above the form.
	c.value.value = "a hundred";
	expect(await form.check()).toBe(false);
	expect(form.contentEl.querySelector(".datanotes-form-error")?.textContent).toMatch(/compares minutes, which holds integers, with a string \("a hundred"\).*matches no row/);
	c.value.value = "100";
	const s = form.addSort();
	s.column.value = "year";
	s.desc.value = "desc";
	for (const box of form.contentEl.querySelectorAll<HTMLInputElement>(".datanotes-view-column input")) box.checked = ["title", "minutes"].includes(box.value);
	expect(form.args(false)).toEqual({
		name: "long_films",
		table: "main.public.film",
		description: "Films over 100 minutes",
		columns: ["title", "minutes"],
		where: { minutes: { gt: 100 } },
		order_by: ["year desc"],
		dry_run: false,
	});
	await form.submit();
	const rows = await plugin.door.call("select_rows", { table: "long_films" });
	expect(rows.status).toBe("done");
	expect((rows.answer as { rows: { title: string }[] }).rows.map((r) => r.title)).toEqual(["Charade", "Metropolis"]);
	await vi.waitFor(() => expect(app.workspace.getActiveFile()?.path).toBe("datanotes/bases/long_films.base"));
	expect(await undoLast(plugin.door)).toMatch(/^Datanotes: Undid: created view long_f/);
});
