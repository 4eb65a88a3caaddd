// What Obsidian says changes in the vault: each note's change for the engine
// (between-calls.ts hands it over), and the schema's, after which the forms'
// tables and the property types are read again (not at every write). Both are
// registered once the layout is ready, so that the creates Obsidian fires for
// every file at load are not seen.

import { type Component, type TAbstractFile, TFile, type Vault } from "obsidian";
import type { Change } from "./between-calls";
import { METASTORE } from "./host";
import type { VaultEvent } from "./types";

/** Hands each created, modified, removed or renamed file to `saw`. */
export function watchVault(owner: Component, vault: Vault, saw: (c: Change) => void): void {
	const on = (kind: VaultEvent["kind"]) => (file: TAbstractFile, from?: string) => {
		if (!(file instanceof TFile)) return;
		saw(kind === "renamed" ? { kind, path: file.path, from } : { kind, path: file.path });
	};
	owner.registerEvent(vault.on("create", on("created")));
	owner.registerEvent(vault.on("modify", on("modified")));
	owner.registerEvent(vault.on("delete", on("removed")));
	owner.registerEvent(vault.on("rename", on("renamed")));
}

/** Calls `changed` when metastore.yaml is written (by the engine or by hand). */
export function watchSchema(owner: Component, vault: Vault, changed: () => void): void {
	const schema = (f: TAbstractFile) => {
		if (f.path === METASTORE) changed();
	};
	owner.registerEvent(vault.on("modify", schema));
	owner.registerEvent(vault.on("create", schema));
}
