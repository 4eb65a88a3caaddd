// Issue 11, the history panel's "This note" section: a row's versions (engine
// writes and hand edits) with who and the column diff, read as of a version,
// restored as a journaled write; a plain note says so. On the real engine.

import type { TFile } from "obsidian";
import { App, WorkspaceLeaf } from "obsidian-test-mocks/obsidian";
import { beforeEach, describe, expect, test, vi } from "vitest";
import { undoLast } from "../src/commands";
import { HistoryView } from "../src/history-view";
import type { Host } from "../src/host";
import { bodyOf, type RestoreRowModal, type TextViewModal } from "../src/note-history";
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
		expect(first.textContent).toContain("inserted");
		expect(hand.dataset.version).toBe("2");
		expect(hand.classList.contains("is-hand-edit")).toBe(true);
		expect(hand.textContent).toContain("minutes: 113 → 115");
		expect(engine.dataset.version).toBe("1");
		expect(engine.textContent).toContain("UPDATE");
		expect(engine.textContent).toContain("obsidian");
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

	test("show as of a version reads it; restore writes the row back through update_row, and undo reverts it", async () => {
		const { host, fs } = await openFilms();
		await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 4, tags: ["seen-2026"] }, body: "Rewritten.\n" });
		const view = await charadesHistory(host);
		const section = view.note();
		const shown = (await section?.showAsOf(CHARADE, 0)) as TextViewModal;
		expect(shown.contentEl.textContent).toBe(charade);

		const now = fs.files.get(CHARADE)?.text;
		const modal = section?.restore({ path: CHARADE }, 0) as RestoreRowModal;
		await modal.ready;
		const text = modal.contentEl.textContent ?? "";
		expect(text).toContain("rating: 4 → 5");
		expect(text).toContain("The body, as it was");
		expect(fs.files.get(CHARADE)?.text).toBe(now);
		modal.contentEl.querySelector<HTMLButtonElement>(".datanotes-restore-confirm")?.click();
		await vi.waitFor(() => expect(fs.files.get(CHARADE)?.text).toBe(charade));
		expect(await undoLast(door(host))).toContain("undid update_row");
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
		await vi.waitFor(() => expect(modal.contentEl.querySelector(".datanotes-error")?.textContent).toMatch(/^update_row could not finish and was rolled back/));
		expect(fs.files.get(CHARADE)?.text).toBe(edited);
		await view.onClose();
	});

	test("bodyOf keeps what follows the front matter", () => {
		expect(bodyOf("---\na: 1\n---\nBody.\n")).toBe("Body.\n");
		expect(bodyOf("---\r\na: 1\r\n---\r\nBody.\r\n")).toBe("Body.\r\n");
		expect(bodyOf("No front matter.\n")).toBe("No front matter.\n");
		expect(bodyOf("---\na: 1\n---")).toBe("");
	});
});
