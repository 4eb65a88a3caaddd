// The history panel (obsidian-test-mocks for the view, the real engine behind it).

import { App, Notice, WorkspaceLeaf } from "obsidian-test-mocks/obsidian";
import { describe, expect, test, vi } from "vitest";
import { undoLast } from "../src/commands";
import { operationWords } from "../src/display";
import { confirmed, type EngineDoor, HistoryView, undidWords } from "../src/history-view";
import { ans, CHARADE, filmDiary, openFilms, door } from "./engine";
import { refusalNotice, refusedRow } from "../src/notice-buttons";
import type { Outcome } from "../src/types";

const charade = filmDiary.get(CHARADE) as string;
const METROPOLIS = "datanotes/main/public/film/Metropolis.md";


function openView(d: EngineDoor): HistoryView {
	const app = App.createConfigured__();
	const leaf = WorkspaceLeaf.create2__(app);
	return new HistoryView(leaf.asOriginalType3__(), d);
}

function rows(view: HistoryView): HTMLElement[] {
	return Array.from(view.contentEl.querySelectorAll<HTMLElement>(".datanotes-history-row"));
}

/** Waits until the view has drawn what `ready` looks for. */
async function until(ready: () => boolean): Promise<void> {
	for (let i = 0; i < 100 && !ready(); i++) await new Promise((r) => setTimeout(r, 5));
	expect(ready()).toBe(true);
}

describe("history view", () => {
	test("the tabs: each named by its aria-label, one Tab stop, Left and Right move along them, the focus kept when one is shown", async () => {
		const { host } = await openFilms();
		const view = openView(door(host));
		document.body.appendChild(view.containerEl);
		await view.onOpen();
		const tabs = () => Array.from(view.contentEl.querySelectorAll<HTMLElement>(".datanotes-tab"));
		expect(tabs().map((t) => t.getAttribute("aria-label"))).toEqual(["Journal", "Table", "This note", "Database", "Changes"]);
		expect(tabs().map((t) => t.tabIndex)).toEqual([0, -1, -1, -1, -1]);
		expect(view.contentEl.querySelector(".datanotes-section")?.getAttribute("role")).toBe("tabpanel");
		const key = (key: string) => (document.activeElement as HTMLElement).dispatchEvent(new KeyboardEvent("keydown", { key, bubbles: true, cancelable: true }));
		tabs()[0].focus();
		key("ArrowLeft");
		expect(document.activeElement).toBe(tabs()[4]);
		key("ArrowRight");
		key("ArrowRight");
		expect(document.activeElement).toBe(tabs()[1]);
		key("End");
		expect(document.activeElement).toBe(tabs()[4]);
		key("Home");
		key("ArrowRight");
		// Shown, the tab is drawn again: it has the focus and is the Tab stop.
		(document.activeElement as HTMLElement).click();
		await until(() => view.shown() === "table" && tabs()[1].classList.contains("is-active"));
		expect(document.activeElement).toBe(tabs()[1]);
		expect(tabs().map((t) => t.tabIndex)).toEqual([-1, 0, -1, -1, -1]);
		expect(tabs()[1].getAttribute("aria-selected")).toBe("true");
		await view.onClose();
		view.containerEl.remove();
	});

	test("a row cut short in a narrow pane keeps its whole path as its title, drawn later too", async () => {
		const { host } = await openFilms();
		await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 4 } });
		const view = openView(door(host));
		await view.onOpen();
		await view.show("changes");
		await until(() => view.contentEl.querySelector(".datanotes-diff-path") !== null);
		const paths = Array.from(view.contentEl.querySelectorAll<HTMLElement>(".datanotes-diff-path"));
		expect(paths.length).toBeGreaterThan(0);
		// A row shows as its title; the whole path is its title attribute, shown on hover.
		for (const p of paths) expect(p.getAttribute("title")).toBeTruthy();
		expect(paths.map((p) => p.textContent)).toContain("Charade");
		expect(paths.map((p) => p.getAttribute("title"))).toContain(CHARADE);
		await view.onClose();
	});

	test("lists list_migrations newest first; Undo calls undo_migration and the note comes back", async () => {
		const { host, fs, clock } = await openFilms();
		await host.call("update_row", { table: "film", path: CHARADE, set: { year: 1964 } });
		clock.advance(60_000);
		await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 4 } });
		const d = door(host);
		const calls = vi.spyOn(d, "call");
		const view = openView(d);
		await view.onOpen();

		let shown = rows(view);
		expect(shown).toHaveLength(2);
		// In words: what changed, of which row.
		expect(shown[0].textContent).toContain("Changed rating of Charade");
		expect(shown[0].textContent).not.toContain("update_row");
		expect(shown[0].textContent).toContain("in Obsidian");
		expect(calls).toHaveBeenCalledWith("list_migrations", { limit: 50 });
		const newest = shown[0].dataset.migrationId as string;
		const list = await host.call("list_migrations", {});
		expect(newest).toBe(ans(list).migrations[0].migration_id);

		const notices = vi.spyOn(Notice.prototype, "constructor__");
		// The first click asks; nothing is written until the second.
		const button = shown[0].querySelector<HTMLButtonElement>(".datanotes-history-undo") as HTMLButtonElement;
		const before = fs.text(CHARADE);
		button.click();
		expect(button.textContent).toBe("Confirm undo");
		await new Promise((r) => setTimeout(r, 20));
		expect(calls).not.toHaveBeenCalledWith("undo_migration", expect.anything());
		expect(fs.text(CHARADE)).toBe(before);
		button.click();
		await until(() => rows(view).length === 3);
		expect(calls).toHaveBeenCalledWith("undo_migration", { migration_id: newest });
		expect(String(notices.mock.calls[0]?.[0])).toBe("Datanotes: Undid: changed rating of Charade.");
		expect(fs.text(CHARADE)).toBe(charade.replace("\nyear: 1963\n", "\nyear: 1964\n"));
		shown = rows(view);
		// The undo is journaled (newest first); the entry it undid is marked undone.
		// Named by what it undid, not by the undone entry's id.
		expect(shown[0].querySelector(".datanotes-history-summary")?.textContent).toBe("Undid: changed rating of Charade");
		const undone = shown.find((r) => r.dataset.migrationId === newest) as HTMLElement;
		expect(undone.classList.contains("is-undone")).toBe(true);
		expect(undone.querySelector<HTMLButtonElement>(".datanotes-history-undo")?.disabled).toBe(true);
		await view.onClose();
		notices.mockRestore();
	});

	test("an entry in words: an undo names what it undid, a redo what it redid; an undone entry no longer listed is 'an earlier operation'", () => {
		const write = { migration_id: "w", op: "insert_row", summary: "insert into person", table: "main.public.person" };
		const undo = { migration_id: "u", op: "undo_migration", summary: "undo w", undoes: "w" };
		const redo = { migration_id: "r", op: "undo_migration", summary: "undo u", undoes: "u" };
		const all = [redo, undo, write];
		expect(operationWords(undo, all)).toBe("Undid: added a row to person");
		expect(operationWords(redo, all)).toBe("Redid: added a row to person");
		expect(operationWords(write, all)).toBe("Added a row to person");
		// What it did to its note names the row.
		const notes = () => [{ path: "datanotes/main/public/person/Ada.md", kind: "created" as const, changes: {} }];
		expect(operationWords(undo, all, notes)).toBe("Undid: added Ada to person");
		expect(operationWords(undo, [undo])).toBe("Undid an earlier operation");
		expect(operationWords(redo, [redo, undo])).toBe("Redid an earlier operation");
		expect(operationWords({ migration_id: "d", op: "delete_rows", summary: "delete 3 rows of film", table: "main.public.film", notes_changed: 0, files_changed: 3 })).toBe("Removed 3 rows from film");
		expect(operationWords({ migration_id: "t", op: "restore_table", summary: "restore film to version 3", table: "main.public.film" })).toBe("Restored film to version 3");
		expect(operationWords({ migration_id: "c", op: "add_column", summary: "add column rewatch to film", table: "main.public.film" })).toBe("Added column rewatch to film");
		// A rule by its name is the schema's id for it.
		expect(operationWords({ migration_id: "k", op: "add_check", summary: "add check from_1895 to film", table: "main.public.film" })).toBe("Added a rule to film");
		expect(operationWords({ migration_id: "k", op: "drop_check", summary: "drop check from_1895 of film", table: "main.public.film" })).toBe("Removed a rule of film");
	});

	test("undoing an undo says it redid", () => {
		expect(undidWords("Changed rating of Charade")).toBe("Undid: changed rating of Charade.");
		expect(undidWords("Undid: changed rating of Charade")).toBe("Redid: changed rating of Charade.");
		expect(undidWords("Redid: changed rating of Charade")).toBe("Undid: changed rating of Charade.");
	});

	test("a refused undo shows the refusal in a Notice and changes nothing", async () => {
		const { host, fs } = await openFilms();
		await host.call("update_row", { table: "film", path: CHARADE, set: { year: 1964 } });
		// A later write changes the same value: undoing the first would overwrite it.
		await host.call("update_row", { table: "film", path: CHARADE, set: { year: 1965 } });
		const view = openView(door(host));
		await view.onOpen();
		const before = fs.snapshot().vault;
		const oldest = rows(view).at(-1) as HTMLElement;
		const notices = vi.spyOn(Notice.prototype, "constructor__");
		const out = await view.undo({ migration_id: oldest.dataset.migrationId as string, op: "update_row" });
		expect(out?.status).toBe("refused");
		const text = String(notices.mock.calls[0]?.[0]);
		// What happened and what to do, in words; the engine's text is in the panel's Details.
		expect(text).toBe("Datanotes: Nothing was undone: the year of Charade changed since, and undoing would overwrite it. Undo the later changes first, or change the row by hand.");
		expect(fs.snapshot().vault).toEqual(before);
		notices.mockRestore();
	});

	test("a refused undo's Notice offers Edit row… for the row it names; Undo last write's too", async () => {
		const { host } = await openFilms();
		await host.call("update_row", { table: "film", path: CHARADE, set: { year: 1964 } });
		await host.call("update_row", { table: "film", path: CHARADE, set: { year: 1965 } });
		const editRow = vi.fn();
		const view = new HistoryView(WorkspaceLeaf.create2__(App.createConfigured__()).asOriginalType3__(), door(host), editRow);
		await view.onOpen();
		const oldest = rows(view).at(-1) as HTMLElement;
		const notices = vi.spyOn(Notice.prototype, "constructor__");
		await view.undo({ migration_id: oldest.dataset.migrationId as string, op: "update_row" });
		const notice = notices.mock.contexts[0] as unknown as Notice;
		const buttons = Array.from(notice.messageEl.querySelectorAll<HTMLButtonElement>(".datanotes-notice-buttons button"));
		expect(buttons.map((b) => b.textContent)).toEqual(["Edit row…"]);
		buttons[0].click();
		expect(editRow).toHaveBeenCalledWith(CHARADE);
		await view.onClose();
		// Undo last write, refused: the row changed by hand since; the refusal reaches its Notice.
		const { host: other, fs, clock } = await openFilms();
		await other.call("update_row", { table: "film", path: CHARADE, set: { year: 1964 } });
		fs.handWrite(CHARADE, (fs.text(CHARADE) as string).replace("year: 1964", "year: 1970"));
		await other.observe({ kind: "modified", path: CHARADE });
		clock.advance(10_000);
		await other.tick();
		let refused: Outcome | null = null;
		expect(await undoLast(door(other), (out) => (refused = out))).toMatch(/^Datanotes: Nothing was undone: the year of Charade changed since/);
		expect(refused === null ? null : refusedRow(refused)).toBe(CHARADE);
		expect(fs.text(CHARADE)).toContain("year: 1970");
		const refusal = { status: "refused", answer: { ok: false, error: "undo_migration refused — nothing was written:\nconflict datanotes/main/public/film/Charade.md: \"year\" changed since the operation\nconflict datanotes/main/public/film/Metropolis.md: \"rating\" changed since the operation" }, http: 409, store: [], log: [], deliveries: [] } as Outcome;
		expect(refusedRow(refusal)).toBeNull();
		const one = { ...refusal, answer: { ok: false, error: "undo_migration refused — nothing was written:\nconflict datanotes/main/public/film/Charade.md: \"year\" changed since the operation" } } as Outcome;
		expect(refusedRow(one)).toBe(CHARADE);
		const broken = { ...refusal, answer: { ok: false, error: "x", violations: [{ path: METROPOLIS, violations: [] }] } } as Outcome;
		expect(refusedRow(broken)).toBe(METROPOLIS);
		notices.mockClear();
		refusalNotice("Datanotes: nothing was written.", one, editRow);
		expect(Array.from((notices.mock.contexts[0] as unknown as Notice).messageEl.querySelectorAll("button")).map((b) => b.textContent)).toEqual(["Edit row…"]);
		refusalNotice("Datanotes: nothing was written.", refusal, editRow);
		expect((notices.mock.contexts[1] as unknown as Notice).messageEl.querySelector("button")).toBeNull();
		notices.mockRestore();
	});

	test("the view redraws after a write made elsewhere", async () => {
		const { host } = await openFilms();
		const view = openView(door(host));
		await view.onOpen();
		expect(view.contentEl.textContent).toContain("No operations yet");
		await host.call("update_row", { table: "film", path: CHARADE, set: { year: 1964 } });
		await until(() => rows(view).length === 1);
		// A write that changed nothing says so, and offers no Undo.
		await host.call("update_row", { table: "film", path: CHARADE, set: { year: 1964 } });
		await until(() => rows(view).length === 2);
		const [noop, write] = rows(view);
		expect(noop.textContent).toContain("changed nothing");
		expect(noop.querySelector(".datanotes-history-undo")).toBeNull();
		expect(write.textContent).toContain("1 note");
		expect(write.querySelector(".datanotes-history-undo")).not.toBeNull();
		await view.onClose();
	});

	test("undo last write: list_migrations limit 1, then undo_migration", async () => {
		const { host, fs } = await openFilms();
		expect(await undoLast(door(host))).toBe("Datanotes: nothing to undo.");
		await host.call("update_row", { table: "film", path: CHARADE, set: { year: 1964 } });
		expect(await undoLast(door(host))).toBe("Datanotes: Undid: changed year of Charade.");
		expect(fs.text(CHARADE)).toBe(charade);
	});
});

describe("a button that writes", () => {
	test("asks first: the second click acts; leaving it, or waiting, asks again", () => {
		const button = document.body.createEl("button", { text: "Undo" });
		let acted = 0;
		confirmed(button, "Confirm undo", () => acted++);
		button.click();
		expect(button.textContent).toBe("Confirm undo");
		expect(acted).toBe(0);
		button.dispatchEvent(new FocusEvent("blur"));
		expect(button.textContent).toBe("Undo");
		button.click();
		button.click();
		expect(acted).toBe(1);
		expect(button.textContent).toBe("Undo");
		button.remove();
	});
});
