// Opening the engine on the vault: the wasm engine loaded, the vault and the
// store listed (not read: the engine names the notes it needs), or the calls
// sent to the engine that holds the vault already; the notes read a batch at a
// time; the host made and opened. The rows the open left unread are read in
// the background afterwards.

import { type App, Notice, requestUrl } from "obsidian";
import wasmBytes from "../wasm/datanotes_core_bg.wasm";
import type { Forwarded } from "./door";
import { compileEngine, loadEngine } from "./engine";
import { startEngine } from "./engine-thread";
import type { ObsidianFileSystem } from "./fs";
import { batches, Host, type PostResult } from "./host";
import { nodeModule } from "./node-modules";
import { notesCachePath } from "./store-files";
import type { ThisDevice } from "./this-device";
import type { Delivery, EngineApi, NoteFile, NoteListed } from "./types";
import type { VaultDisk } from "./vault-disk";

/** How long after the open the rows it did not read are read: Obsidian's own
 * start, and other plugins', go first. */
const READ_ROWS_AFTER_MS = 1000;

export interface OpeningOptions {
	app: App;
	disk: VaultDisk;
	device: ThisDevice;
	/** The engine that holds the vault already, if any (lock-and-door.ts). */
	elsewhere: (fs: ObsidianFileSystem) => Promise<Forwarded | null>;
	/** The plugin was disabled meanwhile: nothing may outlive it. */
	unloaded: () => boolean;
	/** The wasm engine is loaded: its registry may be asked for. */
	loaded: () => void;
	/** The host is made, before its open (whose turns write too). */
	made: (host: Host) => void;
}

/** This plugin's engine, open, or the engine that holds the vault. */
export type Opened = { forwarded: Forwarded } | { host: Host; fs: ObsidianFileSystem; rowsRead: Promise<void> };

export async function openVault(o: OpeningOptions): Promise<Opened> {
	const zlib = nodeModule<typeof import("node:zlib")>("zlib");
	const module = await compileEngine(wasmBytes, zlib ? (b) => zlib.gunzipSync(b) : undefined);
	await loadEngine(module);
	o.loaded();
	const fs = o.disk.fileSystem();
	const forwarded = await o.elsewhere(fs);
	if (forwarded) return { forwarded };
	// Listed, not read: the engine names the notes it needs (below).
	const [files, store] = await Promise.all([fs.listVault(), fs.listStore()]);
	for (const w of fs.warnings) console.warn(`datanotes: ${w}`);
	if (fs.warnings.length > 0) {
		new Notice(`Datanotes: ${fs.warnings.length} symbolic link(s) left out of the tables (the developer console names them); the engine never reads or writes through links.`);
	}
	if (o.unloaded()) throw new Error("the plugin was disabled while it opened the vault");
	const device = o.device.id();
	// What the engine derived from each note at the last open: the notes whose
	// size and mtime it vouches for are not parsed again.
	const cache = await fs.readStoreBytes(notesCachePath(device)).catch(() => null);
	const key = device === undefined ? null : o.device.key(device);
	const engine = await startEngine(module, { files, store, device, cache, key });
	await readNamed(engine, fs, files, o.unloaded);
	if (o.unloaded()) {
		// Disabled while a worker opened the vault: nothing may outlive the plugin.
		engine.free();
		throw new Error("the plugin was disabled while it opened the vault");
	}
	const host = new Host(engine, fs, {
		actor: "obsidian",
		warn: (line) => console.warn(`datanotes: ${line}`),
		post: (d) => post(d),
		sleep: (ms) => new Promise((resolve) => window.setTimeout(resolve, ms)),
	});
	o.made(host);
	await host.open();
	void host.keepCache();
	return { host, fs, rowsRead: readRowsSoon(host, o.unloaded) };
}

/** Hands the engine the notes the cache does not vouch for. A row unchanged
 * since the last open is read in the background once the engine answers
 * (`readRowsSoon`), a note outside the tables when a turn needs its text.
 * Handed over a batch at a time, in the engine's order (a sync tool's copy
 * after its original): neither the engine nor Obsidian holds every text at once. */
async function readNamed(engine: EngineApi, fs: ObsidianFileSystem, files: (NoteFile | NoteListed)[], unloaded: () => boolean): Promise<void> {
	const sizes = new Map(files.map((f) => [f.path, "size" in f ? f.size : f.text.length]));
	for (const wanted of batches(await engine.toRead(), (p) => sizes.get(p) ?? 0)) {
		if (unloaded()) break;
		const { files: read, gone } = await fs.readNotes(wanted);
		// A note left unread would look removed to the engine's comparison
		// with what it last knew: the open fails instead, as a read at open did.
		const unread = wanted.length - read.length - gone.length;
		if (unread > 0) {
			engine.free();
			const done = new Set([...read.map((f) => f.path), ...gone]);
			throw new Error(`${unread} note(s) could not be read, ${wanted.find((p) => !done.has(p))} first: check that Obsidian may read them, then reload the plugin`);
		}
		await engine.readNotes(read, gone, true);
	}
}

/** The rows the open left unread, read a little after it (`Host.readRows`). */
function readRowsSoon(host: Host, unloaded: () => boolean): Promise<void> {
	return new Promise<void>((resolve) => window.setTimeout(resolve, READ_ROWS_AFTER_MS)).then(async () => {
		try {
			if (!unloaded()) await host.readRows();
		} catch (e) {
			// Nothing is lost: a turn that needs a row reads it first.
			console.warn("datanotes: the rows were not read in the background", e);
		}
	});
}

/** A webhook delivery, through Obsidian's requestUrl (no CORS, desktop and mobile). */
async function post(d: Delivery): Promise<PostResult> {
	if (!/^https?:\/\//i.test(d.url)) return { error: `${d.url} is not an http or https URL: not delivered` };
	const headers: Record<string, string> = {};
	for (const [k, v] of d.headers) headers[k] = v;
	const typed = Object.keys(headers).some((k) => k.toLowerCase() === "content-type");
	const res = await requestUrl({
		url: d.url,
		method: "POST",
		body: d.body,
		headers,
		contentType: typed ? undefined : "application/json",
		throw: false,
	});
	return { status: res.status };
}
