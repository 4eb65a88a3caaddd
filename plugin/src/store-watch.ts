// The store's files that another device's engine writes, as a sync tool brings
// them while this engine runs (issue 15): Obsidian reports no change in dot
// folders, so the plugin looks at `.datanotes/` itself. Each look asks each
// folder for its time only; a folder that changed is listed, and of its files
// only those another device wrote are read (core/src/handedit/synced.rs says
// which, `synced_file`; this is its twin, tested on the same cases).

import type { StoreFile } from "./types";

/** What the watch needs of the file system (Obsidian's DataAdapter has it). */
export interface StoreDirs {
	stat(path: string): Promise<{ mtime: number; size: number } | null>;
	list(path: string): Promise<{ files: string[]; folders: string[] }>;
	read(path: string): Promise<string>;
}

const DEVICE = /^[a-z0-9]{1,16}$/;

/** Whether `rel` (under `.datanotes/`) is a commit, journal entry, feed segment,
 * settings or webhooks file of another device than `me`. */
export function syncedFile(rel: string, me: string): boolean {
	const theirs = (d: string | undefined): boolean => d !== undefined && d !== me && d !== "checkpoint" && DEVICE.test(d);
	let m = /^log\/[^/]+\/\d{20}\.([^./]+)\.json$/.exec(rel);
	if (m) return theirs(m[1]);
	m = /^journal\/([^/]+)\.json$/.exec(rel);
	if (m) {
		if (m[1].includes(".sync-conflict-")) return false;
		const dot = m[1].lastIndexOf(".");
		return dot >= 0 && theirs(m[1].slice(dot + 1).replace(/-\d+$/, ""));
	}
	m = /^feed\/\d{20}\.([^./]+)\.jsonl$/.exec(rel) ?? /^(?:settings|webhooks)\.([^./]+)\.json$/.exec(rel);
	return m !== null && theirs(m[1]);
}

/** Whether a file is read again when it changes, not only when it is new: the
 * few feed segments, settings and webhooks files that grow or are rewritten
 * (commits and journal entries are written once under their names). */
function rewritten(rel: string): boolean {
	return rel.startsWith("feed/") || !rel.includes("/");
}

/** A folder whose time is this close to now may change again within the same
 * tick of a coarse clock (FAT's 2 s): it is listed again at the next look. */
const COARSE_MS = 2000;

export class StoreWatch {
	/** Each folder's time when last listed. */
	private readonly folders = new Map<string, number>();
	/** Each file of another device seen: its time and size. */
	private readonly files = new Map<string, string>();

	constructor(
		private readonly dirs: StoreDirs,
		private readonly device: string,
		private readonly root = ".datanotes",
		private readonly now: () => number = () => Date.now(),
	) {}

	/** Takes the store as the engine read it at open: nothing of it is new, and
	 * nothing of it is read. */
	async start(): Promise<void> {
		await this.look(null);
	}

	/** The files another device wrote since the last look: [path under the
	 * store, text]. */
	async poll(): Promise<StoreFile[]> {
		const out: StoreFile[] = [];
		await this.look(out);
		return out;
	}

	/** Lists the folders that changed; `out` null: only records what is there. */
	private async look(out: StoreFile[] | null): Promise<void> {
		for (const folder of [this.root, `${this.root}/journal`, `${this.root}/feed`]) await this.lookIn(folder, out);
		// The log's folder changes only when a table's log begins: its tables are listed then.
		const log = `${this.root}/log`;
		const mtime = await this.changedFolder(log);
		const listed = mtime === null ? null : await this.listing(log);
		if (mtime !== null && listed) {
			this.folders.set(log, mtime);
			for (const t of listed.folders) if (!this.folders.has(t)) this.folders.set(t, -1);
		}
		for (const t of [...this.folders.keys()].filter((f) => f.startsWith(`${log}/`))) await this.lookIn(t, out);
	}

	/** The folder's time, when it changed since it was last listed (or may have). */
	private async changedFolder(folder: string): Promise<number | null> {
		const stat = await this.statOf(folder);
		if (!stat) return null;
		// A file system that gives folders no time (0) has each listed at every look.
		const last = this.folders.get(folder);
		if (stat.mtime > 0 && last === stat.mtime && this.now() - stat.mtime > COARSE_MS) return null;
		return stat.mtime;
	}

	private async statOf(path: string): Promise<{ mtime: number; size: number } | null> {
		try {
			return await this.dirs.stat(path);
		} catch {
			return null;
		}
	}

	private async listing(folder: string): Promise<{ files: string[]; folders: string[] } | null> {
		try {
			return await this.dirs.list(folder);
		} catch {
			return null;
		}
	}

	private async lookIn(folder: string, out: StoreFile[] | null): Promise<void> {
		const mtime = await this.changedFolder(folder);
		if (mtime === null) return;
		const listed = await this.listing(folder);
		if (!listed) return;
		this.folders.set(folder, mtime);
		for (const path of listed.files) {
			const rel = path.slice(this.root.length + 1);
			if (!syncedFile(rel, this.device)) continue;
			const seen = this.files.get(path);
			if (seen !== undefined && !rewritten(rel)) continue;
			// Files written once (commits, journal entries) need no time to be known.
			if (out === null && !rewritten(rel)) {
				this.files.set(path, "");
				continue;
			}
			const stat = await this.statOf(path);
			if (!stat) continue;
			const key = `${stat.mtime}:${stat.size}`;
			if (seen === key) continue;
			this.files.set(path, key);
			if (out === null) continue;
			try {
				out.push([rel, await this.dirs.read(path)]);
			} catch {
				// Gone again (or held): its next change brings it.
				this.files.delete(path);
			}
		}
	}
}
