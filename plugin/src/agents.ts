// Connecting an agent from Obsidian: the MCP configuration to paste into a
// client, and the vault's tokens as `datanotes token` keeps them (the owner's in
// .datanotes/token; named ones in .datanotes/tokens.json as SHA-256 hashes,
// never in clear; bridge/src/token.rs reads and writes the same files).

import type { FileSystem } from "./host";

/** The owner's token and the named ones, as store files (relative to `.datanotes/`). */
export const TOKEN = "token";
export const NAMED = "tokens.json";

/** A named token as tokens.json keeps it. */
export interface NamedToken {
	name: string;
	sha256: string;
	created_at: string;
}

/** What the token operations need of the machine. */
export interface TokenDeps {
	fs: Pick<FileSystem, "readStore" | "writeStore">;
	sha256: (text: string) => string;
	newToken: () => string;
	ownerOnly: (path: string) => Promise<void>;
	now: () => number;
}

/** The configuration an MCP client (Claude Desktop, Cursor, …) starts
 * `datanotes mcp` with; while Obsidian holds the vault, it reaches this engine. */
export function stdioConfig(vault: string, command = "datanotes"): string {
	return JSON.stringify({ mcpServers: { datanotes: { command, args: ["mcp", "--vault", vault] } } }, null, 2);
}

/** The configuration of an MCP client that speaks streamable HTTP, for the
 * bridge the plugin runs (bridge.ts): its /mcp, with the token in a header. */
export function httpConfig(url: string, token: string): string {
	return JSON.stringify({ mcpServers: { datanotes: { type: "http", url: `${url}/mcp`, headers: { Authorization: `Bearer ${token}` } } } }, null, 2);
}

/** The same rule as `datanotes token add`: 1 to 64 letters, digits, '.', '_' or '-'; not "owner". */
export function nameProblem(name: string): string | null {
	if (!/^[A-Za-z0-9._-]{1,64}$/.test(name)) {
		return `"${name}" is not a token name: use 1 to 64 letters, digits, '.', '_' or '-' (e.g. ci-bot)`;
	}
	if (name.toLowerCase() === "owner") {
		return `"${name}" names the owner's token (DATANOTES_TOKEN or .datanotes/token): pick another name`;
	}
	return null;
}

/** The named tokens (none when tokens.json is absent); an unreadable file is an error, never overwritten. */
export async function namedTokens(d: TokenDeps): Promise<NamedToken[]> {
	const text = await d.fs.readStore(NAMED);
	if (text === null) return [];
	let parsed: unknown;
	try {
		parsed = JSON.parse(text);
	} catch (e) {
		throw new Error(`.datanotes/${NAMED} cannot be read (${e instanceof Error ? e.message : String(e)}): fix or remove it`);
	}
	const list = (parsed as { tokens?: unknown } | null)?.tokens;
	if (!Array.isArray(list)) throw new Error(`.datanotes/${NAMED} cannot be read (no "tokens" list): fix or remove it`);
	return list.map((t) => {
		const o = t as Partial<NamedToken>;
		if (typeof o.name !== "string" || typeof o.sha256 !== "string") {
			throw new Error(`.datanotes/${NAMED} cannot be read (a token without its name or sha256): fix or remove it`);
		}
		return { name: o.name, sha256: o.sha256, created_at: typeof o.created_at === "string" ? o.created_at : "" };
	});
}

async function save(d: TokenDeps, list: NamedToken[]): Promise<void> {
	const tokens = list.map((t) => ({ name: t.name, sha256: t.sha256, created_at: t.created_at }));
	await d.fs.writeStore({ path: NAMED, text: `${JSON.stringify({ format: 1, tokens }, null, 2)}\n` });
	await d.ownerOnly(NAMED);
}

/** Adds a named token; answers the token itself, shown this once. */
export async function addToken(d: TokenDeps, name: string): Promise<string> {
	const problem = nameProblem(name);
	if (problem) throw new Error(problem);
	const list = await namedTokens(d);
	if (list.some((t) => t.name === name)) throw new Error(`a token named "${name}" exists already: revoke it first`);
	const token = d.newToken();
	list.push({ name, sha256: d.sha256(token), created_at: new Date(d.now()).toISOString() });
	await save(d, list);
	return token;
}

export async function revokeToken(d: TokenDeps, name: string): Promise<void> {
	const list = await namedTokens(d);
	const left = list.filter((t) => t.name !== name);
	if (left.length === list.length) throw new Error(`no token named "${name}"`);
	await save(d, left);
}

/** The owner's token (made when missing, as serve makes it). */
export async function ownerTokenOf(d: TokenDeps): Promise<string> {
	const have = (await d.fs.readStore(TOKEN))?.trim();
	if (have) return have;
	return regenerateOwner(d);
}

/** A new owner's token: every client holding the old one must be given this one. */
export async function regenerateOwner(d: TokenDeps): Promise<string> {
	const token = d.newToken();
	await d.fs.writeStore({ path: TOKEN, text: `${token}\n` });
	await d.ownerOnly(TOKEN);
	return token;
}

/** Which credential a bearer token is: "owner", a named token's name, or null.
 * Each comparison takes the same time wherever the first difference is. */
export function credentialOf(given: string, owner: string, named: NamedToken[], sha256: (t: string) => string): string | null {
	if (given !== "" && same(given, owner)) return "owner";
	if (given === "") return null;
	const hash = sha256(given);
	return named.find((t) => same(hash, t.sha256))?.name ?? null;
}

export function same(a: string, b: string): boolean {
	let diff = a.length ^ b.length;
	for (let i = 0; i < Math.max(a.length, b.length); i++) diff |= (a.charCodeAt(i) || 0) ^ (b.charCodeAt(i) || 0);
	return diff === 0;
}
