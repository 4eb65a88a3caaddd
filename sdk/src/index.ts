// The Datanotes client: calls the engine that holds a vault (a `datanotes serve`,
// `datanotes mcp`, or Obsidian's plugin) over its loopback HTTP API, or any
// engine at a URL with a token, or opens the engine in this process (the wasm
// engine on node's file system: local.ts). Arguments are checked against the
// registry before anything is sent, with the engine's own words.

import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { lstat, readFile, realpath } from "node:fs/promises";
import { join } from "node:path";
import type { LocalEngine, OpenOptions } from "./local-types.js";
import { OPS, type OperationArgs, type OpInfo } from "./registry.js";

export { OPS, type OperationArgs, type OpInfo, type LocalEngine, type OpenOptions };
export type OperationName = keyof OperationArgs;
/** An operation's answer, as the reference documents it (docs/reference/operations.md). */
export type Answer = Record<string, unknown>;

/** A refusal, bad arguments, or a write rolled back: the engine's text, its hint and docs page. */
export class DatanotesError extends Error {
	constructor(
		readonly op: string,
		/** The HTTP status: 400 bad input, 401 token, 409 refused, 503 rolled back. */
		readonly status: number,
		message: string,
		readonly hint: string | undefined,
		/** The docs page the refusal names (https://datanotes.dev/…). */
		readonly docs: string | undefined,
		/** The whole answer (violations, conflicts, …). */
		readonly answer: unknown,
	) {
		super(message);
		this.name = "DatanotesError";
	}
}

export interface ConnectOptions {
	/** The vault whose engine to reach: its lock (.datanotes/lock) says where. */
	vault?: string;
	/** Or the engine's URL (http://127.0.0.1:PORT). */
	url?: string;
	/** The token: DATANOTES_TOKEN, or the vault's .datanotes/token, when absent. */
	token?: string;
	/** Sent as the MCP client's name, for the change feed's tool calls and the journal's actor. */
	client?: string;
}

/** Kept in a variable, so that the type checker leaves the bundled module alone. */
const LOCAL_MODULE = "./local.js";

export interface ChangesOptions {
	/** The first change to give: after this seq (0, or absent: from now). */
	since?: number;
	where?: Record<string, unknown>;
	kinds?: string[];
	table?: string;
	/** How long each poll waits for a change (ms, default 30000). */
	waitMs?: number;
	signal?: AbortSignal;
}

const PROOF_ROUTE = "/datanotes/proof";

/** The loopback URL a lock names, or null for any other address (never sent a token). */
function loopbackUrl(address: string): string | null {
	const m = /^(\[[0-9a-fA-F:.]+\]|[0-9.]+):(\d{1,5})$/.exec(address);
	if (!m) return null;
	const host = m[1] === "0.0.0.0" ? "127.0.0.1" : m[1] === "[::]" ? "[::1]" : m[1];
	const loop = host === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
	return loop ? `http://${host}:${m[2]}` : null;
}

/** Compares in constant time with node's own timingSafeEqual (the plugin's
 * door checks a proof the same way). */
function same(given: unknown, want: string): boolean {
	if (typeof given !== "string") return false;
	const [a, b] = [Buffer.from(given), Buffer.from(want)];
	return a.length === b.length && timingSafeEqual(a, b);
}

/** The vault as a lock's proof names it, as the binary and the plugin's door
 * name it (core/src/proof.rs): its real path and its store's `<device>:<inode>`
 * ("" on Windows, where the binary has none). */
async function vaultIdOf(vault: string): Promise<{ path: string; store: string }> {
	const path = await realpath(vault).catch(() => vault);
	if (process.platform === "win32") return { path, store: "" };
	const s = await lstat(join(path, ".datanotes"), { bigint: true }).catch(() => null);
	return { path, store: s?.isDirectory() ? `${s.dev}:${s.ino}` : "" };
}

async function readText(path: string): Promise<string | null> {
	try {
		return await readFile(path, "utf8");
	} catch {
		return null;
	}
}

export class DatanotesClient {
	private constructor(
		readonly url: string,
		private readonly token: string,
		private readonly client?: string,
		private readonly local?: LocalEngine,
	) {}

	/** Opens the engine in this process on `vault`, holding it as `datanotes mcp`
	 * does (refused while another engine holds it: connect then). close() ends it. */
	static async open(o: OpenOptions): Promise<DatanotesClient> {
		const { openLocal } = (await import(LOCAL_MODULE)) as { openLocal: (o: OpenOptions) => Promise<LocalEngine> };
		const engine = await openLocal(o);
		return new DatanotesClient(engine.url, "", undefined, engine);
	}

	/** Ends the engine opened in this process (its lock goes); nothing for a connection. */
	async close(): Promise<void> {
		await this.local?.close();
	}

	/** Connects to the engine that holds `vault` (after it proves, with a value only
	 * the token's holder can compute, that it holds the vault: no token or
	 * argument goes to a planted lock), or to `url`. */
	static async connect(o: ConnectOptions): Promise<DatanotesClient> {
		const envToken = process.env.DATANOTES_TOKEN?.trim() || undefined;
		if (o.url) return new DatanotesClient(o.url.replace(/\/+$/, ""), o.token ?? envToken ?? "", o.client);
		if (!o.vault) throw new Error("connect needs a vault folder or a url");
		const store = join(o.vault, ".datanotes");
		const lockText = await readText(join(store, "lock"));
		let lock: { pid?: number; address?: string } = {};
		try {
			lock = JSON.parse(lockText ?? "") as typeof lock;
		} catch {
			throw new Error(`no engine holds ${o.vault}: start one (datanotes serve --vault ${o.vault}), or open the vault in Obsidian`);
		}
		const url = loopbackUrl(lock.address ?? "");
		if (!url) throw new Error(`${join(store, "lock")} names ${lock.address ?? "no address"}, not a loopback address: nothing was sent`);
		const token = o.token ?? envToken ?? (await readText(join(store, "token")))?.trim() ?? "";
		if (!token) throw new Error(`no token: set DATANOTES_TOKEN or pass token (the owner's is in ${join(store, "token")})`);
		const nonce = randomBytes(16).toString("hex");
		// The proof names the vault (core/src/proof.rs): an engine of another vault
		// served with the same token proves nothing here.
		const vault = await vaultIdOf(o.vault);
		const expected = createHmac("sha256", token)
			.update(`datanotes lock proof\n${lock.address ?? ""}\n${vault.path}\n${vault.store}\n${nonce}`)
			.digest("hex");
		let proof: { proof?: unknown; pid?: number } = {};
		try {
			const r = await fetch(`${url}${PROOF_ROUTE}?nonce=${nonce}`);
			proof = (await r.json()) as typeof proof;
		} catch {
			throw new Error(`the engine named in ${join(store, "lock")} does not answer at ${url}: is it still running? (a stale lock is removed by the next engine that opens the vault)`);
		}
		if (!same(proof.proof, expected) || proof.pid !== lock.pid) {
			throw new Error(`the process at ${url} cannot prove it holds ${o.vault} with this token: nothing was sent`);
		}
		return new DatanotesClient(url, token, o.client);
	}

	/** Runs one operation; its answer, or a DatanotesError with the engine's text. */
	async call<K extends OperationName>(name: K, args?: OperationArgs[K]): Promise<Answer>;
	async call(name: string, args?: Record<string, unknown>): Promise<Answer>;
	async call(name: string, args: Record<string, unknown> = {}): Promise<Answer> {
		const refused = checkArgs(name, args);
		if (refused) throw refused;
		if (this.local) {
			const out = await this.local.call(name, args);
			return answerOf(name, out.http, out.answer as Answer);
		}
		const headers: Record<string, string> = { "Content-Type": "application/json", Authorization: `Bearer ${this.token}` };
		if (this.client) headers["X-Datanotes-Mcp-Client"] = this.client;
		const r = await fetch(`${this.url}/datanotes/operations/${name}/`, { method: "POST", headers, body: JSON.stringify(args) });
		const text = await r.text();
		let answer: Answer;
		try {
			answer = JSON.parse(text) as Answer;
		} catch {
			throw new DatanotesError(name, r.status, `${name}: the engine answered ${r.status} with no JSON: ${text.slice(0, 200)}`, undefined, undefined, text);
		}
		return answerOf(name, r.status, answer);
	}

	/** The change feed as an async iterator, long-polled (list_changes with wait_ms). */
	async *changes(o: ChangesOptions = {}): AsyncGenerator<Answer> {
		let since = o.since ?? (((await this.call("list_changes", { limit: 1 })).head as number | undefined) ?? 0);
		while (!o.signal?.aborted) {
			const args: Record<string, unknown> = { since, wait_ms: o.waitMs ?? 30_000, limit: 1000 };
			if (o.where) args.where = o.where;
			if (o.kinds) args.kinds = o.kinds;
			if (o.table) args.table = o.table;
			const page = await this.call("list_changes", args);
			for (const e of (page.events as Answer[] | undefined) ?? []) yield e;
			since = (page.last as number | undefined) ?? since;
		}
	}
}

/** The answer of a success; a DatanotesError for any other status. */
function answerOf(name: string, status: number, answer: Answer): Answer {
	if (status >= 200 && status < 300) return answer;
	const message = typeof answer?.error === "string" ? answer.error : JSON.stringify(answer);
	throw new DatanotesError(name, status, message, typeof answer?.hint === "string" ? answer.hint : undefined, docsOf(message), answer);
}

function docsOf(message: string): string | undefined {
	return /\nDocs: (\S+)/.exec(message)?.[1];
}

// ---- the engine's argument checks (core/src/ops/args.rs), with its words ----

/** The edit distance the engine's suggestions use (core/src/names.rs). */
function distance(a: string, b: string): number {
	const x = [...a];
	const y = [...b];
	let prev = Array.from({ length: y.length + 1 }, (_, i) => i);
	for (let i = 0; i < x.length; i++) {
		const cur = Array.from({ length: y.length + 1 }, () => i + 1);
		for (let j = 0; j < y.length; j++) cur[j + 1] = Math.min(prev[j] + (x[i] === y[j] ? 0 : 1), prev[j + 1] + 1, cur[j] + 1);
		prev = cur;
	}
	return prev[y.length];
}

function didYouMean(name: string, candidates: readonly string[]): string {
	const lower = name.toLowerCase();
	let best: [number, string] | null = null;
	for (const c of candidates) {
		const d = distance(lower, c.toLowerCase());
		if (best === null || d < best[0]) best = [d, c];
	}
	if (best === null) return "";
	const limit = Math.max(Math.floor(Math.max([...best[1]].length, [...name].length) / 2), 2);
	return best[0] <= limit ? ` (did you mean "${best[1]}"?)` : "";
}

/** JSON as serde_json writes it (keys sorted), for the engine's "not …" texts. */
function sortedJson(v: unknown): string {
	if (Array.isArray(v)) return `[${v.map(sortedJson).join(",")}]`;
	if (v !== null && typeof v === "object") {
		const o = v as Record<string, unknown>;
		return `{${Object.keys(o)
			.sort()
			.map((k) => `${JSON.stringify(k)}:${sortedJson(o[k])}`)
			.join(",")}}`;
	}
	return JSON.stringify(v);
}

function kindOf(v: unknown): string {
	const s = sortedJson(v);
	const chars = [...s];
	const shown = chars.length > 60 ? `${chars.slice(0, 57).join("")}…` : s;
	const kind =
		v === null ? "null" : typeof v === "boolean" ? "a boolean" : typeof v === "number" ? "a number" : typeof v === "string" ? "a string" : Array.isArray(v) ? "a list" : "an object";
	return `${kind} (${shown})`;
}

type Schema = OpInfo["inputSchema"]["properties"][string];

function tyName(s: Schema): string {
	if (s.anyOf) return "a string or a list of strings";
	switch (s.type) {
		case "string":
			return "a string";
		case "integer":
			return "an integer";
		case "boolean":
			return "true or false";
		case "object":
			return "an object";
		case "array":
			return s.items ? "a list of strings" : "a list";
		default:
			return "any value";
	}
}

function fits(s: Schema, v: unknown): boolean {
	const strings = (x: unknown) => Array.isArray(x) && x.every((i) => typeof i === "string");
	if (s.anyOf) return typeof v === "string" || strings(v);
	switch (s.type) {
		case "string":
			return typeof v === "string";
		case "integer":
			return typeof v === "number" && Number.isInteger(v);
		case "boolean":
			return typeof v === "boolean";
		case "object":
			return v !== null && typeof v === "object" && !Array.isArray(v);
		case "array":
			return s.items ? strings(v) : Array.isArray(v);
		default:
			return true;
	}
}

function badInput(op: string, reason: string, hint: string, docs = `reference/operations#${op}`): DatanotesError {
	const [path, anchor] = docs.split("#");
	const url = `https://datanotes.dev/${path}.md${anchor ? `#${anchor}` : ""}`;
	const text = `${op}: bad arguments — nothing was written:\n${reason}\nHint: ${hint}\nDocs: ${url} (offline: read_docs("${docs}"))`;
	return new DatanotesError(op, 400, text, hint, url, { ok: false, op, error: text, hint });
}

/** The engine's refusal of these arguments, or null when the registry accepts them. */
export function checkArgs(name: string, args: unknown): DatanotesError | null {
	const op = OPS.find((o) => o.name === name);
	if (!op) {
		return badInput(
			name,
			`unknown operation "${name}"${didYouMean(name, OPS.map((o) => o.name))}`,
			`The operations: ${OPS.map((o) => o.name).join(", ")}. read_docs("reference/operations") describes each; describe_database lists the tables.`,
			"reference/operations",
		);
	}
	const list = op.params.length === 0 ? "none" : op.params.join(", ");
	if (args === null || args === undefined) return null;
	if (typeof args !== "object" || Array.isArray(args)) {
		return badInput(name, `the arguments must be a JSON object, not ${kindOf(args)}`, `Send {"name": value, …} with these arguments: ${list}.`);
	}
	const map = args as Record<string, unknown>;
	for (const k of Object.keys(map).sort()) {
		const v = map[k];
		const s = op.inputSchema.properties[k];
		if (!s) return badInput(name, `unknown argument "${k}"${didYouMean(k, op.params)}`, `${name} takes: ${list}.`);
		const required = op.inputSchema.required.includes(k);
		if (v === null && !required) continue;
		if (!fits(s, v)) return badInput(name, `argument "${k}" must be ${tyName(s)}, not ${kindOf(v)}`, `${k}: ${s.description ?? ""}`);
	}
	for (const p of op.params.filter((x) => op.inputSchema.required.includes(x))) {
		if (map[p] === undefined || map[p] === null) {
			const s = op.inputSchema.properties[p];
			return badInput(name, `missing argument "${p}" (${tyName(s)})`, `${p}: ${s.description ?? ""}`);
		}
	}
	return null;
}
