// The plugin's benchmark (issue 14): main.js's size, and the time from loading
// the bundle to the film diary open in its engine, printed as JSON on one line
// ("datanotes-bench {...}"). Figures, not assertions: a slow machine must not fail
// the tests; the closing notes quote them.

import { existsSync, readFileSync, statSync } from "node:fs";
import * as crypto from "node:crypto";
import * as http from "node:http";
import * as net from "node:net";
import * as zlib from "node:zlib";
import type { App as AppOriginal, PluginManifest } from "obsidian";
import * as mocks from "obsidian-test-mocks/obsidian";
import { App } from "obsidian-test-mocks/obsidian";
import { expect, test } from "vitest";
import type DatanotesPlugin from "../src/main";
import { ans, filmDiary } from "./engine";

// DATANOTES_BENCH_BUNDLE names another build of main.js to measure (an older one, say).
const bundle = process.env.DATANOTES_BENCH_BUNDLE ?? "plugin/dist/main.js";
const manifest = JSON.parse(readFileSync("manifest.json", "utf8")) as PluginManifest;

test.skipIf(!existsSync(bundle))("bench: main.js's size, and bundle to open film diary", async () => {
	const code = readFileSync(bundle, "utf8");
	const node: Record<string, unknown> = { http, net, crypto, process, zlib };
	const require = (name: string) => {
		if (name === "obsidian") return mocks;
		if (name in node) return node[name];
		throw new Error(`the bundle requires ${name}`);
	};
	(window as Window & { require?: typeof require }).require = require;
	try {
		// Obsidian's own app (here the mock's, with the diary in its vault) exists
		// before any plugin loads: made first, and timed apart.
		const a0 = performance.now();
		const app = App.createConfigured__({ files: Object.fromEntries(filmDiary) });
		const appMs = performance.now() - a0;
		const t0 = performance.now();
		const module = { exports: {} as { default?: typeof DatanotesPlugin } };
		new Function("require", "module", "exports", code)(require, module, module.exports);
		const evaluated = performance.now();
		const Bundled = module.exports.default as typeof DatanotesPlugin;
		const plugin = new Bundled(app.asOriginalType__() as AppOriginal, manifest);
		plugin.load();
		app.workspace.setLayoutReady__();
		await plugin.whenReady();
		const opened = performance.now();
		const t1 = performance.now();
		const rows = await plugin.door.call("select_rows", { table: "film" });
		const selected = performance.now() - t1;
		expect(ans(rows).total).toBe(7);
		plugin.unload();
		const figures = {
			main_js_bytes: statSync(bundle).size,
			wasm_bytes: statSync("plugin/wasm/datanotes_core_bg.wasm").size,
			mock_app_ms: Math.round(appMs * 10) / 10,
			evaluate_bundle_ms: Math.round((evaluated - t0) * 10) / 10,
			load_and_open_films_ms: Math.round((opened - t0) * 10) / 10,
			plugin_reported_start_ms: "openedInMs" in plugin ? plugin.openedInMs : null,
			select_rows_films_ms: Math.round(selected * 10) / 10,
		};
		console.log(`datanotes-bench ${JSON.stringify(figures)}`);
	} finally {
		delete (window as Window & { require?: unknown }).require;
	}
});
