// The real wasm engine for the tests, on the film diary of bridge/assets/films.

import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import wasmBytes from "../wasm/datanotes_core_bg.wasm";
import { loadEngine, openEngine } from "../src/engine";
import { Host } from "../src/host";
import { Modal } from "obsidian-test-mocks/obsidian";
import { vi } from "vitest";
import type { EngineDoor } from "../src/history-view";
import { answered, type Outcome } from "../src/types";
import { MemoryFs, readTree } from "./memfs";

export const FILMS = resolve(dirname(fileURLToPath(import.meta.url)), "../../bridge/assets/films");
export const CHARADE = "datanotes/main/public/film/Charade.md";
export const filmDiary: Map<string, string> = readTree(FILMS);

/** An answer as a test reads it: free-form JSON (the plugin's own code reads
 * only the typed answers of src/types.ts). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function ans(out: Pick<Outcome, "answer">): any {
	return out.answer;
}

/** obsidian-test-mocks closes a Modal on the next tick after open(); a dialog
 * the test works in must stay open until the test (or the dialog) closes it. */
export function keepModalsOpen(): void {
	vi.spyOn(Modal.prototype, "open").mockImplementation(function (this: Modal) {
		this.onOpen();
	});
}

/** The engine as the plugin's views call it (waiting-door.ts's door), on a host. */
export function door(host: Host): EngineDoor {
	return { call: async (name, args) => answered(name, await host.call(name, args)), onChange: (fn) => host.onChange(fn) };
}

/** A fake clock the test moves by hand. */
export class Clock {
	constructor(public ms = Date.UTC(2026, 11, 2, 12, 0, 0)) {}
	now = (): number => this.ms;
	advance(ms: number): void {
		this.ms += ms;
	}
}

/** A host on a fresh in-memory copy of the film diary, opened (reconcile run). */
export async function openFilms(options: { clock?: Clock; fs?: MemoryFs } = {}) {
	await loadEngine(wasmBytes);
	const fs = options.fs ?? new MemoryFs(filmDiary);
	const clock = options.clock ?? new Clock();
	const warnings: string[] = [];
	const engine = openEngine(fs.notes(), fs.storeListing(), clock.now());
	const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
	const host = new Host(engine, fs, { actor: "obsidian", now: clock.now, warn: (l) => warnings.push(l), sleep });
	await host.open();
	return { fs, host, engine, clock, warnings };
}
