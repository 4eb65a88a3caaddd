// The loop between the engine's calls, written once for the hosts in
// TypeScript: the plugin (main.ts) and the SDK's engine in process
// (sdk/src/local.ts); the binary's is bridge/src/watch.rs. It hands the engine
// what a vault watch saw (held while the engine opens), ticks it at its next
// deadline, tries again the store writes it owes, and tells it whether git is
// at work. No timer runs while nothing is due.

import type { VaultEvent } from "./types";

/** A change a vault watch saw: the host reads the note's text when the engine's turn comes. */
export type Change = Pick<VaultEvent, "kind" | "path" | "from">;

/** What the loop asks of the host (host.ts `Host`). */
export interface LoopHost {
	observe(c: Change): Promise<void>;
	tick(): Promise<unknown>;
	nextDeadline(): number | null;
	owes(): boolean;
	setGitBusy(busy: boolean): void;
	onChange(fn: () => void): () => void;
}

/** The loop sleeps until the engine's next deadline (battery, on mobile most of
 * all). Only while git works, or store writes wait for room, it looks again this
 * often (ms): neither is a vault event that would wake it. */
export const RECHECK_MS = 2000;
/** A timer further away than this is set again when it fires (timers wrap at
 * 2^31 ms: node fires such a timer at once). */
export const LONGEST_WAIT_MS = 3_600_000;
/** Files in `.git` whose presence means git is pulling, rebasing or merging
 * (as bridge/src/watch.rs `GIT_MARKERS`): the hosts' `gitBusy` looks for them. */
export const GIT_AT_WORK = ["rebase-merge", "rebase-apply", "MERGE_HEAD", "index.lock"];
/** A tick is set this long after the deadline, so that the engine finds it due. */
const PAST_DUE_MS = 5;

export interface LoopOptions {
	/** Calls `fn` once after `ms`; answers what cancels it. */
	setTimer: (fn: () => void, ms: number) => () => void;
	/** Where a change not handed over or a failed tick is said. */
	warn: (line: string, e: unknown) => void;
	/** The clock (ms since the epoch); Date.now by default. */
	now?: () => number;
	/** Runs before each tick: the store files a sync brought (sync-watch.ts), so
	 * that a note that came with them is that device's write when the round of
	 * hand edits looks at it. */
	beforeTick?: () => Promise<void>;
}

export class BetweenCalls {
	private host: LoopHost | null = null;
	private gitBusy: () => Promise<boolean> = () => Promise.resolve(false);
	/** What the last tick found: git at work in the vault (link repair waits for it). */
	private gitWorks = false;
	/** What the watch saw before the engine was open; null once handed over (or
	 * when no engine opens here). */
	private early: Change[] | null = [];
	private cancel: (() => void) | null = null;
	/** When the timer set is due (ms since the epoch). */
	private timerAt: number | null = null;
	private ticking = false;
	/** The last tick failed: the next waits RECHECK_MS, not the 5 ms a deadline
	 * gone by would give it (a failure that lasts must not spin). */
	private failed = false;
	private stopped = false;
	private unsubscribe: () => void = () => undefined;
	private readonly now: () => number;

	constructor(private readonly o: LoopOptions) {
		this.now = o.now ?? (() => Date.now());
	}

	/** The engine is open: what the watch saw meanwhile is handed over (the
	 * engine skips what it read already), and the loop runs. `gitBusy` says
	 * whether git is pulling, rebasing or merging in the vault. */
	attach(host: LoopHost, gitBusy?: () => Promise<boolean>): void {
		if (this.stopped) return;
		this.host = host;
		if (gitBusy) this.gitBusy = gitBusy;
		// A turn that wrote (a call from any door, a sync taken in) may move the
		// deadline or leave writes owed.
		this.unsubscribe = host.onChange(() => this.schedule());
		const early = this.early ?? [];
		this.early = null;
		for (const c of early) this.observe(c);
		this.schedule();
	}

	/** No engine opens here (another holds the vault): what the watch saw is not kept. */
	forgo(): void {
		this.early = null;
	}

	/** A change the vault watch saw, for the engine (held until it is open). */
	observe(c: Change): void {
		if (this.early) {
			this.early.push(c);
			return;
		}
		const host = this.host;
		if (!host) return;
		host.observe(c).then(
			() => this.schedule(),
			(e: unknown) => this.o.warn("a vault change was not reported", e),
		);
	}

	/** Runs what is due: git looked for, the store's synced files taken in, then
	 * the engine's tick. One at a time: a long write must not stack ticks behind it. */
	async tick(): Promise<void> {
		const host = this.host;
		if (!host || this.ticking) return;
		this.ticking = true;
		try {
			this.gitWorks = await this.gitBusy();
			host.setGitBusy(this.gitWorks);
			await this.o.beforeTick?.();
			await host.tick();
			this.failed = false;
		} catch (e) {
			this.failed = true;
			this.o.warn("tick failed", e);
		} finally {
			this.ticking = false;
		}
		this.schedule();
	}

	/** One timer, for the engine's next deadline (or a recheck while git works or
	 * writes are owed); none while nothing is due. */
	schedule(): void {
		const host = this.host;
		if (!host) return;
		const now = this.now();
		let next = host.nextDeadline();
		if (this.gitWorks || host.owes()) next = Math.min(next ?? Number.POSITIVE_INFINITY, now + RECHECK_MS);
		if (this.failed && next !== null) next = Math.max(next, now + RECHECK_MS);
		if (next === null || (this.timerAt !== null && this.timerAt <= next)) return;
		this.clearTimer();
		this.timerAt = next;
		const due = next;
		const wait = Math.min(Math.max(0, due - now) + PAST_DUE_MS, LONGEST_WAIT_MS);
		this.cancel = this.o.setTimer(() => {
			this.cancel = null;
			this.timerAt = null;
			if (this.now() < due) this.schedule();
			else void this.tick();
		}, wait);
	}

	/** When the next tick is set for (ms since the epoch), if any. */
	wakesAt(): number | null {
		return this.timerAt;
	}

	/** Ends the loop: no timer, no tick, no change handed over from now on (the
	 * host is closed by its owner). */
	stop(): void {
		this.stopped = true;
		this.early = null;
		this.host = null;
		this.unsubscribe();
		this.clearTimer();
	}

	private clearTimer(): void {
		this.cancel?.();
		this.cancel = null;
		this.timerAt = null;
	}
}
