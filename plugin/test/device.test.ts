// This device's id (device.ts): kept where the binary keeps it, made once, and
// carried by the store files the engine writes, in this thread and in a worker.

import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { deviceFile, deviceId, deviceKey, keyFile, makeDeviceId, nodeDeviceStore, nodeKeyStore } from "../src/device";
import { loadEngine, openEngine } from "../src/engine";
import { Host } from "../src/host";
import { WorkerEngine, type WorkerLike } from "../src/worker-engine";
import type { Reply, Request } from "../src/worker-protocol";
import { serveRequests } from "../src/worker-serve";
import wasmBytes from "../wasm/datanotes_core_bg.wasm";
import { CHARADE, Clock, filmDiary } from "./engine";
import { MemoryFs } from "./memfs";

const dirs: string[] = [];
afterEach(() => {
	for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function tempState(): string {
	const d = fs.mkdtempSync(path.join(os.tmpdir(), "datanotes-device-"));
	dirs.push(d);
	return d;
}

const random = () => new Uint8Array([0, 1, 2, 3, 4, 5, 30, 31, 32, 255, 9]);

describe("the device id", () => {
	test("is kept in the binary's file, made once, the same for every later open", () => {
		const state = tempState();
		const proc = { env: { XDG_STATE_HOME: state, HOME: "/nowhere" }, platform: "linux" };
		expect(deviceFile(proc, path.join)).toBe(path.join(state, "datanotes", "device"));
		const store = nodeDeviceStore(fs, proc, path);
		expect(store).not.toBeNull();
		const id = deviceId(store!, random);
		expect(id).toBe("abcdef67a7");
		expect(fs.readFileSync(path.join(state, "datanotes", "device"), "utf8")).toBe("abcdef67a7\n");
		const again = deviceId(nodeDeviceStore(fs, proc, path)!, () => new Uint8Array(10).fill(3));
		expect(again).toBe(id);
		expect(fs.readdirSync(path.join(state, "datanotes"))).toEqual(["device"]);
	});

	test("its key is kept beside it, per id, readable by the owner alone, made once; it seals the journal entries the engine writes", async () => {
		const state = tempState();
		const proc = { env: { XDG_STATE_HOME: state }, platform: "linux", pid: 7 };
		expect(keyFile(proc, path.join, "laptop")).toBe(path.join(state, "datanotes", "key.laptop"));
		const key = deviceKey(nodeKeyStore(fs, proc, path, "laptop")!, () => new Uint8Array(32).fill(171));
		expect(key).toEqual(new Uint8Array(32).fill(171));
		const file = path.join(state, "datanotes", "key.laptop");
		expect(fs.readFileSync(file, "utf8")).toBe(`${"ab".repeat(32)}\n`);
		expect(fs.statSync(file).mode & 0o777).toBe(0o600);
		expect(deviceKey(nodeKeyStore(fs, proc, path, "laptop")!, () => new Uint8Array(32).fill(1))).toEqual(key);
		expect(deviceKey({ read: () => "not hex", write: (k) => k }, random)).toBeNull();
		expect(deviceKey({ read: () => "abcd", write: (k) => k }, random)).toBeNull();
		await loadEngine(wasmBytes);
		const disk = new MemoryFs(filmDiary);
		const clock = new Clock();
		const host = new Host(openEngine(disk.notes(), disk.storeListing(), clock.now(), new Uint8Array(32).fill(3), "laptop", undefined, key), disk, { warn: () => undefined });
		await host.open();
		expect((await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 2 } })).status).toBe("ok");
		const entry = [...disk.store].find(([p]) => p.startsWith("journal/"));
		expect(entry?.[1]).toMatch(/"seal":"[0-9a-f]{64}"/);
	});

	test("follows the binary's rules for where it lives, and DATANOTES_DEVICE overrides", () => {
		expect(deviceFile({ env: { HOME: "/home/ann" }, platform: "linux" }, path.posix.join)).toBe("/home/ann/.local/state/datanotes/device");
		expect(deviceFile({ env: { LOCALAPPDATA: "C:/Users/ann/AppData/Local" }, platform: "win32" }, path.posix.join)).toBe(
			"C:/Users/ann/AppData/Local/datanotes/device",
		);
		expect(deviceFile({ env: {}, platform: "linux" }, path.join)).toBeNull();
		const fixed = nodeDeviceStore(fs, { env: { DATANOTES_DEVICE: "laptop" }, platform: "linux" }, path);
		expect(deviceId(fixed!, random)).toBe("laptop");
	});

	test("a kept value that is not an id, or a store that cannot keep one, gives none", () => {
		expect(deviceId({ read: () => "../etc", write: (id) => id }, random)).toBeNull();
		expect(
			deviceId(
				{
					read: () => null,
					write: () => {
						throw new Error("read-only");
					},
				},
				random,
			),
		).toBeNull();
		expect(makeDeviceId(new Uint8Array(10).fill(255))).toBe("7777777777");
	});
});

class FakeWorker implements WorkerLike {
	onmessage: ((e: MessageEvent<Reply>) => void) | null = null;
	onerror: ((e: ErrorEvent) => void) | null = null;
	private readonly serve = serveRequests((r) => setTimeout(() => this.onmessage?.({ data: structuredClone(r) } as MessageEvent<Reply>), 0));
	postMessage(m: Request): void {
		const copy = structuredClone(m);
		setTimeout(() => this.serve(copy), 0);
	}
	terminate(): void {}
}

describe("an engine on a device", () => {
	test("names its commits, journal entries, feed and what it knew after the device, here and in a worker", async () => {
		await loadEngine(wasmBytes);
		for (const where of ["thread", "worker"]) {
			const fs = new MemoryFs(filmDiary);
			const clock = new Clock();
			const entropy = new Uint8Array(32).fill(7);
			let engine;
			if (where === "worker") {
				engine = new WorkerEngine(new FakeWorker());
				await engine.init(wasmBytes as unknown as WebAssembly.Module, fs.notes(), fs.storeListing(), clock.now(), entropy, "phone1");
			} else {
				engine = openEngine(fs.notes(), fs.storeListing(), clock.now(), entropy, "phone1");
			}
			const host = new Host(engine, fs, { now: clock.now, warn: () => undefined });
			await host.open();
			const out = await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 4 } });
			expect(out.status, where).toBe("ok");
			const answer = out.answer as { migration_id: string };
			expect(answer.migration_id, where).toMatch(/\.phone1$/);
			const files = fs.storeListing().map((f) => f[0]);
			expect(files, where).toContain("log/main.public.film/00000000000000000001.phone1.json");
			expect(files, where).toContain(`journal/${answer.migration_id}.json`);
			expect(files, where).toContain("feed/00000000000000000001.phone1.jsonl");
			expect(files, where).toContain("known.phone1.jsonl");
			expect(files, where).not.toContain("known.jsonl");
			const history = await host.call("describe_history", { table: "film", limit: 1 });
			expect((history.answer as { history: { device?: string }[] }).history[0].device, where).toBe("phone1");
			await host.close();
		}
		expect(() => openEngine([], [], 0, new Uint8Array(32), "Not An Id")).toThrow(/1 to 16 lower-case letters and digits/);
	});
});
