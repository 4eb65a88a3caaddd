// Which store files the engine reads at open: shared by the plugin's file system
// (fs.ts) and node's (sdk/src/disk.ts), as the binary decides (bridge/src/read.rs).

/** The store's files the engine reads at open; the log's files and the blobs
 * and the stored semantic index are listed only (the engine asks for those it
 * needs); the notes' cache is the host's to read at open (`notesCachePath`); the model (models/) is the host's to read, as bytes. tokens.json (hashes of
 * the binary's tokens) is none of the engine's business. */
export function storeFileKind(rel: string): "read" | "list" | "skip" {
	if (["log/", "blobs/", "semantic/", "cache/"].some((d) => rel.startsWith(d))) return "list";
	if (rel === "tokens.json") return "skip";
	// The engine keeps .gitignore naming the secret files (core/src/secrets.rs).
	if (rel === ".gitignore") return "read";
	return rel.endsWith(".json") || rel.endsWith(".jsonl") ? "read" : "skip";
}

/** A store file built again from the notes when it is lost, never owed after a
 * failed write (core/src/semantic/stored.rs `is_file`): the semantic index. */
export function derivedStoreFile(rel: string): boolean {
	return rel.startsWith("semantic/");
}

/** The notes' cache of a device (core/src/notecache.rs `path`), under the store. */
export function notesCachePath(device?: string): string {
	return device === undefined ? "cache/notes.jsonl" : `cache/notes.${device}.jsonl`;
}
