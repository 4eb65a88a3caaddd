// The engine opened in process (local.ts), as the client (index.ts) sees it: a
// file of its own, so that type-checking local.ts needs no generated registry.

export interface OpenOptions {
	/** The vault folder to open in this process. */
	vault: string;
	/** The journal's `by` for this client's writes (default "sdk"). */
	actor?: string;
	/** Where the engine's warnings go (default: console.warn). */
	warn?: (line: string) => void;
}

/** The engine opened in this process (dist/local.js). */
export interface LocalEngine {
	/** Where `datanotes call`, `mcp` and a `serve` bridge reach it (loopback). */
	readonly url: string;
	call(name: string, args: unknown): Promise<{ http: number; answer: unknown }>;
	close(): Promise<void>;
}
