// The bundle's load time in a real browser (plugin/browser/run.mjs): main.js as
// the release carries it, evaluated as Obsidian evaluates a plugin, then the
// film diary opened; the engine is inflated by the browser's DecompressionStream.

import * as obsidian from "obsidian-test-mocks/obsidian";
import { setup } from "obsidian-test-mocks/setup";
import films from "virtual:films";
import main from "virtual:main";

declare global {
	interface Window {
		__load?: { mock_app_ms: number; evaluate_ms: number; load_and_open_films_ms: number; rows: number } | { error: string };
		__big?: { notes: number; open_ms: number; longest_task_ms: number; tasks_over_100_ms: number; rows: number } | { error: string };
	}
}

type PluginLike = { load(): void; whenReady(): Promise<unknown>; door: { call(n: string, a: unknown): Promise<{ answer: unknown }> } };

/** main.js evaluated as Obsidian evaluates a plugin: its default export. */
function evaluate(): new (app: unknown, manifest: unknown) => PluginLike {
	const module = { exports: {} as { default?: new (app: unknown, manifest: unknown) => PluginLike } };
	const require = (name: string) => {
		if (name === "obsidian") return obsidian;
		throw new Error(`the bundle requires ${name}`);
	};
	new Function("require", "module", "exports", main)(require, module, module.exports);
	if (!module.exports.default) throw new Error("main.js exports no plugin");
	return module.exports.default;
}

const MANIFEST = { id: "datanotes", name: "Datanotes", version: "0", minAppVersion: "0", author: "", description: "" };

/** A large vault opened by main.js (issue 17, point 4): how long the main thread
 * was held at a time while the engine opened, from the browser's long tasks. */
async function big(notes: number): Promise<void> {
	setup();
	const files: Record<string, string> = { ...films };
	for (let i = 0; i < notes; i++) {
		files[`datanotes/main/public/film/Synthetic ${i}.md`] = `---\ntable: main.public.film\ntitle: Synthetic ${i}\nyear: ${1900 + (i % 120)}\nstatus: watched\n---\nA film of the synthetic vault, number ${i}, with a few words of text.\n`;
	}
	const app = obsidian.App.createConfigured__({ files });
	// Obsidian's own start is not the plugin's: a new task before measuring.
	await new Promise((r) => setTimeout(r, 50));
	const tasks: number[] = [];
	const observer = new PerformanceObserver((list) => {
		for (const e of list.getEntries()) tasks.push(e.duration);
	});
	observer.observe({ type: "longtask", buffered: false });
	const t0 = performance.now();
	const plugin = new (evaluate())(app.asOriginalType__(), MANIFEST);
	plugin.load();
	app.workspace.setLayoutReady__();
	await plugin.whenReady();
	const opened = performance.now();
	// Long tasks are reported after they end: give the last one time to arrive.
	await new Promise((r) => setTimeout(r, 100));
	observer.disconnect();
	const rows = await plugin.door.call("select_rows", { table: "film", limit: 1 });
	window.__big = {
		notes,
		open_ms: Math.round(opened - t0),
		longest_task_ms: Math.round(Math.max(0, ...tasks)),
		tasks_over_100_ms: tasks.filter((d) => d > 100).length,
		rows: (rows.answer as { total: number }).total,
	};
}

async function measure(): Promise<void> {
	setup();
	// Obsidian's own app (the mock's, with the diary in its vault) exists before any plugin loads.
	const a0 = performance.now();
	const app = obsidian.App.createConfigured__({ files: films });
	const appMs = performance.now() - a0;
	const t0 = performance.now();
	const Plugin = evaluate();
	const evaluated = performance.now();
	const plugin = new Plugin(app.asOriginalType__(), MANIFEST);
	plugin.load();
	app.workspace.setLayoutReady__();
	await plugin.whenReady();
	const opened = performance.now();
	const rows = await plugin.door.call("select_rows", { table: "film" });
	window.__load = {
		mock_app_ms: Math.round(appMs * 10) / 10,
		evaluate_ms: Math.round((evaluated - t0) * 10) / 10,
		load_and_open_films_ms: Math.round((opened - t0) * 10) / 10,
		rows: (rows.answer as { total: number }).total,
	};
}

const bigNotes = Number(new URLSearchParams(location.search).get("big") ?? "0");
if (bigNotes > 0) {
	big(bigNotes).catch((e: unknown) => {
		window.__big = { error: e instanceof Error ? `${e.message}\n${e.stack ?? ""}` : String(e) };
	});
} else {
	measure().catch((e: unknown) => {
		window.__load = { error: e instanceof Error ? `${e.message}\n${e.stack ?? ""}` : String(e) };
	});
}
