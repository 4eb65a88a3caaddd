// The vault and the store through Obsidian's API: the FileSystem the host
// applies the engine's edits to, and the reading of both at start.

import { type App, type DataAdapter, TFile, normalizePath } from "obsidian";
import { GIT_AT_WORK } from "./between-calls";
import { type FileRead, type FileSystem, isBase, METASTORE, STORE_DIR, wanted } from "./host";
import { type Links, NO_LINKS, throughLink, underLink } from "./links";
import { storeFileKind } from "./store-files";
import { ChangedSince, type NoteFile, type NoteListed, type StoreFile, type StoreWrite } from "./types";

/** Notes read at once at open, between turns of Obsidian's main thread. */
const READ_BATCH = 5000;

function parent(path: string): string {
	const i = path.lastIndexOf("/");
	return i < 0 ? "" : path.slice(0, i);
}

/** Store files that hold secrets (the token, each device's webhooks): readable by
 * their owner alone where files have modes. */
const SECRET_FILE = /^(token|webhooks(\.[a-z0-9]{1,16})?\.json)$/;

export class ObsidianFileSystem implements FileSystem {
	/** What the last readVault left out, and why. */
	warnings: string[] = [];

	/** `ownerOnly` makes a store file readable by its owner alone (chmod 600,
	 * desktop); `links` says which paths are symbolic links (see links.ts). */
	constructor(
		private readonly app: App,
		private readonly ownerOnly: (path: string) => Promise<void> = async () => undefined,
		private readonly links: Links = NO_LINKS,
	) {}

	/** Refuses a path that goes through a symbolic link. */
	private async guard(path: string): Promise<void> {
		const link = await this.links.linkIn(path);
		if (link !== null) throw new Error(throughLink(path, link));
	}

	private get adapter(): DataAdapter {
		return this.app.vault.adapter;
	}

	private file(path: string): TFile | null {
		const f = this.app.vault.getAbstractFileByPath(normalizePath(path));
		return f instanceof TFile ? f : null;
	}

	private fileOrThrow(path: string): TFile {
		const f = this.file(path);
		if (!f) throw new Error(`${path} is not a file of the vault`);
		return f;
	}

	/** Makes a vault folder and its parents (through the vault: they are indexed). */
	private async folder(path: string): Promise<void> {
		if (path === "" || (await this.adapter.exists(path))) return;
		await this.folder(parent(path));
		try {
			await this.app.vault.createFolder(path);
		} catch (e) {
			// Created meanwhile (an event, another plugin): that is what was wanted.
			if (!(await this.adapter.exists(path))) throw e;
		}
	}

	/** A note's text; a path through a link reads as absent, as at open (so a
	 * note replaced by a link is gone, and a write there is refused). */
	async read(path: string): Promise<FileRead | null> {
		if ((await this.links.linkIn(path)) !== null) return null;
		const f = this.file(path);
		if (f) return { text: await this.app.vault.read(f), mtime: f.stat.mtime };
		// Not indexed (yet): the disk decides.
		if (!(await this.adapter.exists(path))) return null;
		const stat = await this.adapter.stat(path);
		if (stat?.type !== "file") return null;
		return { text: await this.adapter.read(path), mtime: stat.mtime };
	}

	exists(path: string): Promise<boolean> {
		return this.adapter.exists(path);
	}

	async write(path: string, text: string, was?: string): Promise<void> {
		await this.guard(path);
		const f = this.file(path);
		if (f && was !== undefined) {
			await this.app.vault.process(f, (data) => {
				if (data !== was) throw new ChangedSince(path);
				return text;
			});
			return;
		}
		if (f) return this.app.vault.modify(f, text);
		if (await this.adapter.exists(path)) return this.adapter.write(path, text);
		await this.folder(parent(path));
		await this.app.vault.create(path, text);
	}

	async rename(from: string, to: string): Promise<void> {
		await this.guard(from);
		await this.guard(to);
		const f = this.fileOrThrow(from);
		await this.folder(parent(to));
		// Vault.rename leaves links alone: the engine's edits rewrite them
		// (FileManager.renameFile would rewrite them a second time).
		await this.app.vault.rename(f, to);
	}

	/** To the trash the person chose in Obsidian's settings (the vault's .trash,
	 * the system's, or none). */
	async trash(path: string): Promise<void> {
		await this.guard(path);
		return this.app.fileManager.trashFile(this.fileOrThrow(path));
	}

	/** A note the engine created, removed when its write rolls back: to the
	 * trash as well, so that nothing leaves the vault but by the person's rule. */
	remove(path: string): Promise<void> {
		return this.trash(path);
	}

	// The store lives in a dot folder, which Obsidian does not index: the adapter.

	async readStore(rel: string): Promise<string | null> {
		const path = `${STORE_DIR}/${rel}`;
		await this.guard(path);
		if (!(await this.adapter.exists(path))) return null;
		return this.adapter.read(path);
	}

	async readStoreBytes(rel: string): Promise<Uint8Array | null> {
		const path = `${STORE_DIR}/${rel}`;
		await this.guard(path);
		if (!(await this.adapter.exists(path))) return null;
		return new Uint8Array(await this.adapter.readBinary(path));
	}

	private async storeFolder(path: string): Promise<void> {
		if (path === "" || (await this.adapter.exists(path))) return;
		await this.storeFolder(parent(path));
		await this.adapter.mkdir(path);
	}

	async writeStore(w: StoreWrite): Promise<void> {
		const path = `${STORE_DIR}/${w.path}`;
		await this.guard(path);
		if (w.delete) {
			if (await this.adapter.exists(path)) await this.adapter.remove(path);
			return;
		}
		await this.storeFolder(parent(path));
		if (w.append && (await this.adapter.exists(path))) await this.adapter.append(path, w.text);
		else await this.adapter.write(path, w.text);
		if (SECRET_FILE.test(w.path)) await this.ownerOnly(w.path);
	}

	async writeStoreBytes(rel: string, bytes: Uint8Array): Promise<void> {
		const path = `${STORE_DIR}/${rel}`;
		await this.guard(path);
		await this.storeFolder(parent(path));
		// The view's own bytes: a view of a larger buffer would write all of it.
		const owned = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : bytes.slice();
		await this.adapter.writeBinary(path, owned.buffer as ArrayBuffer);
	}

	/** Every store file: [path under .datanotes/, its text or null when only listed]. */
	async listStore(): Promise<StoreFile[]> {
		const out: StoreFile[] = [];
		// A store that is a link would have the journal written wherever it leads.
		await this.guard(STORE_DIR);
		if (!(await this.adapter.exists(STORE_DIR))) return out;
		const folders = [STORE_DIR];
		while (folders.length > 0) {
			const dir = folders.pop() as string;
			const listed = await this.adapter.list(dir);
			folders.push(...listed.folders);
			for (const full of listed.files) {
				const rel = full.slice(STORE_DIR.length + 1);
				const kind = storeFileKind(rel);
				if (kind === "list") out.push([rel, null]);
				else if (kind === "read") out.push([rel, await this.adapter.read(full)]);
			}
		}
		out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
		return out;
	}

	/** Every note of the vault outside dot folders, and the schema. */
	async readVault(): Promise<NoteFile[]> {
		const { notes, schema } = await this.notes();
		const files = await Promise.all(
			notes.map(async (f): Promise<NoteFile> => ({ path: f.path, text: await this.app.vault.cachedRead(f), mtime: f.stat.mtime })),
		);
		if (schema) files.push(schema);
		return files;
	}

	/** As readVault, each note listed with its size and mtime (Obsidian's own
	 * index: no file is read), the schema read: the engine says which notes to
	 * read (`EngineApi.toRead`, then `readNotes`). */
	async listVault(): Promise<(NoteFile | NoteListed)[]> {
		const { notes, schema } = await this.notes();
		const files: (NoteFile | NoteListed)[] = notes.map((f) => ({ path: f.path, size: f.stat.size, mtime: f.stat.mtime }));
		if (schema) files.push(schema);
		return files;
	}

	/** The texts of notes listVault listed, as readVault reads them; `gone`:
	 * those no longer in the vault. One that cannot be read is in neither (see
	 * host.ts `readNotes`). */
	async readNotes(paths: string[]): Promise<{ files: NoteFile[]; gone: string[] }> {
		const files: NoteFile[] = [];
		const gone: string[] = [];
		for (let at = 0; at < paths.length; at += READ_BATCH) {
			// Obsidian's main thread gets a turn between batches: reads that end at
			// once (cached) would otherwise all settle in one task.
			if (at > 0) await new Promise((r) => window.setTimeout(r, 0));
			await Promise.all(
				paths.slice(at, at + READ_BATCH).map(async (path) => {
					const f = this.file(path);
					if (!f) return void gone.push(path);
					const text = await this.app.vault.cachedRead(f).catch(() => undefined);
					if (text !== undefined) files.push({ path, text, mtime: f.stat.mtime });
				}),
			);
		}
		return { files, gone };
	}

	/** The vault's notes outside dot folders and links (each link warned of), and
	 * the schema's text. */
	private async notes(): Promise<{ notes: TFile[]; schema: NoteFile | null }> {
		const linked = await this.links.scan();
		this.warnings = [...linked].sort().map(
			(l) => `${l} is a symbolic link: left out; the engine reads and writes only the vault's own files and folders, never through links`,
		);
		const notes = this.app.vault
			.getFiles()
			.filter((f) => (f.extension === "md" || isBase(f.path)) && wanted(f.path) && underLink(f.path, linked) === null);
		const read = underLink(METASTORE, linked) === null ? await this.read(METASTORE) : null;
		return { notes, schema: read ? { path: METASTORE, ...read } : null };
	}

	private hasGit: boolean | null = null;

	/** Whether git is pulling, rebasing or merging in the vault (link repair waits). */
	async gitBusy(): Promise<boolean> {
		this.hasGit ??= await this.adapter.exists(".git");
		if (!this.hasGit) return false;
		for (const m of GIT_AT_WORK) {
			if (await this.adapter.exists(`.git/${m}`)) return true;
		}
		return false;
	}
}
