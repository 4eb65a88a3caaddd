// Issue 53, point 1: no engine words where a person reads. The history panel's
// sections and the Problems view, drawn on the film diary after a few writes,
// an undo, a refused undo and a hand edit, show no operation name, qualified
// table name, migration id, device id, Hint or Docs line or JSON outside a
// Details toggle; nor do the Notices.

import { App, Notice, type TFile, WorkspaceLeaf } from "obsidian-test-mocks/obsidian";
import { afterEach, describe, expect, test, vi } from "vitest";
import wasmBytes from "../wasm/datanotes_core_bg.wasm";
import { loadEngine, openEngine, operations } from "../src/engine";
import { type EngineDoor, HistoryView, type Section } from "../src/history-view";
import { Host } from "../src/host";
import { Problems, ProblemsView } from "../src/problems";
import { drawRefusal, refusalShort, refusalWords, shown } from "../src/display";
import { deviceWords } from "../src/device-name";
import { drawModelSetup, MeaningModel } from "../src/model-install";
import { TableFormModal } from "../src/table-form";
import { ViewFormModal } from "../src/view-form";
import type { TableInfo } from "../src/types";
import { ans, CHARADE, Clock, door, filmDiary, keepModalsOpen } from "./engine";
import type { DryRunModal } from "../src/table-history";
import { MemoryFs } from "./memfs";

const METROPOLIS = "datanotes/main/public/film/Metropolis.md";
const NOSFERATU = "datanotes/main/public/film/Nosferatu.md";
/** The test's device id: it must never show. */
const DEVICE = "tpmqmlnez4";

afterEach(() => {
	vi.restoreAllMocks();
});

/** The film diary on an engine of device DEVICE. */
async function openDiary() {
	await loadEngine(wasmBytes);
	const fs = new MemoryFs(filmDiary);
	const clock = new Clock();
	const engine = openEngine(fs.notes(), fs.storeListing(), clock.now(), new Uint8Array(32).fill(7), DEVICE);
	const host = new Host(engine, fs, { actor: "obsidian", now: clock.now, warn: () => undefined, sleep: (ms) => new Promise<void>((r) => setTimeout(r, ms)) });
	await host.open();
	return { fs, host, clock };
}

/** Engine words, each with what it is. */
function engineWords(): [RegExp, string][] {
	return [
		...operations().map((o): [RegExp, string] => [new RegExp(`\\b${o.name}\\b`), `operation name ${o.name}`]),
		[/\d{8}T\d{6}-/, "migration id"],
		[/main\.public\./, "qualified table name"],
		[new RegExp(DEVICE), "device id"],
		[/Hint:/, "Hint line"],
		[/Docs:/, "Docs line"],
		[/read_docs/, "read_docs"],
		// Values as Obsidian shows properties: lists as their items, links as titles.
		[/[{}[\]]/, "JSON brace or bracket"],
		// Rows are their notes' titles (the path only on hover).
		[/datanotes\/main\/|\.md\b/, "note path"],
	];
}

/** The text a person reads in `el`: all of it but what is folded in <details>. */
function visible(el: HTMLElement): string {
	const copy = el.cloneNode(true) as HTMLElement;
	for (const d of Array.from(copy.querySelectorAll("details"))) d.remove();
	// Each element's own text (its text nodes, without its children's) on its
	// own line, so that the failure says where: a line of words with a time
	// in it is read too, not only elements without children.
	return [copy, ...Array.from(copy.querySelectorAll("*"))]
		.map((e) => Array.from(e.childNodes).filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent ?? "").join(""))
		.filter((t) => t.trim() !== "")
		.join("\n");
}

/** Each engine word found in `text`, with the line it is in. */
function found(text: string): string[] {
	const out: string[] = [];
	for (const line of text.split("\n")) {
		for (const [re, what] of engineWords()) if (re.test(line)) out.push(`${what}: ${line}`);
	}
	return out;
}

async function settle(view: HistoryView): Promise<void> {
	for (let i = 0; i < 20; i++) await new Promise((r) => setTimeout(r, 5));
	void view;
}

describe("words people read", () => {
	test("the history panel's sections, the Problems view and the Notices carry no engine words", async () => {
		const { host, fs, clock } = await openDiary();
		const d: EngineDoor = { ...door(host), thisDevice: () => DEVICE };
		// This device named; a rule described, the other in words.
		expect((await host.call("configure_database", { deviceName: "Linux laptop" })).status).toBe("ok");
		expect((await host.call("add_check", { table: "film", name: "from_1895", check: { year: { gte: 1895 } }, description: "Films are from 1895 on" })).status).toBe("ok");
		// A few writes, an undo, a refused undo, a hand edit that breaks a rule.
		await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 4 } });
		clock.advance(60_000);
		await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 5, tags: ["seen-2026"] } });
		clock.advance(60_000);
		await host.call("insert_row", { table: "film", values: { title: "Sunrise", year: 1927, status: "to watch" } });
		clock.advance(60_000);
		await host.call("delete_rows", { table: "film", paths: [NOSFERATU] });
		clock.advance(60_000);
		const journal = ans(await host.call("list_migrations", {})).migrations as { migration_id: string; op: string }[];
		expect((await host.call("undo_migration", { migration_id: journal[1].migration_id })).status).toBe("ok");
		clock.advance(60_000);
		fs.handWrite(METROPOLIS, (fs.text(METROPOLIS) as string).replace("rating: 5", "rating: 9"));
		await host.observe({ kind: "modified", path: METROPOLIS });
		// And one that gives a film another's title: the rule names the other note.
		const friday = "datanotes/main/public/film/His Girl Friday.md";
		fs.handWrite(friday, (fs.text(friday) as string).replace("title: His Girl Friday", "title: Charade"));
		await host.observe({ kind: "modified", path: friday });
		clock.advance(10_000);
		await host.tick();
		// An agent's write, the Bases files and a long body: the journal names the
		// agent by its token, and folds the files' text and the long diff.
		const sherlock = "datanotes/main/public/film/Sherlock Jr..md";
		expect((await host.call("update_row", { table: "film", path: sherlock, set: { rating: 2 } }, "reader/claude-code")).status).toBe("ok");
		expect((await host.call("write_bases", {})).status).toBe("ok");
		const body = Array.from({ length: 30 }, (_, i) => `Scene ${i + 1}.`).join("\n");
		expect((await host.call("update_row", { table: "film", path: "datanotes/main/public/film/The Gold Rush.md", body })).status).toBe("ok");

		const notices = vi.spyOn(Notice.prototype, "constructor__");
		const app = App.createConfigured__();
		vi.spyOn(app.workspace, "getActiveFile").mockReturnValue({ path: CHARADE } as TFile as never);
		const view = new HistoryView(WorkspaceLeaf.create2__(app).asOriginalType3__(), d);
		await view.onOpen();
		// The refused undo: the first rating change, since changed again.
		const oldest = journal.filter((m) => m.op === "update_row").at(-1) as { migration_id: string; op: string };
		expect((await view.undo(oldest as never))?.status).toBe("refused");
		await settle(view);
		const seen: string[] = [];
		// The journal, each entry unfolded to what it did to each note.
		for (const t of Array.from(view.contentEl.querySelectorAll<HTMLElement>(".datanotes-expand"))) t.click();
		await settle(view);
		if (process.env.SHOW_WORDS) console.log("journal", visible(view.contentEl));
		seen.push(...found(visible(view.contentEl)).map((f) => `Journal: ${f}`));
		// Its folds opened, then narrowed: a search, an agent by its token, between two dates.
		expect(view.contentEl.querySelectorAll(".datanotes-fold").length).toBeGreaterThan(0);
		for (const b of Array.from(view.contentEl.querySelectorAll<HTMLButtonElement>(".datanotes-fold"))) b.click();
		seen.push(...found(visible(view.contentEl)).map((f) => `Journal, folds opened: ${f}`));
		await view.journal.choose({ query: "sherlock", who: "reader", when: "dates", from: "2026-12-01" });
		await settle(view);
		const narrowed = visible(view.contentEl);
		if (process.env.SHOW_WORDS) console.log("journal narrowed", narrowed);
		expect(narrowed).toContain("Agents with the token “reader”");
		expect(narrowed).toContain("by claude-code (token reader)");
		expect(narrowed).toContain("1 entry matches.");
		seen.push(...found(narrowed).map((f) => `Journal, narrowed: ${f}`));
		for (const s of ["table", "note", "database", "changes"] as Section[]) {
			await view.show(s);
			await settle(view);
			if (s === "table") {
				// Picking the first version shows every row changed since.
				view.contentEl.querySelector<HTMLElement>('.datanotes-version[data-version="0"]')?.click();
				await settle(view);
				// Each version's device by its name; each rule by its description, or in words.
				expect(visible(view.contentEl)).toContain("in Obsidian · on Linux laptop · ");
				view.contentEl.querySelector<HTMLDetailsElement>(".datanotes-table-schema")?.setAttribute("open", "");
				const rules = Array.from(view.contentEl.querySelectorAll(".datanotes-schema-rules li")).map((li) => li.textContent);
				expect(rules).toEqual(["rating is empty, or rating is at least 1 and at most 5", "Films are from 1895 on"]);
			}
			if (s === "note") {
				// Two of the row's versions compared, then one with the note as it is now.
				const versions = Array.from(view.contentEl.querySelectorAll<HTMLElement>(".datanotes-row-version"));
				expect(versions.length).toBeGreaterThanOrEqual(2);
				versions[versions.length - 1].click();
				versions[0].click();
				// And who set each property, unfolded.
				view.contentEl.querySelector<HTMLElement>(".datanotes-blame-head")?.click();
				await settle(view);
				expect(view.contentEl.querySelectorAll(".datanotes-blame-property").length).toBeGreaterThan(0);
				const compared = Array.from(view.contentEl.querySelectorAll(".datanotes-compare-properties li")).map((li) => li.textContent);
				expect(compared).toEqual(["tags: seen-2026, film-night → seen-2026"]);
				seen.push(...found(visible(view.contentEl)).map((f) => `note, two compared: ${f}`));
				versions[0].click();
				await settle(view);
				expect(view.contentEl.querySelector(".datanotes-note-compare h6")?.textContent).toMatch(/^From version 0 to now$/);
			}
			if (process.env.SHOW_WORDS) console.log(s, visible(view.contentEl));
			seen.push(...found(visible(view.contentEl)).map((f) => `${s}: ${f}`));
		}
		const problems = new Problems(d);
		await problems.check();
		expect(problems.count()).toBeGreaterThanOrEqual(2);
		const pv = new ProblemsView(WorkspaceLeaf.create2__(app).asOriginalType3__(), problems, () => undefined, () => undefined);
		await pv.onOpen();
		seen.push(...found(visible(pv.contentEl)).map((f) => `Problems: ${f}`));
		// A table restored, then the database rewound: the dialogs and their Notices.
		keepModalsOpen();
		await view.show("table");
		const restore = view.table()?.restore(1) as DryRunModal;
		await restore.ready;
		seen.push(...found(`${restore.titleEl.textContent ?? ""}\n${visible(restore.contentEl)}`).map((f) => `Restore: ${f}`));
		restore.contentEl.querySelector<HTMLButtonElement>(".datanotes-restore-confirm")?.click();
		await vi.waitFor(() => expect(notices.mock.calls.map((c) => String(c[0]))).toContain("Datanotes: Restored film to version 1. Undo it from the journal."));
		await view.show("database");
		await settle(view);
		const rewindButton = view.contentEl.querySelectorAll<HTMLButtonElement>(".datanotes-rewind")[1];
		seen.push(...found(rewindButton.getAttribute("aria-label") ?? "").map((f) => `Rewind's label: ${f}`));
		const rewind = view.database()?.rewind(journal[0].migration_id, "Removed Nosferatu from film") as DryRunModal;
		await rewind.ready;
		expect(rewind.titleEl.textContent).toBe("Rewind the database to before: removed Nosferatu from film");
		seen.push(...found(visible(rewind.contentEl)).map((f) => `Rewind: ${f}`));
		rewind.contentEl.querySelector<HTMLButtonElement>(".datanotes-restore-confirm")?.click();
		await vi.waitFor(() => expect(notices.mock.calls.map((c) => String(c[0]))).toContain("Datanotes: Rewound the database to an earlier moment. Undo it from the journal."));
		for (const call of notices.mock.calls) seen.push(...found(String(call[0])).map((f) => `Notice: ${f}`));
		expect(notices).toHaveBeenCalled();
		expect(seen).toEqual([]);
		await view.onClose();
	});

	test("a device is its name, or this device or another device while it has none; never its id", () => {
		expect(deviceWords(DEVICE, { names: {}, me: DEVICE })).toBe("this device");
		expect(deviceWords(DEVICE, { names: { [DEVICE]: "Linux laptop" }, me: DEVICE })).toBe("Linux laptop");
		expect(deviceWords("q7x2kd0a1b", { names: {}, me: DEVICE })).toBe("another device");
		expect(deviceWords(undefined, { names: {}, me: DEVICE })).toBe("");
	});

	test("values as Obsidian shows properties: lists as their items, links as what they show", () => {
		expect(shown(["seen-2026", "film-night"])).toBe("seen-2026, film-night");
		expect(shown("[[Stanley Donen]]")).toBe("Stanley Donen");
		expect(shown(["[[Thriller]]", "[[datanotes/main/public/person/Ann.md|Ann B.]]"])).toBe("Thriller, Ann B.");
		expect(shown(true)).toBe("yes");
		expect(shown([])).toBe("(empty)");
		expect(shown(null)).toBe("(empty)");
	});

	test("a refusal is a sentence of what happened and one of what to do; the engine's text is behind Details", async () => {
		const { host } = await openDiary();
		const refusals = [
			await host.call("insert_row", { table: "film", values: { title: "Nosferatu", year: 1922 } }),
			await host.call("create_view", { name: "Silent Films", table: "film" }),
			await host.call("read_note", { path: CHARADE, version: 99 }),
			await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 9 } }),
		];
		for (const out of refusals) {
			expect(out.status).not.toBe("ok");
			const words = refusalWords(out);
			if (process.env.SHOW_WORDS) console.log(words.said, "|", words.todo);
			expect(found(`${words.said}\n${words.todo}`)).toEqual([]);
			expect(found(refusalShort(out))).toEqual([]);
			expect(words.details).toMatch(/Docs: /);
			const el = document.body.createDiv();
			drawRefusal(el, out);
			expect(found(visible(el))).toEqual([]);
			expect(el.querySelector("details pre")?.textContent).toBe(words.details);
			el.remove();
		}
	});

	test("New view… and New table…, refused: the reason in words above, Create disabled with what to do, the engine's text behind Details", async () => {
		keepModalsOpen();
		const { host } = await openDiary();
		const d = door(host);
		const tables = ans(await host.call("describe_database", {})).tables as TableInfo[];
		const app = App.createConfigured__().asOriginalType__() as never;
		const view = new ViewFormModal(app, d, tables, () => undefined);
		view.open();
		view.fill("Silent Films", "main.public.film");
		expect(await view.check()).toBe(false);
		expect(found(visible(view.contentEl))).toEqual([]);
		// A condition whose value is not of its column's type.
		view.fill("long_films", "main.public.film");
		const c = view.addCondition();
		c.column.value = "minutes";
		c.op.value = "gt";
		c.value.value = "a hundred";
		const table = new TableFormModal(app, d, tables, null, () => undefined);
		table.open();
		await table.ready;
		const name = table.contentEl.querySelector<HTMLInputElement>('input[aria-label="Name"]') as HTMLInputElement;
		name.value = "film";
		const forms: [string, ViewFormModal | TableFormModal][] = [
			["New view", view],
			["New table", table],
		];
		for (const [what, form] of forms) {
			expect(await form.check(), what).toBe(false);
			const text = `${form.titleEl.textContent ?? ""}\n${visible(form.contentEl)}`;
			if (process.env.SHOW_WORDS) console.log(what, text);
			expect(found(text), what).toEqual([]);
			expect(form.contentEl.querySelector(".datanotes-form-error")?.textContent, what).not.toBe("");
			expect(form.contentEl.querySelector<HTMLButtonElement>("button.mod-cta")?.disabled, what).toBe(true);
			expect(form.contentEl.querySelector(".datanotes-details-text")?.textContent, what).toMatch(/Docs: /);
			form.close();
		}
	});

	test("search by meaning's first run, on a computer and on a phone, names no file and no command", () => {
		const app = App.createConfigured__().asOriginalType__() as never;
		for (const model of [
			new MeaningModel({ app, cp: { execFile: () => undefined } as never, binary: () => "/usr/bin/datanotes", vault: "/home/me/Notes" }),
			new MeaningModel({ app, cp: null, binary: () => null, vault: null }),
		]) {
			const el = document.body.createDiv();
			const stop = drawModelSetup(el, model, () => undefined);
			const text = visible(el);
			expect(text).toContain("Search by meaning needs its model");
			expect(found(text)).toEqual([]);
			expect(text).not.toMatch(/\.datanotes|\.dnmodel|install-model|--vault|\/usr\//);
			stop();
			el.remove();
		}
	});
});
