// The loop between the engine's calls (between-calls.ts), which the plugin and
// the SDK's engine in process share: on a host whose deadlines the test sets,
// and on the real engine with the film diary. Its timers are the test's: the
// clock moves only when the test moves it.

import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { NodeFileSystem } from "../../sdk/src/disk";
import { BetweenCalls, type Change, LONGEST_WAIT_MS, type LoopHost, RECHECK_MS } from "../src/between-calls";
import { ans, CHARADE, Clock, filmDiary, openFilms } from "./engine";
import { MemoryFs } from "./memfs";

/** Timers on a clock the test moves: each fires when the clock passes its time. */
class Timers {
	private list: { at: number; fn: () => void; live: boolean }[] = [];
	constructor(private readonly clock: Clock) {}

	set = (fn: () => void, ms: number): (() => void) => {
		const t = { at: this.clock.ms + ms, fn, live: true };
		this.list.push(t);
		return () => {
			t.live = false;
		};
	};

	/** When the timers set and not cancelled nor fired are due. */
	pending(): number[] {
		return this.list.filter((t) => t.live).map((t) => t.at);
	}

	/** Moves the clock `ms` on, firing each timer due on the way, in order. */
	async advance(ms: number): Promise<void> {
		const end = this.clock.ms + ms;
		for (;;) {
			const due = this.list.filter((t) => t.live && t.at <= end).sort((a, b) => a.at - b.at)[0];
			if (!due) break;
			this.clock.ms = due.at;
			due.live = false;
			due.fn();
			await settle();
		}
		this.clock.ms = end;
	}
}

/** Lets the promises under way settle. */
const settle = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/** A host whose deadline, owed writes and ticks the test holds. */
class FakeHost implements LoopHost {
	deadline: number | null = null;
	owed = false;
	/** When each tick ran (the clock's ms). */
	ticks: number[] = [];
	observed: Change[] = [];
	gitTold: boolean[] = [];
	/** While set, a tick waits for it. */
	gate: Promise<void> | null = null;
	/** What a tick does to the host (default: nothing is due after it). */
	onTick: () => void = () => {
		this.deadline = null;
	};
	private listeners = new Set<() => void>();
	constructor(private readonly clock: Clock) {}

	observe(c: Change): Promise<void> {
		this.observed.push(c);
		return Promise.resolve();
	}
	async tick(): Promise<void> {
		this.ticks.push(this.clock.ms);
		if (this.gate) await this.gate;
		this.onTick();
	}
	nextDeadline(): number | null {
		return this.deadline;
	}
	owes(): boolean {
		return this.owed;
	}
	setGitBusy(busy: boolean): void {
		this.gitTold.push(busy);
	}
	onChange(fn: () => void): () => void {
		this.listeners.add(fn);
		return () => this.listeners.delete(fn);
	}
	/** A turn that wrote (host.ts `changedIfWrote`). */
	changed(): void {
		for (const fn of this.listeners) fn();
	}
}

function fakeLoop(o: { gitBusy?: () => Promise<boolean>; beforeTick?: () => Promise<void> } = {}) {
	const clock = new Clock();
	const timers = new Timers(clock);
	const host = new FakeHost(clock);
	const warned: string[] = [];
	const loop = new BetweenCalls({ setTimer: timers.set, now: clock.now, warn: (line) => warned.push(line), beforeTick: o.beforeTick });
	return { clock, timers, host, loop, warned, attach: () => loop.attach(host, o.gitBusy) };
}

describe("the loop between calls", () => {
	test("ticks at the engine's deadline, not before, then sleeps while nothing is due", async () => {
		const { clock, timers, host, loop, attach } = fakeLoop();
		const t0 = clock.ms;
		attach();
		expect(timers.pending(), "nothing due: no timer").toEqual([]);
		host.deadline = t0 + 1000;
		host.changed();
		expect(loop.wakesAt()).toBe(t0 + 1000);
		await timers.advance(999);
		expect(host.ticks).toEqual([]);
		await timers.advance(10);
		expect(host.ticks).toEqual([t0 + 1005]);
		expect(loop.wakesAt()).toBeNull();
		expect(timers.pending()).toEqual([]);
	});

	test("a change that brings the deadline closer moves the one timer; a later deadline leaves it", async () => {
		const { clock, timers, host, loop, attach } = fakeLoop();
		const t0 = clock.ms;
		host.deadline = t0 + 5000;
		attach();
		host.deadline = t0 + 800;
		loop.observe({ kind: "modified", path: CHARADE });
		await settle();
		expect(host.observed).toEqual([{ kind: "modified", path: CHARADE }]);
		expect(timers.pending()).toEqual([t0 + 805]);
		host.deadline = t0 + 9000;
		host.changed();
		expect(timers.pending()).toEqual([t0 + 805]);
		// The tick leaves the later deadline: the next timer is for it.
		host.onTick = () => undefined;
		await timers.advance(1000);
		expect(host.ticks).toEqual([t0 + 805]);
		expect(loop.wakesAt()).toBe(t0 + 9000);
	});

	test("a tick while one is running is not run twice", async () => {
		const { clock, timers, host, loop, attach } = fakeLoop();
		const t0 = clock.ms;
		attach();
		let open = (): void => undefined;
		host.gate = new Promise<void>((resolve) => (open = resolve));
		const first = loop.tick();
		await settle();
		expect(host.ticks).toEqual([t0]);
		// Another tick asked for, and a deadline whose timer fires, while it runs.
		const second = loop.tick();
		host.deadline = t0 + 100;
		host.changed();
		await timers.advance(200);
		expect(host.ticks, "the running tick only").toEqual([t0]);
		// It ends: the deadline it left is set again, and ticked once.
		host.onTick = () => undefined;
		open();
		await Promise.all([first, second]);
		host.gate = null;
		host.onTick = () => (host.deadline = null);
		expect(loop.wakesAt()).toBe(t0 + 100);
		await timers.advance(10);
		expect(host.ticks).toEqual([t0, t0 + 205]);
		expect(loop.wakesAt()).toBeNull();
	});

	test("owed writes are tried again every RECHECK_MS until written, then the loop sleeps", async () => {
		const { clock, timers, host, loop, attach } = fakeLoop();
		const t0 = clock.ms;
		host.owed = true;
		attach();
		expect(loop.wakesAt()).toBe(t0 + RECHECK_MS);
		let left = 2;
		host.onTick = () => (host.owed = --left > 0);
		await timers.advance(RECHECK_MS + 5);
		expect(host.ticks).toEqual([t0 + RECHECK_MS + 5]);
		await timers.advance(RECHECK_MS + 5);
		expect(host.ticks).toHaveLength(2);
		expect(host.owed).toBe(false);
		expect(timers.pending()).toEqual([]);
	});

	test("stop ends the timer: no tick and no change handed over after it", async () => {
		const { clock, timers, host, loop, attach } = fakeLoop();
		host.deadline = clock.ms + 1000;
		attach();
		expect(timers.pending()).toHaveLength(1);
		loop.stop();
		expect(timers.pending(), "the timer is cancelled").toEqual([]);
		expect(loop.wakesAt()).toBeNull();
		loop.observe({ kind: "modified", path: CHARADE });
		host.changed();
		await loop.tick();
		await timers.advance(5000);
		expect(host.ticks).toEqual([]);
		expect(host.observed).toEqual([]);
		expect(timers.pending()).toEqual([]);
	});

	test("changes seen while the engine opens are handed over in order once it is open; none when it never opens here", async () => {
		const { host, loop, attach } = fakeLoop();
		const seen: Change[] = [
			{ kind: "modified", path: CHARADE },
			{ kind: "renamed", path: "b.md", from: "a.md" },
		];
		for (const c of seen) loop.observe(c);
		expect(host.observed).toEqual([]);
		attach();
		await settle();
		expect(host.observed).toEqual(seen);

		// Another engine holds the vault: what was held is dropped.
		const other = fakeLoop();
		other.loop.observe({ kind: "modified", path: CHARADE });
		other.loop.forgo();
		other.loop.observe({ kind: "removed", path: CHARADE });
		other.attach();
		await settle();
		expect(other.host.observed).toEqual([]);
	});

	test("a deadline further than an hour away: the timer wakes within the hour and is set again; the tick waits for the deadline", async () => {
		const { clock, timers, host, loop, attach } = fakeLoop();
		const t0 = clock.ms;
		host.deadline = t0 + 30 * 86_400_000;
		attach();
		expect(timers.pending()).toEqual([t0 + LONGEST_WAIT_MS]);
		await timers.advance(LONGEST_WAIT_MS);
		expect(host.ticks).toEqual([]);
		expect(timers.pending()).toEqual([t0 + 2 * LONGEST_WAIT_MS]);
		expect(loop.wakesAt()).toBe(host.deadline);
	});

	test("a failed tick is said, and tried again RECHECK_MS later, not at once", async () => {
		const { clock, timers, host, loop, warned, attach } = fakeLoop();
		const t0 = clock.ms;
		host.onTick = () => {
			throw new Error("the disk went away");
		};
		host.deadline = t0 + 100;
		attach();
		await timers.advance(1000);
		expect(warned).toEqual(["tick failed"]);
		expect(host.ticks).toEqual([t0 + 105]);
		expect(loop.wakesAt(), "the deadline gone by, tried again later").toBe(t0 + 105 + RECHECK_MS);
		host.onTick = () => (host.deadline = null);
		await timers.advance(RECHECK_MS);
		expect(host.ticks).toEqual([t0 + 105, t0 + 110 + RECHECK_MS]);
		expect(warned).toHaveLength(1);
		expect(timers.pending()).toEqual([]);
	});

	test("git at work is told to the engine before each tick, and looked at again every RECHECK_MS while it works", async () => {
		let busy = true;
		const order: string[] = [];
		const { clock, timers, host, loop, attach } = fakeLoop({
			gitBusy: () => Promise.resolve(busy),
			beforeTick: () => Promise.resolve(void order.push("store looked at")),
		});
		const t0 = clock.ms;
		host.deadline = t0 + 10;
		attach();
		await timers.advance(20);
		expect(host.gitTold).toEqual([true]);
		expect(order).toEqual(["store looked at"]);
		expect(loop.wakesAt(), "nothing due but git").toBe(t0 + 15 + RECHECK_MS);
		busy = false;
		await timers.advance(RECHECK_MS + 10);
		expect(host.gitTold).toEqual([true, false]);
		expect(host.ticks).toHaveLength(2);
		expect(timers.pending()).toEqual([]);
	});
});

test("the SDK's git probe: git at work while .git holds a rebase, a merge or the index's lock", async () => {
	const vault = mkdtempSync(join(tmpdir(), "datanotes-git-"));
	try {
		mkdirSync(join(vault, ".git"));
		const fs = new NodeFileSystem(vault);
		expect(await fs.gitBusy()).toBe(false);
		mkdirSync(join(vault, ".git/rebase-merge"));
		expect(await fs.gitBusy()).toBe(true);
		rmSync(join(vault, ".git/rebase-merge"), { recursive: true });
		expect(await fs.gitBusy()).toBe(false);
		expect(await new NodeFileSystem(join(vault, "..", "no-such-vault")).gitBusy(), "no .git: never").toBe(false);
	} finally {
		rmSync(vault, { recursive: true, force: true });
	}
});

describe("the loop between calls, on the engine", () => {
	function engineLoop(clock: Clock) {
		const timers = new Timers(clock);
		const warned: string[] = [];
		const loop = new BetweenCalls({ setTimer: timers.set, now: clock.now, warn: (line) => warned.push(line) });
		return { timers, loop, warned };
	}

	test("a hand edit it hands over is reported by the tick it runs at the engine's deadline", async () => {
		const clock = new Clock();
		const { fs, host } = await openFilms({ clock });
		const { timers, loop } = engineLoop(clock);
		loop.attach(host);
		expect(loop.wakesAt()).toBeNull();
		fs.handWrite(CHARADE, (fs.text(CHARADE) as string).replace("rating: 5", "rating: 4"));
		loop.observe({ kind: "modified", path: CHARADE });
		await expect.poll(() => loop.wakesAt()).not.toBeNull();
		const due = host.nextDeadline() as number;
		expect(loop.wakesAt()).toBe(due);
		await timers.advance(due - clock.ms - 1);
		expect(ans(await host.call("list_changes", {})).events, "not before the deadline").toEqual([]);
		await timers.advance(10);
		await expect.poll(async () => ans(await host.call("list_changes", {})).events.length).toBe(1);
		expect(ans(await host.call("list_changes", {})).events[0]).toMatchObject({ source: "external", path: CHARADE, changes: { rating: { before: 5, after: 4 } } });
		expect(loop.wakesAt()).toBeNull();
		await host.close();
	});

	test("records a full disk kept from a write are written by the tick RECHECK_MS later", async () => {
		const clock = new Clock();
		const fs = new MemoryFs(filmDiary);
		const { host } = await openFilms({ clock, fs });
		const { timers, loop } = engineLoop(clock);
		loop.attach(host);
		fs.fillsUp = true;
		const out = await host.call("update_row", { table: "film", path: CHARADE, set: { year: 1964 } });
		expect(out.status).toBe("ok");
		expect(host.owes()).toBe(true);
		const journal = () => [...fs.store].filter(([p]) => p.startsWith("journal/")).map(([, t]) => JSON.parse(t).status as string);
		expect(journal()).toEqual(["pending"]);
		expect(loop.wakesAt(), "the write's turn set the recheck").toBe(clock.ms + RECHECK_MS);
		fs.storeFails = false;
		await timers.advance(RECHECK_MS + 5);
		await expect.poll(() => host.owes()).toBe(false);
		expect(journal()).toEqual(["done"]);
		expect(loop.wakesAt()).toBeNull();
		loop.stop();
		await host.close();
	});
});
