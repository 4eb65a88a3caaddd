// The plugin's host follows the Rust driver step for step: the script of
// tests/driver/ run through Host (with the real wasm engine) gives the outcomes
// core/tests/driver.rs gives, and leaves the same files.

import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, test } from "vitest";
import wasmBytes from "../wasm/datanotes_core_bg.wasm";
import { loadEngine, openEngine, openListed } from "../src/engine";
import { Host } from "../src/host";
import type { Outcome } from "../src/types";
import { Clock, FILMS, filmDiary } from "./engine";
import { MemoryFs } from "./memfs";

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

async function run(): Promise<{ outcomes: unknown[]; notes: Record<string, string>; store: Record<string, string> }> {
	await loadEngine(wasmBytes);
	const fs = new MemoryFs(filmDiary);
	const clock = new Clock();
	let host: Host | null = null;
	const outcomes: unknown[] = [];
	const shown = (o: Outcome) => ({ status: o.status, http: o.http, answer: o.answer, log: o.log });
	for (const step of script.steps as Step[]) {
		if (step.at !== undefined) clock.ms = step.at;
		let out: Outcome | null = null;
		if (typeof step.start === "number") {
			clock.ms = step.start;
			await host?.close();
			// mtime 0, as core/tests/driver.rs hands them: the notes' cache it writes is then the same.
			const notes = fs.notes().map((n) => ({ ...n, mtime: 0 }));
			const engine = openEngine(notes, fs.storeListing(), step.start, new Uint8Array(32));
			host = new Host(engine, fs, { actor: "script", now: clock.now, warn: () => {} });
			out = await host.open();
			await host.keepCache();
		} else if (typeof step.call === "string") {
			out = await host!.call(step.call, resolveArgs(step.args, outcomes), "script");
		} else if (typeof step.tick === "number") {
			clock.ms = step.tick;
			out = await host!.tick();
		} else if (typeof step.hand === "string") {
			fs.handWrite(step.hand, replaced(fs, step.hand, step.replace as [string, string]));
			await host!.observe({ kind: "modified", path: step.hand });
		} else if (typeof step.closed_hand === "string") {
			fs.handWrite(step.closed_hand, replaced(fs, step.closed_hand, step.replace as [string, string]));
		} else if (typeof step.hold === "string") fs.held.add(step.hold);
		else if (typeof step.release === "string") fs.held.delete(step.release);
		else if (typeof step.store_fails === "boolean") fs.storeFails = step.store_fails;
		else if (step.fills_up === true) fs.fillsUp = true;
		else throw new Error(`an unknown step: ${JSON.stringify(step)}`);
		outcomes.push(out === null ? null : shown(out));
	}
	await host?.close();
	const { vault, store } = fs.snapshot();
	return { outcomes, notes: vault, store };
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
