// One engine per vault (DESIGN.md), by the binary's lock file (bridge/src/lock.rs):
// on desktop the plugin's engine holds the vault. It names itself in
// `.datanotes/lock` and answers, on a loopback port, the calls that `datanotes call`
// and `datanotes mcp` forward to the engine holding the vault: the same route,
// token and status codes as `datanotes serve`, so the binary needs no second way.
// When a live `serve` or `mcp` holds the vault already, the plugin sends its own
// calls there (Forwarded) and opens no engine.
//
// A lock file may come from git or a sync tool: anybody can plant one. A lock is
// believed only for a loopback address whose engine answers a fresh challenge
// with the proof only the owner's token can compute for this very vault
// (core/src/proof.rs: its real path and its store's identity, so that an engine
// of another vault served with the same token never answers for this one);
// nothing else is sent before that, and the door answers such challenges itself. Every
// request a web page could make (a foreign Origin, or a Host that DNS rebinding
// produces) gets 403, as from `datanotes serve` (bridge/src/origin.rs).

// Node's modules, as types only: the plugin reaches them through nodeModule
// (node-modules.ts) on desktop, never by an import that mobile would fail on.
type Crypto = typeof import("node:crypto");
type Http = typeof import("node:http");
type IncomingMessage = import("node:http").IncomingMessage;
type ServerResponse = import("node:http").ServerResponse;
import { credentialOf, namedTokens, TOKEN } from "./agents";
import type { FileSystem } from "./host";
import { errorOf, type Outcome, type ToolCall } from "./types";

/** The lock and the owner's token, as store files (paths relative to `.datanotes/`). */
export const LOCK = "lock";
export { TOKEN };

/** The headers by which `datanotes mcp` names its client and session (bridge/src/forward.rs). */
const MCP_CLIENT = "x-datanotes-mcp-client";
const MCP_SESSION = "x-datanotes-mcp-session";

/** The largest arguments accepted, as the binary's HTTP API (bytes). */
export const MAX_BODY = 4 << 20;

const ROUTE = /^\/datanotes\/operations\/([A-Za-z0-9_.-]+)\/?$/;
/** Where an engine answers a lock challenge, without a token. */
export const PROOF_ROUTE = "/datanotes/proof";

export interface Lock {
	format: number;
	pid: number;
	address: string;
	url: string;
	started_at: string;
	/** The device whose engine wrote it (device.ts). */
	device?: string;
}

/** The vault as a lock's proof names it (core/src/proof.rs `VaultId`): its real
 * path, and its store's `<device>:<inode>` ("" where the system gives none). */
export interface VaultId {
	path: string;
	store: string;
}

type NodeFs = typeof import("node:fs");

/** The vault at `base` as the binary names it (bridge/src/lock.rs `vault_id`):
 * symbolic links resolved, and the identity of its `.datanotes` folder, which
 * Windows does not give the binary (so neither side uses it there). */
export function vaultIdOf(fs: NodeFs, platform: string, base: string): VaultId {
	let path = base;
	try {
		path = fs.realpathSync.native(base);
	} catch {
		// Not there: named as given, and no proof of the binary's will match it.
	}
	let store = "";
	if (platform !== "win32") {
		try {
			const s = fs.lstatSync(`${path}/.datanotes`, { bigint: true });
			if (s.isDirectory()) store = `${s.dev}:${s.ino}`;
		} catch {
			// No store yet.
		}
	}
	return { path, store };
}

/** HMAC-SHA256(token, "datanotes lock proof\n<address>\n<vault path>\n<store
 * id>\n<nonce>") in hex, as core/src/proof.rs computes it. */
export function lockProof(crypto: Crypto, token: string, address: string, vault: VaultId, nonce: string): string {
	return crypto.createHmac("sha256", token).update(`datanotes lock proof\n${address}\n${vault.path}\n${vault.store}\n${nonce}`).digest("hex");
}

/** The lock's address as a loopback URL (0.0.0.0 and [::] are reached on
 * loopback); null for any other address: calls never leave the machine on a lock
 * file's word. Its `url` field is never read. */
export function loopbackUrl(l: Lock): string | null {
	const m = /^(\[[0-9a-fA-F:.]+\]|[0-9.]+):(\d{1,5})$/.exec(l.address);
	if (!m) return null;
	const host = m[1] === "0.0.0.0" ? "127.0.0.1" : m[1] === "[::]" ? "[::1]" : m[1];
	const loop = host === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
	return loop ? `http://${host}:${m[2]}` : null;
}

/** An origin of this machine: http or https, localhost or a loopback address. */
export function originOk(origin: string): boolean {
	const m = /^https?:\/\/([^/@?#]+)$/.exec(origin.trim());
	return m !== null && hostName(m[1]) !== null && isLoopbackName(hostName(m[1]) as string);
}

/** A Host that DNS rebinding cannot produce: an IP literal or localhost, but not
 * the unspecified address, through which a web page reaches a loopback port on
 * Linux and macOS with no rebinding at all (bridge/src/origin.rs). */
export function hostOk(host: string): boolean {
	const h = hostName(host.trim());
	return h !== null && (isLocalhost(h) || /^[0-9.]+$/.test(h) || h.includes(":")) && !isUnspecified(h);
}

/** 0.0.0.0 or [::], however written (`0`, `::`, `::ffff:0.0.0.0`). */
function isUnspecified(h: string): boolean {
	return /^[0.:]+$/.test(h.replace(/^::ffff:/, ""));
}

function hostName(authority: string): string | null {
	const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(:\d+)?$/.exec(authority);
	return m ? m[1].replace(/^\[|\]$/g, "").toLowerCase() : null;
}

function isLocalhost(h: string): boolean {
	return h === "localhost" || h.endsWith(".localhost");
}

function isLoopbackName(h: string): boolean {
	return isLocalhost(h) || h === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** Why a request is refused: a foreign web origin, or a rebound Host. */
export function webRefusal(origin: string | null, host: string | null): string | null {
	if (origin !== null && !originOk(origin)) {
		return `requests from the web origin ${origin} are refused: only this machine's pages (http://localhost, http://127.0.0.1) may call the engine. Call it from a program, which sends no Origin`;
	}
	if (host !== null && !hostOk(host)) {
		return `the Host ${host} is refused (it may be a DNS rebinding, or a web page reaching this machine through 0.0.0.0): reach the engine as 127.0.0.1 or localhost`;
	}
	return null;
}

export function parseLock(text: string | null, device?: string): Lock | null {
	if (!text) return null;
	try {
		const v = JSON.parse(text) as Partial<Lock>;
		// A lock a sync tool brought from another device names no engine here.
		if (typeof v.device === "string" && device !== undefined && v.device !== device) return null;
		return typeof v.pid === "number" && typeof v.address === "string" ? (v as Lock) : null;
	} catch {
		return null;
	}
}

export interface DoorOptions {
	http: Http;
	fs: FileSystem;
	/** Runs an operation on the plugin's engine, as `actor`. */
	call: (op: string, args: unknown, actor: string) => Promise<Outcome>;
	/** Records a forwarded MCP tool call in the change feed. */
	record: (call: ToolCall) => Promise<void>;
	/** This process, as the lock names it. */
	pid: number;
	/** This device (device.ts): a lock of another device is none here. */
	device?: string;
	now: () => number;
	/** 64 hex digits from a strong source, for a token made here. */
	newToken: () => string;
	/** Makes a store file readable by its owner only (chmod 600), where files have modes. */
	ownerOnly: (path: string) => Promise<void>;
	/** For the proofs the door gives. */
	crypto: Crypto;
	/** The vault the proofs name (`vaultIdOf`), asked at each challenge. */
	vault: () => VaultId;
	/** True while the person has turned the door off in the settings: the port
	 * then answers only challenges, so the tools find that this engine holds the
	 * vault (and open no second one), and every call is refused. */
	shut?: () => boolean;
	/** How long a client may take to send a request's head, and the whole request
	 * (as serve: 10 s and 70 s), before the door cuts it off. */
	waits?: { headMs: number; requestMs: number };
	/** Lets the process end while the door is open (a script under node that
	 * never closes its client); Obsidian keeps its own. */
	unref?: boolean;
}

/** The refusal of a call while the door is turned off. */
export const DOOR_SHUT =
	"Obsidian holds this vault, and Datanotes' setting \"Let tools on this computer use the vault while Obsidian runs\" is off: turn it on (Settings, Datanotes), or quit Obsidian so that the tools open the vault themselves";

export const WAITS = { headMs: 10_000, requestMs: 70_000 };

export interface Door {
	/** http://127.0.0.1:PORT */
	url: string;
	/** Reads the owner's token again (after it was regenerated). */
	reloadToken(): Promise<void>;
	/** Stops answering and removes the lock when it still names this process. */
	close(): Promise<void>;
}

/** The owner's token: the store's, or one made now, readable by its owner only
 * (as `datanotes serve` makes it). */
export async function ownerToken(o: DoorOptions): Promise<string> {
	const have = (await o.fs.readStore(TOKEN))?.trim();
	if (have) return have;
	const made = o.newToken();
	await o.fs.writeStore({ path: TOKEN, text: `${made}\n` });
	await o.ownerOnly(TOKEN);
	return made;
}

function header(req: IncomingMessage, name: string): string | null {
	const v = req.headers[name];
	return typeof v === "string" && v !== "" ? v : null;
}

function send(res: ServerResponse, status: number, body: unknown): void {
	const bytes = new TextEncoder().encode(JSON.stringify(body));
	res.writeHead(status, { "Content-Type": "application/json", "Content-Length": bytes.length });
	res.end(bytes);
}

function body(req: IncomingMessage): Promise<string | null> {
	return new Promise((resolve, reject) => {
		const chunks: Uint8Array[] = [];
		let size = 0;
		// Past the limit the rest is read and dropped, so that the refusal reaches the caller.
		req.on("data", (c: Uint8Array) => {
			size += c.length;
			if (size <= MAX_BODY) chunks.push(c);
		});
		req.on("end", () => {
			if (size > MAX_BODY) return resolve(null);
			const all = new Uint8Array(size);
			let at = 0;
			for (const c of chunks) {
				all.set(c, at);
				at += c.length;
			}
			resolve(new TextDecoder().decode(all));
		});
		req.on("error", reject);
	});
}

/** Listens on a loopback port, then claims the lock. Refuses when another live
 * engine holds the vault (its lock answers a challenge, given the owner's token). */
export async function openDoor(o: DoorOptions, ask: (l: Lock, token: string) => Promise<Answer>): Promise<Door> {
	let token = await ownerToken(o);
	const held = parseLock(await o.fs.readStore(LOCK), o.device);
	if (held && held.pid !== o.pid && holds(await ask(held, token))) {
		throw new Error(`the vault is held by process ${held.pid} at ${loopbackUrl(held) ?? held.address}`);
	}
	let address = "";
	const waits = o.waits ?? WAITS;
	// Node checks the waits every connectionsCheckingInterval (30 s by default), so a
	// half-sent request would outlive its wait by that much.
	const limits = {
		headersTimeout: waits.headMs,
		requestTimeout: waits.requestMs,
		connectionsCheckingInterval: Math.min(1000, waits.headMs),
	};
	const server = o.http.createServer(limits, (req, res) => {
		answer(o, token, address, req, res).catch((e: unknown) => {
			if (!res.headersSent) send(res, 500, { ok: false, error: String(e) });
		});
	});
	await new Promise<void>((resolve, reject) => {
		server.once("error", reject);
		server.listen(0, "127.0.0.1", () => resolve());
	});
	if (o.unref) server.unref();
	const port = (server.address() as { port: number }).port;
	address = `127.0.0.1:${port}`;
	const url = `http://${address}`;
	const lock: Lock = { format: 1, pid: o.pid, address, url, started_at: new Date(o.now()).toISOString(), device: o.device };
	await o.fs.writeStore({ path: LOCK, text: JSON.stringify(lock) });
	return {
		url,
		reloadToken: async () => {
			token = await ownerToken(o);
		},
		close: async () => {
			const closed = new Promise<void>((resolve) => server.close(() => resolve()));
			// Idle keep-alive connections would hold the server open.
			server.closeAllConnections();
			await closed;
			if (parseLock(await o.fs.readStore(LOCK))?.pid === o.pid) await o.fs.writeStore({ path: LOCK, text: "", delete: true });
		},
	};
}

/** The credential a request's bearer token is (the owner, or a named token of
 * tokens.json, read at each call so that a revoke applies at once), or null. */
async function credentialFor(o: DoorOptions, given: string, owner: string): Promise<string | null> {
	const sha256 = (t: string) => o.crypto.createHash("sha256").update(t).digest("hex");
	const named = await namedTokens({ fs: o.fs, sha256, newToken: o.newToken, ownerOnly: o.ownerOnly, now: o.now }).catch(() => []);
	return credentialOf(given, owner, named, sha256);
}

async function answer(o: DoorOptions, token: string, address: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
	const refused = webRefusal(header(req, "origin"), header(req, "host"));
	if (refused) {
		send(res, 403, { ok: false, error: refused });
		return;
	}
	const [path, query] = (req.url ?? "").split("?");
	if (path === PROOF_ROUTE && req.method === "GET") {
		const nonce = new URLSearchParams(query ?? "").get("nonce") ?? "";
		const vault = o.vault();
		if (!/^[0-9a-fA-F]{32,128}$/.test(nonce)) send(res, 400, { ok: false, error: "send ?nonce= with 32 to 128 hex digits" });
		else send(res, 200, { proof: lockProof(o.crypto, token, address, vault, nonce), pid: o.pid, vault: vault.path, store: vault.store });
		return;
	}
	const op = ROUTE.exec(path)?.[1];
	if (!op || req.method !== "POST") {
		send(res, 404, { ok: false, error: `no route ${req.method} ${path}: POST /datanotes/operations/<operation>/` });
		return;
	}
	const given = (req.headers.authorization ?? "").replace(/^Bearer\s+/i, "");
	const credential = await credentialFor(o, given, token);
	if (credential === null) {
		send(res, 401, { ok: false, op, error: "a token is needed: the owner's (.datanotes/token), or a named one (Settings, Datanotes, or datanotes token add)" });
		return;
	}
	if (o.shut?.()) {
		send(res, 403, { ok: false, op, error: DOOR_SHUT });
		return;
	}
	const text = await body(req);
	if (text === null) {
		send(res, 413, { ok: false, op, error: `the arguments are over ${MAX_BODY} bytes` });
		return;
	}
	let args: unknown = {};
	if (text.trim() !== "") {
		try {
			args = JSON.parse(text);
		} catch (e) {
			send(res, 400, { ok: false, op, error: `the arguments are not JSON: ${String(e)}` });
			return;
		}
	}
	const client = header(req, MCP_CLIENT);
	const started = o.now();
	const out = await o.call(op, args, client ? `${credential}/${client}` : credential);
	send(res, out.http, out.answer);
	// A tool call of an MCP client is recorded as serve records it.
	if (client) {
		const ok = out.status === "ok";
		await o.record({
			tool: op,
			args,
			ok,
			duration_ms: Math.max(0, Math.round(o.now() - started)),
			value: ok ? out.answer : (errorOf(out.answer) ?? out.answer),
			served_by: "engine",
			actor: { credential, client, session: header(req, MCP_SESSION) },
		});
	}
}

/** The outcome of an HTTP status and answer (the binary's mapping, reversed). */
export function httpOutcome(http: number, answer: unknown): Outcome {
	const status =
		http >= 200 && http < 300 ? "ok" : http === 400 ? "bad_input" : http === 409 ? "refused" : http === 503 ? "rolled_back" : "internal";
	return { status, http, answer, store: [], log: [], deliveries: [] };
}

export type Post = (url: string, body: string, headers: Record<string, string>) => Promise<{ status: number; text: string }>;

/** The engine that holds the vault, reached as `datanotes call` reaches it: only
 * once `proves` said its lock is true. */
export class Forwarded {
	constructor(
		readonly lock: Lock,
		private readonly token: string,
		private readonly post: Post,
	) {}

	async call(name: string, args: unknown): Promise<Outcome> {
		const url = `${loopbackUrl(this.lock)}/datanotes/operations/${encodeURIComponent(name)}/`;
		const headers = { Authorization: `Bearer ${this.token}`, "Content-Type": "application/json" };
		try {
			const r = await this.post(url, JSON.stringify(args ?? {}), headers);
			let answer: unknown;
			try {
				answer = JSON.parse(r.text);
			} catch {
				answer = { ok: false, op: name, error: r.text };
			}
			return httpOutcome(r.status, answer);
		} catch (e) {
			const error = `the engine holding the vault (process ${this.lock.pid} at ${this.lock.url}) did not answer: ${String(e)}. Reload the plugin to open its own.`;
			return httpOutcome(500, { ok: false, op: name, error });
		}
	}
}

export type Get = (url: string) => Promise<{ status: number; text: string }>;

/** What the engine a lock names answered to a challenge: "proved" (it holds the
 * owner's token for this vault), "wrong" (it speaks the protocol with another
 * token: an engine served with DATANOTES_TOKEN, or an impostor), "elsewhere"
 * (it holds the token for another vault: not this one), "silent" (no such
 * process, no loopback address or no proof: a stale lock). As the binary
 * decides it. */
export type Answer = "proved" | "wrong" | "elsewhere" | "silent";

/** Whether the answer shows a live engine that another must not open beside. */
export function holds(a: Answer): boolean {
	return a === "proved" || a === "wrong";
}

/** This process: its id, and a way to ask whether another runs (Node's `process`). */
export interface Proc {
	pid: number;
	kill(pid: number, signal: number): unknown;
}

export async function challenge(crypto: Crypto, get: Get, l: Lock, token: string, self: Proc, vault: VaultId): Promise<Answer> {
	const base = loopbackUrl(l);
	if (l.pid === self.pid || base === null) return "silent";
	try {
		self.kill(l.pid, 0);
	} catch (e) {
		// EPERM: it runs, as another user.
		if ((e as { code?: string }).code !== "EPERM") return "silent";
	}
	const nonce = crypto.randomBytes(16).toString("hex");
	try {
		const r = await get(`${base}${PROOF_ROUTE}?nonce=${nonce}`);
		const said = JSON.parse(r.text) as { proof?: unknown; vault?: unknown; store?: unknown };
		const given = said.proof;
		if (typeof given !== "string") return "silent";
		const same = (want: string) =>
			given.length === want.length && crypto.timingSafeEqual(new TextEncoder().encode(given), new TextEncoder().encode(want));
		if (same(lockProof(crypto, token, l.address, vault, nonce))) return "proved";
		// The vault it says it holds: a proof over that one tells another vault's
		// engine (the same token) from an impostor.
		if (typeof said.vault !== "string" || typeof said.store !== "string") return "wrong";
		const theirs = { path: said.vault, store: said.store };
		const other = theirs.path !== vault.path || theirs.store !== vault.store;
		return other && same(lockProof(crypto, token, l.address, theirs, nonce)) ? "elsewhere" : "wrong";
	} catch {
		return "silent";
	}
}

/** A GET through node's http, with a time limit: what `proves` asks with. */
export function httpGet(http: Http, timeoutMs = 2000): Get {
	return (url) =>
		new Promise((done, fail) => {
			const req = http.get(url, { agent: false, timeout: timeoutMs }, (res) => {
				let text = "";
				res.setEncoding("utf8");
				res.on("data", (c: string) => {
					if (text.length < 4096) text += c;
				});
				res.on("end", () => done({ status: res.statusCode ?? 0, text }));
			});
			req.on("timeout", () => req.destroy(new Error("no answer in time")));
			req.on("error", fail);
		});
}
