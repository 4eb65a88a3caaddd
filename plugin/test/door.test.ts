// The plugin's front door (door.ts) on the real wasm engine: the lock, the route,
// the token and the status codes of `datanotes serve`, and the binary's own
// `datanotes call` forwarding to it.

import { execFile } from "node:child_process";
import * as nodeFs from "node:fs";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import * as crypto from "node:crypto";
import * as http from "node:http";
import * as net from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import {
	type Answer,
	challenge,
	type Door,
	Forwarded,
	httpGet,
	LOCK,
	type Lock,
	lockProof,
	type VaultId,
	vaultIdOf,
	loopbackUrl,
	MAX_BODY,
	TOKEN,
	openDoor,
	parseLock,
	webRefusal,
} from "../src/door";
import type { Host } from "../src/host";
import { ans, CHARADE, openFilms } from "./engine";
import type { MemoryFs } from "./memfs";

const TOKEN_TEXT = "7".repeat(64);
/** A process other than the lock's: challenge() then asks the OS whether the lock's pid runs. */
const OTHER = { pid: -1, kill: (pid: number, signal: number) => process.kill(pid, signal) };
const BIN = process.env.DATANOTES_BIN ?? resolve(dirname(fileURLToPath(import.meta.url)), "../../target/debug/datanotes");
/** The vault the door's proofs name, for the tests on the memory file system. */
const FILMS_ID: VaultId = { path: "/vaults/films", store: "2049:77" };

/** The store files made owner-only, in order. */
let ownerOnly: string[] = [];

async function opened(
	pid = process.pid,
	held: Answer = "silent",
	waits?: { headMs: number; requestMs: number },
	vault: () => VaultId = () => FILMS_ID,
): Promise<{ host: Host; fs: MemoryFs; door: Door }> {
	const { host, fs } = await openFilms();
	ownerOnly = [];
	const door = await openDoor(
		{
			http,
			fs,
			call: (op, args, actor) => host.call(op, args, actor),
			record: (call) => host.recordToolCall(call),
			pid,
			now: () => Date.UTC(2026, 11, 2, 12),
			newToken: () => TOKEN_TEXT,
			ownerOnly: async (p) => {
				ownerOnly.push(p);
			},
			crypto,
			vault,
			waits,
		},
		async () => held,
	);
	return { host, fs, door };
}

/** An HTTP request through node's http (the test DOM's fetch would apply CORS). */
function request(url: string, method: string, headers: Record<string, string>, body = ""): Promise<{ status: number; text: string }> {
	return new Promise((done, fail) => {
		const req = http.request(url, { method, headers, agent: false }, (res) => {
			let text = "";
			res.setEncoding("utf8");
			res.on("data", (c: string) => {
				text += c;
			});
			res.on("end", () => done({ status: res.statusCode ?? 0, text }));
		});
		req.on("error", fail);
		req.end(body);
	});
}

async function post(door: Door, op: string, body: string, headers: Record<string, string> = {}) {
	const h = { Authorization: `Bearer ${TOKEN_TEXT}`, "Content-Type": "application/json", ...headers };
	const res = await request(`${door.url}/datanotes/operations/${op}/`, "POST", h, body);
	return { status: res.status, answer: JSON.parse(res.text) };
}

describe("front door", () => {
	test("names the plugin's engine in the lock and answers as datanotes serve does", async () => {
		const { fs, door } = await opened(4242);
		try {
			const lock = parseLock(fs.store.get(LOCK) ?? null);
			expect(lock).toMatchObject({ format: 1, pid: 4242, url: door.url, started_at: "2026-12-02T12:00:00.000Z" });
			expect(door.url).toBe(`http://${lock?.address}`);
			expect(lock?.address).toMatch(/^127\.0\.0\.1:\d+$/);
			expect(fs.store.get(TOKEN)).toBe(`${TOKEN_TEXT}\n`);
			expect(ownerOnly).toEqual([TOKEN]);
			expect(JSON.stringify(lock)).not.toContain(TOKEN_TEXT);

			const read = await post(door, "select_rows", JSON.stringify({ table: "film", limit: 1 }));
			expect(read.status).toBe(200);
			expect(ans(read).total).toBe(7);

			const before = fs.text(CHARADE);
			for (const auth of [{ Authorization: "" }, { Authorization: "Bearer nope" }]) {
				const r = await post(door, "update_row", JSON.stringify({ table: "film", path: CHARADE, set: { rating: 1 } }), auth);
				expect(r.status).toBe(401);
				expect(ans(r).error).toContain("token");
			}
			const bad = await post(door, "update_row", "{table: film}");
			expect(bad.status).toBe(400);
			expect(ans(bad).error).toContain("not JSON");
			const refused = await post(door, "update_row", JSON.stringify({ table: "film", path: CHARADE, set: { rating: 9 } }));
			expect(refused.status).toBe(409);
			expect(ans(refused).ok).toBe(false);
			expect(fs.text(CHARADE)).toBe(before);
			const get = await request(`${door.url}/datanotes/operations/select_rows/`, "GET", {});
			expect(get.status).toBe(404);

			// A forwarded MCP tool call is journaled as the owner's client.
			const write = await post(door, "update_row", JSON.stringify({ table: "film", path: CHARADE, set: { rating: 4 } }), {
				"x-datanotes-mcp-client": "agent-x",
				"x-datanotes-mcp-session": "s-1",
			});
			expect(write.status).toBe(200);
			expect(fs.text(CHARADE)).toContain("\nrating: 4\n");
			const listed = await post(door, "list_migrations", JSON.stringify({ limit: 1 }));
			expect(ans(listed).migrations[0]).toMatchObject({ migration_id: ans(write).migration_id, by: "owner/agent-x" });
			// ...and recorded in the change feed as a tool call, as serve records it.
			const feed = await post(door, "list_changes", JSON.stringify({ kinds: ["tool_call"] }));
			expect(ans(feed).events).toHaveLength(1);
			expect(ans(feed).events[0]).toMatchObject({
				kind: "tool_call",
				actor: { credential: "owner", client: "agent-x", session: "s-1" },
				call: { tool: "update_row", ok: true, served_by: "engine" },
			});
		} finally {
			await door.close();
		}
		expect(fs.store.has(LOCK)).toBe(false);
		await expect(request(`${door.url}/datanotes/operations/select_rows/`, "POST", {})).rejects.toThrow();
	});

	test("refuses a vault another live engine holds, and takes a stale lock over", async () => {
		const { host, fs } = await openFilms();
		fs.store.set(TOKEN, `${TOKEN_TEXT}\n`);
		const theirs = JSON.stringify({ format: 1, pid: 99, address: "127.0.0.1:1", url: "http://127.0.0.1:1", started_at: "" });
		fs.store.set(LOCK, theirs);
		const options = {
			http,
			fs,
			call: (op: string, args: unknown, actor: string) => host.call(op, args, actor),
			record: async () => undefined,
			pid: 4242,
			now: () => 0,
			newToken: () => "not used: the store has a token",
			ownerOnly: async () => undefined,
			crypto,
			vault: () => FILMS_ID,
		};
		for (const answer of ["proved", "wrong"] as const) {
			await expect(openDoor(options, async () => answer)).rejects.toThrow("the vault is held by process 99 at http://127.0.0.1:1");
		}
		expect(fs.store.get(LOCK)).toBe(theirs);
		const door = await openDoor(options, async () => "silent");
		expect(parseLock(fs.store.get(LOCK) ?? null)?.pid).toBe(4242);
		await door.close();
	});

	test("a lock a sync tool brought from another device is no lock here: never asked, taken over", async () => {
		const { host, fs } = await openFilms();
		fs.store.set(TOKEN, `${TOKEN_TEXT}\n`);
		const phone = { format: 1, pid: 99, address: "127.0.0.1:1", url: "http://127.0.0.1:1", started_at: "", device: "phone" };
		fs.store.set(LOCK, JSON.stringify(phone));
		expect(parseLock(JSON.stringify(phone), "laptop")).toBeNull();
		expect(parseLock(JSON.stringify(phone), "phone")?.pid).toBe(99);
		expect(parseLock(JSON.stringify({ ...phone, device: undefined }), "laptop")?.pid).toBe(99);
		const asked: number[] = [];
		const door = await openDoor(
			{
				http,
				fs,
				call: (op: string, args: unknown, actor: string) => host.call(op, args, actor),
				record: async () => undefined,
				pid: 4242,
				device: "laptop",
				now: () => 0,
				newToken: () => "not used: the store has a token",
				ownerOnly: async () => undefined,
				crypto,
				vault: () => FILMS_ID,
			},
			async (l) => (asked.push(l.pid), "proved"),
		);
		expect(asked).toEqual([]);
		expect(parseLock(fs.store.get(LOCK) ?? null, "laptop")).toMatchObject({ pid: 4242, device: "laptop" });
		await door.close();
	});

	test("the plugin forwards to the engine holding the vault, and says so when it is gone", async () => {
		const { fs, door } = await opened(4242);
		const lock = parseLock(fs.store.get(LOCK) ?? null) as Lock;
		const postJson = (url: string, body: string, headers: Record<string, string>) => request(url, "POST", headers, body);
		try {
			const there = new Forwarded(lock, TOKEN_TEXT, postJson);
			const read = await there.call("select_rows", { table: "film", columns: ["title"] });
			expect(read).toMatchObject({ status: "ok", http: 200 });
			expect(ans(read).total).toBe(7);
			const refused = await there.call("update_row", { table: "film", path: CHARADE, set: { rating: 9 } });
			expect(refused).toMatchObject({ status: "refused", http: 409 });
			expect(ans(refused).error).toContain("update_row refused");
			const wrong = await new Forwarded(lock, "nope", postJson).call("select_rows", { table: "film" });
			expect(wrong).toMatchObject({ status: "internal", http: 401 });
			// The holder's lock proves itself to another process with the token, never to its own.
			const get = httpGet(http);
			expect(await challenge(crypto, get, { ...lock, pid: process.pid }, TOKEN_TEXT, OTHER, FILMS_ID)).toBe("proved");
			expect(await challenge(crypto, get, { ...lock, pid: process.pid }, "another token", OTHER, FILMS_ID)).toBe("wrong");
			expect(await challenge(crypto, get, { ...lock, pid: process.pid }, TOKEN_TEXT, process, FILMS_ID)).toBe("silent");
			// The same token, another vault: that engine holds not this one.
			const books = { path: "/vaults/books", store: "2049:78" };
			expect(await challenge(crypto, get, { ...lock, pid: process.pid }, TOKEN_TEXT, OTHER, books)).toBe("elsewhere");
		} finally {
			await door.close();
		}
		expect(await challenge(crypto, httpGet(http), { ...lock, pid: process.pid }, TOKEN_TEXT, OTHER, FILMS_ID)).toBe("silent");
		const gone = await new Forwarded(lock, TOKEN_TEXT, postJson).call("select_rows", { table: "film" });
		expect(gone).toMatchObject({ status: "internal", http: 500 });
		expect(ans(gone).error).toContain("did not answer");
		expect(ans(gone).error).toContain("Reload the plugin");
	});

	test("a lock is believed only at loopback, after a proof; web pages are refused", async () => {
		// The same value as core/src/proof.rs's fixed test.
		const films = { path: "/home/ann/films", store: "2049:1234567" };
		expect(lockProof(crypto, "secret-token", "127.0.0.1:8765", films, "00112233445566778899aabbccddeeff")).toBe(
			"c8f97903ee98fa670dff7c2e361dba4e9a7ac778e9b62ae079c4302649df6b13",
		);
		const l = (address: string): Lock => ({ format: 1, pid: process.pid, address, url: "http://evil.example", started_at: "" });
		expect(loopbackUrl(l("0.0.0.0:8765"))).toBe("http://127.0.0.1:8765");
		expect(loopbackUrl(l("[::1]:9"))).toBe("http://[::1]:9");
		for (const far of ["10.0.0.5:80", "192.0.2.1:80", "evil.example:80", "127.0.0.1.evil.example:80", "[fe80::1]:80"]) {
			expect(loopbackUrl(l(far)), far).toBeNull();
			expect(await challenge(crypto, async () => ({ status: 200, text: "{}" }), l(far), TOKEN_TEXT, OTHER, FILMS_ID), far).toBe("silent");
		}
		// An impostor at loopback sees one GET with a nonce, and nothing else.
		const asked: string[] = [];
		const impostor = async (url: string) => {
			asked.push(url);
			return { status: 200, text: JSON.stringify({ proof: "00" }) };
		};
		expect(await challenge(crypto, impostor, l("127.0.0.1:9"), TOKEN_TEXT, OTHER, FILMS_ID)).toBe("wrong");
		// An impostor naming another vault with a proof it cannot make is no better.
		const naming = async () => ({ status: 200, text: JSON.stringify({ proof: "00", vault: "/vaults/books", store: "1:2" }) });
		expect(await challenge(crypto, naming, l("127.0.0.1:9"), TOKEN_TEXT, OTHER, FILMS_ID)).toBe("wrong");
		expect(asked).toHaveLength(1);
		expect(asked[0]).toMatch(/^http:\/\/127\.0\.0\.1:9\/datanotes\/proof\?nonce=[0-9a-f]{32}$/);
		expect(asked[0]).not.toContain(TOKEN_TEXT);
		expect(await challenge(crypto, async () => ({ status: 404, text: "no" }), l("127.0.0.1:9"), TOKEN_TEXT, OTHER, FILMS_ID)).toBe("silent");

		expect(webRefusal("https://evil.example", "127.0.0.1:1")).toContain("web origin");
		expect(webRefusal("null", null)).toContain("web origin");
		expect(webRefusal(null, "evil.example:80")).toContain("DNS rebinding");
		expect(webRefusal("http://localhost:3000", "localhost:1")).toBeNull();
		expect(webRefusal(null, "[::1]:8765")).toBeNull();
		for (const unspecified of ["0.0.0.0:8765", "0.0.0.0", "[::]:8765", "[::ffff:0.0.0.0]:8765"]) {
			expect(webRefusal(null, unspecified), unspecified).toContain("through 0.0.0.0");
		}
		expect(webRefusal(null, "10.0.0.2:8765")).toBeNull();

		const { door } = await opened(4242);
		try {
			const foreign: Record<string, string>[] = [{ Origin: "https://evil.example" }, { Origin: "null" }, { Host: "evil.example" }];
			for (const headers of foreign) {
				const r = await post(door, "select_rows", JSON.stringify({ table: "film" }), headers);
				expect(r.status, JSON.stringify(headers)).toBe(403);
			}
			const big = await post(door, "select_rows", JSON.stringify({ table: "film", pad: "x".repeat(MAX_BODY) }));
			expect(big.status).toBe(413);
			expect(MAX_BODY).toBe(4 << 20);
		} finally {
			await door.close();
		}
	});

	test.skipIf(!existsSync(BIN))("datanotes call forwards to the plugin's engine", async () => {
		const dir = mkdtempSync(join(tmpdir(), "datanotes-door-"));
		mkdirSync(join(dir, ".datanotes"));
		// The door's proofs name the folder the binary is given.
		const { fs, door } = await opened(process.pid, "silent", undefined, () => vaultIdOf(nodeFs, process.platform, dir));
		try {
			// The binary reads the lock and the token where the vault's store is.
			for (const f of [LOCK, TOKEN]) writeFileSync(join(dir, ".datanotes", f), fs.store.get(f) ?? "");
			const env = { ...process.env };
			delete env.DATANOTES_TOKEN;
			const args = JSON.stringify({ table: "film", path: CHARADE, set: { rating: 2 } });
			// Not spawnSync: this process must stay free to answer the forwarded call.
			const r = await new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
				execFile(BIN, ["call", "--vault", dir, "update_row", args], { env, timeout: 30_000 }, (err, stdout, stderr) =>
					done({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
				);
			});
			expect(r.code, r.stderr).toBe(0);
			expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, op: "update_row" });
			// The plugin's engine made the write, in the plugin's vault; the folder has no notes at all.
			expect(fs.text(CHARADE)).toContain("\nrating: 2\n");
			expect(existsSync(join(dir, "datanotes"))).toBe(false);
		} finally {
			await door.close();
			rmSync(dir, { recursive: true, force: true });
		}
	});
});

describe("half-sent requests", () => {
	test("a head or a body that never ends is cut off, and others are answered meanwhile", async () => {
		const { door } = await opened(process.pid, "silent", { headMs: 300, requestMs: 600 });
		try {
			const port = Number(new URL(door.url).port);
			const closed = (first: string) =>
				new Promise<number>((done) => {
					const started = Date.now();
					const s = net.connect(port, "127.0.0.1", () => s.write(first));
					s.on("error", () => undefined);
					s.on("close", () => done(Date.now() - started));
					s.resume();
				});
			const head = closed("POST /datanotes/operations/describe_database/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
			const body = closed(
				`POST /datanotes/operations/describe_database/ HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN_TEXT}\r\nContent-Length: 100\r\n\r\n{"tab`,
			);
			expect((await post(door, "describe_database", "{}")).status).toBe(200);
			const [h, b] = await Promise.all([head, body]);
			expect(h).toBeLessThan(3000);
			expect(b).toBeLessThan(3000);
		} finally {
			await door.close();
		}
	});
});
