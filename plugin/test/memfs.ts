// An in-memory vault and store for the host's tests, recording every change in order.

import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { FileRead, FileSystem } from "../src/host";
import { storeFileKind } from "../src/store-files";
import { ChangedSince, type NoteFile, type StoreFile, type StoreWrite } from "../src/types";

/** Every file under `dir`, by path relative to it ("/" separated). */
export function readTree(dir: string, rel = ""): Map<string, string> {
	const out = new Map<string, string>();
	for (const name of readdirSync(join(dir, rel)).sort()) {
		const r = rel === "" ? name : `${rel}/${name}`;
		if (statSync(join(dir, r)).isDirectory()) for (const [p, t] of readTree(dir, r)) out.set(p, t);
		else out.set(r, readFileSync(join(dir, r), "utf8"));
	}
	return out;
}

export class MemoryFs implements FileSystem {
	readonly files = new Map<string, FileRead>();
	readonly store = new Map<string, string>();
	readonly trashed = new Map<string, string>();
	/** Every change, in order: "store put journal/…", "vault write datanotes/…", … */
	readonly ops: string[] = [];
	/** Called after each change to the vault (a test changes a file underneath). */
	afterVaultChange: ((op: string) => void) | null = null;
	mtime = 1;
	/** The modification time of the files written, as a disk's clock gives it
	 * (core/src/driver/memory.rs `mtime`); without it, one more than the last. */
	clock: (() => number) | null = null;
	/** Paths whose changes fail (a file held by another program). */
	readonly held = new Set<string>();
	/** Store writes fail (a full disk). */
	storeFails = false;
	/** The disk fills up with the next note written: store writes fail from then on. */
	fillsUp = false;

	constructor(files: Map<string, string> = new Map()) {
		for (const [p, text] of files) this.files.set(p, { text, mtime: this.mtime });
	}

	/** Changes a file by hand: no event, the engine is not told. */
	handWrite(path: string, text: string, mtime = this.nextMtime()): void {
		this.files.set(path, { text, mtime });
	}

	private nextMtime(): number {
		return this.clock?.() ?? ++this.mtime;
	}

	text(path: string): string | undefined {
		return this.files.get(path)?.text;
	}

	/** The notes as the engine takes them at open. */
	notes(): NoteFile[] {
		return [...this.files].map(([path, f]) => ({ path, text: f.text, mtime: f.mtime }));
	}

	/** The store's listing as the plugin makes it at open. */
	storeListing(): StoreFile[] {
		return [...this.store].map(([p, t]): StoreFile => [p, storeFileKind(p) === "list" ? null : t]);
	}

	snapshot(): { vault: Record<string, string>; store: Record<string, string> } {
		return {
			vault: Object.fromEntries([...this.files].map(([p, f]) => [p, f.text])),
			store: Object.fromEntries(this.store),
		};
	}

	private free(path: string): void {
		if (this.held.has(path)) throw new Error("the file is held by another program");
	}

	private changed(op: string): void {
		this.ops.push(op);
		this.afterVaultChange?.(op);
	}

	async read(path: string): Promise<FileRead | null> {
		const f = this.files.get(path);
		return f ? { ...f } : null;
	}

	async exists(path: string): Promise<boolean> {
		return this.files.has(path);
	}

	async write(path: string, text: string, was?: string): Promise<void> {
		this.free(path);
		if (was !== undefined && this.files.get(path)?.text !== was) throw new ChangedSince(path);
		this.storeFails ||= this.fillsUp;
		this.fillsUp = false;
		this.files.set(path, { text, mtime: this.nextMtime() });
		this.changed(`vault write ${path}`);
	}

	async rename(from: string, to: string): Promise<void> {
		this.free(from);
		const f = this.files.get(from);
		if (!f) throw new Error(`${from}: no such file`);
		this.files.delete(from);
		this.files.set(to, f);
		this.changed(`vault move ${from} -> ${to}`);
	}

	async trash(path: string): Promise<void> {
		this.free(path);
		const f = this.files.get(path);
		if (!f) throw new Error(`${path}: no such file`);
		this.files.delete(path);
		this.trashed.set(path, f.text);
		this.changed(`vault trash ${path}`);
	}

	async remove(path: string): Promise<void> {
		this.free(path);
		if (!this.files.delete(path)) throw new Error(`${path}: no such file`);
		this.changed(`vault delete ${path}`);
	}

	/** Binary store files (the model to search by meaning with). */
	readonly storeBytes = new Map<string, Uint8Array>();

	async readStoreBytes(path: string): Promise<Uint8Array | null> {
		return this.storeBytes.get(path) ?? null;
	}

	async readStore(path: string): Promise<string | null> {
		return this.store.get(path) ?? null;
	}

	async writeStoreBytes(path: string, bytes: Uint8Array): Promise<void> {
		await this.writeStore({ path, text: new TextDecoder().decode(bytes), append: false, delete: false });
	}

	async writeStore(w: StoreWrite): Promise<void> {
		if (this.storeFails) throw new Error("no space left on device");
		this.free(w.path);
		if (w.delete) {
			this.store.delete(w.path);
			this.ops.push(`store delete ${w.path}`);
		} else if (w.append) {
			this.store.set(w.path, (this.store.get(w.path) ?? "") + w.text);
			this.ops.push(`store append ${w.path}`);
		} else {
			this.store.set(w.path, w.text);
			this.ops.push(`store put ${w.path}`);
		}
	}
}
