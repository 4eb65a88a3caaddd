// The SDK (issue 13, point 4) against the real binary: DatanotesClient on a
// running `datanotes serve` (lock challenge, typed calls, refusals, checks made
// before sending in the engine's words, the change feed), engineTools() equal to
// `datanotes mcp`'s tool list, a custom MCP server built with it driven by the
// official MCP client, and `npm pack` installed into an empty folder, offline.
// Run by `npm test` after `node sdk/build.mjs`; DATANOTES_BIN names another binary.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { checkArgs, DatanotesClient, DatanotesError } from "../dist/index.js";
import { engineTools, registerEngineTools } from "../dist/mcp.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const bin = process.env.DATANOTES_BIN || path.join(root, "target/debug/datanotes");
const TOKEN = "a".repeat(64);
const cleanups = [];
const pick = (e) => ({ kind: e.kind, path: e.path, source: e.source });

/** The serve processes started, by vault. */
const children = new Map();
after(() => cleanups.forEach((c) => c()));

function tmp(name) {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), `datanotes-sdk-${name}-`));
	cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
	return dir;
}

function films(name) {
	const dir = tmp(name);
	execFileSync(bin, ["init", "--vault", dir, "--example", "films"]);
	return dir;
}

function serve(dir, env = { DATANOTES_TOKEN: TOKEN }, log = []) {
	return new Promise((resolve, reject) => {
		const child = spawn(bin, ["serve", "--vault", dir, "--listen", "127.0.0.1:0"], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
		child.stderr.on("data", (d) => log.push(String(d)));
		cleanups.push(() => child.kill("SIGKILL"));
		children.set(dir, child);
		let out = "";
		child.stdout.on("data", (d) => {
			out += d;
			const m = out.match(/serving .*? at (http:\/\/[^\s,]+)/);
			if (m) resolve(m[1]);
		});
		child.on("exit", (code) => reject(new Error(`serve exited (${code})`)));
	});
}

const dir = films("serve");
const base = await serve(dir);

function spawnedFor(vault) {
	return children.get(vault);
}

async function raw2(url, op, args) {
	const r = await fetch(`${url}/datanotes/operations/${op}/`, { method: "POST", headers: { Authorization: `Bearer ${TOKEN}` }, body: JSON.stringify(args) });
	return r.json();
}

/** A call sent as is, past the SDK's checks: the engine's own answer. */
async function raw(op, args) {
	const r = await fetch(`${base}/datanotes/operations/${op}/`, { method: "POST", headers: { Authorization: `Bearer ${TOKEN}` }, body: JSON.stringify(args) });
	return { status: r.status, answer: await r.json() };
}

test("connect finds the engine through the vault's lock, proves it, and calls typed operations", async () => {
	const client = await DatanotesClient.connect({ vault: dir, token: TOKEN });
	assert.equal(client.url, base);
	const rows = await client.call("select_rows", { table: "film", where: { rating: { gte: 5 } }, columns: ["title"] });
	assert.deepEqual(rows.rows.map((r) => r.title), ["Charade", "Metropolis"]);
	const written = await client.call("update_row", { table: "film", path: "datanotes/main/public/film/Charade.md", set: { rating: 4 } });
	assert.equal(written.ok, true);
	assert.match(written.migration_id, /update_row/);
});

test("a refusal is a DatanotesError with the engine's text, hint and docs page", async () => {
	const client = await DatanotesClient.connect({ url: base, token: TOKEN });
	await assert.rejects(client.call("insert_row", { table: "film", values: { title: "Charade", year: 1963 } }), (e) => {
		assert.ok(e instanceof DatanotesError);
		assert.equal(e.status, 409);
		assert.match(e.message, /^insert_row refused — nothing was written:/);
		assert.ok(e.hint && e.message.includes(`Hint: ${e.hint}`));
		assert.match(e.docs, /^https:\/\/datanotes\.dev\//);
		return true;
	});
	const wrong = await DatanotesClient.connect({ url: base, token: "b".repeat(64) });
	await assert.rejects(wrong.call("describe_database", {}), (e) => e instanceof DatanotesError && e.status === 401);
});

test("unknown operations and bad arguments are refused before sending, in the engine's words", async () => {
	const cases = [
		["selct_rows", { table: "film" }],
		["list_journal", {}],
		["select_rows", { tabel: "film" }],
		["select_rows", { table: 7 }],
		["select_rows", { table: "film", limit: "ten" }],
		["update_row", { table: "film", set: { rating: 4 } }],
		["update_row", { table: "film", path: null }],
		["select_rows", { table: "film", where: { a: [1, 2], b: "x".repeat(80) }, order_by: 5 }],
		["describe_database", []],
	];
	for (const [op, args] of cases) {
		const local = checkArgs(op, args);
		assert.ok(local instanceof DatanotesError, `${op} ${JSON.stringify(args)} passes the SDK's checks`);
		const engine = await raw(op, args);
		assert.equal(engine.status, 400, JSON.stringify(engine.answer));
		assert.equal(local.message, engine.answer.error, `${op} ${JSON.stringify(args)}`);
		assert.equal(local.hint, engine.answer.hint);
	}
	assert.equal(checkArgs("select_rows", { table: "film", order_by: ["-year"], limit: 3 }), null);
});

test("changes() gives the change feed as it happens", async () => {
	const client = await DatanotesClient.connect({ vault: dir, token: TOKEN });
	const controller = new AbortController();
	const feed = client.changes({ waitMs: 5000, signal: controller.signal });
	const next = feed.next();
	await new Promise((r) => setTimeout(r, 200));
	await client.call("update_row", { table: "film", path: "datanotes/main/public/film/Metropolis.md", set: { rating: 4 } });
	const { value } = await next;
	controller.abort();
	assert.equal(value.kind, "update");
	assert.equal(value.path, "datanotes/main/public/film/Metropolis.md");
	assert.deepEqual(value.changes.rating, { before: 5, after: 4 });
});

test("a planted lock gets neither the token nor the arguments", async () => {
	const planted = films("planted");
	const seen = [];
	const fake = http.createServer((req, res) => {
		seen.push(req.headers.authorization ?? null);
		res.end(JSON.stringify({ proof: "0".repeat(64), pid: 1 }));
	});
	await new Promise((r) => fake.listen(0, "127.0.0.1", r));
	cleanups.push(() => fake.close());
	const address = `127.0.0.1:${fake.address().port}`;
	fs.writeFileSync(path.join(planted, ".datanotes/lock"), JSON.stringify({ format: 1, pid: 1, address, url: `http://${address}` }));
	await assert.rejects(DatanotesClient.connect({ vault: planted, token: TOKEN }), /cannot prove it holds/);
	assert.deepEqual(seen, [null], "only the challenge, without a token");
	fs.writeFileSync(path.join(planted, ".datanotes/lock"), JSON.stringify({ format: 1, pid: 1, address: "10.0.0.8:80", url: "http://10.0.0.8" }));
	await assert.rejects(DatanotesClient.connect({ vault: planted, token: TOKEN }), /not a loopback address: nothing was sent/);
});

test("engineTools() are the tools datanotes mcp lists, and a custom MCP server serves them", async () => {
	const stdio = new Client({ name: "sdk-test", version: "1" });
	await stdio.connect(new StdioClientTransport({ command: bin, args: ["mcp", "--vault", films("mcp")], env: { ...process.env, DATANOTES_TOKEN: TOKEN } }));
	const listed = (await stdio.listTools()).tools;
	await stdio.close();
	const strip = (t) => JSON.parse(JSON.stringify({ name: t.name, title: t.title, description: t.description, inputSchema: t.inputSchema, annotations: t.annotations }));
	assert.deepEqual(engineTools().map(strip), listed.map(strip));

	// The README's custom server: the engine's tools, through the client, over MCP.
	const server = new Server({ name: "my-notes", version: "1" }, { capabilities: { tools: {} } });
	await registerEngineTools(server, await DatanotesClient.connect({ url: base, token: TOKEN }));
	const [a, b] = InMemoryTransport.createLinkedPair();
	await server.connect(a);
	const mcp = new Client({ name: "sdk-test", version: "1" });
	await mcp.connect(b);
	assert.equal((await mcp.listTools()).tools.length, engineTools().length);
	const read = await mcp.callTool({ name: "select_rows", arguments: { table: "person", where: { name: "Fritz Lang" } } });
	assert.equal(read.structuredContent.rows[0].born, 1890);
	const bad = await mcp.callTool({ name: "insert_row", arguments: { table: "film", values: {} } });
	assert.equal(bad.isError, true);
	assert.match(bad.content[0].text, /insert_row refused — nothing was written/);
	await mcp.close();
});

test("open() runs the engine in this process, holding the vault for the tools", async () => {
	const vault = films("open");
	await assert.rejects(DatanotesClient.open({ vault: path.join(vault, "missing") }), /missing is not a folder \(datanotes init --vault DIR makes one\)/);
	await assert.rejects(DatanotesClient.open({ vault: path.join(vault, "datanotes/metastore.yaml") }), /is not a folder/);
	const client = await DatanotesClient.open({ vault, actor: "my-script", warn: () => undefined });
	try {
		const rows = await client.call("select_rows", { table: "film", where: { rating: { gte: 5 } }, columns: ["title"] });
		assert.deepEqual(rows.rows.map((r) => r.title), ["Charade", "Metropolis"]);
		const written = await client.call("update_row", { table: "film", path: "datanotes/main/public/film/Charade.md", set: { rating: 4 } });
		assert.equal(written.ok, true);
		assert.match(fs.readFileSync(path.join(vault, "datanotes/main/public/film/Charade.md"), "utf8"), /\nrating: 4\n/);
		await assert.rejects(client.call("update_row", { table: "film", path: "datanotes/main/public/film/Charade.md", set: { rating: 9 } }), (e) => {
			assert.ok(e instanceof DatanotesError);
			assert.equal(e.status, 409);
			assert.match(e.message, /^update_row refused — nothing was written:/);
			return true;
		});

		// It holds the vault: the tools forward to it, a second open is refused, connect() reaches it.
		const lock = JSON.parse(fs.readFileSync(path.join(vault, ".datanotes/lock"), "utf8"));
		assert.equal(lock.pid, process.pid);
		assert.equal(`http://${lock.address}`, client.url);
		const viaCli = JSON.parse(execFileSync(bin, ["call", "--vault", vault, "list_migrations", '{"limit": 1}'], { encoding: "utf8" }));
		assert.equal(viaCli.migrations[0].by, "my-script");
		await assert.rejects(DatanotesClient.open({ vault }), /is open in this process already/);
		const other = spawn(process.execPath, ["--input-type=module", "-e", `import { DatanotesClient } from ${JSON.stringify(path.join(root, "sdk/dist/index.js"))}; await DatanotesClient.open({ vault: ${JSON.stringify(vault)} });`], { stdio: ["ignore", "ignore", "pipe"] });
		let otherErr = "";
		other.stderr.on("data", (d) => (otherErr += d));
		assert.equal(await new Promise((r) => other.on("exit", r)), 1);
		assert.match(otherErr, /is held by process \d+ at http:\/\/127\.0\.0\.1:\d+ .*DatanotesClient\.connect/);
		const connected = await DatanotesClient.connect({ vault });
		assert.equal((await connected.call("describe_database", {})).tables.length > 0, true);

		// A serve started on it is a bridge to it, long poll included.
		const token = fs.readFileSync(path.join(vault, ".datanotes/token"), "utf8").trim();
		const bridge = await serve(vault, { DATANOTES_TOKEN: "" });
		const head = (await client.call("list_changes", { limit: 1 })).head;
		const polled = fetch(`${bridge}/datanotes/operations/list_changes/`, {
			method: "POST",
			headers: { Authorization: `Bearer ${token}` },
			body: JSON.stringify({ since: head, wait_ms: 20000 }),
		}).then((r) => r.json());
		await new Promise((r) => setTimeout(r, 300));
		const t0 = Date.now();
		// A hand edit while it runs: the folder is watched, and the long poll answers with it.
		const metropolis = path.join(vault, "datanotes/main/public/film/Metropolis.md");
		fs.writeFileSync(metropolis, fs.readFileSync(metropolis, "utf8").replace("\nrating: 5\n", "\nrating: 3\n"));
		const page = await polled;
		assert.ok(Date.now() - t0 < 15000, "answered by the change, not the wait");
		assert.equal(page.events[0].path, "datanotes/main/public/film/Metropolis.md");
		assert.equal(page.events[0].source, "external");
		assert.deepEqual(page.events[0].changes.rating, { before: 5, after: 3 });
		// A note created by hand, then removed: an insert and a delete, as they happen.
		const feed = client.changes({ since: page.last, waitMs: 10000 });
		const made = path.join(vault, "datanotes/main/public/film/Brazil.md");
		fs.writeFileSync(made, "---\ntable: main.public.film\ntitle: Brazil\nyear: 1985\n---\n");
		assert.deepEqual(pick((await feed.next()).value), { kind: "insert", path: "datanotes/main/public/film/Brazil.md", source: "external" });
		fs.rmSync(made);
		assert.deepEqual(pick((await feed.next()).value), { kind: "delete", path: "datanotes/main/public/film/Brazil.md", source: "external" });
		await feed.return();
	} finally {
		await client.close();
	}
	assert.equal(fs.existsSync(path.join(vault, ".datanotes/lock")), false, "close() gives the vault back");
	const alone = JSON.parse(execFileSync(bin, ["call", "--vault", vault, "select_rows", '{"table": "film", "where": {"title": "Metropolis"}}'], { encoding: "utf8" }));
	assert.equal(alone.rows[0].rating, 3);
});

test("a call in process costs about what the native engine's does", async () => {
	const vault = films("cost");
	const log = [];
	const native = await serve(vault, { DATANOTES_TOKEN: TOKEN }, log);
	// 100 films: the seven of the diary and 93 more.
	const more = Array.from({ length: 93 }, (_, i) => ({ title: `Film ${i}`, year: 1930 + (i % 90) }));
	assert.equal((await raw2(native, "insert_rows", { table: "film", rows: more })).ok, true);
	const args = { table: "film", order_by: ["-year"], limit: 100 };
	// 20 calls to warm up, then 100 timed, on each side.
	for (let i = 0; i < 120; i++) await raw2(native, "select_rows", args);
	// serve logs each request's time inside the server: the native engine and JSON, no client.
	const timed = () => log.join("").split("\n").filter((l) => l.includes("/operations/select_rows/ 200"));
	for (let i = 0; i < 50 && timed().length < 120; i++) await new Promise((r) => setTimeout(r, 50));
	const served = timed().slice(20).map((l) => Number.parseFloat(/ ([\d.]+)ms$/.exec(l)[1]));
	const holder = spawnedFor(vault);
	holder.kill("SIGKILL");
	await new Promise((r) => holder.once("exit", r));
	const client = await DatanotesClient.open({ vault, warn: () => undefined });
	const times = [];
	try {
		for (let i = 0; i < 120; i++) {
			const t0 = performance.now();
			await client.call("select_rows", args);
			if (i >= 20) times.push(performance.now() - t0);
		}
	} finally {
		await client.close();
	}
	const p50 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
	const figures = { select_rows_native_server_p50_ms: p50(served), select_rows_in_process_p50_ms: Number(p50(times).toFixed(3)) };
	figures.ratio = Number((figures.select_rows_in_process_p50_ms / figures.select_rows_native_server_p50_ms).toFixed(2));
	console.log(`datanotes-bench ${JSON.stringify(figures)}`);
	assert.equal(served.length, 100);
});

test("npm pack installs into an empty folder, offline, and runs", () => {
	const packs = tmp("pack");
	const name = execFileSync("npm", ["pack", "--pack-destination", packs, path.join(root, "sdk")], { encoding: "utf8" }).trim().split("\n").pop();
	const app = tmp("app");
	fs.writeFileSync(path.join(app, "package.json"), JSON.stringify({ name: "app", version: "1.0.0", type: "module" }));
	execFileSync("npm", ["install", "--offline", "--no-audit", "--no-fund", path.join(packs, name)], { cwd: app, stdio: "ignore" });
	fs.writeFileSync(
		path.join(app, "main.js"),
		`import { DatanotesClient } from "datanotes";\nconst c = await DatanotesClient.connect({ vault: ${JSON.stringify(dir)}, token: ${JSON.stringify(TOKEN)} });\nconst a = await c.call("select_rows", { table: "film", limit: 1 });\nconsole.log(a.total);\n` +
			// The engine in process, from the installed package; the script ends without close().
			`const local = await DatanotesClient.open({ vault: ${JSON.stringify(films("pack-open"))} });\nconsole.log((await local.call("select_rows", { table: "person" })).total);\n`,
	);
	assert.deepEqual(execFileSync("node", ["main.js"], { cwd: app, encoding: "utf8", timeout: 30000 }).trim().split("\n"), ["7", "10"]);
});
