// Row forms (issue 12, point 4; issue 53, point 3), through the plugin on
// obsidian-test-mocks' vault with the real engine: a field per column named for
// a person, Obsidian's widget for its type, the engine's refusal beside the
// field it names once the field is left, Save disabled with its reason while
// the engine refuses, the keyboard, link suggestions by title, if_match and
// its reload.

import { TFile } from "obsidian-test-mocks/obsidian";
import { Modal } from "obsidian-test-mocks/obsidian";
import { afterEach, expect, test, vi } from "vitest";
import { undoLast } from "../src/commands";
import type DatanotesPlugin from "../src/main";
import { CHECK_AFTER_MS, type Creation, type RowFormModal, type Suggestion } from "../src/row-form";
import type { ViewFormModal } from "../src/view-form";
import { CHARADE } from "./engine";
import { loadFilms } from "./plugin-harness";

let unload: (() => void) | null = null;
afterEach(() => {
	for (const form of open.splice(0)) form.close();
	unload?.();
	unload = null;
	vi.restoreAllMocks();
	vi.useRealTimers();
	document.body.empty();
});

/** obsidian-test-mocks closes a Modal on the next tick after open(), and does
 * not put it in the page: here a dialog stays open, in the page (as Obsidian
 * shows it), until the test or the dialog closes it. */
const open: Modal[] = [];
function keepFormsOpen(): void {
	vi.spyOn(Modal.prototype, "open").mockImplementation(function (this: Modal) {
		open.push(this);
		document.body.appendChild(this.containerEl);
		this.onOpen();
	});
}

async function films() {
	keepFormsOpen();
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

function select(modal: RowFormModal, column: string): HTMLSelectElement {
	return row(modal, column).querySelector("select") as HTMLSelectElement;
}

/** The error line under a column's field. */
function errorOf(modal: RowFormModal, column: string): string {
	return (row(modal, column).nextElementSibling as HTMLElement).textContent ?? "";
}

/** The button below a field's error line that offers a way out ("Create …"). */
function offerOf(modal: RowFormModal, column: string): HTMLButtonElement | null {
	const line = row(modal, column).nextElementSibling?.nextElementSibling;
	return line?.classList.contains("datanotes-field-offer") ? line.querySelector("button") : null;
}

function type(el: HTMLInputElement | HTMLSelectElement, value: string): void {
	el.value = value;
	el.dispatchEvent(new Event(el instanceof HTMLSelectElement ? "change" : "input"));
}

/** Focus leaves a field (to nowhere in it). */
function leave(el: HTMLElement): void {
	el.dispatchEvent(new FocusEvent("focusout", { bubbles: true, relatedTarget: null }));
}

function key(el: HTMLElement, k: string): KeyboardEvent {
	const evt = new KeyboardEvent("keydown", { key: k, bubbles: true, cancelable: true });
	el.dispatchEvent(evt);
	return evt;
}

function saveButton(modal: RowFormModal): HTMLButtonElement {
	return modal.contentEl.querySelector(".datanotes-form-footer button.mod-cta") as HTMLButtonElement;
}

function reasonOf(modal: RowFormModal): string {
	return modal.contentEl.querySelector(".datanotes-save-reason")?.textContent ?? "";
}

/** The pills of a list field, as they read. */
function pills(modal: RowFormModal, column: string): string[] {
	return Array.from(row(modal, column).querySelectorAll(".datanotes-pill-text")).map((p) => p.textContent ?? "");
}

/** What a screen reader calls a control: aria-label, aria-labelledby, a <label for>, a wrapping label, a button's text. */
function accessibleName(el: HTMLElement): string {
	const aria = el.getAttribute("aria-label");
	if (aria?.trim()) return aria.trim();
	const by = el.getAttribute("aria-labelledby");
	if (by) return by.split(/\s+/).map((id) => document.getElementById(id)?.textContent ?? "").join(" ").trim();
	if (el.id) {
		const label = document.querySelector(`label[for="${el.id}"]`);
		if (label?.textContent?.trim()) return label.textContent.trim();
	}
	const wrapping = el.closest("label");
	if (wrapping?.textContent?.trim()) return wrapping.textContent.trim();
	if (el instanceof HTMLButtonElement) return (el.textContent ?? "").trim();
	return "";
}

/** What a person reads of a form: its text and its boxes' values, Details left out. */
function readable(modal: RowFormModal): string {
	const copy = modal.modalEl.cloneNode(true) as HTMLElement;
	copy.querySelectorAll(".datanotes-details").forEach((d) => d.remove());
	const values = Array.from(modal.contentEl.querySelectorAll<HTMLInputElement>("input")).map((i) => i.value);
	return [copy.textContent ?? "", ...values].join("\n");
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
	const status = select(form, "status");
	expect(Array.from(status.options).map((o) => o.value)).toEqual(["", "watched", "to watch"]);
	expect(row(form, "tags").querySelector(".datanotes-pill-input")).not.toBeNull();
	expect(row(form, "rating").textContent).toContain("1 to 5 stars");

	type(input(form, "title"), "Vampyr");
	type(input(form, "year"), "1932");
	type(status, "to watch");
	type(input(form, "rating"), "9");
	// A name typed with a slip: the engine names the person meant, under the field once it is left.
	const director = input(form, "director");
	type(director, "F. W. Murnua");
	await form.check();
	leave(director);
	expect(errorOf(form, "director")).toBe("No row of person is called “F. W. Murnua”. Did you mean F. W. Murnau?");
	// The link field suggests people as you type, best match first; the one picked shows by name.
	const suggest = form.suggestOf("director");
	const people = ((await suggest?.getSuggestions("murn")) ?? []).filter((o): o is Suggestion => !("create" in o));
	expect(people.map((p) => p.name)).toEqual(["F. W. Murnau"]);
	suggest?.selectSuggestion(people[0]);
	expect(director.value).toBe("F. W. Murnau");
	// A list: two tags, each added with Enter.
	const tags = row(form, "tags").querySelector(".datanotes-pill-input") as HTMLInputElement;
	for (const t of ["vampires", "silent"]) {
		type(tags, t);
		key(tags, "Enter");
	}
	expect(pills(form, "tags")).toEqual(["vampires", "silent"]);

	await form.check();
	leave(input(form, "rating"));
	expect(errorOf(form, "title")).toBe("");
	expect(errorOf(form, "director")).toBe("");
	// The CHECK reads rating alone: told under it, in words.
	expect(form.contentEl.querySelector(".datanotes-form-error")?.textContent ?? "").toBe("");
	expect(errorOf(form, "rating")).toBe("rating is empty, or rating is at least 1 and at most 5");
	expect(app.vault.getAbstractFileByPath("datanotes/main/public/film/Vampyr.md")).toBeNull();

	// Fixed, the row is written; the form closes and the note opens.
	type(input(form, "rating"), "4");
	expect(await form.submit()).toBe(true);
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
	expect(pills(form, "genres")).toEqual(["Thriller"]);

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
	expect(saveButton(stale).disabled).toBe(true);
	expect(await app.vault.read(charade)).toContain("\nrating: 4\n");
	const reload = stale.contentEl.querySelector(".datanotes-form-reload button") as HTMLButtonElement;
	expect(reload.textContent).toBe("Reload");
	reload.click();
	await vi.waitFor(() => expect(input(stale, "minutes").value).toBe("114"));
	expect(input(stale, "rating").value).toBe("4");
	expect(saveButton(stale).disabled).toBe(false);
	type(input(stale, "rating"), "3");
	await stale.submit();
	expect(await app.vault.read(charade)).toContain("\nminutes: 114\nstatus: watched\nrating: 3\n");
});

test("generated columns are read only, dates get pickers, a boolean a checkbox, and the menus offer the forms", async () => {
	const { app, plugin } = await films();
	const watch = plugin.rowForms.newRow(table(plugin, "watch"));
	expect(input(watch, "occurred_at").type).toBe("datetime-local");
	expect(row(watch, "label").querySelector("input, select")).toBeNull();
	expect(row(watch, "where").querySelector("select")).not.toBeNull();
	watch.close();

	await plugin.door.call("add_column", { table: "film", column: "seen_in_cinema", definition: { type: "boolean" } });
	await plugin.door.call("add_column", { table: "film", column: "released", definition: { type: "date" } });
	await plugin.rowForms.refresh();
	const film = plugin.rowForms.newRow(table(plugin, "film"));
	const box = input(film, "seen_in_cinema");
	expect(box.type).toBe("checkbox");
	expect(row(film, "seen_in_cinema").querySelector(".datanotes-field-name")?.textContent).toBe("Seen in cinema");
	expect(input(film, "released").type).toBe("date");
	// An untouched checkbox writes nothing; a touched one writes its value.
	expect(film.args(true).args.values).toEqual({});
	box.click();
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

test("each field is named for a person: the column's description, else its name in words", async () => {
	const { plugin } = await films();
	const film = plugin.rowForms.newRow(table(plugin, "film"));
	const label = (f: RowFormModal, c: string) => row(f, c).querySelector(".datanotes-field-name")?.firstChild?.textContent;
	expect(["title", "year", "rating", "director"].map((c) => label(film, c))).toEqual(["Title", "Year", "1 to 5 stars", "Director"]);
	const watch = plugin.rowForms.newRow(table(plugin, "watch"));
	expect(label(watch, "occurred_at")).toBe("Occurred at");
	const person = plugin.rowForms.newRow(table(plugin, "person"));
	expect(label(person, "born")).toBe("Year of birth");
});

test("keyboard: the first field has focus, Enter saves when the engine accepts, Escape cancels", async () => {
	const { app, plugin } = await films();
	const form = plugin.rowForms.newRow(table(plugin, "film"));
	const title = input(form, "title");
	expect(document.activeElement).toBe(title);
	await form.checking;

	// Enter while the engine refuses: nothing is written, every error shows.
	type(title, "Vampyr");
	key(title, "Enter");
	await vi.waitFor(() => expect(errorOf(form, "year")).toBe("Required."));
	expect(app.vault.getAbstractFileByPath("datanotes/main/public/film/Vampyr.md")).toBeNull();
	expect(document.activeElement).toBe(input(form, "year"));

	// Enter once it is accepted: written, the form closed.
	const year = input(form, "year");
	type(year, "1932");
	expect(key(year, "Enter").defaultPrevented).toBe(true);
	await vi.waitFor(() => expect(app.vault.getAbstractFileByPath("datanotes/main/public/film/Vampyr.md")).toBeInstanceOf(TFile));
	expect(form.contentEl.childElementCount).toBe(0);

	// Escape cancels: the form closes and nothing is written; so does Cancel.
	// While a link's suggestions show, Enter and Escape are theirs.
	const other = plugin.rowForms.newRow(table(plugin, "film"));
	type(input(other, "title"), "Faust");
	type(input(other, "year"), "1926");
	other.suggestOf("director")?.open();
	expect(key(input(other, "director"), "Enter").defaultPrevented).toBe(false);
	key(input(other, "director"), "Escape");
	expect(other.suggestOf("director")?.shown).toBe(false);
	expect(other.contentEl.childElementCount).toBeGreaterThan(0);
	key(input(other, "year"), "Escape");
	expect(other.contentEl.childElementCount).toBe(0);
	const third = plugin.rowForms.newRow(table(plugin, "film"));
	type(input(third, "title"), "Faust");
	type(input(third, "year"), "1926");
	const cancel = Array.from(third.contentEl.querySelectorAll("button")).find((b) => b.textContent === "Cancel") as HTMLButtonElement;
	cancel.click();
	expect(third.contentEl.childElementCount).toBe(0);
	await new Promise((r) => setTimeout(r, CHECK_AFTER_MS + 50));
	expect(app.vault.getAbstractFileByPath("datanotes/main/public/film/Faust.md")).toBeNull();
});

test("every control of a form has an accessible name", async () => {
	const { plugin } = await films();
	await plugin.door.call("add_column", { table: "film", column: "seen_in_cinema", definition: { type: "boolean" } });
	await plugin.rowForms.refresh();
	const forms = [
		plugin.rowForms.newRow(table(plugin, "film")),
		plugin.rowForms.newRow(table(plugin, "watch")),
		(await plugin.rowForms.editRow(CHARADE)) as RowFormModal,
	];
	for (const form of forms) {
		const controls = Array.from(form.contentEl.querySelectorAll<HTMLElement>("input, select, textarea, button"));
		expect(controls.length).toBeGreaterThan(4);
		for (const c of controls) expect(accessibleName(c), c.outerHTML).not.toBe("");
	}
	const charade = forms[2];
	expect(accessibleName(input(charade, "title"))).toBe("Title");
	expect(accessibleName(input(charade, "rating"))).toBe("1 to 5 stars");
	expect(accessibleName(select(charade, "status"))).toBe("Status");
	expect(accessibleName(input(charade, "seen_in_cinema"))).toBe("Seen in cinema");
	expect(Array.from(row(charade, "tags").querySelectorAll("button")).map(accessibleName)).toEqual(["Remove seen-2026", "Remove film-night"]);
});

test("a field's error shows once the field is left or Save is tried, not before", async () => {
	const { plugin } = await films();
	const form = plugin.rowForms.newRow(table(plugin, "film"));
	await form.checking;
	// The engine refuses the empty form, but nothing was touched: no error yet.
	expect(saveButton(form).disabled).toBe(true);
	expect(["title", "year", "director"].map((c) => errorOf(form, c))).toEqual(["", "", ""]);

	// Left empty: Title is required.
	leave(input(form, "title"));
	expect(errorOf(form, "title")).toBe("Required.");
	expect(errorOf(form, "year")).toBe("");
	expect(input(form, "title").getAttribute("aria-invalid")).toBe("true");

	// Typing in a field: not told until it is left.
	type(input(form, "director"), "Fritz Lnag");
	await form.check();
	expect(errorOf(form, "director")).toBe("");
	leave(input(form, "director"));
	expect(errorOf(form, "director")).toBe("No row of person is called “Fritz Lnag”. Did you mean Fritz Lang?");
	expect(offerOf(form, "director")?.textContent).toBe("Create “Fritz Lnag” in person");

	// Save tried: every error shows.
	await form.submit();
	expect(errorOf(form, "year")).toBe("Required.");
	expect(errorOf(form, "title")).toBe("Required.");
});

test("Save is disabled with its reason beside it while the engine refuses, the engine's text behind Details", async () => {
	const { plugin } = await films();
	const form = plugin.rowForms.newRow(table(plugin, "film"));
	await form.checking;
	const save = saveButton(form);
	const details = form.contentEl.querySelector(".datanotes-details") as HTMLDetailsElement;
	expect(save.disabled).toBe(true);
	expect(reasonOf(form)).toBe("To save, fill in Title and Year.");
	expect(save.getAttribute("aria-describedby")).toBe(form.contentEl.querySelector(".datanotes-save-reason")?.id);
	type(input(form, "title"), "Vampyr");
	type(input(form, "rating"), "9");
	await form.check();
	expect(reasonOf(form)).toBe("To save, fill in Year, and fix 1 to 5 stars.");
	type(input(form, "year"), "1932");
	await form.check();
	expect(save.disabled).toBe(true);
	expect(reasonOf(form)).toBe("To save, fix 1 to 5 stars.");
	// The engine's own words only behind Details.
	expect(details.hidden).toBe(false);
	expect(details.querySelector("summary")?.textContent).toBe("Details");
	expect(details.querySelector("pre")?.textContent).toMatch(/^insert_row refused/);
	leave(input(form, "rating"));
	expect(readable(form)).not.toMatch(/insert_row|main\.public|datanotes\/|\{"|\[\[/);

	type(input(form, "rating"), "4");
	await form.check();
	expect(save.disabled).toBe(false);
	expect(reasonOf(form)).toBe("");
	expect(details.hidden).toBe(true);
});

test("a list is pills: Enter adds one, × removes one, leaving the box keeps what was typed", async () => {
	const { plugin } = await films();
	const form = (await plugin.rowForms.editRow(CHARADE)) as RowFormModal;
	expect(pills(form, "tags")).toEqual(["seen-2026", "film-night"]);
	const add = row(form, "tags").querySelector(".datanotes-pill-input") as HTMLInputElement;
	type(add, "hitchcockian");
	// Enter in the box adds a pill (and does not save).
	expect(key(add, "Enter").defaultPrevented).toBe(true);
	expect(pills(form, "tags")).toEqual(["seen-2026", "film-night", "hitchcockian"]);
	expect(add.value).toBe("");
	(row(form, "tags").querySelector('button[aria-label="Remove seen-2026"]') as HTMLButtonElement).click();
	expect(pills(form, "tags")).toEqual(["film-night", "hitchcockian"]);
	type(add, "paris");
	add.dispatchEvent(new FocusEvent("blur"));
	expect(pills(form, "tags")).toEqual(["film-night", "hitchcockian", "paris"]);
	// Backspace in the empty box takes the last one back.
	key(add, "Backspace");
	expect(pills(form, "tags")).toEqual(["film-night", "hitchcockian"]);
	type(add, "paris");
	key(add, "Enter");
	expect(form.args(true).args).toMatchObject({ set: { tags: ["film-night", "hitchcockian", "paris"] }, remove: [] });
	// A list of links: each pill is the row's title; a pick from the suggestions adds one.
	expect(pills(form, "genres")).toEqual(["Thriller"]);
	const suggest = form.suggestOf("genres");
	const offers = (await suggest?.getSuggestions("screw")) as Suggestion[];
	suggest?.selectSuggestion(offers[0]);
	expect(pills(form, "genres")).toEqual(["Thriller", "Screwball comedy"]);
	expect(form.args(true).args).toMatchObject({ set: { genres: ["[[Thriller]]", "[[Screwball comedy]]"] } });
});

test("a link shows its row's title, not the link", async () => {
	const { plugin } = await films();
	const form = (await plugin.rowForms.editRow(CHARADE)) as RowFormModal;
	const director = input(form, "director");
	expect(director.value).toBe("Stanley Donen");
	expect(readable(form)).not.toContain("[[");
	// Untouched, the link stays as the note holds it.
	expect(form.args(true).args).toMatchObject({ set: {}, remove: [] });
	const suggest = form.suggestOf("director");
	const offers = (await suggest?.getSuggestions("lang")) as Suggestion[];
	const shown = createDiv();
	suggest?.renderSuggestion(offers[0], shown);
	expect(shown.textContent).toBe("Fritz Lang");
	suggest?.selectSuggestion(offers[0]);
	expect(director.value).toBe("Fritz Lang");
	expect(form.args(true).args).toMatchObject({ set: { director: "[[Fritz Lang]]" } });
});

test("a generated column shows, read only, the value it will hold once saved", async () => {
	const { plugin } = await films();
	const form = plugin.rowForms.newRow(table(plugin, "watch"));
	await form.checking;
	const label = row(form, "label");
	expect(label.textContent).not.toContain("{");
	expect(label.querySelector(".datanotes-field-desc")?.textContent).toBe("Computed from Film, Occurred at and Where");
	expect(label.querySelector(".datanotes-computed")?.textContent).toBe("Computed when saved");
	const suggest = form.suggestOf("film");
	suggest?.selectSuggestion(((await suggest.getSuggestions("chara")) as Suggestion[])[0]);
	type(input(form, "occurred_at"), "2026-12-01T20:00");
	type(select(form, "where"), "cinema");
	await form.check();
	expect(label.querySelector(".datanotes-computed")?.textContent).toBe("Charade (01/12 20:00, cinema)");
	expect(row(form, "day").querySelector(".datanotes-computed")?.textContent).toBe("2026-12-01");

	// An existing row: what it holds, then what the change makes of it.
	const path = "datanotes/main/public/watch/2026-09-25T2100.md";
	const edit = (await plugin.rowForms.editRow(path)) as RowFormModal;
	const computed = () => row(edit, "label").querySelector(".datanotes-computed")?.textContent;
	expect(computed()).toBe("Charade (25/09 21:00, home)");
	type(select(edit, "where"), "cinema");
	await edit.check();
	expect(computed()).toBe("Charade (25/09 21:00, cinema)");
});

test("a row that breaks a rule opens with the rule under its field, which stays told after other changes", async () => {
	vi.useFakeTimers({ toFake: ["Date"], now: Date.UTC(2026, 11, 2, 12) });
	const { app, plugin, host } = await films();
	const charade = app.vault.getAbstractFileByPath(CHARADE) as TFile;
	await app.vault.modify(charade, (await app.vault.read(charade)).replace("rating: 5", "rating: 9"));
	await vi.waitFor(() => expect(host.nextDeadline()).not.toBeNull());
	vi.setSystemTime((host.nextDeadline() as number) + 1);
	await host.tick();
	const message = 'violates CHECK rating_range: {"or":[{"rating":{"exists":false}},{"and":[{"rating":{"gte":1}},{"rating":{"lte":5}}]}]}';
	const form = (await plugin.rowForms.editRow(CHARADE, [{ code: "check", constraint: "rating_range", message, value: { rating: 9 } }])) as RowFormModal;
	const rule = "rating is empty, or rating is at least 1 and at most 5";
	expect(errorOf(form, "rating")).toBe(rule);
	// A change elsewhere (the engine takes it: the rating is as it was): the rule stays told under the rating.
	type(input(form, "minutes"), "114");
	await form.check();
	expect(saveButton(form).disabled).toBe(false);
	expect(errorOf(form, "rating")).toBe(rule);
	type(input(form, "rating"), "4");
	await form.check();
	expect(errorOf(form, "rating")).toBe("");
	expect(saveButton(form).disabled).toBe(false);
});

test("a note name another row holds is told under the column the note is named from", async () => {
	const { plugin } = await films();
	const form = plugin.rowForms.newRow(table(plugin, "watch"));
	const suggest = form.suggestOf("film");
	suggest?.selectSuggestion(((await suggest.getSuggestions("chara")) as Suggestion[])[0]);
	type(input(form, "occurred_at"), "2026-09-25T21:00");
	await form.check();
	expect(saveButton(form).disabled).toBe(true);
	expect(reasonOf(form)).toBe("To save, fix Occurred at.");
	leave(input(form, "occurred_at"));
	expect(errorOf(form, "occurred_at")).toBe("Another note is already called “2026-09-25T2100”.");
	type(input(form, "occurred_at"), "2026-09-25T23:00");
	await form.check();
	expect(saveButton(form).disabled).toBe(false);
	expect(errorOf(form, "occurred_at")).toBe("");
});

test("a link to a row not there yet offers Create “…” in its table: a second form, then the link filled in", async () => {
	const { app, plugin } = await films();
	const form = plugin.rowForms.newRow(table(plugin, "film"));
	type(input(form, "title"), "Spies");
	type(input(form, "year"), "1928");
	const suggest = form.suggestOf("director");
	const offers = (await suggest?.getSuggestions("Fritz Lnag")) ?? [];
	const create = offers[offers.length - 1] as Creation;
	expect(create).toEqual({ create: "Fritz Lnag" });
	const shown = createDiv();
	suggest?.renderSuggestion(create, shown);
	expect(shown.textContent).toBe("Create “Fritz Lnag” in person");
	// An exact name offers no creation.
	expect(((await suggest?.getSuggestions("Fritz Lang")) ?? []).filter((o) => "create" in o)).toEqual([]);

	suggest?.selectSuggestion(create);
	const person = form.created as RowFormModal;
	expect(person).not.toBeNull();
	expect(input(person, "name").value).toBe("Fritz Lnag");
	type(input(person, "born"), "1890");
	expect(await person.submit()).toBe(true);
	expect(app.vault.getAbstractFileByPath("datanotes/main/public/person/Fritz Lnag.md")).toBeInstanceOf(TFile);
	// Back in the film's form, the link filled in by title; the note of the person is not opened.
	expect(input(form, "director").value).toBe("Fritz Lnag");
	expect(app.workspace.getActiveFile()?.path).not.toBe("datanotes/main/public/person/Fritz Lnag.md");
	expect(await form.submit()).toBe(true);
	expect(await app.vault.read(app.vault.getAbstractFileByPath("datanotes/main/public/film/Spies.md") as TFile)).toContain('director: "[[Fritz Lnag]]"');

	// Left with a name no row has, the field offers the same under its error.
	const next = plugin.rowForms.newRow(table(plugin, "film"));
	type(input(next, "director"), "Thea von Harbou");
	await next.check();
	leave(input(next, "director"));
	const offer = offerOf(next, "director") as HTMLButtonElement;
	expect(offer.textContent).toBe("Create “Thea von Harbou” in person");
	offer.click();
	expect(input(next.created as RowFormModal, "name").value).toBe("Thea von Harbou");
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
	expect(rows.status).toBe("ok");
	expect((rows.answer as { rows: { title: string }[] }).rows.map((r) => r.title)).toEqual(["Charade", "Metropolis"]);
	await vi.waitFor(() => expect(app.workspace.getActiveFile()?.path).toBe("datanotes/bases/long_films.base"));
	expect(await undoLast(plugin.door)).toMatch(/^Datanotes: Undid: created view long_f/);
});
