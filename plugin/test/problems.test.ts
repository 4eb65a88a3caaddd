// Issue 11, broken rules where people work: the Problems model kept from
// check_table and the change feed, the Problems view, the status bar and the
// Notice a hand edit that breaks a rule gets; on the real engine.

import type { App as AppOriginal, PluginManifest } from "obsidian";
import * as mocks from "obsidian-test-mocks/obsidian";
import { App, Notice, Platform, TFile, WorkspaceLeaf } from "obsidian-test-mocks/obsidian";
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, test, vi } from "vitest";
import type { EngineDoor } from "../src/history-view";
import DatanotesPlugin from "../src/main";
import { type Problem, Problems, ProblemsView, statusText, tellNotice } from "../src/problems";
import { ruleText } from "../src/rule-words";
import { beforeHandEdit, putBack } from "../src/put-back";
import { undoLast } from "../src/commands";
import type { RowFormModal } from "../src/row-form";
import { CHARADE, filmDiary, keepModalsOpen, openFilms, door } from "./engine";
import { MemoryFs } from "./memfs";

const METROPOLIS = "datanotes/main/public/film/Metropolis.md";
const NOSFERATU = "datanotes/main/public/film/Nosferatu.md";
const METASTORE = "datanotes/metastore.yaml";
const metropolis = filmDiary.get(METROPOLIS) as string;
const manifest = JSON.parse(readFileSync("manifest.json", "utf8")) as PluginManifest;


afterEach(() => {
	vi.restoreAllMocks();
	Object.assign(Platform, { isDesktopApp: true, isMobile: false });
});

describe("Problems", () => {
	test("a sync tool's copy is a conflict with both sides; a button keeps the copy, and undo puts it back", async () => {
		const { host, fs, clock } = await openFilms();
		const copy = "datanotes/main/public/film/Metropolis.sync-conflict-20261204-133000-ABCDEFG.md";
		const theirs = metropolis.replace("rating: 5", "rating: 3");
		fs.handWrite(copy, theirs);
		await host.observe({ kind: "created", path: copy });
		clock.advance(10_000);
		await host.tick();
		const problems = new Problems(door(host));
		await problems.check();
		expect(problems.list().map((p) => p.path)).toEqual([copy]);
		expect(problems.list()[0].violations[0]).toMatchObject({ code: "conflict", value: { original: METROPOLIS, tool: "Syncthing", differences: { rating: { before: 5, after: 3 } } } });
		const app = App.createConfigured__();
		const view = new ProblemsView(WorkspaceLeaf.create2__(app).asOriginalType3__(), problems, () => undefined, () => undefined);
		await view.onOpen();
		const item = view.contentEl.querySelector(".datanotes-problem");
		expect(item?.textContent).toContain("rating: original 5, copy 3");
		const buttons = [...(item?.querySelectorAll<HTMLButtonElement>(".datanotes-conflict-keep button") ?? [])];
		expect(buttons.map((b) => b.textContent)).toEqual(["Keep original", "Keep Syncthing's copy"]);
		// A conflict is mended by keeping a side, not in a form.
		expect(item?.querySelector(".datanotes-problem-edit")).toBeNull();
		buttons[1].click();
		await vi.waitFor(() => expect(view.contentEl.querySelector("h4")?.textContent).toBe("No problems"));
		expect(fs.text(METROPOLIS)).toBe(theirs);
		expect(fs.text(copy)).toBeUndefined();
		const journal = await host.call("list_migrations", { limit: 1 });
		const last = (journal.answer as { migrations: { migration_id: string; op: string }[] }).migrations[0];
		expect(last.op).toBe("resolve_conflict");
		expect((await host.call("undo_migration", { migration_id: last.migration_id })).status).toBe("ok");
		expect(fs.text(METROPOLIS)).toBe(metropolis);
		expect(fs.text(copy)).toBe(theirs);
		await view.onClose();
	});

	test("a hand edit that breaks a rule is one problem, told once; a later write mends it; an unreadable note keeps its last values", async () => {
		const { host, fs, clock } = await openFilms();
		const told: [string, Problem][] = [];
		const problems = new Problems(door(host), (path, p) => told.push([path, p]));
		await problems.check();
		expect(problems.count()).toBe(0);

		// Two hand edits of one note in one round: one problem, one notice.
		fs.handWrite(METROPOLIS, metropolis.replace("rating: 5", "rating: 9"));
		await host.observe({ kind: "modified", path: METROPOLIS });
		fs.handWrite(METROPOLIS, metropolis.replace("rating: 5", "rating: 8"));
		await host.observe({ kind: "modified", path: METROPOLIS });
		clock.advance(10_000);
		await host.tick();
		await problems.follow();
		expect(problems.count()).toBe(1);
		expect(problems.list()[0]).toMatchObject({ table: "film", path: METROPOLIS });
		expect(problems.list()[0].violations[0]).toMatchObject({ code: "check", constraint: "rating_range", value: { rating: 8 } });
		expect(told.map(([p]) => p)).toEqual([METROPOLIS]);
		// The rule in words, with what the row holds where it looks.
		expect(ruleText(told[0][1].violations[0])).toBe("rating is empty, or rating is at least 1 and at most 5 (here rating is 8)");

		// An engine write that mends it.
		const fixed = await host.call("update_row", { table: "film", path: METROPOLIS, set: { rating: 4 } });
		expect(fixed.status, JSON.stringify(fixed.answer)).toBe("ok");
		await problems.follow();
		expect(problems.count()).toBe(0);

		// A note made unreadable by hand: its last values, from the feed, are kept.
		fs.handWrite(METROPOLIS, "---\ntable: main.public.film\ntitle: [broken\n---\n");
		await host.observe({ kind: "modified", path: METROPOLIS });
		clock.advance(10_000);
		await host.tick();
		await problems.follow();
		const p = problems.list()[0];
		expect(p.violations[0].code).toBe("unreadable");
		expect(p.lastValues).toMatchObject({ title: "Metropolis", rating: 4 });
		expect(told).toHaveLength(2);
	});

	test("check_table finds what broke while no one followed the feed; the view groups by table and Check again reads again", async () => {
		const { host, fs, clock } = await openFilms();
		fs.handWrite(NOSFERATU, (filmDiary.get(NOSFERATU) as string).replace("status: to watch", "status: maybe"));
		await host.observe({ kind: "modified", path: NOSFERATU });
		clock.advance(10_000);
		await host.tick();
		const calls: string[] = [];
		const d = door(host);
		const problems = new Problems({ ...d, call: (name, args) => (calls.push(name), d.call(name, args)) });
		await problems.check();
		expect(problems.count()).toBe(1);
		expect(statusText(problems.count())).toBe("1 row breaks a rule");
		expect(statusText(3)).toBe("3 rows break a rule");

		const app = App.createConfigured__();
		const opened: string[] = [];
		const view = new ProblemsView(WorkspaceLeaf.create2__(app).asOriginalType3__(), problems, (p) => opened.push(p));
		await view.onOpen();
		expect(view.contentEl.querySelector("h4")?.textContent).toBe("1 row breaks a rule");
		const group = view.contentEl.querySelector(".datanotes-problem-table");
		expect(group?.querySelector("h6")?.textContent).toBe("film");
		expect(group?.querySelector(".datanotes-problem")?.textContent).toContain("status");
		group?.querySelector<HTMLElement>(".datanotes-diff-path")?.click();
		expect(opened).toEqual([NOSFERATU]);

		calls.length = 0;
		const fixedByHand = (filmDiary.get(NOSFERATU) as string);
		fs.handWrite(NOSFERATU, fixedByHand);
		await host.observe({ kind: "modified", path: NOSFERATU });
		clock.advance(10_000);
		await host.tick();
		view.contentEl.querySelector<HTMLButtonElement>(".datanotes-check-again")?.click();
		await vi.waitFor(() => expect(view.contentEl.querySelector("h4")?.textContent).toBe("No problems"));
		expect(calls).toContain("check_table");
		await view.onClose();
	});
});

describe("a hand edit's Notice", () => {
	/** Metropolis given 9 stars by hand: the Problem the feed brings, and what it told. */
	async function brokenByHand() {
		const films = await openFilms();
		const told: [string, Problem][] = [];
		const problems = new Problems(door(films.host), (path, p) => told.push([path, p]));
		await problems.check();
		films.fs.handWrite(METROPOLIS, metropolis.replace("rating: 5", "rating: 9"));
		await films.host.observe({ kind: "modified", path: METROPOLIS });
		films.clock.advance(10_000);
		await films.host.tick();
		await problems.follow();
		expect(told.map(([path]) => path)).toEqual([METROPOLIS]);
		return { ...films, told };
	}

	test("offers Edit row… and Put back under its words; each hides the Notice and acts", async () => {
		const { told } = await brokenByHand();
		const notices = vi.spyOn(Notice.prototype, "constructor__");
		const hide = vi.spyOn(Notice.prototype, "hide");
		const editRow = vi.fn();
		const putBack = vi.fn();
		tellNotice(METROPOLIS, told[0][1], { editRow, putBack });
		expect(String(notices.mock.calls[0][0])).toBe("Datanotes: your edit of Metropolis breaks the rule “rating is empty, or rating is at least 1 and at most 5” (here rating is 9)");
		const notice = notices.mock.contexts[0] as unknown as Notice;
		const buttons = Array.from(notice.messageEl.querySelectorAll<HTMLButtonElement>(".datanotes-notice-buttons button"));
		expect(buttons.map((b) => b.textContent)).toEqual(["Edit row…", "Put back"]);
		buttons[0].click();
		expect(editRow).toHaveBeenCalledWith(METROPOLIS, told[0][1].violations);
		expect(hide).toHaveBeenCalledTimes(1);
		buttons[1].click();
		expect(putBack).toHaveBeenCalledWith(METROPOLIS);
		// Without ways out (the Problems view's own), the words alone.
		tellNotice(METROPOLIS, told[0][1]);
		expect((notices.mock.contexts[1] as unknown as Notice).messageEl.querySelector("button")).toBeNull();
	});

	test("Put back previews the row as it was before the edit by property, writes it on confirm, and undo takes it back", async () => {
		keepModalsOpen();
		const { host, fs } = await brokenByHand();
		const edited = fs.text(METROPOLIS);
		const d = door(host);
		const call = vi.spyOn(d, "call");
		const said: string[] = [];
		const app = App.createConfigured__().asOriginalType__() as AppOriginal;
		const modal = await putBack(app, d, METROPOLIS, (t) => said.push(t));
		await modal?.ready;
		expect(said).toEqual([]);
		expect(modal?.titleEl.textContent).toBe("Put back Metropolis as it was before your edit");
		expect(Array.from(modal?.contentEl.querySelectorAll(".datanotes-compare-properties li") ?? []).map((li) => li.textContent)).toEqual(["rating: 9 → 5"]);
		expect(modal?.contentEl.textContent).toContain("The text is the same.");
		// The version before the hand edit (v1, the edit; v0 before it), read from the log; nothing written yet.
		expect(call.mock.calls.filter((c) => c[0] === "read_note").map((c) => c[1])).toContainEqual({ path: METROPOLIS, version: 0 });
		expect(fs.text(METROPOLIS)).toBe(edited);
		const confirm = modal?.contentEl.querySelector<HTMLButtonElement>(".datanotes-restore-confirm") as HTMLButtonElement;
		expect(confirm.textContent).toBe("Put back");
		const notices = vi.spyOn(Notice.prototype, "constructor__");
		confirm.click();
		await vi.waitFor(() => expect(fs.text(METROPOLIS)).toBe(metropolis));
		expect(String(notices.mock.calls.at(-1)?.[0])).toBe("Datanotes: Metropolis is as it was before your edit. Undo it from the journal.");
		// A journaled write, which undo would take back; here the engine refuses, as the edit it would bring back breaks the rule.
		const journal = await d.call("list_migrations", { limit: 1 });
		expect(journal.status === "ok" && journal.answer.migrations[0].op).toBe("update_row");
		expect(await undoLast(d)).toBe("Datanotes: Nothing was written: Metropolis: rating is empty, or rating is at least 1 and at most 5 (here rating is 9). Change the values so that the row keeps its table's rules.");
		expect(fs.text(METROPOLIS)).toBe(metropolis);
	});

	test("Put back of a hand edit that broke no rule is undone by Undo last write", async () => {
		keepModalsOpen();
		const { host, fs, clock } = await openFilms();
		const charade = fs.text(CHARADE) as string;
		fs.handWrite(CHARADE, charade.replace("minutes: 113", "minutes: 115"));
		await host.observe({ kind: "modified", path: CHARADE });
		clock.advance(10_000);
		await host.tick();
		const d = door(host);
		const modal = await putBack(App.createConfigured__().asOriginalType__() as AppOriginal, d, CHARADE, () => undefined);
		await modal?.ready;
		expect(Array.from(modal?.contentEl.querySelectorAll(".datanotes-compare-properties li") ?? []).map((li) => li.textContent)).toEqual(["minutes: 115 → 113"]);
		modal?.contentEl.querySelector<HTMLButtonElement>(".datanotes-restore-confirm")?.click();
		await vi.waitFor(() => expect(fs.text(CHARADE)).toBe(charade));
		expect(await undoLast(d)).toBe("Datanotes: Undid: changed minutes of Charade.");
		expect(fs.text(CHARADE)).toBe(charade.replace("minutes: 113", "minutes: 115"));
	});

	test("Put back of a row no hand edit changed says so and opens nothing", async () => {
		const { host } = await openFilms();
		expect(await beforeHandEdit(door(host), CHARADE)).toBe("Datanotes keeps no version of Charade from before your edit.");
		const said: string[] = [];
		expect(await putBack(App.createConfigured__().asOriginalType__() as AppOriginal, door(host), CHARADE, (t) => said.push(t))).toBeNull();
		expect(said).toEqual(["Datanotes keeps no version of Charade from before your edit."]);
		expect(await beforeHandEdit(door(host), "Notes/Film night.md")).toBe("Film night is not a row of a table.");
	});
});

describe("metastore.yaml edited by hand", () => {
	test("a rule tightened by hand counts the rows it breaks; a file that cannot be read is told, and no check says all is well until it is fixed", async () => {
		const { host, fs, clock } = await openFilms();
		const told: [string, Problem][] = [];
		const problems = new Problems(door(host), (path, p) => told.push([path, p]));
		await problems.check();
		expect(problems.count()).toBe(0);
		const good = fs.text(METASTORE) as string;
		const edit = async (text: string) => {
			fs.handWrite(METASTORE, text);
			await host.observe({ kind: "modified", path: METASTORE });
			clock.advance(10_000);
			await host.tick();
			await problems.follow();
		};

		// At most 4 stars: Charade and Metropolis (5) break it, found from the feed.
		await edit(good.replace("{rating: {lte: 5}}", "{rating: {lte: 4}}"));
		expect(problems.list().map((p) => p.path)).toEqual([CHARADE, METROPOLIS]);
		expect(ruleText(problems.list()[0].violations[0])).toBe("rating is empty, or rating is at least 1 and at most 4 (here rating is 5)");

		// YAML that does not read: told at once, and the rules are not checked.
		await edit(good.replace("tables:", "tables: [oops"));
		expect(told.map(([p]) => p)).toEqual([METASTORE]);
		const notices = vi.spyOn(Notice.prototype, "constructor__");
		tellNotice(METASTORE, told[0][1]);
		expect(String(notices.mock.calls[0][0])).toMatch(/^Datanotes: datanotes\/metastore.yaml cannot be read: .*refuses writes until the file is fixed$/);
		// In words; the engine's text for Details.
		expect(problems.error).toBe("Nothing was written: datanotes/metastore.yaml cannot be read. Fix datanotes/metastore.yaml (git can bring back its last good version).");
		expect(problems.errorDetails).toMatch(/^check_table refused — nothing was written:\ndatanotes\/metastore.yaml cannot be read: /);
		const app = App.createConfigured__();
		const view = new ProblemsView(WorkspaceLeaf.create2__(app).asOriginalType3__(), problems, () => undefined);
		await view.onOpen();
		expect(view.contentEl.querySelector(".datanotes-error")?.textContent).toMatch(/Hint: Fix datanotes\/metastore.yaml/);
		expect(view.contentEl.querySelector("h4")?.textContent).toBe("Rules not checked");
		expect(view.contentEl.textContent).not.toContain("Every row keeps the rules");

		// Fixed: the next read of the feed checks again.
		await edit(good);
		expect(problems.error).toBeNull();
		expect(problems.count()).toBe(0);
		await view.onClose();
	});
});

describe("an engine that closed", () => {
	test("a record in the store that names a file no engine writes is told in words, its lines behind Details, and never undone", async () => {
		const fs = new MemoryFs(filmDiary);
		const id = "20261202T120000-update_row-update-film.evil";
		const entry = { format: 1, migration_id: id, op: "update_row", summary: "update film", executed_at: "2026-12-02T12:00:00Z", executed_ms: Date.UTC(2026, 11, 2, 12), by: "agent", status: "done", notes_changed: 1, files_changed: 1, changes: [{ path: ".obsidian/plugins/evil/main.js", before: "alert(1)", after: null }] };
		fs.store.set(`journal/${id}.json`, JSON.stringify(entry));
		const { host } = await openFilms({ fs });
		const problems = new Problems(door(host));
		await problems.check();
		expect(problems.storeProblems).toHaveLength(1);
		const app = App.createConfigured__();
		const view = new ProblemsView(WorkspaceLeaf.create2__(app).asOriginalType3__(), problems, () => undefined, () => undefined);
		await view.onOpen();
		const box = view.contentEl.querySelector(".datanotes-store-problems");
		const words = [...(box?.querySelectorAll("p") ?? [])].map((p) => p.textContent ?? "").join(" ");
		expect(words).toContain("One record of Datanotes' history came from another device or program and was not taken in");
		// A person reads no path, id or engine word outside Details.
		expect(words).not.toMatch(/\.obsidian|journal\/|undo_migration|\.json/);
		expect(box?.querySelector("details pre")?.textContent).toContain(".obsidian/plugins/evil/main.js");
		expect((await host.call("undo_migration", { migration_id: id })).status).toBe("refused");
		expect(fs.text(".obsidian/plugins/evil/main.js")).toBeUndefined();
		await view.onClose();
	});

	test("check and follow never reject: the error is kept for the view", async () => {
		const closed: EngineDoor = { call: () => Promise.reject(new Error("the Datanotes engine is closed")), onChange: () => () => undefined };
		const problems = new Problems(closed);
		let told = 0;
		problems.onChange(() => told++);
		await expect(problems.check()).resolves.toBeUndefined();
		expect(problems.error).toBe("the Datanotes engine is closed");
		await expect(problems.follow()).resolves.toBeUndefined();
		expect(told).toBe(2);
		expect(problems.count()).toBe(0);
	});
});

describe("in the plugin", () => {
	test("a hand edit in the vault that breaks a rule reaches the status bar and a Notice; the setting silences the Notice", async () => {
		Object.assign(Platform, { isDesktopApp: false, isMobile: true });
		const notices = vi.spyOn(Notice.prototype, "constructor__");
		const app = App.createConfigured__({ files: Object.fromEntries(filmDiary) });
		const plugin = new DatanotesPlugin(app.asOriginalType__() as AppOriginal, manifest);
		plugin.load();
		try {
			app.workspace.setLayoutReady__();
			await plugin.whenReady();
			await vi.waitFor(() => expect(plugin.problems.error).toBeNull());
			const bar = mocks.Plugin.fromOriginalType2__(plugin).statusBarItems__[0] as HTMLElement;
			expect(bar.textContent).toBe("");
			const f = app.vault.getAbstractFileByPath(METROPOLIS) as TFile;
			const at = Date.now();
			await app.vault.modify(f, metropolis.replace("rating: 5", "rating: 9"));
			await vi.waitFor(() => expect(plugin.problems.count()).toBe(1), { timeout: 10_000, interval: 50 });
			const host = await plugin.whenReady();
			// A figure, not an assertion (the round waits 700 ms of quiet first).
			console.log(`datanotes-bench ${JSON.stringify({ hand_edit_to_status_bar_ms: Date.now() - at })}`);
			expect(bar.textContent).toBe("1 row breaks a rule");
			expect(bar.querySelector(".datanotes-status-icon")).not.toBeNull();
			const said = notices.mock.calls.map((c) => String(c[0]));
			expect(said.filter((m) => m.includes("your edit of Metropolis breaks the rule “rating is empty"))).toHaveLength(1);
			// Its ways out: Edit row… opens the row's form, with the rules it breaks.
			const notice = notices.mock.contexts[said.findIndex((m) => m.includes("your edit of Metropolis"))] as unknown as Notice;
			const buttons = Array.from(notice.messageEl.querySelectorAll<HTMLButtonElement>(".datanotes-notice-buttons button"));
			expect(buttons.map((b) => b.textContent)).toEqual(["Edit row…", "Put back"]);
			const editRow = vi.spyOn(plugin.rowForms, "editRow").mockResolvedValue(null);
			buttons[0].click();
			expect(editRow).toHaveBeenCalledWith(METROPOLIS, plugin.problems.list()[0].violations);
			editRow.mockRestore();

			plugin.settings.handEditNotices = false;
			const n = app.vault.getAbstractFileByPath(NOSFERATU) as TFile;
			await app.vault.modify(n, (filmDiary.get(NOSFERATU) as string).replace("status: to watch", "status: maybe"));
			await vi.waitFor(() => expect(plugin.problems.count()).toBe(2), { timeout: 10_000, interval: 50 });
			expect(notices.mock.calls.map((c) => String(c[0])).filter((m) => m.includes(NOSFERATU))).toEqual([]);
			expect(host.nextDeadline()).toBeNull();

			// metastore.yaml made unreadable: the bar says the rules are not checked, until it is fixed.
			const meta = app.vault.getAbstractFileByPath(METASTORE) as TFile;
			const good = await app.vault.read(meta);
			await app.vault.modify(meta, good.replace("tables:", "tables: [oops"));
			await vi.waitFor(() => expect(bar.textContent).toBe("Rules not checked"), { timeout: 10_000, interval: 50 });
			await app.vault.modify(meta, good);
			await vi.waitFor(() => expect(bar.textContent).toBe("2 rows break a rule"), { timeout: 10_000, interval: 50 });

			// The Problems view's Edit row… opens the row's form with each rule it
			// breaks under its field, in words.
			keepModalsOpen();
			const make = mocks.Plugin.fromOriginalType2__(plugin).views__.get("datanotes-problems") as (leaf: unknown) => ProblemsView;
			const view = make(WorkspaceLeaf.create2__(app).asOriginalType3__());
			await view.onOpen();
			const edit = vi.spyOn(plugin.rowForms, "editRow");
			view.contentEl.querySelector<HTMLButtonElement>(`.datanotes-problem[data-path="${METROPOLIS}"] .datanotes-problem-edit`)?.click();
			const form = (await edit.mock.results[0]?.value) as RowFormModal;
			const under = (column: string) => form.contentEl.querySelector(`.datanotes-field[data-column="${column}"]`)?.nextElementSibling?.textContent;
			expect(under("rating")).toBe("rating is empty, or rating is at least 1 and at most 5");
			expect(form.contentEl.querySelector<HTMLInputElement>('.datanotes-field[data-column="rating"] input')?.value).toBe("9");
			form.close();
			view.contentEl.querySelector<HTMLButtonElement>(`.datanotes-problem[data-path="${NOSFERATU}"] .datanotes-problem-edit`)?.click();
			const status = (await edit.mock.results[1]?.value) as RowFormModal;
			expect(status.contentEl.querySelector('.datanotes-field[data-column="status"]')?.nextElementSibling?.textContent).toMatch(/"maybe" is not one of watched, to watch/);
			status.close();
			await view.onClose();
		} finally {
			plugin.unload();
		}
	});
});
