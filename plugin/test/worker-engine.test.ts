// The engine behind the worker protocol (worker-engine.ts, worker-serve.ts), on a
// fake worker that clones every message as postMessage does and answers later:
// the host drives it exactly as it drives the engine in its own thread.

import { describe, expect, test } from "vitest";
import { Host, SEMANTIC_MODEL_FILE } from "../src/host";
import type { Reply, Request } from "../src/worker-protocol";
import { WorkerEngine, type WorkerLike } from "../src/worker-engine";
import { serveRequests } from "../src/worker-serve";
import wasmBytes from "../wasm/datanotes_core_bg.wasm";
import { ans, CHARADE, Clock, filmDiary, openFilms } from "./engine";
import { MemoryFs } from "./memfs";
import { tinyModel } from "./tiny-model";

class FakeWorker implements WorkerLike {
	onmessage: ((e: MessageEvent<Reply>) => void) | null = null;
	onerror: ((e: ErrorEvent) => void) | null = null;
	terminated = false;
	posted: string[] = [];
	private readonly serve = serveRequests((r) => setTimeout(() => this.onmessage?.({ data: structuredClone(r) } as MessageEvent<Reply>), 0));

	postMessage(m: Request): void {
		this.posted.push(m.method);
		const copy = structuredClone(m);
		setTimeout(() => this.serve(copy), 0);
	}
	terminate(): void {
		this.terminated = true;
	}
}

async function openInWorker(clock = new Clock()) {
	const fs = new MemoryFs(filmDiary);
	const worker = new FakeWorker();
	const engine = new WorkerEngine(worker);
	await engine.init(wasmBytes as unknown as WebAssembly.Module, fs.notes(), fs.storeListing(), clock.now(), new Uint8Array(32).fill(7));
	const host = new Host(engine, fs, { now: clock.now, warn: () => undefined });
	await host.open();
	return { fs, worker, engine, host, clock };
}

describe("the engine in a worker", () => {
	test("is given the model to search by meaning across the worker's boundary", async () => {
		const { host, fs, worker } = await openInWorker();
		fs.storeBytes.set(SEMANTIC_MODEL_FILE, tinyModel(["dracula"]));
		const found = await host.call("semantic_search", { query: "Dracula", limit: 1 });
		expect(found.status).toBe("ok");
		expect(ans(found).results[0].path).toContain("Nosferatu");
		expect(worker.posted).toContain("setSemanticModel");
	});


	test("answers as the engine in this thread does, and writes the same notes", async () => {
		const { host, fs } = await openInWorker();
		const here = await openFilms();
		const read = { table: "film", columns: ["title", "year"], order_by: "year" };
		expect((await host.call("select_rows", read)).answer).toEqual((await here.host.call("select_rows", read)).answer);
		const wrote = await host.call("update_row", { table: "film", path: CHARADE, set: { year: 1964 } });
		expect(wrote.status).toBe("ok");
		expect(fs.text(CHARADE)).toContain("\nyear: 1964\n");
		const refused = await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 9 } });
		expect(refused.status).toBe("refused");
		const undone = await host.call("undo_migration", { migration_id: ans(wrote).migration_id });
		expect(undone.status).toBe("ok");
		expect(fs.text(CHARADE)).toBe(filmDiary.get(CHARADE));
	});

	test("a hand edit sets the engine's deadline, read at once on this side; the tick finds it", async () => {
		const { host, fs, clock, worker } = await openInWorker();
		fs.handWrite(CHARADE, (filmDiary.get(CHARADE) as string).replace("rating: 5", "rating: 4"));
		await host.observe({ kind: "modified", path: CHARADE });
		const deadline = host.nextDeadline();
		expect(deadline).not.toBeNull();
		clock.ms = deadline as number;
		await host.tick();
		const feed = await host.call("list_changes", {});
		expect(ans(feed).events).toHaveLength(1);
		expect(ans(feed).events[0]).toMatchObject({ kind: "update", source: "external", changes: { rating: { before: 5, after: 4 } } });
		expect(host.nextDeadline()).toBeNull();
		await host.close();
		await new Promise((r) => setTimeout(r, 20));
		expect(worker.posted.at(-1)).toBe("free");
		expect(worker.terminated).toBe(true);
	});

	test("a worker that fails rejects every call waiting, and the next, with the way out", async () => {
		const { engine, worker } = await openInWorker();
		const waiting = engine.call("describe_database", {}, "obsidian", Date.now());
		worker.onerror?.({ message: "out of memory" } as ErrorEvent);
		await expect(waiting).rejects.toThrow("the engine's worker failed: out of memory. Reload the plugin");
		await expect(engine.tick(Date.now())).rejects.toThrow(/worker failed/);
	});
});
