// Devices by a name their person gave them (issue 53, point 1): the setting
// "Device name" (by default the platform and the computer's name) is written
// into the store, a sync carries it, and every device's history names each
// device by it: this one's own, and another's. The id only behind Details.

import { App, Notice, Plugin, type TFile, WorkspaceLeaf } from "obsidian-test-mocks/obsidian";
import { afterEach, describe, expect, test, vi } from "vitest";
import wasmBytes from "../wasm/datanotes_core_bg.wasm";
import { defaultDeviceName, deviceName, deviceWords, keepDeviceName, readDeviceNames } from "../src/device-name";
import { loadEngine, openEngine } from "../src/engine";
import { type EngineDoor, HistoryView } from "../src/history-view";
import { Host } from "../src/host";
import { syncedFile } from "../src/store-watch";
import { ans, CHARADE, Clock, door, filmDiary } from "./engine";
import { MemoryFs } from "./memfs";
import { loadFilms } from "./plugin-harness";

afterEach(() => vi.restoreAllMocks());

/** The text a person reads in `el`: all but what is folded in Details. */
function visible(el: HTMLElement): string {
	const copy = el.cloneNode(true) as HTMLElement;
	for (const d of Array.from(copy.querySelectorAll("details"))) d.remove();
	return copy.textContent ?? "";
}

describe("a device's name", () => {
	test("by default the platform and the computer's name, its domain left out; else what the person set, on one line", () => {
		expect(defaultDeviceName({ kind: "Linux", hostname: "laptop" })).toBe("Linux laptop");
		expect(defaultDeviceName({ kind: "macOS", hostname: "annas-mbp.local" })).toBe("macOS annas-mbp");
		expect(defaultDeviceName({ kind: "Windows", hostname: "localhost" })).toBe("Windows");
		expect(defaultDeviceName({ kind: "iPhone" })).toBe("iPhone");
		expect(defaultDeviceName({ kind: "Linux", hostname: "x".repeat(100) })).toHaveLength(64);
		expect(deviceName("", { kind: "Android phone" })).toBe("Android phone");
		expect(deviceName("  Work \n  laptop ", { kind: "Linux" })).toBe("Work laptop");
		expect(deviceName("y".repeat(80), { kind: "Linux" })).toHaveLength(64);
	});

	test("a device in words: by its name, this one's too; never its id", () => {
		const known = { names: { aaaa: "Linux laptop", bbbb: "Anna's phone", cccc: "Linux laptop" }, me: "aaaa" };
		expect(deviceWords("aaaa", known)).toBe("Linux laptop");
		expect(deviceWords("bbbb", known)).toBe("Anna's phone");
		// Another device that took this one's name is told apart.
		expect(deviceWords("cccc", known)).toBe("Linux laptop (another device)");
		expect(deviceWords("dddd", known)).toBe("another device");
		expect(deviceWords("aaaa", { names: {}, me: "aaaa" })).toBe("this device");
		expect(deviceWords(undefined, known)).toBe("");
	});

	test("two devices that sync: each names the other's writes by the other's name, in the journal and the table's history", async () => {
		await loadEngine(wasmBytes);
		const clock = new Clock();
		const open = async (fs: MemoryFs, device: string) => {
			const host = new Host(openEngine(fs.notes(), fs.storeListing(), clock.now(), new Uint8Array(32).fill(3), device), fs, { now: clock.now, warn: () => undefined });
			await host.open();
			const d: EngineDoor = { ...door(host), thisDevice: () => device };
			return { host, door: d };
		};
		const laptopFs = new MemoryFs(filmDiary);
		const laptop = await open(laptopFs, "tpmqmlnez4");
		expect(await keepDeviceName(laptop.door, "Linux laptop")).toBeNull();
		const phoneFs = new MemoryFs(new Map([...laptopFs.files].map(([p, f]) => [p, f.text])));
		for (const [p, t] of laptopFs.store) phoneFs.store.set(p, t);
		const phone = await open(phoneFs, "q7x2kd0a1b");
		expect(await keepDeviceName(phone.door, "Anna's phone")).toBeNull();
		// Kept: asked again, nothing is written.
		const configure = vi.spyOn(phone.door, "call");
		expect(await keepDeviceName(phone.door, "Anna's phone")).toBeNull();
		expect(configure.mock.calls.map((c) => c[0])).toEqual(["describe_database"]);
		clock.advance(1000);
		const before = new Map(laptopFs.store);
		expect((await laptop.host.call("update_row", { table: "film", path: CHARADE, set: { rating: 2 } })).status).toBe("ok");
		// The sync: the laptop's store files (the watcher hands over those the engine reads at once), then the note.
		const changed = [...laptopFs.store].filter(([p, t]) => before.get(p) !== t);
		for (const [p, t] of changed) phoneFs.store.set(p, t);
		const synced = changed.filter(([p]) => syncedFile(p, "q7x2kd0a1b"));
		await phone.host.storeSynced(synced);
		phoneFs.handWrite(CHARADE, laptopFs.text(CHARADE) as string);
		await phone.host.observe({ kind: "modified", path: CHARADE });
		clock.advance(1000);
		await phone.host.tick();
		expect((await readDeviceNames(phone.door)).names).toEqual({ tpmqmlnez4: "Linux laptop", q7x2kd0a1b: "Anna's phone" });
		clock.advance(60_000);
		expect((await phone.host.call("update_row", { table: "film", path: CHARADE, set: { rating: 3 } })).status).toBe("ok");

		const app = App.createConfigured__();
		vi.spyOn(app.workspace, "getActiveFile").mockReturnValue({ path: CHARADE } as TFile as never);
		const view = new HistoryView(WorkspaceLeaf.create2__(app).asOriginalType3__(), phone.door);
		await view.onOpen();
		const metas = () => Array.from(view.contentEl.querySelectorAll(".datanotes-history-meta")).map((m) => m.textContent ?? "");
		await vi.waitFor(() => expect(metas().length).toBeGreaterThanOrEqual(2));
		expect(metas()[0]).toMatch(/^in Obsidian · on Anna's phone · /);
		expect(metas()[1]).toMatch(/^in Obsidian · on Linux laptop · /);
		for (const section of ["table", "note"] as const) {
			await view.show(section);
			await vi.waitFor(() => expect(metas().some((m) => m.includes("on Linux laptop"))).toBe(true));
			expect(metas().some((m) => m.includes("on Anna's phone")), section).toBe(true);
			expect(visible(view.contentEl)).not.toMatch(/tpmqmlnez4|q7x2kd0a1b/);
		}
		await view.onClose();
		expect(ans(await phone.host.call("list_migrations", {})).migrations.map((m: { device?: string }) => m.device)).toEqual(["q7x2kd0a1b", "tpmqmlnez4"]);
	});
});

describe("the plugin", () => {
	test("writes this device's name at start, and again when the setting changes; the id only behind Details", async () => {
		const loaded = await loadFilms();
		try {
			const { plugin } = loaded;
			const me = plugin.door.thisDevice?.() as string;
			expect(me).toMatch(/^[a-z0-9]{10}$/);
			// Once the rows are read (a second after the open), the name: obsidian-test-mocks'
			// platform is Windows, and it has no computer name.
			await vi.waitFor(async () => expect((await readDeviceNames(plugin.door)).names[me]).toBe("Windows"), { timeout: 5000 });
			const tab = Plugin.fromOriginalType2__(plugin).settingTabs__[0];
			tab.display();
			const input = tab.containerEl.querySelector<HTMLInputElement>('input[aria-label="Device name"]') as HTMLInputElement;
			expect(input.placeholder).toBe("Windows");
			const row = input.closest(".setting-item") ?? tab.containerEl;
			expect(visible(tab.containerEl)).not.toContain(me);
			expect(row.querySelector("details")?.textContent).toContain(me);
			const notices = vi.spyOn(Notice.prototype, "constructor__");
			input.value = "Anna's laptop";
			input.dispatchEvent(new Event("change"));
			await vi.waitFor(async () => expect((await readDeviceNames(plugin.door)).names[me]).toBe("Anna's laptop"));
			expect(plugin.settings.deviceName).toBe("Anna's laptop");
			// Emptied: back to the default.
			input.value = "";
			input.dispatchEvent(new Event("change"));
			await vi.waitFor(async () => expect((await readDeviceNames(plugin.door)).names[me]).toBe("Windows"));
			expect(notices).not.toHaveBeenCalled();
		} finally {
			loaded.unload();
		}
	});
});
