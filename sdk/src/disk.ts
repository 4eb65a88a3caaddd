// The vault and its store on node's file system, for the engine opened in
// process (local.ts) and the plugin's tests that run its host on a real folder.
// The rules are the binary's (bridge/src/read.rs and files.rs): notes outside dot folders,
// nothing read or written through a symbolic link, whole-file writes by a
// temporary file and a rename, notes trashed into the vault's `.trash/`, secret
// store files readable by their owner alone.

import { promises as fsp } from "node:fs";
import { dirname, join, sep } from "node:path";
import { GIT_AT_WORK } from "../../plugin/src/between-calls";
import { type FileRead, type FileSystem, STORE_DIR, wanted } from "../../plugin/src/host";
import { storeFileKind } from "../../plugin/src/store-files";
import { ChangedSince, type NoteFile, type StoreFile, type StoreWrite } from "../../plugin/src/types";

/** Store files that hold secrets (owner-only, as serve keeps them). */
const SECRET_FILE = /^(token|tokens\.json|webhooks(\.[a-z0-9]{1,16})?\.json)$/;
/** Folders never read: the store, Obsidian's settings, its trash, git. */
const SKIPPED = new Set([STORE_DIR, ".obsidian", ".trash", ".git"]);

function code(e: unknown): string | undefined {
	return (e as { code?: string }).code;
}

export class NodeFileSystem implements FileSystem {
	/** What the last readVault left out, and why. */
	warnings: string[] = [];

	constructor(readonly root: string) {}

	private full(path: string): string {
		if (path.split("/").some((c) => c === ".." || c === "") || path.startsWith("/")) {
			throw new Error(`${path} is not a path inside the vault`);
		}
		return join(this.root, ...path.split("/"));
	}

	/** The first symbolic link on the way to `path` (itself included), if any. */
	private async linkIn(path: string): Promise<string | null> {
		const parts = path.split("/");
		for (let i = 1; i <= parts.length; i++) {
			const rel = parts.slice(0, i).join("/");
			try {
				if ((await fsp.lstat(this.full(rel))).isSymbolicLink()) return rel;
			} catch (e) {
				if (code(e) === "ENOENT") return null;
				throw e;
			}
		}
		return null;
	}

	private async guard(path: string): Promise<void> {
		const link = await this.linkIn(path);
		if (link !== null) throw new Error(`${path} goes through the symbolic link ${link}: the engine never writes through links`);
	}

	async read(path: string): Promise<FileRead | null> {
		if ((await this.linkIn(path)) !== null) return null;
		return this.readPlain(path);
	}

	/** A file's text and mtime, the path known to hold no link (readVault's walk
	 * skips them: no second lstat of every folder on the way to each note). */
	private async readPlain(path: string): Promise<FileRead | null> {
		try {
			const full = this.full(path);
			const [text, stat] = await Promise.all([fsp.readFile(full, "utf8"), fsp.stat(full)]);
			return stat.isFile() ? { text, mtime: stat.mtimeMs } : null;
		} catch (e) {
			if (code(e) === "ENOENT" || code(e) === "EISDIR" || code(e) === "ENOTDIR") return null;
			throw e;
		}
	}

	async exists(path: string): Promise<boolean> {
		try {
			await fsp.lstat(this.full(path));
			return true;
		} catch {
			return false;
		}
	}

	/** A whole file, by a temporary file renamed over it: a crash leaves the old
	 * text or the new, never half. With `was`, the file is read just before: a
	 * write by another program in between is refused (the window is a read and a
	 * rename long). */
	async write(path: string, text: string, was?: string): Promise<void> {
		await this.guard(path);
		if (was !== undefined) {
			const now = await this.read(path);
			if (now?.text !== was) throw new ChangedSince(path);
		}
		await whole(this.full(path), text);
	}

	async rename(from: string, to: string): Promise<void> {
		await this.guard(from);
		await this.guard(to);
		await fsp.mkdir(dirname(this.full(to)), { recursive: true });
		await fsp.rename(this.full(from), this.full(to));
	}

	/** Into the vault's `.trash/`, as Obsidian's "move to Obsidian trash" does. */
	async trash(path: string): Promise<void> {
		await this.guard(path);
		let to = `.trash/${path}`;
		for (let i = 1; await this.exists(to); i++) to = `.trash/${path} ${i}`;
		await fsp.mkdir(dirname(this.full(to)), { recursive: true });
		await fsp.rename(this.full(path), this.full(to));
	}

	remove(path: string): Promise<void> {
		return this.trash(path);
	}

	async readStoreBytes(rel: string): Promise<Uint8Array | null> {
		const path = `${STORE_DIR}/${rel}`;
		await this.guard(path);
		try {
			return new Uint8Array(await fsp.readFile(this.full(path)));
		} catch (e) {
			if (code(e) === "ENOENT") return null;
			throw e;
		}
	}

	async readStore(rel: string): Promise<string | null> {
		const path = `${STORE_DIR}/${rel}`;
		await this.guard(path);
		try {
			return await fsp.readFile(this.full(path), "utf8");
		} catch (e) {
			if (code(e) === "ENOENT") return null;
			throw e;
		}
	}

	async writeStoreBytes(rel: string, bytes: Uint8Array): Promise<void> {
		const path = `${STORE_DIR}/${rel}`;
		await this.guard(path);
		await whole(this.full(path), bytes);
	}

	async writeStore(w: StoreWrite): Promise<void> {
		const path = `${STORE_DIR}/${w.path}`;
		await this.guard(path);
		const full = this.full(path);
		if (w.delete) {
			await fsp.rm(full, { force: true });
			return;
		}
		if (w.append) {
			await fsp.mkdir(dirname(full), { recursive: true });
			await fsp.appendFile(full, w.text);
		} else {
			await whole(full, w.text);
		}
		if (SECRET_FILE.test(w.path)) await this.ownerOnly(w.path);
	}

	/** Makes a store file readable by its owner alone (where files have modes). */
	async ownerOnly(rel: string): Promise<void> {
		if (process.platform !== "win32") await fsp.chmod(this.full(`${STORE_DIR}/${rel}`), 0o600);
	}

	/** Every store file: [path under .datanotes/, its text or null when only listed]. */
	async listStore(): Promise<StoreFile[]> {
		await this.guard(STORE_DIR);
		const out: StoreFile[] = [];
		const walk = async (rel: string): Promise<void> => {
			let entries;
			try {
				entries = await fsp.readdir(this.full(`${STORE_DIR}${rel}`), { withFileTypes: true });
			} catch (e) {
				if (code(e) === "ENOENT") return;
				throw e;
			}
			for (const d of entries) {
				const r = `${rel}/${d.name}`;
				if (d.isDirectory()) await walk(r);
				else if (d.isFile()) {
					const name = r.slice(1);
					const kind = storeFileKind(name);
					if (kind === "list") out.push([name, null]);
					else if (kind === "read") out.push([name, await fsp.readFile(this.full(`${STORE_DIR}/${name}`), "utf8")]);
				}
			}
		};
		await walk("");
		out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
		return out;
	}

	private hasGit: boolean | null = null;

	/** Whether git is pulling, rebasing or merging in the vault (link repair
	 * waits), as the plugin's fs.ts tells it. */
	async gitBusy(): Promise<boolean> {
		this.hasGit ??= await this.exists(".git");
		if (!this.hasGit) return false;
		for (const m of GIT_AT_WORK) {
			if (await this.exists(`.git/${m}`)) return true;
		}
		return false;
	}

	/** Every note of the vault outside dot folders, the schema and the Bases files;
	 * symbolic links are left out, with a warning. */
	async readVault(): Promise<NoteFile[]> {
		this.warnings = [];
		const out: NoteFile[] = [];
		const walk = async (rel: string): Promise<void> => {
			const entries = await fsp.readdir(rel === "" ? this.root : this.full(rel), { withFileTypes: true });
			for (const d of entries) {
				const path = rel === "" ? d.name : `${rel}/${d.name}`;
				if (d.isSymbolicLink()) {
					if (wanted(path) || !d.name.startsWith(".")) this.warnings.push(`${path} is a symbolic link: left out`);
				} else if (d.isDirectory()) {
					if (!SKIPPED.has(d.name) && !d.name.startsWith(".")) await walk(path);
				} else if (d.isFile() && wanted(path)) {
					const read = await this.readPlain(path);
					if (read) out.push({ path, ...read });
				}
			}
		};
		await walk("");
		return out;
	}
}

async function whole(full: string, text: string | Uint8Array): Promise<void> {
	await fsp.mkdir(dirname(full), { recursive: true });
	const tmp = `${dirname(full)}${sep}.${full.slice(dirname(full).length + 1)}.datanotes-tmp`;
	await fsp.writeFile(tmp, text);
	try {
		await fsp.rename(tmp, full);
	} catch (e) {
		await fsp.rm(tmp, { force: true });
		throw e;
	}
}
