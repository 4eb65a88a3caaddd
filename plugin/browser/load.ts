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
	}
}

async function measure(): Promise<void> {
	setup();
	// Obsidian's own app (the mock's, with the diary in its vault) exists before any plugin loads.
	const a0 = performance.now();
	const app = obsidian.App.createConfigured__({ files: films });
	const appMs = performance.now() - a0;
	const t0 = performance.now();
	const module = { exports: {} as { default?: new (app: unknown, manifest: unknown) => { load(): void; whenReady(): Promise<unknown>; door: { call(n: string, a: unknown): Promise<{ answer: unknown }> } } } };
	const require = (name: string) => {
		if (name === "obsidian") return obsidian;
		throw new Error(`the bundle requires ${name}`);
	};
	new Function("require", "module", "exports", main)(require, module, module.exports);
	const evaluated = performance.now();
	const Plugin = module.exports.default;
	if (!Plugin) throw new Error("main.js exports no plugin");
	const plugin = new Plugin(app.asOriginalType__(), { id: "datanotes", name: "Datanotes", version: "0", minAppVersion: "0", author: "", description: "" });
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

measure().catch((e: unknown) => {
	window.__load = { error: e instanceof Error ? `${e.message}\n${e.stack ?? ""}` : String(e) };
});
