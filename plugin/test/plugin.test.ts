// The plugin as Obsidian loads it, on obsidian-test-mocks' in-memory vault:
// main.ts and fs.ts, with the real engine.

import { readFileSync, existsSync } from "node:fs";
import type { App as AppOriginal, PluginManifest } from "obsidian";
import * as mocks from "obsidian-test-mocks/obsidian";
import { App, TFile } from "obsidian-test-mocks/obsidian";
import { afterEach, describe, expect, test, vi } from "vitest";
import DatanotesPlugin from "../src/main";
import { CHARADE, filmDiary } from "./engine";

const manifest = JSON.parse(readFileSync("manifest.json", "utf8")) as PluginManifest;
const charade = filmDiary.get(CHARADE) as string;

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
		// The first open records what the vault holds.
		expect(await adapter.exists(".datanotes/known.jsonl")).toBe(true);

		const out = await plugin.door.call("update_row", { table: "film", path: CHARADE, set: { year: 1964 } });
		expect(out.status).toBe("done");
		expect(await app.vault.read(file(app, CHARADE))).toBe(charade.replace("\nyear: 1963\n", "\nyear: 1964\n"));
		const journal = await adapter.list(".datanotes/journal");
		expect(journal.files).toEqual([`.datanotes/journal/${out.answer.migration_id}.json`]);
		expect(JSON.parse(await adapter.read(journal.files[0])).status).toBe("done");

		// A hand edit in the editor: the vault's modify event reaches the engine.
		const edited = (await app.vault.read(file(app, CHARADE))).replace("rating: 5", "rating: 4");
		await app.vault.modify(file(app, CHARADE), edited);
		await vi.waitFor(() => expect(host.nextDeadline()).not.toBeNull());
		vi.setSystemTime((host.nextDeadline() as number) + 1);
		await host.tick();
		const feed = await plugin.door.call("list_changes", { since: 1 });
		expect(feed.answer.events).toHaveLength(1);
		expect(feed.answer.events[0]).toMatchObject({ source: "external", kind: "update", path: CHARADE });

		// A rename planned by the engine goes through Vault.rename (links are the engine's to rewrite).
		const rename = vi.spyOn(app.vault, "rename");
		const moved = await plugin.door.call("update_row", { table: "film", path: CHARADE, set: { title: "Charade (1963)" } });
		expect(moved.status, JSON.stringify(moved.answer)).toBe("done");
		expect(rename).toHaveBeenCalled();
		expect(app.vault.getAbstractFileByPath("datanotes/main/public/film/Charade (1963).md")).toBeInstanceOf(TFile);
	});

	test("commands are registered and the engine's registry is loaded", async () => {
		const app = filmApp();
		const plugin = new DatanotesPlugin(app.asOriginalType__() as AppOriginal, manifest);
		plugin.load();
		unload = () => plugin.unload();
		app.workspace.setLayoutReady__();
		await plugin.whenReady();
		const mock = mocks.Plugin.fromOriginalType2__(plugin);
		expect([...mock.commands__.keys()]).toEqual(["run-operation", "undo-last-write", "check-tables", "open-history"]);
		expect(mock.views__.has("datanotes-history")).toBe(true);
	});

	test("the settings tab shows the engine's settings from configure_database", async () => {
		const app = filmApp();
		const plugin = new DatanotesPlugin(app.asOriginalType__() as AppOriginal, manifest);
		plugin.load();
		unload = () => plugin.unload();
		app.workspace.setLayoutReady__();
		await plugin.whenReady();
		await plugin.door.call("configure_database", { journalRetentionDays: 30 });
		const tab = mocks.Plugin.fromOriginalType2__(plugin).settingTabs__[0];
		tab.display();
		await vi.waitFor(() => expect(tab.containerEl.textContent).toContain("Recompute generated columns"));
		expect(tab.containerEl.textContent).toContain("Repair links after a hand move");
		const days = tab.containerEl.querySelector<HTMLInputElement>("input[type=number]");
		expect(days?.value).toBe("30");
	});

	const bundle = "plugin/dist/main.js";
	test.skipIf(!existsSync(bundle))("the bundle (npm run build) loads the inlined engine", async () => {
		const code = readFileSync(bundle, "utf8");
		const module = { exports: {} as { default?: typeof DatanotesPlugin } };
		const require = (name: string) => {
			if (name === "obsidian") return mocks;
			throw new Error(`the bundle requires ${name}`);
		};
		new Function("require", "module", "exports", code)(require, module, module.exports);
		const Bundled = module.exports.default as typeof DatanotesPlugin;
		const app = filmApp();
		const plugin = new Bundled(app.asOriginalType__() as AppOriginal, manifest);
		plugin.load();
		unload = () => plugin.unload();
		app.workspace.setLayoutReady__();
		await plugin.whenReady();
		const out = await plugin.door.call("select_rows", { table: "film", columns: ["title"] });
		expect(out.answer.total).toBe(7);
	});
});
