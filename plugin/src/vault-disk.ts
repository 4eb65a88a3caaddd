// The vault's folder on disk, as the desktop has it (mobile has none): its path,
// its symbolic links, its id in lock proofs, and owner-only store files.

import { type App, FileSystemAdapter, Platform } from "obsidian";
import { type VaultId, vaultIdOf } from "./door";
import { ObsidianFileSystem } from "./fs";
import { STORE_DIR } from "./host";
import { type Links, NO_LINKS, nodeLinks } from "./links";
import { nodeModule } from "./node-modules";

export class VaultDisk {
	constructor(private readonly app: App) {}

	/** The vault's folder (desktop), or null. */
	basePath(): string | null {
		const adapter = this.app.vault.adapter;
		return adapter instanceof FileSystemAdapter ? adapter.getBasePath() : null;
	}

	/** The vault and its store as the engine's host reads and writes them (fs.ts). */
	fileSystem(): ObsidianFileSystem {
		return new ObsidianFileSystem(this.app, (path) => this.ownerOnly(path), this.links());
	}

	/** On desktop, the vault's symbolic links as the disk has them (links.ts). */
	links(): Links {
		const base = this.basePath();
		const nodeFs = nodeModule<typeof import("node:fs")>("fs");
		if (base === null || !nodeFs) return NO_LINKS;
		return nodeLinks(nodeFs, base);
	}

	/** On desktop, this vault as lock proofs name it (door.ts `vaultIdOf`). */
	vaultId(): VaultId {
		const base = this.basePath();
		const nodeFs = nodeModule<typeof import("node:fs")>("fs");
		if (base === null || !nodeFs) return { path: "", store: "" };
		return vaultIdOf(nodeFs, Platform.isWin ? "win32" : "other", base);
	}

	/** On desktop, makes a store file readable by its owner alone (chmod 600). */
	async ownerOnly(path: string): Promise<void> {
		const base = this.basePath();
		const nodeFs = nodeModule<typeof import("node:fs")>("fs");
		if (base === null || !nodeFs) return;
		await nodeFs.promises.chmod(`${base}/${STORE_DIR}/${path}`, 0o600);
	}
}
