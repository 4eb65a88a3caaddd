// The engine's host: the call / apply / finish loop, the vault's events, the
// timers. It knows nothing of Obsidian: the vault and the store are behind the
// small FileSystem interface below (fs.ts implements it with Obsidian's API, the
// tests with a Map). The loop follows core/src/driver/mod.rs step for step
// (start, ask, carry, apply): plugin/test/driver.test.ts runs the script of
// tests/driver/ through both and compares what they did.

import { refusalWords } from "./rule-words";
import { derivedStoreFile } from "./store-files";
import { type Awaitable, type Behind, ChangedSince, type Delivery, type Edit, type EditFailure, type EngineApi, errorOf, type NoteFile, type OperationInfo, type Outcome, type Step, type SemanticModel, type StoreFile, type StoreWrite, type ToolCall, type VaultEvent } from "./types";

/** A vault file's text and modification time. */
export interface FileRead {
	text: string;
	mtime: number;
}

/** The vault (paths relative to its root, "/" separated) and its store
 * (paths relative to `.datanotes/`). Each method throws when it fails. */
export interface FileSystem {
	/** A vault file's text now, or null when there is none. */
	read(path: string): Promise<FileRead | null>;
	exists(path: string): Promise<boolean>;
	/** Creates or replaces a file, making its folders as needed. With `was`, the
	 * file must still hold exactly that text, checked inside the write where the
	 * file system can (Obsidian's Vault.process), so no other write slips between. */
	write(path: string, text: string, was?: string): Promise<void>;
	/** Moves a file, making the target's folders; links are left alone (the engine rewrites them). */
	rename(from: string, to: string): Promise<void>;
	/** Sends a file to the trash (in Obsidian, as the person's deletion setting says). */
	trash(path: string): Promise<void>;
	/** Removes a file the engine created in a write it rolls back (Obsidian: the trash too). */
	remove(path: string): Promise<void>;
	/** A store file's text, or null when there is none. */
	readStore(path: string): Promise<string | null>;
	/** A store file's bytes, or null when there is none (the model to search
	 * by meaning with; a file system without it gives the engine none). */
	readStoreBytes?(path: string): Promise<Uint8Array | null>;
	/** Writes, appends to or deletes a store file. */
	writeStore(w: StoreWrite): Promise<void>;
	/** Writes a store file whole from its bytes (the notes' cache). */
	writeStoreBytes(path: string, bytes: Uint8Array): Promise<void>;
	/** Many notes' texts at once where the file system has a faster way than
	 * `read` each (Obsidian's cached reads, in batches): the rows the open left
	 * unread (`Host.readRows`), whose texts the engine checks by their hashes. */
	readNotes?(paths: string[]): Promise<{ files: NoteFile[]; gone: string[] }>;
}

/** A webhook POST's result: the HTTP status, or why there was none. */
export type PostResult = { status: number } | { error: string };

export interface HostOptions {
	/** The actor of the plugin's own calls (the journal's `by`). */
	actor?: string;
	/** The clock, in ms since the epoch. */
	now?: () => number;
	/** Where the engine's log lines and the host's warnings go. */
	warn?: (line: string) => void;
	/** Makes a webhook POST; without it, deliveries are reported as failed. */
	post?: (d: Delivery) => Promise<PostResult>;
	/** Resolves after `ms` of real time: a list_changes with wait_ms waits with it
	 * (without it, such a call answers at once). */
	sleep?: (ms: number) => Promise<void>;
}

/** Whether a vault path is one the engine reads: a note or the schema, outside dot folders. */
export function wanted(path: string): boolean {
	return (path.endsWith(".md") || path === METASTORE || isBase(path)) && !path.split("/").some((c) => c.startsWith("."));
}

/** The folder of the Obsidian Bases files the engine keeps (core/src/bases.rs). */
export const BASES = "datanotes/bases/";

/** A Bases file the engine keeps: `datanotes/bases/<name>.base`. */
export function isBase(path: string): boolean {
	const rest = path.startsWith(BASES) ? path.slice(BASES.length) : null;
	return rest !== null && rest.endsWith(".base") && !rest.includes("/");
}

export const METASTORE = "datanotes/metastore.yaml";
export const STORE_DIR = ".datanotes";
/** The operations that search by meaning, and the model they need (relative
 * to the store: core/src/semantic/mod.rs). */
export const SEMANTIC_MODEL_FILE = "models/potion-base-8M.dnmodel";

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/** The SHA-256 of a text (its UTF-8 bytes) in hex, as the engine names texts. */
export async function sha256Hex(text: string): Promise<string> {
	const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
	let out = "";
	for (const b of new Uint8Array(digest)) out += HEX[b];
	return out;
}

function message(e: unknown): string {
	return e instanceof Error ? e.message : String(e);
}

/** The texts of notes the engine asked for; `gone`: those not in the vault. One
 * that cannot be read is in neither: the turn asks again, then says it could
 * not have it (driver.rs `read_notes`). */
export async function readNotes(fs: FileSystem, paths: string[]): Promise<{ files: NoteFile[]; gone: string[] }> {
	const files: NoteFile[] = [];
	const gone: string[] = [];
	await Promise.all(
		paths.map(async (path) => {
			const f = await fs.read(path).catch(() => undefined);
			if (f) files.push({ path, text: f.text, mtime: f.mtime });
			else if (f === null) gone.push(path);
		}),
	);
	return { files, gone };
}

/** How much of a first open's texts crosses into the engine at once: the
 * engine holds one batch beside the index, not the vault's texts (for 100k
 * notes of 400 bytes, 92 MB of wasm memory instead of 155). Smaller batches
 * hold no less (the index's own growth leaves as much free), and cost
 * JavaScript's collector more: 2,000 notes a batch made that open 15% slower. */
export const HAND_OVER_BYTES = 2 << 20;
export const HAND_OVER_NOTES = 5000;
/** The last batches are smaller and smaller, each at most half of what is left
 * (down to this): the engine's memory keeps the room each batch's work asked
 * for, and a full batch at the end left about 4 MB of it unused for good
 * (100k films: 84 MB after the open, 80 MB so). */
export const HAND_OVER_LAST_BYTES = 64 << 10;

/** `paths` cut in order into batches of at most `maxNotes` notes and, but for a
 * single larger note, `maxBytes` bytes as `size` counts them, or half of the
 * bytes not yet in a batch when that is less (but not under `lastBytes`). */
export function batches(paths: string[], size: (path: string) => number, maxBytes = HAND_OVER_BYTES, maxNotes = HAND_OVER_NOTES, lastBytes = HAND_OVER_LAST_BYTES): string[][] {
	const out: string[][] = [];
	let part: string[] = [];
	let bytes = 0;
	let left = paths.reduce((n, p) => n + size(p), 0);
	for (const p of paths) {
		const s = size(p);
		const most = Math.min(maxBytes, Math.max(lastBytes, left / 2));
		left -= s;
		if (part.length > 0 && (bytes + s > most || part.length >= maxNotes)) {
			out.push(part);
			part = [];
			bytes = 0;
		}
		part.push(p);
		bytes += s;
	}
	if (part.length > 0) out.push(part);
	return out;
}

/** Fails unless `path` holds the text whose hash is `expect` (driver.rs `expect_text`). */
async function expectText(fs: FileSystem, path: string, expect: string): Promise<EditFailure | null> {
	const now = await current(fs, path, expect);
	return "kind" in now ? now : null;
}

/** The text at `path` when its hash is `expect`, else why not. */
async function current(fs: FileSystem, path: string, expect: string): Promise<{ text: string } | EditFailure> {
	const now = await fs.read(path);
	if (now === null) return { kind: "missing", path };
	if ((await sha256Hex(now.text)) !== expect) return { kind: "changed", path };
	return { text: now.text };
}

/** Fails when a file stands at `path` (driver.rs `absent`). */
async function absent(fs: FileSystem, path: string): Promise<EditFailure | null> {
	return (await fs.read(path)) === null ? null : { kind: "exists", path };
}

/** Applies one edit once the file is found as the engine planned (driver.rs
 * `apply`): null when done, else what stopped it. A file system error is
 * reported in its own words, as the engine lists it beside the file's path. */
export async function applyEdit(fs: FileSystem, e: Edit): Promise<EditFailure | null> {
	try {
		switch (e.kind) {
			case "write": {
				if (e.expect === null) {
					const bad = await absent(fs, e.path);
					if (bad) return bad;
					await fs.write(e.path, e.text);
					return null;
				}
				const now = await current(fs, e.path, e.expect);
				if ("kind" in now) return now;
				// The text just checked must still be there as the write lands.
				await fs.write(e.path, e.text, now.text);
				return null;
			}
			case "move": {
				const bad = (await expectText(fs, e.from, e.expect)) ?? (await absent(fs, e.to));
				if (bad) return bad;
				await fs.rename(e.from, e.to);
				return null;
			}
			case "trash": {
				const bad = await expectText(fs, e.path, e.expect);
				if (bad) return bad;
				await fs.trash(e.path);
				return null;
			}
			case "delete": {
				const bad = await expectText(fs, e.path, e.expect);
				if (bad) return bad;
				await fs.remove(e.path);
				return null;
			}
		}
	} catch (err) {
		if (err instanceof ChangedSince) return { kind: "changed", path: err.path };
		return { kind: "io", message: message(err) };
	}
}

/** The text a person reads for an outcome that is not a success: the engine's
 * refusal text (with its Hint and Docs lines), or the answer as JSON. */
/** A refusal as a person reads it: the engine's text, with the rules rows
 * would break in words (rule-words.ts). */
export function refusalText(out: Outcome): string {
	const text = errorOf(out.answer);
	return text === null ? JSON.stringify(out.answer, null, 2) : refusalWords(text, out.answer);
}

export function succeeded(out: Outcome): boolean {
	return out.status === "ok";
}

/** How many rounds of "read these store files" one call may ask for (driver.rs `NEED_ROUNDS`). */
const NEED_ROUNDS = 64;
/** How many rows one turn of `readRows` hands over: about 5 ms of the engine's
 * time, so a command waits no longer than that behind it. Each turn's scratch
 * memory is left free beside the texts: at 2,000 a turn the plugin's engine
 * held 0.5 MB more once idle (100k notes), at 4,000 1.4 MB. */
const ROWS_PER_TURN = 1000;

export class Host {
	readonly actor: string;
	private readonly now: () => number;
	private readonly warn: (line: string) => void;
	private readonly post?: (d: Delivery) => Promise<PostResult>;
	private readonly sleep?: (ms: number) => Promise<void>;
	private queue: Promise<unknown> = Promise.resolve();
	/** The last keep left store writes owed (a full disk, say). */
	private behind = false;
	private listeners = new Set<() => void>();
	/** Long polls waiting for a turn that writes (or for the engine to close). */
	private waiters = new Set<() => void>();
	private closed = false;
	/** Set when a turn wrote to the vault or the store. */
	private wrote = false;
	/** The model given to the engine, once one was. */
	private semanticModel: SemanticModel | null = null;
	/** The registry's operations by name, once asked (their facts: long poll, meaning model, timing). */
	private ops: Map<string, OperationInfo> | null = null;

	constructor(
		readonly engine: EngineApi,
		readonly fs: FileSystem,
		options: HostOptions = {},
	) {
		this.actor = options.actor ?? "obsidian";
		this.now = options.now ?? (() => Date.now());
		this.warn = options.warn ?? ((line) => console.warn(`datanotes: ${line}`));
		this.post = options.post;
		this.sleep = options.sleep;
	}

	/** Runs `fn` once every earlier turn of the engine is over: the engine sees
	 * one call, event or tick at a time, and a write's edits are never interleaved
	 * with another turn. */
	exclusive<T>(fn: () => Promise<T>): Promise<T> {
		const run = this.queue.then(fn, fn);
		this.queue = run.catch(() => undefined);
		return run;
	}

	/** An operation of the registry, by name (undefined: none has it). */
	private async op(name: string): Promise<OperationInfo | undefined> {
		this.ops ??= new Map((await this.engine.operations()).map((o) => [o.name, o]));
		return this.ops.get(name);
	}

	/** Called after every turn that may have changed the vault or the store
	 * (the history view refreshes). Returns the function that unsubscribes. */
	onChange(fn: () => void): () => void {
		this.listeners.add(fn);
		return () => this.listeners.delete(fn);
	}

	private changedIfWrote(): void {
		if (!this.wrote) return;
		this.wrote = false;
		for (const wake of this.waiters) wake();
		for (const fn of this.listeners) {
			try {
				fn();
			} catch (e) {
				this.warn(`a listener failed: ${message(e)}`);
			}
		}
	}

	/** After open (driver.rs `start`): writes the store's upkeep (old journal
	 * entries), then compares the vault with what the store last knew (hand edits
	 * made while closed). */
	open(): Promise<Outcome> {
		return this.exclusive(async () => {
			for (const w of await this.engine.warnings()) this.warn(w);
			const log: string[] = [];
			try {
				await this.writeStore(await this.engine.takeUpkeep());
			} catch (e) {
				log.push(`WARN the store could not be written: ${message(e)}`);
			}
			const now = this.now();
			const end = await this.drive("reconcile", () => this.engine.reconcile(now));
			end.log = [...log, ...end.log];
			this.after(end);
			this.changedIfWrote();
			return end;
		});
	}

	/** Builds the engine's lookups by name, link and unique value, in a turn
	 * of their own, before a command needs them (`warmLookups`); then reads the
	 * rows the engine opened unread from its notes' cache, while it answers
	 * (issue 17): `ROWS_PER_TURN` a turn, each read before its turn begins, so
	 * commands keep their turns. A row a turn needs first is read by that turn
	 * (a `read_notes` step); one that changed since the open is the engine's to
	 * report as a hand edit, and one gone, the watcher's. Lookups first: built
	 * after the rows' texts, their tables found no room in what the open had
	 * left free, and wasm's memory grew by 2 MB more (100k notes). */
	async readRows(): Promise<void> {
		await this.exclusive(async () => {
			if (!this.closed) await this.engine.warmLookups();
		});
		const rows = await this.exclusive(async () => (this.closed ? [] : await this.engine.unreadRows()));
		for (let at = 0; at < rows.length && !this.closed; at += ROWS_PER_TURN) {
			// A task of its own each: reads that settle at once (cached) would
			// otherwise keep the thread they run on.
			if (at > 0) await new Promise((r) => window.setTimeout(r, 0));
			const paths = rows.slice(at, at + ROWS_PER_TURN);
			const { files } = await (this.fs.readNotes?.(paths) ?? readNotes(this.fs, paths));
			await this.exclusive(async () => {
				if (!this.closed) await this.engine.readNotes(files, []);
			});
		}
	}

	/** Writes the notes' cache the open left to write (core/src/notecache.rs), in
	 * a turn of its own after the open: the vault is ready without waiting for
	 * it. After a few notes changed, only their lines, appended to the file. A
	 * derived file: a failure is said and the next open reads every note.
	 * Resolves to the lines said, as driver.rs `start` adds them to its log. */
	keepCache(): Promise<string[]> {
		return this.exclusive(async () => {
			const cache = await this.engine.takeCache();
			if (!cache) return [];
			try {
				if (cache.append) await this.fs.writeStore({ path: cache.path, text: new TextDecoder().decode(cache.bytes), append: true });
				else await this.fs.writeStoreBytes(cache.path, cache.bytes);
				return [];
			} catch (e) {
				const line = `WARN the notes' cache could not be written (the next open reads every note): ${message(e)}`;
				this.warn(line);
				return [line];
			}
		});
	}

	/** One operation to its end: the store files it needs are read, a write's
	 * store is written first, then its edits, then `finish` (a rollback is applied
	 * the same way). The last outcome is the answer. A list_changes with `wait_ms`
	 * and nothing new waits, outside the engine's turns, until a turn writes or the
	 * time is up (the long poll of `datanotes serve`). */
	async call(name: string, args: unknown = {}, actor: string = this.actor): Promise<Outcome> {
		const sleep = this.sleep;
		const wait = longPoll(await this.op(name), args);
		if (wait === 0 || !sleep) return this.callOnce(name, args, actor);
		// Real time, not the engine's clock (which the tests drive by hand).
		const until = Date.now() + wait;
		for (;;) {
			// Listened to before the call: a change during it wakes the wait at once.
			let wake = (): void => undefined;
			const changed = new Promise<void>((resolve) => (wake = resolve));
			this.waiters.add(wake);
			const stop = () => this.waiters.delete(wake);
			try {
				const out = await this.callOnce(name, args, actor);
				const left = until - Date.now();
				if (out.status !== "ok" || endsPoll(out.answer) || left <= 0 || this.closed) return out;
				await Promise.race([changed, sleep(left)]);
				if (this.closed) return out;
			} finally {
				stop();
			}
		}
	}

	private callOnce(name: string, args: unknown, actor: string): Promise<Outcome> {
		return this.exclusive(async () => {
			if (this.closed) throw new Error("the Datanotes engine is closed");
			const op = await this.op(name);
			if (op?.needsModel) await this.giveSemanticModel();
			const now = this.now();
			const start = performance.now();
			const end = await this.drive(name, () => this.engine.call(name, args ?? {}, actor, now));
			// The engine has no clock: the host says how long the index took.
			if (op?.timedByHost && end.status === "ok" && typeof end.answer === "object" && end.answer !== null) {
				(end.answer as Record<string, unknown>).duration_ms = Math.round(performance.now() - start);
			}
			this.after(end);
			this.changedIfWrote();
			return end;
		});
	}

	/** Gives the engine the model to search by meaning with, from the store,
	 * the first time an operation needs it (8 MB: not read at open, nor kept in
	 * main.js). Until `datanotes install-model` puts it there, the engine
	 * refuses the operation with that way out; looked for again each time. */
	private async giveSemanticModel(): Promise<void> {
		if (this.semanticModel || !this.fs.readStoreBytes) return;
		try {
			const bytes = await this.fs.readStoreBytes(SEMANTIC_MODEL_FILE);
			if (bytes) this.semanticModel = await this.engine.setSemanticModel(bytes);
		} catch (e) {
			this.warn(`${SEMANTIC_MODEL_FILE} cannot be read: ${errorOf(e)}`);
		}
	}

	/** A vault change. The text is read when the turn comes, so that it is the
	 * file's text now (the engine tells its own writes apart by text). */
	observe(ev: Pick<VaultEvent, "kind" | "path" | "from">): Promise<void> {
		const relevant = wanted(ev.path) || (ev.from !== undefined && wanted(ev.from));
		if (!relevant) return Promise.resolve();
		return this.exclusive(async () => {
			if (this.closed) return;
			const now = this.now();
			if (ev.kind === "removed") {
				await this.engine.observe({ kind: "removed", path: ev.path }, now);
				return;
			}
			const read = wanted(ev.path) ? await this.fs.read(ev.path) : null;
			if (read === null) {
				// Gone again (or moved out of sight): what is left is a removal.
				const gone = ev.kind === "renamed" && ev.from !== undefined ? ev.from : ev.path;
				await this.engine.observe({ kind: "removed", path: gone }, now);
				return;
			}
			const event: VaultEvent = { kind: ev.kind, path: ev.path, text: read.text, mtime: read.mtime };
			if (ev.kind === "renamed") event.from = ev.from;
			await this.engine.observe(event, now);
		});
	}

	/** Runs what is due (the round of hand edits, link repair, recompute, webhooks). */
	tick(): Promise<Outcome> {
		return this.exclusive(async () => {
			if (this.closed) return emptyOutcome();
			const now = this.now();
			const end = await this.drive("tick", () => this.engine.tick(now));
			this.after(end);
			if (end.status !== "ok") this.warn(refusalText(end));
			this.changedIfWrote();
			return end;
		});
	}

	/** Store files another device's engine wrote, as a sync brought them
	 * (store-watch.ts): its writes, journal entries and feed events are this
	 * engine's to show at once, and its notes, when they come, not hand edits. */
	storeSynced(files: StoreFile[]): Promise<void> {
		if (files.length === 0) return Promise.resolve();
		return this.exclusive(async () => {
			if (this.closed) return;
			for (const line of await this.engine.storeSynced(files, this.now())) this.warn(line);
			this.wrote = true;
			this.changedIfWrote();
		});
	}

	/** When the engine next has something to do (ms since the epoch), if ever. */
	nextDeadline(): number | null {
		if (this.closed) return null;
		return this.engine.nextDeadline() ?? null;
	}

	setGitBusy(busy: boolean): void {
		if (!this.closed) this.engine.setGitBusy(busy);
	}

	/** Waits for the turn under way, then frees the engine. */
	close(): Promise<void> {
		return this.exclusive(async () => {
			if (this.closed) return;
			this.closed = true;
			this.listeners.clear();
			for (const wake of this.waiters) wake();
			this.engine.free();
		});
	}

	/** Carries a turn to its end (driver.rs `drive`). */
	private async drive(op: string, turn: () => Awaitable<Step>): Promise<Outcome> {
		// Records an earlier write still owes go first; while they cannot, the engine
		// refuses writes.
		await this.keep([]);
		return this.carry(op, await this.ask(turn));
	}

	/** Writes the store writes the engine still owes, then `files`, in order; what
	 * cannot be written the engine keeps (driver.rs `keep`). A derived file (the
	 * semantic index) is never owed, as it is built again: one the store cannot
	 * take is left out and the writes after it go on; after the first record
	 * that fails, the records left are owed, the derived files among them dropped. */
	private async keep(files: StoreWrite[]): Promise<Behind | null> {
		const all = [...(await this.engine.takeOwed()), ...files];
		for (let i = 0; i < all.length; i++) {
			try {
				await this.writeStore([all[i]]);
			} catch (e) {
				if (derivedStoreFile(all[i].path)) continue;
				this.behind = true;
				return await this.engine.owe(all.slice(i).filter((w) => !derivedStoreFile(w.path)), message(e));
			}
		}
		this.behind = false;
		return null;
	}

	/** Whether store writes wait to be tried again (the next turn, a tick, tries them). */
	owes(): boolean {
		return this.behind && !this.closed;
	}

	/** Runs a turn, and again while it asks for store files or notes, but not
	 * when it asks again for the very files it was just given (driver.rs `ask`). */
	private async ask(turn: () => Awaitable<Step>): Promise<Step> {
		let step = await turn();
		let last: string[] = [];
		for (let i = 0; i < NEED_ROUNDS && (step.step === "need" || step.step === "read_notes"); i++) {
			const paths = step.step === "need" ? step.need : step.notes;
			if (paths.length === last.length && paths.every((p, k) => p === last[k])) break;
			if (step.step === "need") {
				const files = await Promise.all(
					paths.map(async (p): Promise<[string, string | null]> => [p, await this.fs.readStore(p).catch(() => null)]),
				);
				this.engine.provide(files);
			} else {
				const { files, gone } = await readNotes(this.fs, paths);
				await this.engine.readNotes(files, gone);
			}
			last = paths;
			step = await turn();
		}
		return step;
	}

	/** Carries a step to its end (driver.rs `carry`): a write's store first, then
	 * its edits in order, then `finish`; a rollback the same way. */
	private async carry(op: string, first: Step): Promise<Outcome> {
		let step = first;
		const log: string[] = [];
		for (;;) {
			if (step.step === "need") return { ...(await this.engine.needUnmet(op, step.need)), log };
			if (step.step === "read_notes") return { ...(await this.engine.needUnmet(op, step.notes)), log };
			if (step.step !== "apply") {
				const out: Outcome = { ...step, log: [...step.log] };
				const behind = await this.keep(out.store);
				// Only a turn that adds records says they wait; the others were
				// refused (writes) or need none (reads).
				if (behind && out.store.length > 0) {
					out.log.push(behind.log);
					if (out.answer && typeof out.answer === "object") {
						out.answer = { ...out.answer, not_recorded: behind.not_recorded, warning: behind.warning };
					}
				}
				return { ...out, log: [...log, ...out.log] };
			}
			log.push(...step.log);
			try {
				await this.writeStore(step.store);
			} catch (e) {
				// Nothing was touched: the engine puts its index back and says why.
				return { ...(await this.engine.storeFailed(op, message(e))), log };
			}
			const results: (EditFailure | null)[] = [];
			let failed = false;
			for (const e of step.edits) {
				if (failed) {
					results.push({ kind: "not_tried" });
					continue;
				}
				const r = await applyEdit(this.fs, e);
				this.wrote = true;
				failed = r !== null;
				results.push(r);
			}
			step = await this.engine.finish(results);
		}
	}

	/** What an outcome asks besides its answer: its log lines, its deliveries. */
	private after(out: Outcome): void {
		for (const line of out.log) this.warn(line);
		for (const d of out.deliveries) void this.deliver(d);
	}

	/** Records an MCP tool call in the change feed (a `tool_call` event). */
	recordToolCall(call: ToolCall): Promise<void> {
		return this.exclusive(async () => {
			if (this.closed) return;
			await this.writeStoreLogged(await this.engine.recordToolCall(call, this.now()));
			this.changedIfWrote();
		});
	}

	private async deliver(d: Delivery): Promise<void> {
		let result: PostResult;
		if (!this.post) result = { error: "this host makes no webhook deliveries" };
		else {
			try {
				result = await this.post(d);
			} catch (e) {
				result = { error: message(e) };
			}
		}
		if ("error" in result) this.warn(`webhook ${d.webhook}: ${result.error}`);
		await this.exclusive(async () => {
			if (this.closed) return;
			const status = "status" in result ? result.status : null;
			const error = "error" in result ? result.error : null;
			await this.writeStoreLogged(await this.engine.delivered(d.webhook, d.last, status, error, this.now()));
		});
	}

	private async writeStore(files: StoreWrite[]): Promise<void> {
		if (files.length > 0) this.wrote = true;
		for (const w of files) await this.fs.writeStore(w);
	}

	private async writeStoreLogged(files: StoreWrite[]): Promise<void> {
		const behind = await this.keep(files);
		if (behind) this.warn(behind.warning);
	}
}

/** How long a call may wait for the change feed (ms): a long poll's `wait_ms`
 * (list_changes), as the engine bounds it; 0 for every other call. */
function longPoll(op: OperationInfo | undefined, args: unknown): number {
	if (!op?.longPoll || args === null || typeof args !== "object") return 0;
	const w = (args as { wait_ms?: unknown }).wait_ms;
	return typeof w === "number" && Number.isInteger(w) && w > 0 && w <= 60_000 ? w : 0;
}

/** Whether a list_changes answer ends a long poll: events, or a gap (a cursor
 * not of this feed, which the reader answers by reading the tables again). */
function endsPoll(answer: unknown): boolean {
	const a = answer as { events?: unknown; gap?: unknown } | null;
	return !Array.isArray(a?.events) || a.events.length > 0 || a?.gap === true;
}

function emptyOutcome(): Outcome {
	return { status: "ok", http: 200, answer: null, store: [], log: [], deliveries: [] };
}
