// The engine as the host sees it when it runs in a Web Worker (engine-worker.ts):
// each method that answers posts a request and resolves with the answer; the
// others are posted in order and not waited for. The engine's next deadline and
// the feed's head come with every answer, so that reading them stays instant.

import type { Behind, CacheFile, EditFailure, EngineApi, NoteFile, NoteListed, OperationInfo, Outcome, SemanticModel, Step, StoreFile, StoreWrite, ToolCall, VaultEvent } from "./types";
import { type Method, packListing, packNotes, type Reply, type Request } from "./worker-protocol";

/** What the engine needs of a Worker (a fake one in the tests). */
export interface WorkerLike {
	postMessage(m: Request): void;
	onmessage: ((e: MessageEvent<Reply>) => void) | null;
	onerror: ((e: ErrorEvent) => void) | null;
	terminate(): void;
}

export class WorkerEngine implements EngineApi {
	private next = 1;
	private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
	private deadline: number | undefined;
	private head = 0;
	private broken: string | null = null;

	constructor(private readonly worker: WorkerLike) {
		worker.onmessage = (e) => {
			const r = e.data;
			const waiting = this.pending.get(r.id);
			this.pending.delete(r.id);
			if (r.ok) {
				this.deadline = r.deadline ?? undefined;
				this.head = r.head;
				waiting?.resolve(r.result);
			} else {
				waiting?.reject(new Error(r.error));
			}
		};
		worker.onerror = (e) => {
			this.broken = `the engine's worker failed: ${e.message || "no reason given"}. Reload the plugin`;
			for (const w of this.pending.values()) w.reject(new Error(this.broken));
			this.pending.clear();
		};
	}

	private send<T>(method: Method, args: unknown[]): Promise<T> {
		if (this.broken) return Promise.reject(new Error(this.broken));
		const id = this.next++;
		return new Promise<T>((resolve, reject) => {
			this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
			this.worker.postMessage({ id, method, args });
		});
	}

	/** Posted in order; a failure shows at the next call that waits. */
	private post(method: Method, args: unknown[]): void {
		this.send(method, args).catch(() => undefined);
	}

	/** Opens the engine in the worker on the vault's notes and the store's listing. */
	init(wasm: WebAssembly.Module, files: (NoteFile | NoteListed)[], store: StoreFile[], nowMs: number, entropy: Uint8Array, device?: string, cache?: Uint8Array | null, deviceKey?: Uint8Array | null): Promise<void> {
		return this.send("init", [{ wasm, ...packListing(files), store, now: nowMs, entropy, device, cache, deviceKey }]);
	}

	call(name: string, args: unknown, actor: string, nowMs: number): Promise<Step> {
		return this.send("call", [name, args, actor, nowMs]);
	}
	finish(results: (EditFailure | null)[]): Promise<Step> {
		return this.send("finish", [results]);
	}
	storeFailed(op: string, error: string): Promise<Outcome> {
		return this.send("storeFailed", [op, error]);
	}
	needUnmet(op: string, paths: string[]): Promise<Outcome> {
		return this.send("needUnmet", [op, paths]);
	}
	provide(files: StoreFile[]): void {
		this.post("provide", [files]);
	}
	observe(event: VaultEvent, nowMs: number): Promise<void> {
		return this.send("observe", [event, nowMs]);
	}
	tick(nowMs: number): Promise<Step> {
		return this.send("tick", [nowMs]);
	}
	reconcile(nowMs: number): Promise<Step> {
		return this.send("reconcile", [nowMs]);
	}
	storeSynced(files: StoreFile[], nowMs: number): Promise<string[]> {
		return this.send("storeSynced", [files, nowMs]);
	}
	setSemanticModel(bytes: Uint8Array): Promise<SemanticModel> {
		return this.send("setSemanticModel", [bytes]);
	}
	nextDeadline(): number | undefined {
		return this.deadline;
	}
	setGitBusy(busy: boolean): void {
		this.post("setGitBusy", [busy]);
	}
	feedHead(): number {
		return this.head;
	}
	seed(entropy: Uint8Array): void {
		this.post("seed", [entropy]);
	}
	delivered(webhook: string, last: number, status: number | null | undefined, error: string | null | undefined, nowMs: number): Promise<StoreWrite[]> {
		return this.send("delivered", [webhook, last, status, error, nowMs]);
	}
	operations(): Promise<OperationInfo[]> {
		return this.send("operations", []);
	}
	warnings(): Promise<string[]> {
		return this.send("warnings", []);
	}
	takeUpkeep(): Promise<StoreWrite[]> {
		return this.send("takeUpkeep", []);
	}
	takeCache(): Promise<CacheFile | null> {
		return this.send("takeCache", []);
	}
	toRead(): Promise<string[]> {
		return this.send("toRead", []);
	}
	unreadRows(): Promise<string[]> {
		return this.send("unreadRows", []);
	}
	warmLookups(): Promise<void> {
		return this.send("warmLookups", []);
	}
	readNotes(files: NoteFile[], gone: string[], listed = false): Promise<void> {
		return this.send("readNotes", [packNotes(files), gone, listed]);
	}
	takeOwed(): Promise<StoreWrite[]> {
		return this.send("takeOwed", []);
	}
	owe(rest: StoreWrite[], error: string): Promise<Behind> {
		return this.send("owe", [rest, error]);
	}
	recordToolCall(call: ToolCall, nowMs: number): Promise<StoreWrite[]> {
		return this.send("recordToolCall", [call, nowMs]);
	}
	/** Frees the engine, then ends the worker. */
	free(): void {
		const worker = this.worker;
		this.send("free", []).finally(() => worker.terminate()).catch(() => undefined);
	}
}
