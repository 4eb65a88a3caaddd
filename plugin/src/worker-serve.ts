// The engine's side of the worker protocol (worker-protocol.ts): requests run
// one at a time, each to its end (an init's compile must not let a call
// overtake it), each with one answer. engine-worker.ts wires it to the worker's
// messages; the tests wire it to a fake worker.

import { type JsonEngine, loadEngine, openListed } from "./engine";
import type { StoreFile } from "./types";
import { type Listed, type Notes, type Reply, type Request, unpackNotes } from "./worker-protocol";

interface Init {
	wasm: WebAssembly.Module | Uint8Array;
	notes: Notes;
	listed: Listed;
	store: StoreFile[];
	now: number;
	entropy: Uint8Array;
	device?: string;
	deviceKey?: Uint8Array | null;
	cache?: Uint8Array | null;
}

/** A function that takes each request and sends its answer with `reply`. */
export function serveRequests(reply: (r: Reply) => void): (m: Request) => void {
	let engine: JsonEngine | null = null;
	let queue: Promise<void> = Promise.resolve();
	const run = async (m: Request): Promise<unknown> => {
		if (m.method === "init") {
			const init = m.args[0] as Init;
			await loadEngine(init.wasm);
			engine = openListed(unpackNotes(init.notes), init.listed, init.store, init.now, init.entropy, init.device, init.cache, init.deviceKey);
			return null;
		}
		if (!engine) throw new Error("the engine is not open");
		if (m.method === "readNotes") {
			return engine.readPacked(m.args[0] as Notes, m.args[1] as string[], m.args[2] === true);
		}
		if (m.method === "free") {
			engine.free();
			engine = null;
			return null;
		}
		return (engine[m.method] as (...a: unknown[]) => unknown).apply(engine, m.args);
	};
	return (m) => {
		queue = queue.then(async () => {
			try {
				const result = await run(m);
				reply({ id: m.id, ok: true, result: result ?? null, deadline: engine?.nextDeadline(), head: engine?.feedHead() ?? 0 });
			} catch (err) {
				reply({ id: m.id, ok: false, error: err instanceof Error ? err.message : String(err) });
			}
		});
	};
}
