// The page the browser test loads (plugin/browser/run.mjs): the real bundled
// engine on the film diary, a scripted sequence of writes and hand edits, then
// the history panel (each section, and the journal narrowed by a search and
// its filters with a long diff unfolded), the Problems view, the restore modal, a row
// form with the engine's refusal beside its fields, an operation's form (Run
// operation…) with its filter in words and a dry run's refusal, and a table's Bases file,
// mounted through obsidian-test-mocks (a small Obsidian API shim) in light and
// dark themes; New view… refused by the engine, and search by meaning's first
// run on a computer and on a phone. Each scene says what it drew in
// window.__scenes, and the engine words a person would read in it (outside
// Details): operation names, qualified table names, ids, Hint, Docs, JSON.

import type { App as AppOriginal } from "obsidian";
import { addIcon, App, MarkdownRenderer, Modal, Setting, WorkspaceLeaf } from "obsidian-test-mocks/obsidian";
import { setup } from "obsidian-test-mocks/setup";
import films from "virtual:films";
import wasmBytes from "../wasm/datanotes_core_bg.wasm";
import { loadEngine, openEngine, operations } from "../src/engine";
import { HistoryView, type Section } from "../src/history-view";
import { AsOfModal, RestoreRowModal } from "../src/note-history";
import { Host } from "../src/host";
import { Problems, ProblemsView } from "../src/problems";
import { OperationFormModal } from "../src/op-form";
import type { Named } from "../src/table-suggest";
import { RowFormModal } from "../src/row-form";
import { TableFormModal } from "../src/table-form";
import { DryRunModal } from "../src/table-history";
import { MeaningModel, ModelSetupModal } from "../src/model-install";
import { ViewFormModal } from "../src/view-form";
import { answered, type TableInfo, type ViewInfo } from "../src/types";
import type { EngineDoor } from "../src/history-view";
import { MemoryFs } from "../test/memfs";

interface Scene {
	name: string;
	/** Elements drawn in it: rows, versions, events, problems. */
	items: number;
	text: string;
	/** Engine words a person reads in it, each with its line. */
	words: string[];
}

declare global {
	interface Window {
		__scenes?: Scene[];
		__done?: boolean;
		__error?: string;
	}
}

/** The Lucide icons the panel's tabs draw (Obsidian ships them; the shim draws
 * only icons added to it), so icon-only tabs show something here too. */
const ICONS: Record<string, string> = {
	list: '<path d="M8 6h13M8 12h13M8 18h13M3 6h.01M3 12h.01M3 18h.01"/>',
	table: '<path d="M12 3v18"/><rect width="18" height="18" x="3" y="3" rx="2"/><path d="M3 9h18M3 15h18"/>',
	"file-text": '<path d="M15 2H6a2 2 0 0 0-2 2v16a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2V7Z"/><path d="M14 2v4a2 2 0 0 0 2 2h4M10 9H8M16 13H8M16 17H8"/>',
	database: '<ellipse cx="12" cy="5" rx="9" ry="3"/><path d="M3 5v14a9 3 0 0 0 18 0V5"/><path d="M3 12a9 3 0 0 0 18 0"/>',
	activity: '<path d="M22 12h-4l-3 9L9 3l-3 9H2"/>',
};

const CHARADE = "datanotes/main/public/film/Charade.md";
const METROPOLIS = "datanotes/main/public/film/Metropolis.md";

async function main(): Promise<void> {
	setup();
	MarkdownRenderer.render = renderMarkdown as typeof MarkdownRenderer.render;
	for (const [name, paths] of Object.entries(ICONS)) {
		addIcon(name, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round" class="svg-icon lucide-${name}">${paths}</svg>`);
	}
	// A Setting as Obsidian builds one (the shim's has no classes, its control
	// first), so that run.mjs's stand-in for Obsidian's layout of it applies.
	const built = Setting.prototype.constructor__;
	Setting.prototype.constructor__ = function (this: Setting, containerEl: HTMLElement) {
		built.call(this, containerEl);
		this.settingEl.addClass("setting-item");
		this.infoEl.addClass("setting-item-info");
		this.nameEl.addClass("setting-item-name");
		this.descEl.addClass("setting-item-description");
		this.controlEl.addClass("setting-item-control");
		this.settingEl.prepend(this.infoEl);
	};
	let clock = Date.UTC(2026, 11, 2, 20, 0, 0);
	const now = () => clock;
	await loadEngine(wasmBytes);
	// Beside the film diary, a folder of notes no table holds yet.
	const reading = {
		"Reading/Dune.md": "---\ntitle: Dune\nyear: 1965\nread: true\nshelf: sf\n---\n",
		"Reading/Emma.md": "---\ntitle: Emma\nyear: 1815\nshelf: classics\n---\n",
	};
	const fs = new MemoryFs(new Map(Object.entries({ ...films, ...reading })));
	const host = new Host(openEngine(fs.notes(), fs.storeListing(), now()), fs, { actor: "obsidian", now, warn: () => undefined });
	await host.open();
	const call = async (name: string, args: unknown) => {
		clock += 60_000;
		const out = await host.call(name, args);
		if (out.status !== "ok") throw new Error(`${name}: ${JSON.stringify(out.answer)}`);
		return out;
	};
	await call("update_row", { table: "film", path: CHARADE, set: { rating: 4 } });
	// An agent setting what the row holds: the journal shows it as "changed nothing".
	await call("update_row", { table: "film", path: CHARADE, set: { rating: 4 } });
	await call("insert_row", { table: "film", values: { title: "Sunrise", year: 1927, status: "to watch" } });
	await call("update_rows", { table: "film", where: { year: { lt: 1930 } }, set: { status: "watched" } });
	// A hand edit that breaks the rating rule.
	fs.handWrite(METROPOLIS, (fs.files.get(METROPOLIS)?.text ?? "").replace("rating: 5", "rating: 9"));
	await host.observe({ kind: "modified", path: METROPOLIS });
	clock += 10_000;
	await host.tick();
	const undo = await call("insert_row", { table: "person", values: { name: "Janet Gaynor", born: 1906 } });
	await call("undo_migration", { migration_id: (undo.answer as { migration_id: string }).migration_id });
	// An agent's write (the journal names it by its token) and a long body (its diff folds).
	clock += 60_000;
	await host.call("update_row", { table: "film", path: "datanotes/main/public/film/Sherlock Jr..md", set: { rating: 2 } }, "reader/claude-code");
	await call("update_row", { table: "film", path: "datanotes/main/public/film/The Gold Rush.md", body: Array.from({ length: 30 }, (_, i) => `Scene ${i + 1}: the Tramp in the Klondike.`).join("\n") });
	// Charade's text changed: the compared versions show it line by line.
	const told = (fs.files.get(CHARADE)?.text ?? "").split("\n---\n")[1] ?? "";
	await call("update_row", { table: "film", path: CHARADE, set: { tags: ["seen-2026", "film-night", "paris"] }, body: `${told.trimEnd()}\n\nSeen again with the film club: the ending still surprises.\n` });
	await call("write_bases", {});
	// The scenes are drawn a few minutes after the last write.
	clock += 5 * 60_000;

	const door: EngineDoor = { call: async (name, args) => answered(name, await host.call(name, args ?? {})), onChange: (fn) => host.onChange(fn) };
	const problems = new Problems(door);
	await problems.check();
	// Modals stay where the page puts them (the shim closes one on the next tick).
	Modal.prototype.open = function (this: Modal) {
		this.onOpen();
	};

	const scenes: Scene[] = [];
	const stage = document.getElementById("stage") as HTMLElement;
	for (const theme of ["light", "dark"]) {
		const sections: (Section | "journal-search")[] = ["journal", "journal-search", "table", "note", "database", "changes"];
		for (const scene of sections) {
			const section: Section = scene === "journal-search" ? "journal" : scene;
			const app = App.createConfigured__();
			app.workspace.getActiveFile = () => ({ path: CHARADE }) as never;
			const view = new HistoryView(WorkspaceLeaf.create2__(app).asOriginalType3__(), door);
			view.retryMs = 60_000;
			// Times as the page's clock tells them ("5 minutes ago").
			view.now = now;
			await view.onOpen();
			await view.show(section);
			if (scene === "journal-search") {
				// The journal narrowed: a search, people in Obsidian, between two dates; the long diff unfolded, folded.
				await view.journal.choose({ query: "gold rush", who: "obsidian", when: "dates", from: "2026-12-01", to: "2026-12-02" });
				view.contentEl.querySelector<HTMLElement>(".datanotes-expand")?.click();
				await new Promise((r) => setTimeout(r, 50));
			}
			if (section === "table") {
				// The columns and rules unfolded, then what changed since version 0.
				const schema = view.contentEl.querySelector<HTMLDetailsElement>(".datanotes-table-schema");
				if (schema) {
					schema.open = true;
					schema.dispatchEvent(new Event("toggle"));
				}
				view.contentEl.querySelector<HTMLElement>('.datanotes-version[data-version="0"]')?.click();
				await new Promise((r) => setTimeout(r, 50));
			}
			if (scene === "journal") {
				view.contentEl.querySelector<HTMLElement>(".datanotes-expand")?.click();
				await new Promise((r) => setTimeout(r, 50));
			}
			if (section === "note") {
				// "Similar notes" unfolded: this store holds no model, so the engine's way out.
				view.contentEl.querySelector<HTMLElement>(".datanotes-similar-head")?.click();
				await new Promise((r) => setTimeout(r, 50));
			}
			scenes.push(mount(stage, `${scene}-${theme}`, theme, view.containerEl, view.contentEl));
			await view.onClose();
		}
		// This note, two versions picked: the oldest and the newest, compared.
		const compared = await noteScene(door, now, (rows) => [rows[rows.length - 1], rows[0]]);
		scenes.push(mount(stage, `note-compare-${theme}`, theme, compared.containerEl, compared.contentEl));
		await compared.onClose();
		const app = App.createConfigured__();
		// Show as of and Restore… of the row at its first version.
		const asOf = new AsOfModal(app.asOriginalType__(), door, CHARADE, 0);
		asOf.open();
		await asOf.ready;
		asOf.modalEl.addClass("modal");
		scenes.push(mount(stage, `as-of-${theme}`, theme, asOf.modalEl, asOf.contentEl));
		const restoreRow = new RestoreRowModal(app.asOriginalType__(), door, { path: CHARADE }, 0, () => undefined);
		restoreRow.open();
		await restoreRow.ready;
		restoreRow.modalEl.addClass("modal");
		scenes.push(mount(stage, `restore-row-${theme}`, theme, restoreRow.modalEl, restoreRow.contentEl));
		const pv = new ProblemsView(WorkspaceLeaf.create2__(app).asOriginalType3__(), problems, () => undefined);
		await pv.onOpen();
		scenes.push(mount(stage, `problems-${theme}`, theme, pv.containerEl, pv.contentEl));
		const modal = new DryRunModal(app.asOriginalType__(), door, "Restore film to version 0", "restore_table", { table: "film", version: 0 }, () => undefined);
		modal.open();
		await modal.ready;
		modal.modalEl.addClass("modal");
		scenes.push(mount(stage, `restore-${theme}`, theme, modal.modalEl, modal.contentEl));
		// A new row's form, after a check the engine refused: the reasons beside their fields.
		const film = (await door.call("describe_database", {})).answer as { tables: TableInfo[]; views: ViewInfo[] };
		const form = new RowFormModal(app.asOriginalType__(), door, film.tables.find((t) => t.name === "film") as TableInfo, { kind: "new" }, () => undefined);
		form.open();
		const rating = form.contentEl.querySelector<HTMLInputElement>('.datanotes-field[data-column="rating"] input');
		if (rating) rating.value = "9";
		rating?.dispatchEvent(new Event("input"));
		await form.check();
		form.modalEl.addClass("modal");
		scenes.push(mount(stage, `form-${theme}`, theme, form.modalEl, form.contentEl));
		// "Run operation…" as a form: add_check on film, its rule read back in
		// words, and the engine's refusal of a dry run (rows break it); then
		// add_column, its definition as fields, after a dry run it passed.
		const named = [...film.tables, ...film.views];
		const check = await operationScene(app.asOriginalType__(), door, named, "add_check", {
			table: "film",
			name: "recent",
			check: '{"year": {"gte": 1950}, "status": {"in": ["watched", "to watch"]}}',
		});
		scenes.push(mount(stage, `operation-check-${theme}`, theme, check.modalEl, check.contentEl));
		const column = await operationScene(app.asOriginalType__(), door, named, "add_column", {
			table: "film",
			column: "cast",
			".is-type select": "list",
			".is-items select": "link",
			".is-table input": "person",
			".is-description input": "Who plays in it",
		});
		scenes.push(mount(stage, `operation-column-${theme}`, theme, column.modalEl, column.contentEl));
		// "Make a table of this folder…": the columns the notes' front matter proposes.
		const table = new TableFormModal(app.asOriginalType__(), door, film.tables, "Reading", () => undefined);
		table.open();
		await table.ready;
		table.modalEl.addClass("modal");
		scenes.push(mount(stage, `folder-table-${theme}`, theme, table.modalEl, table.contentEl));
		// "New view…" whose condition compares minutes with text: refused, in words.
		const view = new ViewFormModal(app.asOriginalType__(), door, film.tables, () => undefined);
		view.open();
		view.fill("long_films", "main.public.film", "Films over a hundred minutes");
		const condition = view.addCondition();
		condition.column.value = "minutes";
		condition.op.value = "gt";
		condition.value.value = "a hundred";
		await view.check();
		view.modalEl.addClass("modal");
		scenes.push(mount(stage, `view-form-${theme}`, theme, view.modalEl, view.contentEl));
		// Search by meaning's first run: on a computer (Install), and on a phone (the model arrives with the vault).
		const computer = new MeaningModel({ app: app.asOriginalType__(), cp: { execFile: () => undefined } as never, binary: () => "/usr/local/bin/datanotes", vault: "/home/me/Notes" });
		const phone = new MeaningModel({ app: app.asOriginalType__(), cp: null, binary: () => null, vault: null });
		for (const [kind, model] of [["computer", computer], ["phone", phone]] as const) {
			const setup = new ModelSetupModal(app.asOriginalType__(), model);
			setup.open();
			setup.modalEl.addClass("modal");
			scenes.push(mount(stage, `meaning-first-run-${kind}-${theme}`, theme, setup.modalEl, setup.contentEl));
		}
		// The film table's Bases file, as the engine keeps it.
		const listing = createDiv({ cls: "datanotes-listing" });
		listing.createEl("h4", { text: "datanotes/bases/film.base" });
		const lines = listing.createEl("pre").createEl("ol");
		for (const line of (fs.files.get("datanotes/bases/film.base")?.text ?? "").split("\n")) lines.createEl("li", { text: line, cls: "datanotes-listing-line" });
		scenes.push(mount(stage, `base-${theme}`, theme, listing, listing));
	}
	window.__scenes = scenes;
}

/** The history panel on This note (Charade), with the versions `pick` chooses
 * picked and who set each property unfolded. */
async function noteScene(door: EngineDoor, now: () => number, pick: (rows: HTMLElement[]) => HTMLElement[]): Promise<HistoryView> {
	const app = App.createConfigured__();
	app.workspace.getActiveFile = () => ({ path: CHARADE }) as never;
	const view = new HistoryView(WorkspaceLeaf.create2__(app).asOriginalType3__(), door);
	view.retryMs = 60_000;
	view.now = now;
	await view.onOpen();
	await view.show("note");
	for (const row of pick(Array.from(view.contentEl.querySelectorAll<HTMLElement>(".datanotes-row-version")))) row.click();
	// Who set each property, unfolded.
	view.contentEl.querySelector<HTMLElement>(".datanotes-blame-head")?.click();
	await new Promise((r) => setTimeout(r, 50));
	return view;
}

/** Obsidian's Markdown renderer, in a few lines (the shim's draws nothing):
 * paragraphs, and a wiki link as its title in a link, as Obsidian shows one. */
function renderMarkdown(_app: unknown, markdown: string, el: HTMLElement): Promise<void> {
	for (const para of markdown.split(/\n\s*\n/).filter((p) => p.trim() !== "")) {
		const p = el.createEl("p");
		for (const part of para.split(/(\[\[[^\]]+\]\])/)) {
			const link = /^\[\[([^\]|]+)(?:\|([^\]]+))?\]\]$/.exec(part);
			if (link) p.createEl("a", { text: link[2] ?? link[1], cls: "internal-link", href: "#" });
			else p.appendText(part);
		}
	}
	return Promise.resolve();
}

/** An operation's form, filled (an argument by name, a part of the column's
 * definition by selector) and checked by a dry run. */
async function operationScene(app: AppOriginal, door: EngineDoor, named: Named[], name: string, values: Record<string, string>): Promise<OperationFormModal> {
	const op = operations().find((o) => o.name === name);
	if (!op) throw new Error(`no ${name} in the registry`);
	const form = new OperationFormModal(app, op, named, (args) => door.call(name, args));
	form.open();
	for (const [key, value] of Object.entries(values)) {
		const selector = key.startsWith(".") ? `.datanotes-field ${key}` : `.datanotes-field[data-param="${key}"] :is(input, select, textarea)`;
		const el = form.contentEl.querySelector<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>(selector);
		if (!el) throw new Error(`no ${selector} in ${name}'s form`);
		el.value = value;
		el.dispatchEvent(new Event(el instanceof HTMLSelectElement ? "change" : "input"));
	}
	await form.submit(true);
	form.modalEl.addClass("modal");
	return form;
}

/** Puts a view's element in a themed frame of the page; counts what it drew. */
function mount(stage: HTMLElement, name: string, theme: string, el: HTMLElement, content: HTMLElement): Scene {
	const frame = stage.createDiv({ cls: `scene theme-${theme}` });
	frame.dataset.scene = name;
	frame.appendChild(el);
	const items = content.querySelectorAll(
		".datanotes-history-row, .datanotes-version, .datanotes-compare-properties li, .datanotes-blame-property, .datanotes-as-of-properties li, .datanotes-restore-note, .datanotes-event, .datanotes-problem, .datanotes-restore-paths li, .datanotes-moment, .datanotes-field, .datanotes-table-column, .datanotes-listing-line, .datanotes-view-column, .datanotes-model-status",
	).length;
	return { name, items, text: (content.textContent ?? "").slice(0, 200), words: engineWords(el) };
}

/** Words only a program reads, each with what it is. */
function engineWordPatterns(): [RegExp, string][] {
	return [
		...operations().map((o): [RegExp, string] => [new RegExp(`\\b${o.name}\\b`), `operation name ${o.name}`]),
		[/\d{8}T\d{6}-/, "migration id"],
		[/main\.public\./, "qualified table name"],
		[/Hint:/, "Hint line"],
		[/Docs:/, "Docs line"],
		[/read_docs/, "read_docs"],
		[/[{}]/, "JSON brace"],
		[/\.datanotes\/|\.dnmodel\b|--vault/, "a store file or a command"],
	];
}

/** The engine words in what a person reads of `el`: its text, Details left
 * out, and a note's own lines in a diff (the person's text). A Bases file's
 * lines are the engine's (its comments name main.public.film): they must be
 * behind Details, and are scanned when they are not. */
function engineWords(el: HTMLElement): string[] {
	const copy = el.cloneNode(true) as HTMLElement;
	for (const d of Array.from(copy.querySelectorAll("details"))) d.remove();
	for (const d of Array.from(copy.querySelectorAll(".datanotes-body-diff"))) {
		const path = d.closest(".datanotes-diff")?.querySelector(".datanotes-diff-path")?.getAttribute("title") ?? "";
		if (path.endsWith(".md")) d.remove();
	}
	// A note's own text (compared versions, a row as of a version) is the person's.
	for (const d of Array.from(copy.querySelectorAll(".datanotes-own-text"))) d.remove();
	// Each element's own text nodes: a line of words with a time in it is read too.
	const lines = Array.from(copy.querySelectorAll("*"))
		.map((e) => Array.from(e.childNodes).filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent ?? "").join(""))
		.filter((t) => t.trim() !== "");
	const out: string[] = [];
	for (const line of lines) for (const [re, what] of engineWordPatterns()) if (re.test(line)) out.push(`${what}: ${line.slice(0, 120)}`);
	return out;
}

main().then(
	() => {
		window.__done = true;
	},
	(e: unknown) => {
		window.__error = e instanceof Error ? `${e.message}\n${e.stack ?? ""}` : String(e);
		window.__done = true;
	},
);
