// The plugin's host follows the Rust driver step for step: the script of
// tests/driver/ run through Host (with the real wasm engine) gives the outcomes
// core/tests/driver.rs gives, and leaves the same files.

import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, test } from "vitest";
import wasmBytes from "../wasm/datanotes_core_bg.wasm";
import { type JsonEngine, loadEngine, openEngine, openListed } from "../src/engine";
import { Host, METASTORE, readNotes } from "../src/host";
import { notesCachePath } from "../src/store-files";
import type { NoteFile, NoteListed, Outcome } from "../src/types";
import { Clock, FILMS, filmDiary } from "./engine";
import { MemoryFs } from "./memfs";
import { tinyModel } from "./tiny-model";

const DIR = resolve(FILMS, "../../../tests/driver");
const script = JSON.parse(readFileSync(resolve(DIR, "script.json"), "utf8"));
const want = JSON.parse(readFileSync(resolve(DIR, "outcomes.json"), "utf8"));

type Step = Record<string, unknown> & { at?: number };

/** `"$N.key"`: the key of step N's answer; any other value as it is. */
function resolveArgs(v: unknown, outcomes: unknown[]): unknown {
	if (typeof v === "string" && v.startsWith("$")) {
		const [n, key] = v.slice(1).split(".");
		return (outcomes[Number(n)] as { answer: Record<string, unknown> }).answer[key];
	}
	if (Array.isArray(v)) return v.map((x) => resolveArgs(x, outcomes));
	if (v !== null && typeof v === "object")
		return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, resolveArgs(x, outcomes)]));
	return v;
}

function replaced(fs: MemoryFs, path: string, [from, to]: [string, string]): string {
	const text = fs.text(path) ?? "";
	expect(text).toContain(from);
	return text.replace(from, to);
}

/** What a step left: its outcome, if it gave one, and what the loop between
 * calls asks of the host after it (core/tests/driver.rs `shown`). */
function shown(o: Outcome | null, host: Host | null): Record<string, unknown> {
	const out: Record<string, unknown> = o === null ? {} : { status: o.status, http: o.http, answer: o.answer, log: o.log };
	return { ...out, deadline: host?.nextDeadline() ?? null, owes: host?.owes() ?? false };
}

/** As the plugin opens (opening.ts): metastore.yaml read, every other note
 * listed with its size and mtime, the store's notes' cache given; the notes it
 * does not vouch for read before the start. */
async function open(fs: MemoryFs, now: number): Promise<JsonEngine> {
	const utf8 = new TextEncoder();
	const files: (NoteFile | NoteListed)[] = fs.notes().map((n) => (n.path === METASTORE ? n : { path: n.path, size: utf8.encode(n.text).length, mtime: n.mtime }));
	const cache = fs.store.get(notesCachePath());
	const engine = openEngine(files, fs.storeListing(), now, new Uint8Array(32), undefined, cache === undefined ? null : utf8.encode(cache));
	const { files: read, gone } = await readNotes(fs, engine.toRead());
	engine.readNotes(read, gone, true);
	engine.setSemanticModel(tinyModel(script.model as string[]));
	return engine;
}

/** The script run: what each step left (see `shown`), then the vault and the store. */
async function run(): Promise<{ outcomes: unknown[]; notes: Record<string, string>; store: Record<string, string> }> {
	await loadEngine(wasmBytes);
	const fs = new MemoryFs(filmDiary);
	for (const f of fs.files.values()) f.mtime = script.vault_mtime as number;
	const clock = new Clock();
	fs.clock = clock.now;
	let host: Host | null = null;
	const outcomes: unknown[] = [];
	for (const step of script.steps as Step[]) {
		if (step.at !== undefined) clock.ms = step.at;
		let out: Outcome | null = null;
		if (typeof step.start === "number") {
			clock.ms = step.start;
			await host?.close();
			host = new Host(await open(fs, step.start), fs, { actor: "script", now: clock.now, warn: () => {} });
			out = await host.open();
			// The cache's turn after the open: driver.rs `start` writes it last, its failure in the log.
			out.log.push(...(await host.keepCache()));
		} else if (typeof step.call === "string") {
			out = await host!.call(step.call, resolveArgs(step.args, outcomes), "script");
		} else if (step.tick !== undefined) {
			clock.ms = step.tick === "deadline" ? (host!.nextDeadline() as number) : (step.tick as number);
			out = await host!.tick();
		} else await change(fs, host!, step, clock.ms);
		outcomes.push(shown(out, host));
	}
	await host?.close();
	const { vault, store } = fs.snapshot();
	return { outcomes, notes: vault, store };
}

/** A step that changes the vault or the file system, and gives no outcome; a
 * note changed by hand takes the step's `mtime`, else the clock's. */
async function change(fs: MemoryFs, host: Host, step: Step, now: number): Promise<void> {
	const mtime = typeof step.mtime === "number" ? step.mtime : now;
	if (typeof step.hand === "string") {
		fs.handWrite(step.hand, replaced(fs, step.hand, step.replace as [string, string]), mtime);
		await host.observe({ kind: "modified", path: step.hand });
	} else if (typeof step.closed_hand === "string") {
		fs.handWrite(step.closed_hand, replaced(fs, step.closed_hand, step.replace as [string, string]), mtime);
	} else if (typeof step.hold === "string") fs.held.add(step.hold);
	else if (typeof step.release === "string") fs.held.delete(step.release);
	else if (typeof step.store_fails === "boolean") fs.storeFails = step.store_fails;
	else if (step.fills_up === true) fs.fillsUp = true;
	else throw new Error(`an unknown step: ${JSON.stringify(step)}`);
}

describe("the host and the driver", () => {
	test("give the same outcome at every step of the script, and leave the same files", async () => {
		const got = await run();
		got.outcomes.forEach((o, i) => expect(o, `step ${i}: ${JSON.stringify(script.steps[i])}`).toEqual(want.outcomes[i]));
		expect(got.outcomes.length).toBe(want.outcomes.length);
		expect(got.notes).toEqual(want.notes);
		expect(got.store).toEqual(want.store);
	});
});

describe("an engine opened on a listing", () => {
	test("takes the notes listed and not read packed, names them to read, and refuses arrays that do not match", async () => {
		await loadEngine(wasmBytes);
		const meta = "datanotes/metastore.yaml";
		const read = [{ path: meta, text: filmDiary.get(meta) as string, mtime: 1 }];
		const paths = [...filmDiary.keys()].filter((p) => p !== meta && p.endsWith(".md"));
		const listed = { paths, sizes: paths.map((p) => new TextEncoder().encode(filmDiary.get(p)).length), mtimes: paths.map(() => 1) };
		const engine = openListed(read, listed, [], Date.UTC(2026, 11, 6));
		expect([...engine.toRead()].sort()).toEqual([...paths].sort());
		engine.free();
		const short = { ...listed, sizes: listed.sizes.slice(1) };
		expect(() => openListed(read, short, [], 0)).toThrow(`listed: ${paths.length} paths, but ${paths.length - 1} sizes and ${paths.length} mtimes`);
	});
});
