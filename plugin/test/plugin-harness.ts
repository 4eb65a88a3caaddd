// The plugin as Obsidian loads it, on obsidian-test-mocks' vault holding the film
// diary, for the tests of what a person reaches through it; and a POST to its door.

import { readFileSync } from "node:fs";
import * as http from "node:http";
import type { App as AppOriginal, PluginManifest } from "obsidian";
import { App } from "obsidian-test-mocks/obsidian";
import DatanotesPlugin from "../src/main";
import type { Host } from "../src/host";
import { filmDiary } from "./engine";

const manifest = JSON.parse(readFileSync("manifest.json", "utf8")) as PluginManifest;

export interface Loaded {
	app: App;
	plugin: DatanotesPlugin;
	host: Host;
	original: AppOriginal;
	unload(): void;
}

/** Loads the plugin on the film diary (and `extra` files); its engine is opening. */
export function startFilms(extra: Record<string, string> = {}): { app: App; plugin: DatanotesPlugin } {
	const app = App.createConfigured__({ files: { ...Object.fromEntries(filmDiary), ...extra } });
	const plugin = new DatanotesPlugin(app.asOriginalType__() as AppOriginal, manifest);
	plugin.load();
	app.workspace.setLayoutReady__();
	return { app, plugin };
}

/** Loads the plugin on the film diary (and `extra` files) and waits for its engine. */
export async function loadFilms(extra: Record<string, string> = {}): Promise<Loaded> {
	const { app, plugin } = startFilms(extra);
	const host = await plugin.whenReady();
	return { app, plugin, host, original: app.asOriginalType__() as AppOriginal, unload: () => plugin.unload() };
}

/** POSTs JSON with a bearer token: the status and the body's text. */
export function post(url: string, token: string, body: unknown): Promise<{ status: number; text: string }> {
	return new Promise((done, fail) => {
		const req = http.request(url, { method: "POST", headers: { Authorization: `Bearer ${token}` }, agent: false }, (res) => {
			let text = "";
			res.on("data", (c: Buffer) => (text += c.toString()));
			res.on("end", () => done({ status: res.statusCode ?? 0, text }));
		});
		req.on("error", fail);
		req.end(JSON.stringify(body));
	});
}
