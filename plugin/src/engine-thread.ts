// Where the engine runs: in a Web Worker, so that its work never holds up
// Obsidian; in Obsidian's main thread for a small vault (whose work is short,
// and a worker's start would be most of it) or when no worker can be started
// (then it says why).

import { openEngine } from "./engine";
import type { EngineApi, NoteFile, NoteListed, StoreFile } from "./types";
import { WorkerEngine } from "./worker-engine";

/** The engine worker's code (engine-worker.ts), set by esbuild.config.mjs; absent
 * in the tests, where the engine runs in their thread. */
declare const ENGINE_WORKER: string | undefined;
const ENGINE_WORKER_SOURCE: string = typeof ENGINE_WORKER === "string" ? ENGINE_WORKER : "";

/** From this many notes the engine runs in a worker: opening fewer takes under
 * about 50 ms on the main thread, less than a worker takes to start. */
const WORKER_MIN_NOTES = 2000;

/** What the engine opens on: the vault's notes (read or listed), the store's
 * files, this device's id and key, and the notes' cache of the last open. */
export interface EngineStart {
	files: (NoteFile | NoteListed)[];
	store: StoreFile[];
	device?: string;
	cache?: Uint8Array | null;
	key: Uint8Array | null;
}

/** The engine opened on `s`, in a worker or in this thread (above). */
export async function startEngine(module: WebAssembly.Module, s: EngineStart): Promise<EngineApi> {
	if (ENGINE_WORKER_SOURCE && typeof Worker === "function" && s.files.length >= WORKER_MIN_NOTES) {
		const engine = await inWorker(module, s);
		if (engine) return engine;
	}
	return openEngine(s.files, s.store, Date.now(), undefined, s.device, s.cache, s.key);
}

/** The engine in a worker; null when none started (warned). */
async function inWorker(module: WebAssembly.Module, s: EngineStart): Promise<EngineApi | null> {
	let url: string | null = null;
	let worker: Worker | null = null;
	try {
		url = URL.createObjectURL(new Blob([ENGINE_WORKER_SOURCE], { type: "text/javascript" }));
		worker = new Worker(url);
		const engine = new WorkerEngine(worker);
		await engine.init(module, s.files, s.store, Date.now(), crypto.getRandomValues(new Uint8Array(32)), s.device, s.cache, s.key);
		return engine;
	} catch (e) {
		worker?.terminate();
		console.warn("datanotes: the engine runs on Obsidian's main thread (its worker did not start):", e);
		return null;
	} finally {
		if (url) URL.revokeObjectURL(url);
	}
}
