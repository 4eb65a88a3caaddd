// New view… and New table… (checked-form.ts) by keyboard and screen reader
// (issue 53, "Bad input and failure"): the name's field has the focus, Enter
// creates once the engine accepts, Escape cancels (an open list of tables
// first), Cancel does too; every control is named; while the engine refuses,
// Create is disabled with what to do beside it, the refusal said in words
// above the form and the engine's text behind Details.

import { Modal, TFile } from "obsidian-test-mocks/obsidian";
import { afterEach, expect, test, vi } from "vitest";
import type { CheckedForm } from "../src/checked-form";
import type DatanotesPlugin from "../src/main";
import type { TableFormModal } from "../src/table-form";
import type { ViewFormModal } from "../src/view-form";
import { loadFilms } from "./plugin-harness";

let unload: (() => void) | null = null;
const opened: Modal[] = [];

afterEach(() => {
	for (const m of opened.splice(0)) m.close();
	unload?.();
	unload = null;
	vi.restoreAllMocks();
	document.body.empty();
});

/** The plugin on the film diary, its dialogs kept open in the page (as Obsidian shows them). */
async function films(extra: Record<string, string> = {}): Promise<DatanotesPlugin> {
	vi.spyOn(Modal.prototype, "open").mockImplementation(function (this: Modal) {
		opened.push(this);
		document.body.appendChild(this.containerEl);
		this.onOpen();
	});
	const loaded = await loadFilms(extra);
	unload = loaded.unload;
	await loaded.plugin.rowForms.refresh();
	return loaded.plugin;
}

function key(el: HTMLElement, k: string): KeyboardEvent {
	const evt = new KeyboardEvent("keydown", { key: k, bubbles: true, cancelable: true });
	el.dispatchEvent(evt);
	return evt;
}

function type(el: HTMLInputElement, value: string): void {
	el.value = value;
	el.dispatchEvent(new Event("input"));
}

const nameOf = (form: CheckedForm) => form.contentEl.querySelector<HTMLInputElement>('input[aria-label="Name"]') as HTMLInputElement;
const create = (form: CheckedForm) => form.contentEl.querySelector<HTMLButtonElement>(".datanotes-form-footer button.mod-cta") as HTMLButtonElement;
const reason = (form: CheckedForm) => form.contentEl.querySelector(".datanotes-save-reason")?.textContent ?? "";
const said = (form: CheckedForm) => form.contentEl.querySelector(".datanotes-form-error")?.textContent ?? "";
const details = (form: CheckedForm) => form.contentEl.querySelector<HTMLDetailsElement>(".datanotes-form-footer details") as HTMLDetailsElement;
const isOpen = (form: CheckedForm) => form.contentEl.childElementCount > 0;

/** What a screen reader calls a control: aria-label, a wrapping label, a button's text. */
function accessibleName(el: HTMLElement): string {
	const aria = el.getAttribute("aria-label");
	if (aria?.trim()) return aria.trim();
	const wrapping = el.closest("label");
	if (wrapping?.textContent?.trim()) return wrapping.textContent.trim();
	if (el instanceof HTMLButtonElement) return (el.textContent ?? "").trim();
	return "";
}

test("New view… by keyboard: the name has the focus; Create waits for a name and for the engine; Enter creates", async () => {
	const plugin = await films();
	const form = (await plugin.rowForms.newView()) as ViewFormModal;
	const name = nameOf(form);
	expect(document.activeElement).toBe(name);
	// Nothing typed yet: no error, Create disabled with what it needs.
	expect(said(form)).toBe("");
	expect(create(form).disabled).toBe(true);
	expect(reason(form)).toBe("Name the view to create it.");
	expect(create(form).getAttribute("aria-describedby")).toBe(form.contentEl.querySelector(".datanotes-save-reason")?.id);
	// A name the engine refuses: in words above, what to do beside Create, its text behind Details.
	type(name, "Silent Films");
	expect(reason(form)).toBe("Checking…");
	expect(await form.check()).toBe(false);
	expect(said(form)).toBe('"Silent Films" is not a valid view name.');
	expect(reason(form)).toBe("Name a view with lower case letters, digits and _ (to_watch).");
	expect(create(form).disabled).toBe(true);
	expect(details(form).hidden).toBe(false);
	expect(details(form).textContent).toContain("create_view: bad arguments");
	expect(said(form) + reason(form)).not.toMatch(/create_view|Hint:|Docs:|main\.public\./);
	// Enter while refused: nothing is written, the form stays.
	expect(key(name, "Enter").defaultPrevented).toBe(true);
	await new Promise((r) => setTimeout(r, 50));
	expect(isOpen(form)).toBe(true);
	expect((await plugin.door.call("select_rows", { table: "silent_films" })).status).not.toBe("ok");
	// Accepted: Create enabled, nothing beside it; Enter creates and closes.
	type(name, "silent_films");
	expect(await form.check()).toBe(true);
	expect(create(form).disabled).toBe(false);
	expect(reason(form)).toBe("");
	expect(said(form)).toBe("");
	expect(details(form).hidden).toBe(true);
	key(name, "Enter");
	await vi.waitFor(() => expect(isOpen(form)).toBe(false));
	expect((await plugin.door.call("select_rows", { table: "silent_films" })).status).toBe("ok");
	// Enter on a button is the button's; on Details, its own.
	const again = (await plugin.rowForms.newView()) as ViewFormModal;
	type(nameOf(again), "other");
	expect(key(create(again), "Enter").defaultPrevented).toBe(false);
});

test("Escape and Cancel close without writing; Escape closes an open list of tables first", async () => {
	const plugin = await films({ "Reading/Dune.md": "---\ntitle: Dune\nshelf: sf\n---\n" });
	const view = (await plugin.rowForms.newView()) as ViewFormModal;
	type(nameOf(view), "escaped");
	expect(key(nameOf(view), "Escape").defaultPrevented).toBe(true);
	expect(isOpen(view)).toBe(false);
	const table = (await plugin.rowForms.newTable("Reading")) as TableFormModal;
	await table.ready;
	const shelf = table.rows.find((r) => r.name.value === "shelf");
	if (!shelf) throw new Error("no shelf column");
	shelf.type.value = "link";
	shelf.type.dispatchEvent(new Event("change"));
	shelf.suggest.open();
	expect(shelf.suggest.shown).toBe(true);
	// Enter is the list's while it shows.
	expect(key(shelf.extra, "Enter").defaultPrevented).toBe(false);
	key(shelf.extra, "Escape");
	expect(shelf.suggest.shown).toBe(false);
	expect(isOpen(table)).toBe(true);
	const cancel = Array.from(table.contentEl.querySelectorAll("button")).find((b) => b.textContent === "Cancel") as HTMLButtonElement;
	cancel.click();
	expect(isOpen(table)).toBe(false);
	await new Promise((r) => setTimeout(r, 350));
	const db = await plugin.door.call("describe_database", {});
	expect(db.status === "ok" && db.answer.tables.map((t) => t.name)).not.toContain("reading");
	expect(plugin.app.vault.getAbstractFileByPath("Reading/Dune.md")).toBeInstanceOf(TFile);
});

test("every control of New view… and New table… has an accessible name", async () => {
	const plugin = await films({ "Reading/Dune.md": "---\ntitle: Dune\nyear: 1965\n---\n" });
	const view = (await plugin.rowForms.newView()) as ViewFormModal;
	view.addCondition();
	view.addSort();
	const table = (await plugin.rowForms.newTable("Reading")) as TableFormModal;
	await table.ready;
	table.contentEl.querySelector<HTMLButtonElement>(".datanotes-add-column")?.click();
	for (const form of [view, table] as CheckedForm[]) {
		const controls = Array.from(form.contentEl.querySelectorAll<HTMLElement>("input, select, textarea, button"));
		expect(controls.length).toBeGreaterThan(8);
		for (const c of controls) expect(accessibleName(c), c.outerHTML).not.toBe("");
	}
	// A column's controls are named with its column, for a screen reader reading one row of many.
	const year = table.rows.find((r) => r.name.value === "year");
	expect([year?.keep, year?.type].map((c) => c?.getAttribute("aria-label"))).toEqual(["Keep year", "Type of year"]);
	expect(view.contentEl.querySelector('[aria-label="Value of condition 1"]')).not.toBeNull();
});

test("New table… refused for a name taken: said in words, Create disabled with the reason, the engine's text behind Details", async () => {
	const plugin = await films();
	const form = (await plugin.rowForms.newTable(null)) as TableFormModal;
	expect(document.activeElement).toBe(nameOf(form));
	type(nameOf(form), "film");
	expect(await form.check()).toBe(false);
	expect(said(form)).toBe("film exists already.");
	expect(create(form).disabled).toBe(true);
	expect(reason(form)).not.toBe("");
	expect(details(form).textContent).toContain("main.public.film exists already");
	expect(await form.submit()).toBe(false);
	expect(isOpen(form)).toBe(true);
});
