// The engine in this process: the plugin's wasm engine and host (plugin/src/)
// on node's file system (disk.ts). It holds the vault as `datanotes mcp` does:
// refused while another live engine proves it holds the vault; then it names
// itself in `.datanotes/lock` and answers the lock's challenge and forwarded
// calls on a loopback port (the plugin's door), so `datanotes call`, `mcp` and a
// `serve` bridge reach it rather than open a second engine. Hand edits are
// found at open and, from the moment it reads the vault, by watching the
// vault's folders (a folder moved out of the vault while it runs: its notes are
// found gone at the next open). Between calls it runs the plugin's loop
// (plugin/src/between-calls.ts): deadlines, owed writes, git at work.
// Bundled by sdk/build.mjs into dist/local.js, beside the engine's .wasm.

import * as crypto from "node:crypto";
import * as nodeFs from "node:fs";
import { type FSWatcher, readFileSync, rmSync, watch } from "node:fs";
import { lstat, readdir, readFile, stat } from "node:fs/promises";
import type { Dirent } from "node:fs";
import * as http from "node:http";
import * as nodePath from "node:path";
import { join, resolve } from "node:path";
import * as proc from "node:process";
import { BetweenCalls, type Change } from "../../plugin/src/between-calls";
import { deviceId, deviceKey, nodeDeviceStore, nodeKeyStore } from "../../plugin/src/device";
import { challenge, type Door, holds, httpGet, LOCK, loopbackUrl, openDoor, parseLock, TOKEN, vaultIdOf } from "../../plugin/src/door";
import { loadEngine, openEngine } from "../../plugin/src/engine";
import { Host, type PostResult } from "../../plugin/src/host";
import type { Delivery } from "../../plugin/src/types";
import { NodeFileSystem } from "./disk";
import type { LocalEngine, OpenOptions } from "./local-types.js";

function unref<T>(t: T): T {
	(t as { unref?: () => void }).unref?.();
	return t;
}

async function post(d: Delivery): Promise<PostResult> {
	try {
		const r = await fetch(d.url, { method: "POST", headers: d.headers, body: d.body, redirect: "manual" });
		return { status: r.status };
	} catch (e) {
		return { error: e instanceof Error ? e.message : String(e) };
	}
}

/** The vaults this process holds (their folders, resolved). */
const held = new Set<string>();

/** This device's id, read once: one device with the binary and the plugin on
 * this machine (plugin/src/device.ts). */
let device: string | undefined | null = null;
function thisDevice(): string | undefined {
	if (device === null) {
		const kept = nodeDeviceStore(nodeFs, proc, nodePath);
		device = (kept && deviceId(kept, () => crypto.randomBytes(10))) ?? undefined;
	}
	return device;
}

/** Device `id`'s key, beside its id (plugin/src/device.ts): the binary's too. */
function thisDeviceKey(id: string | undefined): Uint8Array | null {
	const kept = id === undefined ? null : nodeKeyStore(nodeFs, proc, nodePath, id);
	return kept && deviceKey(kept, () => crypto.randomBytes(32));
}

/** Refuses when another live engine holds the vault (its lock proves it). */
async function notHeld(fs: NodeFileSystem, vault: string): Promise<void> {
	const lock = parseLock(await fs.readStore(LOCK), thisDevice());
	if (!lock) return;
	if (lock.pid === process.pid && held.has(resolve(vault))) {
		throw new Error(`${vault} is open in this process already: call the DatanotesClient that opened it, or close() it first`);
	}
	const token = (await fs.readStore(TOKEN))?.trim() ?? "";
	const answer = await challenge(crypto, httpGet(http), lock, token, process, vaultIdOf(nodeFs, process.platform, vault));
	if (holds(answer)) {
		throw new Error(
			`${vault} is held by process ${lock.pid} at ${loopbackUrl(lock) ?? lock.address} (Obsidian, datanotes serve or mcp): DatanotesClient.connect({ vault }) sends your calls there`,
		);
	}
}

/** The plugin's door (door.ts) for an engine on node's file system: it claims
 * the lock, and `datanotes call`, `mcp` and a `serve` bridge reach the engine
 * through it. `unref`: the process may end while it is open. */
export function nodeDoor(fs: NodeFileSystem, host: Host, unref: boolean): Promise<Door> {
	return openDoor(
		{
			http,
			fs,
			call: (op, args, actor) => host.call(op, args, actor),
			record: (call) => host.recordToolCall(call),
			pid: process.pid,
			device: thisDevice(),
			now: () => Date.now(),
			newToken: () => crypto.randomBytes(32).toString("hex"),
			crypto,
			ownerOnly: (path) => fs.ownerOnly(path),
			vault: () => vaultIdOf(nodeFs, process.platform, fs.root),
			unref,
		},
		(l, token) => challenge(crypto, httpGet(http), l, token, process, vaultIdOf(nodeFs, process.platform, fs.root)),
	);
}

export async function openLocal(o: OpenOptions): Promise<LocalEngine> {
	const fs = new NodeFileSystem(o.vault);
	if (!(await stat(o.vault).then((s) => s.isDirectory(), () => false))) throw new Error(`${o.vault} is not a folder (datanotes init --vault DIR makes one)`);
	await notHeld(fs, o.vault);
	await loadEngine(await readFile(new URL("./datanotes_core_bg.wasm", import.meta.url)));
	const warn = o.warn ?? ((line: string) => console.warn(`datanotes: ${line}`));
	const loop = new BetweenCalls({
		setTimer: (fn, ms) => {
			const t = unref(setTimeout(fn, ms));
			return () => clearTimeout(t);
		},
		warn: (line, e) => warn(`${line}: ${e instanceof Error ? e.message : String(e)}`),
	});
	// Watched before the vault is read: what changes while the engine opens is
	// handed over once it is open (the engine skips what it read already).
	const watch = new TreeWatch(o.vault, (c) => loop.observe(c));
	watch.start();
	let host: Host | null = null;
	try {
		const [files, store] = await Promise.all([fs.readVault(), fs.listStore()]);
		for (const w of fs.warnings) warn(w);
		const sleep = (ms: number) => new Promise<void>((resolve) => unref(setTimeout(resolve, ms)));
		host = new Host(openEngine(files, store, Date.now(), undefined, thisDevice(), undefined, thisDeviceKey(thisDevice())), fs, { actor: o.actor ?? "sdk", warn, post, sleep });
		await host.open();
		const door = await nodeDoor(fs, host, true);
		held.add(resolve(o.vault));
		loop.attach(host, () => fs.gitBusy());
		return new Running(host, door, watch, loop, o.vault).start();
	} catch (e) {
		watch.close();
		loop.stop();
		await host?.close();
		throw e;
	}
}

/** The vault's folders, watched: one watcher per folder (node's recursive
 * watching on Linux takes one per file, and keeps the process alive), the
 * folders outside dot folders. What a path is when it changes decides the
 * change (the engine tells its own writes apart by text). */
class TreeWatch {
	private readonly watchers = new Map<string, FSWatcher>();
	private closed = false;

	constructor(
		private readonly vault: string,
		private readonly saw: (c: Change) => void,
	) {}

	start(): void {
		void this.watchTree("");
	}

	close(): void {
		this.closed = true;
		for (const w of this.watchers.values()) w.close();
		this.watchers.clear();
	}

	/** Watches `rel` and the folders under it; a folder that appears while the
	 * engine runs gives its notes as created. */
	private async watchTree(rel: string, created = false): Promise<void> {
		if (this.closed || this.watchers.has(rel)) return;
		let entries: Dirent[];
		try {
			const w = watch(rel === "" ? this.vault : join(this.vault, rel), (_, name) => {
				if (name) void this.seen(rel === "" ? String(name) : `${rel}/${String(name)}`);
			});
			w.unref();
			w.on("error", () => this.unwatch(rel));
			this.watchers.set(rel, w);
			entries = await readdir(rel === "" ? this.vault : join(this.vault, rel), { withFileTypes: true });
		} catch {
			// Gone already, or not readable: its notes are found at the next open.
			return;
		}
		for (const d of entries) {
			const path = rel === "" ? d.name : `${rel}/${d.name}`;
			if (d.isDirectory() && !d.name.startsWith(".")) await this.watchTree(path, created);
			else if (created && d.isFile()) await this.seen(path);
		}
	}

	private unwatch(rel: string): void {
		for (const [path, w] of this.watchers) {
			if (path === rel || path.startsWith(`${rel}/`)) {
				w.close();
				this.watchers.delete(path);
			}
		}
	}

	/** A vault path changed: what it is now decides the change. */
	private async seen(path: string): Promise<void> {
		if (this.closed || path.split("/").some((c) => c.startsWith("."))) return;
		const stat = await lstat(join(this.vault, path)).catch(() => null);
		if (stat?.isDirectory()) return this.watchTree(path, true);
		if (!stat && this.watchers.has(path)) this.unwatch(path);
		this.saw({ kind: stat ? "modified" : "removed", path });
	}
}

/** The engine while it runs: its watch, its loop, and the way it ends. */
class Running implements LocalEngine {
	private closed = false;
	private readonly onExit = () => this.dropLock();

	constructor(
		private readonly host: Host,
		private readonly door: Door,
		private readonly watch: TreeWatch,
		private readonly loop: BetweenCalls,
		private readonly vault: string,
	) {}

	get url(): string {
		return this.door.url;
	}

	start(): this {
		// A process that ends without close() leaves no lock naming it.
		process.once("exit", this.onExit);
		return this;
	}

	async call(name: string, args: unknown): Promise<{ http: number; answer: unknown }> {
		if (this.closed) throw new Error("this DatanotesClient was closed: open it again");
		// A call that wrote wakes the loop (host.onChange): it looks at the
		// engine's deadline and owed writes again.
		const out = await this.host.call(name, args);
		return { http: out.http, answer: out.answer };
	}

	private dropLock(): void {
		try {
			const lock = parseLock(readFileSync(`${this.vault}/.datanotes/${LOCK}`, "utf8"));
			if (lock?.pid === process.pid) rmSync(`${this.vault}/.datanotes/${LOCK}`, { force: true });
		} catch {
			// Nothing to remove.
		}
	}

	async close(): Promise<void> {
		if (this.closed) return;
		this.closed = true;
		process.off("exit", this.onExit);
		held.delete(resolve(this.vault));
		this.watch.close();
		this.loop.stop();
		await this.door.close();
		await this.host.close();
	}
}
