// One engine per vault (DESIGN.md), by the binary's lock file (bridge/src/lock.rs):
// on desktop the plugin's engine holds the vault. It names itself in
// `.datanotes/lock` and answers, on a loopback port, the calls that `datanotes call`
// and `datanotes mcp` forward to the engine holding the vault: the same route,
// token and status codes as `datanotes serve`, so the binary needs no second way.
// When a live `serve` or `mcp` holds the vault already, the plugin sends its own
// calls there (Forwarded) and opens no engine.

import type * as Http from "node:http";
import type * as Net from "node:net";
import type { FileSystem } from "./host";
import type { Outcome, ToolCall } from "./types";

/** The lock and the owner's token, as store files (paths relative to `.datanotes/`). */
export const LOCK = "lock";
export const TOKEN = "token";

/** The headers by which `datanotes mcp` names its client and session (bridge/src/forward.rs). */
const MCP_CLIENT = "x-datanotes-mcp-client";
const MCP_SESSION = "x-datanotes-mcp-session";

/** The largest arguments accepted, as the binary's HTTP API (bytes). */
const MAX_BODY = 64 << 20;

const ROUTE = /^\/datanotes\/operations\/([A-Za-z0-9_.-]+)\/?$/;

export interface Lock {
	format: number;
	pid: number;
	address: string;
	url: string;
	started_at: string;
}

export function parseLock(text: string | null): Lock | null {
	if (!text) return null;
	try {
		const v = JSON.parse(text) as Partial<Lock>;
		return typeof v.pid === "number" && typeof v.address === "string" ? (v as Lock) : null;
	} catch {
		return null;
	}
}

export interface DoorOptions {
	http: typeof Http;
	fs: FileSystem;
	/** Runs an operation on the plugin's engine, as `actor`. */
	call: (op: string, args: unknown, actor: string) => Promise<Outcome>;
	/** Records a forwarded MCP tool call in the change feed. */
	record: (call: ToolCall) => Promise<void>;
	/** This process, as the lock names it. */
	pid: number;
	now: () => number;
	/** 64 hex digits from a strong source, for a token made here. */
	newToken: () => string;
	/** Makes a store file readable by its owner only (chmod 600), where files have modes. */
	ownerOnly: (path: string) => Promise<void>;
}

export interface Door {
	/** http://127.0.0.1:PORT */
	url: string;
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

/** Compares without an early exit, so the time taken tells nothing of the token. */
function same(a: string, b: string): boolean {
	let diff = a.length ^ b.length;
	for (let i = 0; i < Math.max(a.length, b.length); i++) diff |= (a.charCodeAt(i) || 0) ^ (b.charCodeAt(i) || 0);
	return diff === 0;
}

function header(req: Http.IncomingMessage, name: string): string | null {
	const v = req.headers[name];
	return typeof v === "string" && v !== "" ? v : null;
}

function send(res: Http.ServerResponse, status: number, body: unknown): void {
	const text = JSON.stringify(body);
	res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) });
	res.end(text);
}

function body(req: Http.IncomingMessage): Promise<string | null> {
	return new Promise((resolve, reject) => {
		const chunks: Buffer[] = [];
		let size = 0;
		// Past the limit the rest is read and dropped, so that the refusal reaches the caller.
		req.on("data", (c: Buffer) => {
			size += c.length;
			if (size <= MAX_BODY) chunks.push(c);
		});
		req.on("end", () => resolve(size > MAX_BODY ? null : Buffer.concat(chunks).toString("utf8")));
		req.on("error", reject);
	});
}

/** Listens on a loopback port, then claims the lock. Refuses when another live
 * engine holds the vault (`alive` decides). */
export async function openDoor(o: DoorOptions, alive: (l: Lock) => Promise<boolean>): Promise<Door> {
	const held = parseLock(await o.fs.readStore(LOCK));
	if (held && held.pid !== o.pid && (await alive(held))) {
		throw new Error(`the vault is held by process ${held.pid} at ${held.url}`);
	}
	const token = await ownerToken(o);
	const server = o.http.createServer((req, res) => {
		answer(o, token, req, res).catch((e: unknown) => {
			if (!res.headersSent) send(res, 500, { ok: false, error: String(e) });
		});
	});
	await new Promise<void>((resolve, reject) => {
		server.once("error", reject);
		server.listen(0, "127.0.0.1", () => resolve());
	});
	const port = (server.address() as { port: number }).port;
	const address = `127.0.0.1:${port}`;
	const url = `http://${address}`;
	const lock: Lock = { format: 1, pid: o.pid, address, url, started_at: new Date(o.now()).toISOString() };
	await o.fs.writeStore({ path: LOCK, text: JSON.stringify(lock) });
	return {
		url,
		close: async () => {
			const closed = new Promise<void>((resolve) => server.close(() => resolve()));
			// Idle keep-alive connections would hold the server open.
			server.closeAllConnections();
			await closed;
			if (parseLock(await o.fs.readStore(LOCK))?.pid === o.pid) await o.fs.writeStore({ path: LOCK, text: "", delete: true });
		},
	};
}

async function answer(o: DoorOptions, token: string, req: Http.IncomingMessage, res: Http.ServerResponse): Promise<void> {
	const path = (req.url ?? "").split("?")[0];
	const op = ROUTE.exec(path)?.[1];
	if (!op || req.method !== "POST") {
		send(res, 404, { ok: false, error: `no route ${req.method} ${path}: POST /datanotes/operations/<operation>/` });
		return;
	}
	const given = (req.headers.authorization ?? "").replace(/^Bearer\s+/i, "");
	if (!same(given, token)) {
		send(res, 401, { ok: false, op, error: "a token is needed: the owner's, from .datanotes/token" });
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
	const out = await o.call(op, args, client ? `owner/${client}` : "owner");
	send(res, out.http, out.answer);
	// A tool call of an MCP client is recorded as serve records it.
	if (client) {
		const ok = out.status === "done";
		await o.record({
			tool: op,
			args,
			ok,
			duration_ms: Math.max(0, Math.round(o.now() - started)),
			value: ok ? out.answer : (out.answer?.error ?? out.answer),
			served_by: "engine",
			actor: { credential: "owner", client, session: header(req, MCP_SESSION) },
		});
	}
}

/** The outcome of an HTTP status and answer (the binary's mapping, reversed). */
export function httpOutcome(http: number, answer: unknown): Outcome {
	const status =
		http >= 200 && http < 300 ? "done" : http === 400 ? "bad_input" : http === 409 ? "refused" : http === 503 ? "rolled_back" : "internal";
	return { status, http, answer, store: [], log: [], deliveries: [] };
}

export type Post = (url: string, body: string, headers: Record<string, string>) => Promise<{ status: number; text: string }>;

/** The engine that holds the vault, reached as `datanotes call` reaches it. */
export class Forwarded {
	constructor(
		readonly lock: Lock,
		private readonly token: string,
		private readonly post: Post,
	) {}

	async call(name: string, args: unknown): Promise<Outcome> {
		const url = `${this.lock.url}/datanotes/operations/${encodeURIComponent(name)}/`;
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

/** Whether the process a lock names runs, is not this one, and answers at its
 * address (as the binary decides it). */
export function alive(net: typeof Net, l: Lock, self: number): Promise<boolean> {
	if (l.pid === self) return Promise.resolve(false);
	try {
		process.kill(l.pid, 0);
	} catch (e) {
		// EPERM: it runs, as another user.
		if ((e as { code?: string }).code !== "EPERM") return Promise.resolve(false);
	}
	const cut = l.address.lastIndexOf(":");
	const bare = l.address.slice(0, cut).replace(/^\[|\]$/g, "");
	// An unspecified address (0.0.0.0, ::) is reached on loopback.
	const host = bare === "0.0.0.0" ? "127.0.0.1" : bare === "::" ? "::1" : bare;
	const port = Number(l.address.slice(cut + 1));
	return new Promise((resolve) => {
		const s = net.connect({ host, port, timeout: 500 });
		const done = (ok: boolean) => {
			s.destroy();
			resolve(ok);
		};
		s.once("connect", () => done(true));
		s.once("error", () => done(false));
		s.once("timeout", () => done(false));
	});
}
