// The host loop on the real wasm engine, against an in-memory copy of the film diary.

import { describe, expect, test, vi } from "vitest";
import { applyEdit, batches, refusalText, sha256Hex } from "../src/host";
import type { Step } from "../src/types";
import { ans, CHARADE, Clock, filmDiary, openFilms } from "./engine";
import { MemoryFs } from "./memfs";

const charade = filmDiary.get(CHARADE) as string;

describe("host", () => {
	test("batches: in order, at most so many bytes and notes each, a larger note alone", () => {
		const sizes: Record<string, number> = { a: 400, b: 400, c: 300, big: 5000, d: 1, e: 1, f: 1 };
		const size = (p: string): number => sizes[p];
		expect(batches(Object.keys(sizes), size, 1000, 2)).toEqual([["a", "b"], ["c"], ["big"], ["d", "e"], ["f"]]);
		expect(batches(Object.keys(sizes), size, 1100, 10)).toEqual([["a", "b", "c"], ["big"], ["d", "e", "f"]]);
		expect(batches([], size)).toEqual([]);
	});

	test("batches: the last ones smaller and smaller, each at most half of what is left (issue 17)", () => {
		const paths = Array.from({ length: 64 }, (_, k) => `n${k}`);
		const cut = batches(paths, () => 100, 1600, 1000, 200);
		const bytes = cut.map((b) => b.length * 100);
		expect(cut.flat(), "each note once, in order").toEqual(paths);
		expect(bytes).toEqual([1600, 1600, 1100, 700, 500, 300, 200, 200, 200]);
		let left = 6400;
		for (const b of bytes) {
			expect(b).toBeLessThanOrEqual(Math.max(200, left / 2));
			left -= b;
		}
		// Without a taper (the last batches' bytes at least the most): as before.
		expect(batches(paths, () => 100, 1600, 1000, 1600).map((b) => b.length)).toEqual([16, 16, 16, 16]);
	});

	test("list_changes with wait_ms waits for the next change, as serve's long poll does", async () => {
		const { host } = await openFilms();
		const head = (ans(await host.call("list_changes", { limit: 1 })).head as number) ?? 0;
		// Nothing new: it waits its time out, then answers no events.
		const t0 = Date.now();
		const none = await host.call("list_changes", { since: head, wait_ms: 150 });
		expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
		expect(ans(none).events).toEqual([]);
		// A write while it waits: the answer comes with it, long before the wait is over.
		const t1 = Date.now();
		const polled = host.call("list_changes", { since: head, wait_ms: 20_000 });
		await new Promise((r) => setTimeout(r, 50));
		await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 4 } });
		const got = await polled;
		expect(Date.now() - t1).toBeLessThan(5000);
		expect(ans(got).events.map((e: { path: string }) => e.path)).toEqual([CHARADE]);
		// A cursor past the head (another store's) is answered at once: back to
		// the head, with gap (read the tables again).
		const t3 = Date.now();
		const past = ans(await host.call("list_changes", { since: ans(got).head + 1000, wait_ms: 20_000 }));
		expect(Date.now() - t3).toBeLessThan(5000);
		expect([past.gap, past.last, past.events]).toEqual([true, ans(got).head, []]);
		// Bad arguments are refused at once, as the engine words them.
		const bad = await host.call("list_changes", { wait_ms: 70_000 });
		expect(bad.status).toBe("bad_input");
		expect(refusalText(bad)).toContain("wait_ms 70000 is out of range");
		// Closing the engine ends a wait.
		const waiting = host.call("list_changes", { since: ans(got).last, wait_ms: 20_000 });
		await new Promise((r) => setTimeout(r, 50));
		const t2 = Date.now();
		await host.close();
		await waiting.catch(() => undefined);
		expect(Date.now() - t2).toBeLessThan(5000);
	});

	test("select_rows answers the film diary's rows", async () => {
		const { host } = await openFilms();
		const out = await host.call("select_rows", { table: "film", columns: ["title", "year"], order_by: "year" });
		expect(out.status).toBe("ok");
		expect(ans(out).total).toBe(7);
		expect(ans(out).rows[0]).toMatchObject({ title: "Nosferatu", year: 1922 });
		expect(ans(out).rows.map((r: { title: string }) => r.title)).toContain("Charade");
	});

	test("update_row writes the note, changing only the year", async () => {
		const { host, fs } = await openFilms();
		const out = await host.call("update_row", { table: "film", path: CHARADE, set: { year: 1964 } });
		expect(out.status).toBe("ok");
		expect(out.answer).toMatchObject({ ok: true, op: "update_row", notes_changed: 1 });
		expect(fs.text(CHARADE)).toBe(charade.replace("\nyear: 1963\n", "\nyear: 1964\n"));
		expect(fs.text(CHARADE)).toBe(
			[
				"---",
				"table: main.public.film",
				"id: 01a0c046-cd8d-7b83-b93c-28130654d8df",
				"title: Charade",
				"year: 1964",
				"minutes: 113",
				"status: watched",
				"rating: 5",
				"tags:",
				"  - seen-2026",
				"  - film-night",
				'director: "[[Stanley Donen]]"',
				"genres:",
				'  - "[[Thriller]]"',
				"---",
				"[[Audrey Hepburn]] and [[Cary Grant]] in Paris, where several men want the fortune her murdered husband stole.",
				"",
			].join("\n"),
		);
	});

	test("the journal entry is in the store before the note changes, and completed after", async () => {
		const fs = new MemoryFs(filmDiary);
		let journalAtWrite: string | undefined;
		fs.afterVaultChange = (op) => {
			if (op === `vault write ${CHARADE}`) {
				const entry = [...fs.store].find(([p]) => p.startsWith("journal/"));
				journalAtWrite = entry?.[1];
			}
		};
		const { host } = await openFilms({ fs });
		fs.ops.length = 0;
		const out = await host.call("update_row", { table: "film", path: CHARADE, set: { year: 1964 } });
		expect(out.status).toBe("ok");
		const journal = `store put journal/${ans(out).migration_id}.json`;
		const first = fs.ops.indexOf(journal);
		const note = fs.ops.indexOf(`vault write ${CHARADE}`);
		expect(first).toBeGreaterThanOrEqual(0);
		expect(note).toBeGreaterThan(first);
		expect(fs.ops.lastIndexOf(journal)).toBeGreaterThan(note);
		expect(JSON.parse(journalAtWrite as string).status).toBe("pending");
		expect(JSON.parse(fs.store.get(`journal/${ans(out).migration_id}.json`) as string).status).toBe("done");
	});

	test("a refused write changes nothing and says why", async () => {
		const { host, fs } = await openFilms();
		const before = fs.snapshot();
		const out = await host.call("insert_row", { table: "film", values: { title: "Charade", year: 1963 } });
		expect(out.status).toBe("refused");
		expect(out.http).toBe(409);
		const text = refusalText(out);
		expect(text).toMatch(/^insert_row refused — nothing was written:/);
		expect(text).toContain("Charade");
		expect(text).toContain("Hint:");
		expect(fs.snapshot()).toEqual(before);
	});

	test("a note changed underneath during a write: the engine rolls back, the files are as they were", async () => {
		const fs = new MemoryFs(filmDiary);
		const { host, engine } = await openFilms({ fs });
		const calls = vi.spyOn(engine, "call");
		const hand = "---\ntable: main.public.film\ntitle: The Gold Rush\nyear: 1925\n---\nChanged by hand.\n";
		let target = "";
		fs.afterVaultChange = () => {
			if (target !== "") return;
			// After the first edit, someone changes the note the write's last edit expects.
			const step = calls.mock.results[0].value as Step;
			const last = step.step === "apply" ? step.edits.at(-1) : undefined;
			if (last?.kind !== "write") throw new Error(`a write was planned, not ${JSON.stringify(last)}`);
			target = last.path;
			fs.handWrite(target, hand);
		};
		const before = fs.snapshot().vault;
		const out = await host.call("update_rows", { table: "film", where: { status: "watched" }, set: { rating: 3 } });
		expect(target).toBe("datanotes/main/public/film/The Gold Rush.md");
		expect(out.status).toBe("rolled_back");
		expect(out.http).toBe(503);
		expect(out.answer).toMatchObject({ ok: false, rolled_back: true, notes_changed: 0 });
		expect(ans(out).failed[0]).toMatchObject({ path: target });
		expect(ans(out).failed[0].error).toContain("changed since the engine read it");
		expect(fs.snapshot().vault).toEqual({ ...before, [target]: hand });
		// The engine's index went back too: the other films still read as before.
		const rows = await host.call("select_rows", { table: "film", columns: ["title", "rating"], where: { rating: 3 } });
		expect(ans(rows).total).toBe(0);
	});

	test("a hand edit, observed and batched on a fake clock, is in list_changes", async () => {
		const clock = new Clock();
		const { host, fs } = await openFilms({ clock });
		const edited = charade.replace("rating: 5", "rating: 4");
		fs.handWrite(CHARADE, edited);
		await host.observe({ kind: "modified", path: CHARADE });
		const deadline = host.nextDeadline();
		expect(deadline).not.toBeNull();
		expect((deadline as number) - clock.ms).toBeLessThanOrEqual(5000);

		clock.advance(100);
		await host.tick();
		let feed = await host.call("list_changes", {});
		expect(ans(feed).events).toEqual([]);

		clock.ms = deadline as number;
		await host.tick();
		feed = await host.call("list_changes", {});
		expect(feed.status).toBe("ok");
		expect(ans(feed).events).toHaveLength(1);
		expect(ans(feed).events[0]).toMatchObject({
			kind: "update",
			source: "external",
			path: CHARADE,
			table: "main.public.film",
			changes: { rating: { before: 5, after: 4 } },
		});
		expect(fs.text(CHARADE)).toBe(edited);
	});

	test("the engine's own writes, reported back as vault events, are not hand edits", async () => {
		const clock = new Clock();
		const { host } = await openFilms({ clock });
		await host.call("update_row", { table: "film", path: CHARADE, set: { year: 1964 } });
		await host.observe({ kind: "modified", path: CHARADE });
		clock.advance(10_000);
		await host.tick();
		const feed = await host.call("list_changes", {});
		expect(ans(feed).events.map((e: { source: string }) => e.source)).toEqual(["engine"]);
	});

	test("a derived store file (the semantic index) is never owed, and one the store cannot take holds up no record behind it (driver.rs `keep`)", async () => {
		const { fs, host, engine } = await openFilms();
		const index = { path: "semantic/index.jsonl", text: "{}\n", append: false, delete: false };
		const entry = { path: "journal/held-index.json", text: "{}", append: false, delete: false };
		const log = { path: "log/main.public.film/00000000000000000099.json", text: "{}", append: false, delete: false };
		// Held by another program: left out, and the journal entry after it written.
		fs.held.add(index.path);
		engine.owe([index, entry], "held");
		await host.call("describe_history", { table: "film" });
		expect([fs.store.get(entry.path), host.owes()]).toEqual(["{}", false]);
		// A full disk: the records are owed from the first that failed, the index among them dropped.
		fs.storeFails = true;
		engine.owe([log, index, entry], "no space left on device");
		await host.call("describe_history", { table: "film" });
		expect(host.owes()).toBe(true);
		expect(engine.takeOwed().map((w) => w.path)).toEqual([log.path, entry.path]);
	});

	test("applyEdit checks the text's hash before it writes, and says why not as a typed value", async () => {
		const fs = new MemoryFs(new Map([["a.md", "one\n"]]));
		expect(await applyEdit(fs, { kind: "write", path: "a.md", text: "two\n", expect: await sha256Hex("zero\n") })).toEqual({ kind: "changed", path: "a.md" });
		expect(await applyEdit(fs, { kind: "write", path: "a.md", text: "two\n", expect: null })).toEqual({ kind: "exists", path: "a.md" });
		expect(await applyEdit(fs, { kind: "trash", path: "b.md", expect: await sha256Hex("one\n") })).toEqual({ kind: "missing", path: "b.md" });
		expect(await applyEdit(fs, { kind: "write", path: "a.md", text: "two\n", expect: await sha256Hex("one\n") })).toBeNull();
		expect(fs.text("a.md")).toBe("two\n");
		expect(await sha256Hex("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	});
});
