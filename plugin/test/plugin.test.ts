// The plugin as Obsidian loads it, on obsidian-test-mocks' in-memory vault:
// main.ts and fs.ts, with the real engine.

import * as crypto from "node:crypto";
import { readFileSync, existsSync } from "node:fs";
import * as http from "node:http";
import * as net from "node:net";
import type { App as AppOriginal, PluginManifest } from "obsidian";
import * as mocks from "obsidian-test-mocks/obsidian";
import { App, TFile } from "obsidian-test-mocks/obsidian";
import { afterEach, describe, expect, test, vi } from "vitest";
import { JsonEngine, openEngine, operations } from "../src/engine";
import { HAND_OVER_BYTES, Host } from "../src/host";
import DatanotesPlugin from "../src/main";
import { OperationSuggestModal } from "../src/modals";
import { syncedFile } from "../src/store-watch";
import { ans, CHARADE, filmDiary } from "./engine";
import { MemoryFs } from "./memfs";
import { loadFilms } from "./plugin-harness";

const manifest = JSON.parse(readFileSync("manifest.json", "utf8")) as PluginManifest;
const charade = filmDiary.get(CHARADE) as string;
const FILM_NIGHT = "Notes/Film night.md";

/** A notes' cache changed by hand, its checksum made again as the engine makes
 * it (core/src/notecache.rs `checksum`: FxHash in four lanes of every fourth
 * word of the lines, the last block padded with zeros, then the lanes and the
 * length), so that what the lines say is what is checked. */
function resummed(cache: string): string {
	const at = cache.indexOf("\n");
	const body = new TextEncoder().encode(cache.slice(at + 1));
	// BigInt() calls, not literals: the type check targets ES2017.
	const B = BigInt;
	const M = (B(1) << B(64)) - B(1);
	const rotl = (x: bigint, n: bigint): bigint => ((x << n) | (x >> (B(64) - n))) & M;
	const add = (h: bigint, w: bigint): bigint => ((rotl(h, B(5)) ^ w) * B("0x517cc1b727220a95")) & M;
	const blocks = Math.floor(body.length / 32) + 1;
	const padded = new Uint8Array(blocks * 32);
	padded.set(body);
	const view = new DataView(padded.buffer);
	const lanes = [B(0), B(0), B(0), B(0)];
	for (let i = 0; i < padded.length; i += 8) lanes[(i / 8) % 4] = add(lanes[(i / 8) % 4], view.getBigUint64(i, true));
	let h = lanes.reduce((h, lane) => add(h, rotl(lane, B(26))), B(0));
	h = add(h, BigInt(body.length));
	const head = JSON.parse(cache.slice(0, at)) as Record<string, unknown>;
	head.sum = rotl(h, B(26)).toString(16).padStart(16, "0");
	head.bytes = body.length;
	return `${JSON.stringify(head)}\n${cache.slice(at + 1)}`;
}

function filmApp(): App {
	return App.createConfigured__({ files: Object.fromEntries(filmDiary) });
}

function file(app: App, path: string): TFile {
	const f = app.vault.getAbstractFileByPath(path);
	if (!(f instanceof TFile)) throw new Error(`${path}: no such file`);
	return f;
}

let unload: (() => void) | null = null;
afterEach(() => {
	unload?.();
	unload = null;
	delete (window as Window & { require?: unknown }).require;
	vi.useRealTimers();
});

describe("plugin", () => {
	test("opens the vault on layout ready, writes through the vault, keeps its store in .datanotes", async () => {
		vi.useFakeTimers({ toFake: ["Date"], now: Date.UTC(2026, 11, 2, 12) });
		const app = filmApp();
		const plugin = new DatanotesPlugin(app.asOriginalType__() as AppOriginal, manifest);
		plugin.load();
		unload = () => plugin.unload();
		app.workspace.setLayoutReady__();
		const host = await plugin.whenReady();
		const adapter = app.vault.adapter;
		// The first open records what the vault holds, under this device's id: on
		// mobile (no Node here) the one kept in Obsidian's local storage.
		const device: unknown = app.loadLocalStorage("datanotes-device");
		expect(device).toMatch(/^[a-z2-7]{10}$/);
		expect(await adapter.exists(`.datanotes/known.${device as string}.jsonl`)).toBe(true);

		const out = await plugin.door.call("update_row", { table: "film", path: CHARADE, set: { year: 1964 } });
		expect(out.status).toBe("ok");
		expect(await app.vault.read(file(app, CHARADE))).toBe(charade.replace("\nyear: 1963\n", "\nyear: 1964\n"));
		const journal = await adapter.list(".datanotes/journal");
		expect(journal.files).toEqual([`.datanotes/journal/${ans(out).migration_id}.json`]);
		expect(JSON.parse(await adapter.read(journal.files[0])).status).toBe("done");

		// A hand edit in the editor: the vault's modify event reaches the engine.
		const edited = (await app.vault.read(file(app, CHARADE))).replace("rating: 5", "rating: 4");
		await app.vault.modify(file(app, CHARADE), edited);
		await vi.waitFor(() => expect(host.nextDeadline()).not.toBeNull());
		vi.setSystemTime((host.nextDeadline() as number) + 1);
		await host.tick();
		const feed = await plugin.door.call("list_changes", { since: 1 });
		expect(ans(feed).events).toHaveLength(1);
		expect(ans(feed).events[0]).toMatchObject({ source: "external", kind: "update", path: CHARADE });

		// A rename planned by the engine goes through Vault.rename (links are the engine's to rewrite).
		const rename = vi.spyOn(app.vault, "rename");
		const moved = await plugin.door.call("update_row", { table: "film", path: CHARADE, set: { title: "Charade (1963)" } });
		expect(moved.status, JSON.stringify(moved.answer)).toBe("ok");
		expect(rename).toHaveBeenCalled();
		expect(app.vault.getAbstractFileByPath("datanotes/main/public/film/Charade (1963).md")).toBeInstanceOf(TFile);
	});

	test("takes in what a sync brings to .datanotes from another device: its write, not a hand edit (issue 15)", async () => {
		const { app, plugin, host, unload: end } = await loadFilms();
		unload = end;
		const adapter = app.vault.adapter;
		const phone = app.loadLocalStorage("datanotes-device") as string;
		const head = ans(await plugin.door.call("list_changes", {})).head as number;
		// The laptop: the same vault and store, its own engine, one write.
		const laptopFs = new MemoryFs(filmDiary);
		for (const path of (await adapter.list(".datanotes")).files.concat((await adapter.list(".datanotes/journal")).files)) {
			laptopFs.store.set(path.slice(".datanotes/".length), await adapter.read(path));
		}
		const laptop = new Host(openEngine(laptopFs.notes(), laptopFs.storeListing(), Date.now(), new Uint8Array(32).fill(5), "laptop"), laptopFs, { warn: () => undefined });
		await laptop.open();
		const before = new Map(laptopFs.store);
		const wrote = ans(await laptop.call("update_row", { table: "film", path: CHARADE, set: { rating: 2 } }));
		// The sync tool brings its store files and the note.
		for (const [p, t] of laptopFs.store) if (before.get(p) !== t && syncedFile(p, phone)) await adapter.write(`.datanotes/${p}`, t);
		await app.vault.modify(file(app, CHARADE), laptopFs.text(CHARADE) as string);
		// The note's change sets the plugin's timer; its tick looks at the store first.
		await vi.waitFor(
			async () => {
				const events = ans(await plugin.door.call("list_changes", { since: head })).events as { migration_id?: string }[];
				expect(events.map((e) => e.migration_id)).toEqual([wrote.migration_id]);
			},
			{ timeout: 8000, interval: 200 },
		);
		await vi.waitFor(() => expect(plugin.wakesAt()).toBeNull(), { timeout: 10_000 });
		expect(host.nextDeadline()).toBeNull();
		const events = ans(await plugin.door.call("list_changes", { since: head })).events as { source: string }[];
		expect(events.map((e) => e.source), "no hand edit").toEqual(["engine"]);
		const history = ans(await plugin.door.call("describe_history", { table: "film", limit: 1 }));
		expect(history.history[0].device).toBe("laptop");
	});

	test("a reopen takes the rows of notes unchanged since from the notes' cache, and parses the changed (issue 17)", async () => {
		vi.useFakeTimers({ toFake: ["Date"], now: Date.UTC(2026, 11, 2, 12) });
		const app = filmApp();
		const adapter = app.vault.adapter;
		// The mocks' files have no times nor sizes (Obsidian's TFile.stat has them): written at 11:00.
		const bytes = async (path: string): Promise<number> => new TextEncoder().encode(await adapter.read(path)).length;
		const night = "Notes/Charade night.md";
		await app.vault.create(night, "We watched [[Charade]] again.\n");
		// Notes enough beside the diary's that one changed is appended to the
		// cache, not the cache written whole (an eighth of its lines at most).
		for (let k = 0; k < 40; k++) await app.vault.create(`Notes/n${k}.md`, `Note ${k}.\n`);
		for (const f of app.vault.getFiles()) f.stat = { ctime: 0, mtime: Date.UTC(2026, 11, 2, 11), size: await bytes(f.path) };
		const read = vi.spyOn(app.vault, "cachedRead");
		const readNow = (): string[] => read.mock.calls.map((c) => (c[0] as { path: string }).path);
		const open = async (): Promise<DatanotesPlugin> => {
			const plugin = new DatanotesPlugin(app.asOriginalType__() as AppOriginal, manifest);
			plugin.load();
			unload = () => plugin.unload();
			app.workspace.setLayoutReady__();
			await plugin.whenReady();
			return plugin;
		};
		const rating = async (plugin: DatanotesPlugin): Promise<unknown> => {
			const out = await plugin.door.call("select_rows", { table: "film", where: { title: "Charade" }, columns: ["rating"] });
			return (ans(out).rows as { rating: unknown }[])[0].rating;
		};
		(await open()).unload();
		const cache = `.datanotes/cache/notes.${app.loadLocalStorage("datanotes-device") as string}.jsonl`;
		expect(await adapter.exists(cache)).toBe(true);
		// Notes written in the same instant as the cache are not trusted yet; an hour
		// later they are read once more, and the cache written again vouches for them.
		vi.setSystemTime(Date.UTC(2026, 11, 2, 13));
		(await open()).unload();
		// The cache says Charade is rated 1, keeping the note's size and mtime: a
		// reopen that shows 1 took the row from the cache, without parsing the note.
		const line = (await adapter.read(cache)).split("\n").find((l) => l.includes(`"p":"${CHARADE}"`)) as string;
		expect(line).toContain('"rating":5');
		const edited = (await adapter.read(cache)).replace(line, line.replace('"rating":5', '"rating":1'));
		expect(resummed(await adapter.read(cache)), "the checksum as the engine makes it").toBe(await adapter.read(cache));
		await adapter.write(cache, resummed(edited));
		read.mockClear();
		let plugin = await open();
		expect(await rating(plugin)).toBe(1);
		// The open reads no note the cache vouches for: the rows are read in the
		// background once the engine answers, a note outside the tables when a
		// turn needs its text. (The watches were written by the first open, a
		// generated column, after the stats above: the cache does not vouch for them.)
		expect(readNow().filter((p) => !p.includes("/watch/"))).toEqual([]);
		const engine = (await plugin.whenReady()).engine;
		const warm = vi.spyOn(engine, "warmLookups");
		const handed = vi.spyOn(engine, "readNotes");
		expect(await engine.unreadRows()).toContain(CHARADE);
		await plugin.rowsRead;
		// The lookups first, in a turn of their own, once: built after the
		// rows' texts, they took wasm memory of their own.
		expect(warm).toHaveBeenCalledTimes(1);
		expect(handed).toHaveBeenCalled();
		expect(warm.mock.invocationCallOrder[0]).toBeLessThan(handed.mock.invocationCallOrder[0]);
		expect(readNow()).toContain(CHARADE);
		expect(await engine.unreadRows()).toEqual([]);
		expect(readNow().filter((p) => !p.startsWith("datanotes/"))).toEqual([]);
		expect(app.vault.getFiles().some((f) => f.path === FILM_NIGHT)).toBe(true);
		plugin.unload();
		// A note changed while Obsidian was closed has another mtime: parsed again,
		// and its line appended to the cache, not the cache written whole.
		vi.setSystemTime(Date.UTC(2026, 11, 2, 14));
		await app.vault.modify(file(app, CHARADE), charade.replace("rating: 5", "rating: 3"));
		file(app, CHARADE).stat = { ctime: 0, mtime: Date.now() - 60_000, size: await bytes(CHARADE) };
		const whole = await adapter.read(cache);
		plugin = await open();
		expect(await rating(plugin)).toBe(3);
		plugin.unload();
		const appended = await adapter.read(cache);
		expect(appended.startsWith(whole), "the cache's first part kept").toBe(true);
		const segment = appended.slice(whole.length).split("\n");
		expect(segment[0]).toMatch(/^\{"of":/);
		expect(segment[1]).toContain(`"p":"${CHARADE}"`);
		expect(segment[1]).toContain('"rating":3');
		read.mockClear();
		plugin = await open();
		expect(await rating(plugin)).toBe(3);
		expect(readNow(), "the reopen takes Charade from the segment").not.toContain(CHARADE);
		// A cache of another format is not trusted at all.
		plugin.unload();
		const spoilt = (await adapter.read(cache)).replace('"format":3', '"format":0').replace('"rating":3', '"rating":2');
		expect(spoilt).toContain('"format":0');
		await adapter.write(cache, resummed(spoilt));
		plugin = await open();
		expect(await rating(plugin)).toBe(3);
		// A rename rewrites the links to the film in a note outside the tables that
		// the open did not read: the write asks for it (a read_notes step).
		plugin.unload();
		read.mockClear();
		plugin = await open();
		expect(readNow()).not.toContain(night);
		const renamed = await plugin.door.call("update_row", { table: "film", path: CHARADE, set: { title: "Charade (1963)" } });
		expect(renamed.status, JSON.stringify(renamed.answer)).toBe("ok");
		expect(await adapter.read(night)).toBe("We watched [[Charade (1963)]] again.\n");
	});

	test("a first open hands the notes' texts to the engine a batch at a time, a sync tool's copy after its original (issue 17)", async () => {
		const app = filmApp();
		const big = (k: number): string => `# Big ${k}\n\n${"Words of a long note. ".repeat(60_000)}\n`;
		for (let k = 0; k < 3; k++) await app.vault.create(`Notes/Big ${k}.md`, big(k));
		// An iCloud copy: listed before Charade.md, a copy only beside it.
		const copy = "datanotes/main/public/film/Charade 2.md";
		await app.vault.create(copy, charade.replace("rating: 5", "rating: 2"));
		const size = async (path: string): Promise<number> => new TextEncoder().encode(await app.vault.adapter.read(path)).length;
		for (const f of app.vault.getFiles()) f.stat = { ctime: 0, mtime: Date.now() - 3_600_000, size: await size(f.path) };
		const handed = vi.spyOn(JsonEngine.prototype, "readNotes");
		const plugin = new DatanotesPlugin(app.asOriginalType__() as AppOriginal, manifest);
		plugin.load();
		unload = () => plugin.unload();
		app.workspace.setLayoutReady__();
		await plugin.whenReady();
		const listed = handed.mock.calls.filter((c) => c[2] === true).map((c) => c[0]);
		// Three notes of 1.3 MB: none shares a batch of 2 MB with another.
		expect(listed.length).toBeGreaterThanOrEqual(3);
		for (const files of listed) {
			const bytes = files.reduce((n, f) => n + new TextEncoder().encode(f.text).length, 0);
			expect(files.length === 1 || bytes <= HAND_OVER_BYTES, `${files.length} notes of ${bytes} bytes`).toBe(true);
		}
		const paths = listed.flatMap((files) => files.map((f) => f.path)).sort();
		const notes = app.vault.getFiles().map((f) => f.path).filter((p) => p.endsWith(".md") && p !== "datanotes/metastore.yaml");
		expect(paths, "each note handed over once").toEqual(notes.sort());
		const check = ans(await plugin.door.call("check_table", { table: "film" }));
		const found = (check.violations as { path: string; violations: { code: string }[] }[]).filter((v) => v.path === copy);
		expect(found.map((v) => v.violations[0].code)).toEqual(["conflict"]);
		const titles = ans(await plugin.door.call("select_rows", { table: "film", where: { title: "Charade" } }));
		expect(titles.total).toBe(1);
		expect(ans(await plugin.door.call("read_note", { path: "Notes/Big 2.md" })).text).toBe(big(2));
	});

	test("commands are registered and the engine's registry is loaded", async () => {
		const app = filmApp();
		const plugin = new DatanotesPlugin(app.asOriginalType__() as AppOriginal, manifest);
		plugin.load();
		unload = () => plugin.unload();
		app.workspace.setLayoutReady__();
		await plugin.whenReady();
		const mock = mocks.Plugin.fromOriginalType2__(plugin);
		expect([...mock.commands__.keys()]).toEqual([
			"run-operation",
			"undo-last-write",
			"redo-last-undo",
			"check-tables",
			"open-problems",
			"open-history",
			"show-note-history",
			"restore-table",
			"open-base",
			"write-bases",
			"rewind-database",
			"install-meaning-model",
			"search-by-meaning",
			"new-row",
			"new-view",
			"new-table",
			"edit-row",
		]);
		expect(mock.views__.has("datanotes-problems")).toBe(true);
		expect(mock.views__.has("datanotes-history")).toBe(true);
		// "Restore table…" opens the history panel on its Table section.
		const open = vi.spyOn(plugin, "openHistory").mockResolvedValue();
		mock.commands__.get("restore-table")?.callback?.();
		expect(open).toHaveBeenCalledWith("table");
		// "Run operation…" offers the whole registry, asked of the engine then.
		let picker: OperationSuggestModal | null = null;
		vi.spyOn(OperationSuggestModal.prototype, "open").mockImplementation(function (this: OperationSuggestModal) {
			picker = this;
		});
		mock.commands__.get("run-operation")?.callback?.();
		expect((picker as OperationSuggestModal | null)?.getSuggestions("").map((o) => o.name)).toEqual(operations().map((o) => o.name));
		expect(operations().length).toBeGreaterThan(30);
	});

	const bundle = "plugin/dist/main.js";
	test.skipIf(!existsSync(bundle))("the bundle (npm run build) loads the inlined engine", async () => {
		const code = readFileSync(bundle, "utf8");
		const module = { exports: {} as { default?: typeof DatanotesPlugin } };
		// Obsidian's desktop renderer gives Node's modules too.
		const node: Record<string, unknown> = { http, net, crypto, process };
		const require = (name: string) => {
			if (name === "obsidian") return mocks;
			if (name in node) return node[name];
			throw new Error(`the bundle requires ${name}`);
		};
		// Node's modules come through window.require, as in Obsidian's desktop renderer.
		(window as Window & { require?: typeof require }).require = require;
		new Function("require", "module", "exports", code)(require, module, module.exports);
		const Bundled = module.exports.default as typeof DatanotesPlugin;
		const app = filmApp();
		const plugin = new Bundled(app.asOriginalType__() as AppOriginal, manifest);
		plugin.load();
		unload = () => plugin.unload();
		app.workspace.setLayoutReady__();
		await plugin.whenReady();
		const out = await plugin.door.call("select_rows", { table: "film", columns: ["title"] });
		expect(ans(out).total).toBe(7);
		// On desktop it holds the vault: the lock names it, and its door answers.
		const lock = JSON.parse(await app.vault.adapter.read(".datanotes/lock"));
		expect(lock).toMatchObject({ format: 1, pid: process.pid });
		const token = (await app.vault.adapter.read(".datanotes/token")).trim();
		const answer = await new Promise<{ status: number; text: string }>((done, fail) => {
			const req = http.request(
				`${lock.url}/datanotes/operations/select_rows/`,
				{ method: "POST", headers: { Authorization: `Bearer ${token}` }, agent: false },
				(res) => {
					let text = "";
					res.on("data", (c) => {
						text += c;
					});
					res.on("end", () => done({ status: res.statusCode ?? 0, text }));
				},
			);
			req.on("error", fail);
			req.end(JSON.stringify({ table: "film", limit: 1 }));
		});
		expect(answer.status).toBe(200);
		expect(JSON.parse(answer.text).total).toBe(7);
		plugin.unload();
		unload = null;
		await vi.waitFor(() => expect(app.vault.adapter.exists(".datanotes/lock")).resolves.toBe(false));
	});
});
