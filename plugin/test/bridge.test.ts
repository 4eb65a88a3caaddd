// The bridge the plugin runs (issue 13, point 2), against the real binary: the
// plugin's host and door on a vault folder on disk (as in Obsidian on desktop),
// and `datanotes serve --bridge` started, watched, restarted and stopped by
// Bridge. Every call through the bridge is made by the plugin's engine.

import * as childProcess from "node:child_process";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as http from "node:http";
import * as net from "node:net";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { NodeFileSystem } from "../../sdk/src/disk";
import { nodeDoor } from "../../sdk/src/local";
import { Setting } from "obsidian";
import * as mocks from "obsidian-test-mocks/obsidian";
import { bridgeRows, bridgeStatus } from "../src/bridge-settings";
import { DEFAULT_SETTINGS, type PluginSettings } from "../src/settings";
import { Bridge, type BridgeOptions, type BridgeState, findBinary, stateText } from "../src/bridge";
import type { Door } from "../src/door";
import { loadEngine, openEngine } from "../src/engine";
import { Host } from "../src/host";
import wasmBytes from "../wasm/datanotes_core_bg.wasm";
import DatanotesPlugin from "../src/main";
import { post, startFilms } from "./plugin-harness";

const BIN = process.env.DATANOTES_BIN ?? resolve("target/debug/datanotes");
const VERSION = (JSON.parse(readFileSync("manifest.json", "utf8")) as { version: string }).version;
const CHARADE = "datanotes/main/public/film/Charade.md";

let dir = "";
let host: Host;
let door: Door;
let token = "";
const bridges: Bridge[] = [];

function bridgeOn(o: Partial<BridgeOptions> & { settings?: PluginSettings } = {}): Bridge {
	const b = new Bridge({
		cp: childProcess,
		binary: () => ({ path: o.settings?.agentBinary || BIN }),
		vault: dir,
		port: () => 0,
		version: VERSION,
		env: process.env,
		setTimer: (fn, ms) => setTimeout(fn, ms) as unknown as number,
		clearTimer: (id) => clearTimeout(id),
		now: () => Date.now(),
		...o,
	});
	bridges.push(b);
	return b;
}

/** The first state that `ok` accepts (the current one included). */
function until(b: Bridge, ok: (s: BridgeState) => boolean, ms = 15000): Promise<BridgeState> {
	return new Promise((done, fail) => {
		if (ok(b.state())) return done(b.state());
		const timer = setTimeout(() => fail(new Error(`still ${JSON.stringify(b.state())}`)), ms);
		const stop = b.onState((s) => {
			if (!ok(s)) return;
			clearTimeout(timer);
			stop();
			done(s);
		});
	});
}

function alive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch {
		return false;
	}
}

/** A program's stdout, without blocking this process (the bridge answers meanwhile). */
function run(cmd: string, args: string[]): Promise<string> {
	return new Promise((done, fail) => {
		childProcess.execFile(cmd, args, { encoding: "utf8", timeout: 30000 }, (e, stdout, stderr) => (e ? fail(new Error(`${e.message}\n${stderr}`)) : done(stdout)));
	});
}

function get(url: string): Promise<{ status: number; text: string }> {
	return new Promise((done, fail) => {
		http.get(url, { agent: false }, (res) => {
			let text = "";
			res.on("data", (c: Buffer) => (text += c.toString()));
			res.on("end", () => done({ status: res.statusCode ?? 0, text }));
		}).on("error", fail);
	});
}

beforeAll(async () => {
	dir = mkdtempSync(join(tmpdir(), "datanotes-bridge-"));
	execFileSync(BIN, ["init", "--vault", dir, "--example", "films"]);
	const fs = new NodeFileSystem(dir);
	await loadEngine(wasmBytes);
	const engine = openEngine(await fs.readVault(), await fs.listStore(), Date.now());
	host = new Host(engine, fs, { warn: () => undefined, sleep: (ms) => new Promise((r) => setTimeout(r, ms)) });
	await host.open();
	door = await nodeDoor(fs, host, false);
	token = readFileSync(join(dir, ".datanotes/token"), "utf8").trim();
});

afterAll(async () => {
	for (const b of bridges) await b.stop();
	await door?.close();
	await host?.close();
	rmSync(dir, { recursive: true, force: true });
});

describe("the bridge the plugin runs", () => {
	test("it starts attached to the plugin's engine, serves every route, and stops", async () => {
		const b = bridgeOn();
		const seen: string[] = [];
		b.onState((x) => seen.push(x.kind));
		await b.start();
		const s = await until(b, (x) => x.kind === "running");
		expect(seen).toEqual(["off", "starting", "running"]);
		const url = (s as { url: string }).url;
		expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
		expect(stateText(s, Date.now())).toBe(`Running at ${url} (MCP at ${url}/mcp).`);

		// The same answers as the plugin's engine gives itself.
		const read = { table: "film", where: { rating: { gte: 5 } }, columns: ["title"] };
		const through = await post(`${url}/datanotes/operations/select_rows/`, token, read);
		expect(through.status).toBe(200);
		expect(JSON.parse(through.text)).toEqual((await host.call("select_rows", read)).answer);
		const refused = await post(`${url}/datanotes/operations/update_row/`, token, { table: "film", path: CHARADE, set: { rating: 9 } });
		expect(refused.status).toBe(409);
		expect((await post(`${url}/datanotes/operations/describe_database/`, "wrong", {})).status).toBe(401);
		expect(JSON.parse((await get(`${url}/datanotes/openapi.json`)).text).openapi).toMatch(/^3\./);

		// The long poll answers with the write the plugin's engine makes meanwhile.
		const head = (JSON.parse((await post(`${url}/datanotes/operations/list_changes/`, token, { limit: 1 })).text) as { head: number }).head;
		const polled = post(`${url}/datanotes/operations/list_changes/`, token, { since: head, wait_ms: 20000 });
		await new Promise((r) => setTimeout(r, 300));
		const t0 = Date.now();
		await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 4 } });
		const page = JSON.parse((await polled).text) as { events: { path: string; actor: unknown }[] };
		expect(Date.now() - t0).toBeLessThan(10000);
		expect(page.events.map((e) => e.path)).toEqual([CHARADE]);

		const pid = b.pid() as number;
		await b.stop();
		expect(b.state().kind).toBe("off");
		expect(alive(pid)).toBe(false);
		await expect(post(`${url}/datanotes/operations/describe_database/`, token, {})).rejects.toThrow();
	});

	test("through the bridge, MCP clients and named tokens keep their names as actors", async () => {
		const b = bridgeOn();
		await b.start();
		const url = ((await until(b, (x) => x.kind === "running")) as { url: string }).url;
		// The official MCP client, in a node process of its own (this one runs happy-dom).
		const script = `
			import { Client } from "@modelcontextprotocol/sdk/client/index.js";
			import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
			const mcp = new Client({ name: "bridge-test-agent", version: "1" });
			await mcp.connect(new StreamableHTTPClientTransport(new URL(${JSON.stringify(`${url}/mcp`)}), { requestInit: { headers: { Authorization: "Bearer ${token}" } } }));
			const tools = (await mcp.listTools()).tools.map((t) => t.name);
			const wrote = await mcp.callTool({ name: "update_row", arguments: { table: "film", path: ${JSON.stringify(CHARADE)}, set: { rating: 3 } } });
			console.log(JSON.stringify({ tools, isError: wrote.isError ?? false }));
			await mcp.close();`;
		const out = JSON.parse(await run(process.execPath, ["--input-type=module", "-e", script])) as { tools: string[]; isError: boolean };
		expect(out.tools).toContain("select_rows");
		expect(out.isError).toBe(false);
		const last = (await host.call("list_migrations", { limit: 1 })).answer as { migrations: { by: string }[] };
		expect(last.migrations[0].by).toBe("owner/bridge-test-agent");
		const calls = (await host.call("list_changes", { kinds: ["tool_call"], limit: 5000 })).answer as { events: unknown[] };
		expect(calls.events.at(-1)).toMatchObject({ kind: "tool_call", call: { tool: "update_row", ok: true }, actor: { client: "bridge-test-agent" } });

		// A named token made in the settings (tokens.json): its name is the actor.
		const added = await run(BIN, ["token", "add", "--vault", dir, "agent-two"]);
		const named = added.split(/\s+/).find((w) => /^[0-9a-f]{64}$/.test(w)) as string;
		const w = await post(`${url}/datanotes/operations/update_row/`, named, { table: "film", path: CHARADE, set: { rating: 5 } });
		expect(w.status).toBe(200);
		const by = (await host.call("list_migrations", { limit: 1 })).answer as { migrations: { by: string }[] };
		expect(by.migrations[0].by).toBe("agent-two");
		await b.stop();
	});

	test("a bridge that dies is started again after a back-off", async () => {
		const b = bridgeOn();
		await b.start();
		await until(b, (x) => x.kind === "running");
		const first = b.pid() as number;
		process.kill(first, "SIGKILL");
		const failed = await until(b, (x) => x.kind === "failed");
		expect(failed).toMatchObject({ kind: "failed", error: "datanotes serve ended (signal SIGKILL)" });
		const retryAt = (failed as { retryAt: number }).retryAt;
		expect(retryAt - Date.now()).toBeGreaterThan(0);
		expect(retryAt - Date.now()).toBeLessThanOrEqual(1000);
		expect(stateText(failed, Date.now())).toMatch(/^Failed: datanotes serve ended \(signal SIGKILL\)\. Trying again in 1 s\.$/);
		await until(b, (x) => x.kind === "running");
		expect(b.pid()).not.toBe(first);
		await b.stop();
	});

	test("a taken port fails with the binary's own words, and is tried again", async () => {
		const taken = net.createServer();
		await new Promise<void>((r) => taken.listen(0, "127.0.0.1", () => r()));
		const port = (taken.address() as net.AddressInfo).port;
		const b = bridgeOn({ port: () => port });
		await b.start();
		const s = await until(b, (x) => x.kind === "failed");
		expect(s.kind === "failed" && s.lines.join("\n")).toContain(`cannot listen on 127.0.0.1:${port}`);
		expect(s.kind === "failed" && s.retryAt).toBeGreaterThan(0);
		await b.stop();
		taken.close();
	});

	test("another version, a missing binary, no vault holder: refused, not retried", async () => {
		const other = bridgeOn({ version: "9.9.9" });
		await other.start();
		expect(other.state()).toMatchObject({ kind: "failed", retryAt: null });
		expect(stateText(other.state(), 0)).toBe(`Failed: ${BIN} is datanotes ${VERSION}, and this plugin is 9.9.9: install datanotes 9.9.9, or choose a binary of that version.`);

		const missing = bridgeOn({ binary: () => ({ path: "/nowhere/datanotes" }) });
		await missing.start();
		expect(missing.state()).toMatchObject({ kind: "failed", retryAt: null });
		expect(stateText(missing.state(), 0)).toMatch(/^Failed: \/nowhere\/datanotes does not run \(.*ENOENT.*\): check the path in the setting/);

		// A file that is not executable.
		const plain = join(mkdtempSync(join(tmpdir(), "datanotes-noexec-")), "datanotes");
		writeFileSync(plain, "#!/bin/sh\necho datanotes 0.1.0\n", { mode: 0o644 });
		const noexec = bridgeOn({ binary: () => ({ path: plain }) });
		await noexec.start();
		expect(noexec.state()).toMatchObject({ kind: "failed", retryAt: null });
		expect(stateText(noexec.state(), 0)).toMatch(/does not run \(.*EACCES.*\): check the path in the setting/);
		rmSync(dirname(plain), { recursive: true, force: true });

		const none = bridgeOn({ binary: () => ({ error: "datanotes was not found on the PATH" }) });
		await none.start();
		expect(none.state()).toEqual({ kind: "failed", error: "datanotes was not found on the PATH", lines: [], retryAt: null });

		// A vault no engine holds: the bridge never opens it itself.
		const empty = mkdtempSync(join(tmpdir(), "datanotes-bridge-empty-"));
		execFileSync(BIN, ["init", "--vault", empty, "--example", "films"]);
		const orphan = bridgeOn({ vault: empty });
		await orphan.start();
		const s = await until(orphan, (x) => x.kind === "failed");
		expect(s.kind === "failed" && s.lines.join("\n")).toContain("no engine holds");
		expect(existsSync(join(empty, ".datanotes/lock"))).toBe(false);
		await orphan.stop();
		rmSync(empty, { recursive: true, force: true });
	});

	test("the settings turn it on and off and show its state as it changes; the status bar too", async () => {
		const settings = { ...DEFAULT_SETTINGS };
		const b = bridgeOn({ settings, port: () => settings.agentPort });
		let saved = 0;
		const el = document.createElement("div");
		document.body.appendChild(el);
		const copied: string[] = [];
		const rows = bridgeRows({
			bridge: b,
			settings,
			save: async () => void saved++,
			found: () => "/usr/local/bin/datanotes",
			ownerToken: async () => token,
			copy: async (t) => void copied.push(t),
		});
		expect(rows.map((r) => r.name)).toEqual(["Serve agents over HTTP", "Datanotes binary", "Port", "State", "MCP over HTTP configuration"]);
		const drawn = rows.map((r) => {
			const setting = new Setting(el).setName(r.name).setDesc(r.desc);
			r.render(setting);
			return setting;
		});
		const toggle = (drawn[0] as unknown as { components: { onClick(): void }[] }).components[0];
		const bar = document.createElement("div");
		document.body.appendChild(bar);
		const unsubscribe = bridgeStatus(bar, b);
		const state = () => el.querySelector("[class^='datanotes-bridge-']")?.textContent;
		expect(state()).toBe("Stopped.");
		expect(bar.style.display).toBe("none");
		const [binary, port] = Array.from(el.querySelectorAll("input")).filter((i) => i.type !== "checkbox");
		expect(binary.placeholder).toBe("/usr/local/bin/datanotes");

		// The port first (saved; nothing starts while it is off), then on.
		port.value = "0";
		port.dispatchEvent(new Event("change"));
		expect(settings.agentPort).toBe(DEFAULT_SETTINGS.agentPort);
		const free = net.createServer();
		await new Promise<void>((r) => free.listen(0, "127.0.0.1", () => r()));
		const freePort = (free.address() as net.AddressInfo).port;
		await new Promise((r) => free.close(r));
		port.value = String(freePort);
		port.dispatchEvent(new Event("change"));
		expect(settings.agentPort).toBe(freePort);
		expect(b.state().kind).toBe("off");
		toggle.onClick();
		await until(b, (x) => x.kind === "running");
		expect(settings.serveAgents).toBe(true);
		expect(saved).toBeGreaterThan(0);
		expect(state()).toBe(`Running at http://127.0.0.1:${freePort} (MCP at http://127.0.0.1:${freePort}/mcp).`);
		expect(bar.textContent).toBe("Agents: HTTP");
		expect(bar.style.display).not.toBe("none");
		// The MCP configuration for an HTTP client: the running bridge's /mcp and the token.
		(el.querySelector("button") as HTMLButtonElement).click();
		await new Promise((r) => setTimeout(r, 20));
		expect(JSON.parse(copied[0])).toEqual({
			mcpServers: { datanotes: { type: "http", url: `http://127.0.0.1:${freePort}/mcp`, headers: { Authorization: `Bearer ${token}` } } },
		});

		// A bad binary: the state says so, with its words.
		binary.value = "/nowhere/datanotes";
		binary.dispatchEvent(new Event("change"));
		await until(b, (x) => x.kind === "failed");
		expect(settings.agentBinary).toBe("/nowhere/datanotes");
		expect(state()).toMatch(/^Failed: \/nowhere\/datanotes does not run/);
		expect(bar.textContent).toBe("Agents: failed");

		toggle.onClick();
		await until(b, (x) => x.kind === "off");
		expect(settings.serveAgents).toBe(false);
		expect(state()).toBe("Stopped.");
		expect(bar.style.display).toBe("none");
		unsubscribe();
		el.remove();
		bar.remove();
	});

	test("a token revoked while it runs is refused at once; the plugin's engine gone: 503 with the way out", async () => {
		const b = bridgeOn();
		await b.start();
		const url = ((await until(b, (x) => x.kind === "running")) as { url: string }).url;
		const added = await run(BIN, ["token", "add", "--vault", dir, "short-lived"]);
		const named = added.split(/\s+/).find((w) => /^[0-9a-f]{64}$/.test(w)) as string;
		expect((await post(`${url}/datanotes/operations/describe_database/`, named, {})).status).toBe(200);
		await run(BIN, ["token", "revoke", "short-lived", "--vault", dir]);
		expect((await post(`${url}/datanotes/operations/describe_database/`, named, {})).status).toBe(401);

		// The plugin unloads (its door closes first): nothing is done, and the caller is told why.
		await door.close();
		const gone = await post(`${url}/datanotes/operations/update_row/`, token, { table: "film", path: CHARADE, set: { rating: 2 } });
		expect(gone.status).toBe(503);
		const answer = JSON.parse(gone.text) as { error: string; hint: string };
		expect(answer.error).toMatch(/nothing was done$/);
		expect(answer.hint).toContain("start it again");
		expect(readFileSync(join(dir, CHARADE), "utf8")).not.toContain("\nrating: 2\n");
		await b.stop();
	});

	test("the plugin starts it once its engine is open when the setting is on, shows it, and stops it when it unloads", async () => {
		const nodeRequire = createRequire(import.meta.url);
		const w = window as Window & { require?: (id: string) => unknown };
		w.require = (id: string) => nodeRequire(id);
		vi.spyOn(DatanotesPlugin.prototype, "loadData").mockResolvedValue({ serveAgents: true, agentBinary: BIN, agentPort: 0 });
		try {
			const { plugin } = startFilms();
			await plugin.whenReady();
			const b = plugin.bridge as Bridge;
			expect(b).not.toBeNull();
			// The mocks' vault has no folder on disk: no engine holds it there, and the bridge never opens it.
			const failed = await until(b, (x) => x.kind === "failed");
			expect(failed.kind === "failed" && failed.lines.join("\n")).toContain("no engine holds /mock-vault");
			const items = mocks.Plugin.fromOriginalType2__(plugin).statusBarItems__ as HTMLElement[];
			const bar = items.find((i) => i.classList.contains("datanotes-bridge-status")) as HTMLElement;
			expect(bar.textContent).toBe("Agents: failed");
			plugin.unload();
			await until(b, (x) => x.kind === "off");
			expect(b.pid()).toBeNull();
		} finally {
			delete w.require;
			vi.restoreAllMocks();
		}
	});

	test("the binary is found on the PATH, then where installers put it", () => {
		const bin = mkdtempSync(join(tmpdir(), "datanotes-path-"));
		writeFileSync(join(bin, "datanotes"), "");
		const runnable = (p: string) => p === join(bin, "datanotes") || p === "/home/a/.cargo/bin/datanotes";
		expect(findBinary(`/usr/bin:${bin}`, "/home/a", false, runnable)).toBe(join(bin, "datanotes"));
		expect(findBinary("/usr/bin", "/home/a", false, runnable)).toBe("/home/a/.cargo/bin/datanotes");
		expect(findBinary("/usr/bin", undefined, false, runnable)).toBeNull();
		rmSync(bin, { recursive: true, force: true });
	});
});
