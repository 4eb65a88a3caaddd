// Loading the wasm engine: the module's bytes are inlined into main.js by
// esbuild; the compile is async (browsers refuse large synchronous compiles on
// the main thread).

import init, { WasmEngine } from "../wasm/datanotes_core.js";
import type { EngineApi, NoteFile, OperationInfo, StoreFile } from "./types";

let loaded: Promise<unknown> | null = null;

/** Compiles and instantiates the module once. */
export function loadEngine(bytes: Uint8Array): Promise<unknown> {
	loaded ??= init({ module_or_path: bytes });
	return loaded;
}

/** A new engine on the vault's notes and the store's listing, seeded with random bytes. */
export function openEngine(files: NoteFile[], store: StoreFile[], nowMs: number): EngineApi {
	const engine = new WasmEngine(files, store, nowMs) as unknown as EngineApi;
	engine.seed(crypto.getRandomValues(new Uint8Array(32)));
	return engine;
}

/** The registry of operations. */
export function operations(): OperationInfo[] {
	return WasmEngine.operations() as OperationInfo[];
}
