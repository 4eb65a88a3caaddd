// Loading the wasm engine: the module's bytes are inlined into main.js by
// esbuild; the compile is async (browsers refuse large synchronous compiles on
// the main thread). Values cross into the engine and back as JSON texts
// (core/src/wasm.rs): one string per call, parsed natively on each side.

import init, { WasmEngine } from "../wasm/datanotes_core.js";
import { type Listed, type Notes, packNotes, splitListing } from "./worker-protocol";
import type { Behind, CacheFile, EditFailure, EngineApi, NoteFile, NoteListed, OperationInfo, Outcome, SemanticModel, Step, StoreFile, StoreWrite, ToolCall, VaultEvent } from "./types";

let loaded: Promise<unknown> | null = null;
let compiled: Promise<WebAssembly.Module> | null = null;

/** Inflates gzip synchronously: Node's zlib on desktop, several times faster
 * than a DecompressionStream there. */
export type Gunzip = (bytes: Uint8Array) => Uint8Array;

/** Compiles the module once. `bytes` is the module, or the module gzipped (as
 * the bundle carries it: esbuild.config.mjs). The compiled module is what the
 * engine's worker is given (worker-engine.ts): it is compiled once, not twice.
 * Not with compileStreaming, though it overlaps the inflate: with a module so
 * compiled, Chromium held the main thread for 200 ms at once while 20,000
 * notes opened in the worker (plugin/browser/run.mjs). */
export function compileEngine(bytes: Uint8Array, gunzip?: Gunzip): Promise<WebAssembly.Module> {
	compiled ??= inflated(bytes, gunzip).then((b) => WebAssembly.compile(b as Uint8Array<ArrayBuffer>));
	return compiled;
}

/** Instantiates the module once, from its bytes (see compileEngine) or compiled. */
export function loadEngine(module: Uint8Array | WebAssembly.Module, gunzip?: Gunzip): Promise<unknown> {
	loaded ??= (module instanceof WebAssembly.Module ? Promise.resolve(module) : compileEngine(module, gunzip)).then((m) => init({ module_or_path: m }));
	return loaded;
}

/** The bytes themselves, or inflated when gzip's magic number starts them
 * (a wasm module starts with "\0asm"). */
export async function inflated(bytes: Uint8Array, gunzip?: Gunzip): Promise<Uint8Array> {
	if (bytes[0] !== 0x1f || bytes[1] !== 0x8b) return bytes;
	if (gunzip) return gunzip(bytes);
	if (typeof DecompressionStream !== "function") {
		throw new Error("this device's web view cannot inflate the engine (DecompressionStream is missing: Obsidian needs a system web view from 2023 or later)");
	}
	// Given the bytes whole: read from a Blob's stream instead, the film
	// diary's load took 30 ms longer in Chromium.
	const ds = new DecompressionStream("gzip");
	const writer = ds.writable.getWriter();
	// A damaged module fails the readable side, and so this read.
	writer
		.write(bytes as Uint8Array<ArrayBuffer>)
		.then(() => writer.close())
		.catch(() => undefined);
	return new Uint8Array(await new Response(ds.readable).arrayBuffer());
}

/** A JSON text from the engine, as the type its method documents. */
function parsed<T>(text: string): T {
	return JSON.parse(text) as T;
}

/** WasmEngine's methods with their JSON texts written and read. */
export class JsonEngine implements EngineApi {
	constructor(private readonly raw: WasmEngine) {}

	call(name: string, args: unknown, actor: string, nowMs: number): Step {
		return parsed(this.raw.call(name, JSON.stringify(args ?? null), actor, nowMs));
	}
	operations(): OperationInfo[] {
		return operations();
	}
	finish(results: (EditFailure | null)[]): Step {
		return parsed(this.raw.finish(JSON.stringify(results)));
	}
	storeFailed(op: string, error: string): Outcome {
		return parsed(this.raw.storeFailed(op, error));
	}
	needUnmet(op: string, paths: string[]): Outcome {
		return parsed(this.raw.needUnmet(op, JSON.stringify(paths)));
	}
	provide(files: StoreFile[]): void {
		this.raw.provide(JSON.stringify(files));
	}
	observe(event: VaultEvent, nowMs: number): void {
		this.raw.observe(JSON.stringify(event), nowMs);
	}
	tick(nowMs: number): Step {
		return parsed(this.raw.tick(nowMs));
	}
	reconcile(nowMs: number): Step {
		return parsed(this.raw.reconcile(nowMs));
	}
	storeSynced(files: StoreFile[], nowMs: number): string[] {
		return parsed(this.raw.storeSynced(JSON.stringify(files), nowMs));
	}
	setSemanticModel(bytes: Uint8Array): SemanticModel {
		return parsed(this.raw.setSemanticModel(bytes));
	}
	nextDeadline(): number | undefined {
		return this.raw.nextDeadline();
	}
	setGitBusy(busy: boolean): void {
		this.raw.setGitBusy(busy);
	}
	feedHead(): number {
		return this.raw.feedHead();
	}
	seed(entropy: Uint8Array): void {
		this.raw.seed(entropy);
	}
	delivered(webhook: string, last: number, status: number | null | undefined, error: string | null | undefined, nowMs: number): StoreWrite[] {
		return parsed(this.raw.delivered(webhook, last, status ?? undefined, error ?? undefined, nowMs));
	}
	warnings(): string[] {
		return parsed(this.raw.warnings());
	}
	takeUpkeep(): StoreWrite[] {
		return parsed(this.raw.takeUpkeep());
	}
	takeCache(): CacheFile | null {
		const bytes = this.raw.takeCache();
		return bytes === undefined ? null : { path: this.raw.cachePath(), bytes, append: this.raw.cacheAppends() };
	}
	toRead(): string[] {
		return parsed(this.raw.toRead());
	}
	unreadRows(): string[] {
		return parsed(this.raw.unreadRows());
	}
	warmLookups(): void {
		this.raw.warmLookups();
	}
	readNotes(files: NoteFile[], gone: string[], listed = false): void {
		this.readPacked(packNotes(files), gone, listed);
	}
	/** As readNotes, the notes packed (worker-protocol.ts): 40 MB of texts
	 * cross without JSON's escapes, and as the worker receives them. */
	readPacked(n: Notes, gone: string[], listed: boolean): void {
		this.raw.readNotes(utf8.encode(JSON.stringify(n.paths)), new Float64Array(n.mtimes), utf8.encode(n.texts), new Uint32Array(n.lengths), JSON.stringify(gone), listed);
	}
	takeOwed(): StoreWrite[] {
		return parsed(this.raw.takeOwed());
	}
	owe(rest: StoreWrite[], error: string): Behind {
		return parsed(this.raw.owe(JSON.stringify(rest), error));
	}
	recordToolCall(call: ToolCall, nowMs: number): StoreWrite[] {
		return parsed(this.raw.recordToolCall(JSON.stringify(call), nowMs));
	}
	free(): void {
		this.raw.free();
	}
}

/** Large texts cross into wasm as bytes: wasm-bindgen copies a string
 * argument a character at a time in JavaScript, 40 MB of notes in about 300 ms. */
const utf8 = new TextEncoder();

/** A new engine on the vault's notes and the store's listing, seeded with random
 * bytes (tests give fixed ones), on this device (plugin/src/device.ts; none: the
 * store's files are named as for one device only). A note listed without its
 * text is read when the engine names it (`toRead`, then `readNotes`). */
export function openEngine(
	files: (NoteFile | NoteListed)[],
	store: StoreFile[],
	nowMs: number,
	entropy: Uint8Array = crypto.getRandomValues(new Uint8Array(32)),
	device?: string,
	cache?: Uint8Array | null,
	deviceKey?: Uint8Array | null,
): JsonEngine {
	const { read, listed } = splitListing(files);
	return openListed(read, listed, store, nowMs, entropy, device, cache, deviceKey);
}

/** As `openEngine`, with the notes listed and not read packed (`Listed`, as the
 * worker receives them): 100k of them as objects cost JSON and the engine's
 * parse about a tenth of a reopen. */
export function openListed(
	read: NoteFile[],
	listed: Listed,
	store: StoreFile[],
	nowMs: number,
	entropy: Uint8Array = crypto.getRandomValues(new Uint8Array(32)),
	device?: string,
	cache?: Uint8Array | null,
	deviceKey?: Uint8Array | null,
): JsonEngine {
	// The cache as read from disk, bytes: 100k notes make about 36 MB, which a
	// text would cost a decode, a copy into the worker and an encode back.
	const raw = new WasmEngine(
		utf8.encode(JSON.stringify(read)),
		JSON.stringify(store),
		nowMs,
		cache ?? undefined,
		utf8.encode(JSON.stringify(listed.paths)),
		new Float64Array(listed.sizes),
		new Float64Array(listed.mtimes),
	);
	if (device !== undefined) {
		raw.setDevice(device);
		// Seals this device's files (core/src/seal.rs); without it they are
		// trusted by their names alone.
		if (deviceKey) raw.setDeviceKey(deviceKey);
	}
	const engine = new JsonEngine(raw);
	engine.seed(entropy);
	return engine;
}

/** The registry of operations. */
export function operations(): OperationInfo[] {
	return parsed(WasmEngine.operations());
}
