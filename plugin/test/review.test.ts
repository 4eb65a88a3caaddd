// Issue 14: what a reviewer of the community directory and a careful user check.
// The plugin on mobile (no Node module reached, no door), the tick that sleeps
// until the engine's deadline, the loopback door's setting, the settings tab's
// headings, trash and Vault.process in ObsidianFileSystem.

import * as http from "node:http";
import { createRequire } from "node:module";
import type { App as AppOriginal, PluginManifest } from "obsidian";
import * as mocks from "obsidian-test-mocks/obsidian";
import { App, Platform, TFile } from "obsidian-test-mocks/obsidian";
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, test, vi } from "vitest";
import { DOOR_SHUT, PROOF_ROUTE } from "../src/door";
import { ObsidianFileSystem } from "../src/fs";
import DatanotesPlugin from "../src/main";
import { DEFAULT_SETTINGS } from "../src/settings";
import { ans, CHARADE, filmDiary } from "./engine";
import { post } from "./plugin-harness";

const manifest = JSON.parse(readFileSync("manifest.json", "utf8")) as PluginManifest;
const nodeRequire = createRequire(import.meta.url);
const desktop = { ...Platform };
const MOBILE = { isDesktop: false, isDesktopApp: false, isMobile: true, isMobileApp: true, isAndroidApp: true, isPhone: true, isWin: false };

type RequiringWindow = Window & { require?: (id: string) => unknown };

/** Node's modules as Obsidian's desktop renderer gives them (window.require), each
 * ask noted. Not fs: the mocks' vault is in memory, so its paths are not on disk. */
function nodeModules(): string[] {
	const asked: string[] = [];
	(window as RequiringWindow).require = (id: string) => {
		asked.push(id);
		if (id === "fs") throw new Error("no fs in this test");
		return nodeRequire(id);
	};
	return asked;
}

let unload: (() => void) | null = null;
afterEach(() => {
	unload?.();
	unload = null;
	delete (window as RequiringWindow).require;
	Object.assign(Platform, desktop);
	vi.restoreAllMocks();
});

async function openPlugin(): Promise<{ app: App; plugin: DatanotesPlugin }> {
	const app = App.createConfigured__({ files: Object.fromEntries(filmDiary) });
	const plugin = new DatanotesPlugin(app.asOriginalType__() as AppOriginal, manifest);
	plugin.load();
	unload = () => plugin.unload();
	app.workspace.setLayoutReady__();
	await plugin.whenReady();
	return { app, plugin };
}

function get(url: string): Promise<{ status: number; text: string }> {
	return new Promise((done, fail) => {
		http
			.get(url, { agent: false }, (res) => {
				let text = "";
				res.on("data", (c: Buffer) => (text += c.toString()));
				res.on("end", () => done({ status: res.statusCode ?? 0, text }));
			})
			.on("error", fail);
	});
}

function headings(tab: { containerEl: HTMLElement }): string[] {
	return Array.from(tab.containerEl.querySelectorAll(".setting-item-heading")).map((e) => e.textContent ?? "");
}

const ROWS = [
	"Recompute generated columns",
	"Repair links after a hand move",
	"Keep Bases files",
	"Journal retention (days)",
	"Device name",
	"Tell me when a hand edit breaks a rule",
	"Let tools on this computer use the vault while Obsidian runs",
];

/** The rows' names in the order the tab shows them (each must be there). */
function shownInOrder(el: HTMLElement, names: string[]): number[] {
	const text = el.textContent ?? "";
	return names.map((n) => text.indexOf(n));
}

describe("mobile", () => {
	test("with Platform.isDesktopApp false no Node module is asked for, no door or lock, and the engine reads and writes", async () => {
		Object.assign(Platform, MOBILE);
		const asked = nodeModules();
		const { app, plugin } = await openPlugin();
		const rows = await plugin.door.call("select_rows", { table: "film", columns: ["title"] });
		expect(ans(rows).total).toBe(7);
		const out = await plugin.door.call("update_row", { table: "film", path: CHARADE, set: { rating: 4 } });
		expect(out.status).toBe("ok");
		expect(await app.vault.adapter.read(CHARADE)).toContain("rating: 4");
		expect(asked).toEqual([]);
		expect(await app.vault.adapter.exists(".datanotes/lock")).toBe(false);
		expect(await app.vault.adapter.exists(".datanotes/token")).toBe(false);
		// No section for the tools of a computer.
		const tab = mocks.Plugin.fromOriginalType2__(plugin).settingTabs__[0];
		tab.display();
		expect(headings(tab)).toEqual(["Engine", "This device", "Notices"]);
		expect(tab.containerEl.textContent).not.toContain("datanotes mcp");
	});

	test("the desktop control: the same plugin reaches Node's modules through window.require and holds the vault", async () => {
		const asked = nodeModules();
		const { app } = await openPlugin();
		expect(asked).toEqual(expect.arrayContaining(["http", "crypto", "process"]));
		expect(await app.vault.adapter.exists(".datanotes/lock")).toBe(true);
	});
});

describe("the tick sleeps until the engine's deadline", () => {
	test("no timer while nothing is due; a hand edit sets one at the engine's deadline, and after it, none again", async () => {
		Object.assign(Platform, MOBILE);
		const setInterval = vi.spyOn(window, "setInterval");
		const { app, plugin } = await openPlugin();
		const host = await plugin.whenReady();
		expect(setInterval).not.toHaveBeenCalled();
		expect(host.nextDeadline()).toBeNull();
		expect(plugin.wakesAt()).toBeNull();

		const f = app.vault.getAbstractFileByPath(CHARADE) as TFile;
		await app.vault.modify(f, (await app.vault.read(f)).replace("rating: 5", "rating: 3"));
		await vi.waitFor(() => expect(host.nextDeadline()).not.toBeNull());
		await vi.waitFor(() => expect(plugin.wakesAt()).toBe(host.nextDeadline()));
		// The timer fires at the deadline by itself: the round of hand edits runs.
		await vi.waitFor(
			async () => {
				const feed = await plugin.door.call("list_changes", { since: 0 });
				expect(ans(feed).events.some((e: { source: string }) => e.source === "external")).toBe(true);
			},
			{ timeout: 10_000, interval: 100 },
		);
		await vi.waitFor(() => expect(plugin.wakesAt()).toBeNull(), { timeout: 10_000 });
		expect(setInterval).not.toHaveBeenCalled();
	});
});

describe("the loopback door's setting", () => {
	test("off: calls are refused with the way out, the challenge is still answered (no second engine opens); on again: calls pass", async () => {
		nodeModules();
		const { app, plugin } = await openPlugin();
		const lock = JSON.parse(await app.vault.adapter.read(".datanotes/lock")) as { url: string };
		const token = (await app.vault.adapter.read(".datanotes/token")).trim();
		const route = `${lock.url}/datanotes/operations/select_rows/`;
		expect((await post(route, token, { table: "film" })).status).toBe(200);

		plugin.settings.loopbackDoor = false;
		const refused = await post(route, token, { table: "film" });
		expect(refused.status).toBe(403);
		expect(JSON.parse(refused.text).error).toBe(DOOR_SHUT);
		const proof = await get(`${lock.url}${PROOF_ROUTE}?nonce=${"ab".repeat(16)}`);
		expect(proof.status).toBe(200);
		expect(JSON.parse(proof.text).proof).toMatch(/^[0-9a-f]{64}$/);

		plugin.settings.loopbackDoor = true;
		expect((await post(route, token, { table: "film" })).status).toBe(200);
	});

	test("the settings tab turns it off and keeps it in data.json", async () => {
		nodeModules();
		const toggles = vi.spyOn(mocks.ToggleComponent, "create__");
		const { plugin } = await openPlugin();
		const save = vi.spyOn(plugin, "saveData");
		const tab = mocks.Plugin.fromOriginalType2__(plugin).settingTabs__[0];
		tab.display();
		expect(headings(tab)).toEqual(["Engine", "This device", "Notices", "Agents on this computer"]);
		// The toggles in the order drawn: the engine's three, the notices', then the door's.
		expect(toggles.mock.results).toHaveLength(5);
		const door = toggles.mock.results[4].value as mocks.ToggleComponent;
		expect(door.getValue()).toBe(true);
		door.onClick();
		expect(plugin.settings.loopbackDoor).toBe(false);
		expect(save).toHaveBeenCalledWith({ ...DEFAULT_SETTINGS, loopbackDoor: false });
	});
});

describe("the settings tab", () => {
	test("headings, no disabled control once the engine's settings are read, and the same rows for Obsidian 1.13's settings search", async () => {
		nodeModules();
		const toggles = vi.spyOn(mocks.ToggleComponent, "create__");
		const texts = vi.spyOn(mocks.TextComponent, "create__");
		const { plugin } = await openPlugin();
		await plugin.door.call("configure_database", { journalRetentionDays: 30, autoRecompute: false });
		const tab = mocks.Plugin.fromOriginalType2__(plugin).settingTabs__[0];
		tab.display();
		const days = tab.containerEl.querySelector<HTMLInputElement>("input[type=number]");
		await vi.waitFor(() => expect(days?.value).toBe("30"));
		const controls = [...toggles.mock.results, ...texts.mock.results].map((r) => r.value as mocks.ValueComponent<unknown>);
		expect(controls).toHaveLength(7);
		expect(controls.filter((c) => c.disabled)).toEqual([]);
		expect((toggles.mock.results[0].value as mocks.ToggleComponent).getValue()).toBe(false);
		expect((toggles.mock.results[1].value as mocks.ToggleComponent).getValue()).toBe(true);
		const order = shownInOrder(tab.containerEl, ROWS);
		expect(order.every((at, i) => at >= 0 && (i === 0 || at > order[i - 1])), JSON.stringify(order)).toBe(true);

		// Obsidian 1.13 draws getSettingDefinitions() instead: the same rows, under the same headings.
		const groups = tab.getSettingDefinitions();
		expect(groups.map((g) => ("heading" in g ? g.heading : null))).toEqual(["Engine", "This device", "Notices", "Agents on this computer"]);
		tab.update();
		(tab as unknown as { renderTab__(): void }).renderTab__();
		const again = shownInOrder(tab.containerEl, ROWS);
		expect(again.every((at, i) => at >= 0 && (i === 0 || at > again[i - 1])), JSON.stringify(again)).toBe(true);
		await vi.waitFor(() => expect(tab.containerEl.querySelector<HTMLInputElement>("input[type=number]")?.value).toBe("30"));
	});
});

describe("secrets stay out of version control", () => {
	test("the first open writes .datanotes/.gitignore naming the token, named tokens and webhooks; a person's lines are kept", async () => {
		Object.assign(Platform, MOBILE);
		const { app, plugin } = await openPlugin();
		const text = await app.vault.adapter.read(".datanotes/.gitignore");
		const ignored = ["/token", "/tokens.json", "/webhooks.json", "/webhooks.*.json", "/lock", "/engine.lock", "/known.*.jsonl", "/spare/", "/log/*/*.checkpoint.json", "/semantic/", "/cache/"];
		expect(text.split("\n").filter((l) => l.startsWith("/"))).toEqual(ignored);
		plugin.unload();
		await app.vault.adapter.write(".datanotes/.gitignore", "*.bak\n/token\n");
		const again = new DatanotesPlugin(app.asOriginalType__() as AppOriginal, manifest);
		again.load();
		unload = () => again.unload();
		await again.whenReady();
		expect(await app.vault.adapter.read(".datanotes/.gitignore")).toBe(`*.bak\n${ignored.join("\n")}\n`);
	});
});

describe("ObsidianFileSystem", () => {
	test("trash and remove follow the person's deletion setting (FileManager.trashFile)", async () => {
		const app = App.createConfigured__({ files: Object.fromEntries(filmDiary) });
		const trashFile = vi.spyOn(app.fileManager, "trashFile");
		const fs = new ObsidianFileSystem(app.asOriginalType__() as AppOriginal);
		await fs.trash(CHARADE);
		expect(trashFile).toHaveBeenCalledTimes(1);
		expect(app.vault.getAbstractFileByPath(CHARADE)).toBeNull();
		const other = "datanotes/main/public/film/Metropolis.md";
		await fs.remove(other);
		expect(trashFile).toHaveBeenCalledTimes(2);
		expect(app.vault.getAbstractFileByPath(other)).toBeNull();
	});

	test("a write that expects a text checks it inside Vault.process: a change made since is refused and kept", async () => {
		const app = App.createConfigured__({ files: Object.fromEntries(filmDiary) });
		const processed = vi.spyOn(app.vault, "process");
		const fs = new ObsidianFileSystem(app.asOriginalType__() as AppOriginal);
		const was = filmDiary.get(CHARADE) as string;
		const f = app.vault.getAbstractFileByPath(CHARADE) as TFile;
		await app.vault.modify(f, `${was}\nA line typed meanwhile.\n`);
		await expect(fs.write(CHARADE, "replaced", was)).rejects.toThrow(`${CHARADE} changed since the engine read it`);
		expect(await app.vault.read(f)).toBe(`${was}\nA line typed meanwhile.\n`);
		await fs.write(CHARADE, "replaced", `${was}\nA line typed meanwhile.\n`);
		expect(await app.vault.read(f)).toBe("replaced");
		expect(processed).toHaveBeenCalledTimes(2);
	});
});
