// The engine as the plugin's views and commands call it: a call made before the
// vault is open waits for it (a Notice says so after a second, rather than seem
// to hang), then goes to this plugin's engine or to the engine that holds the
// vault; the views hear of every turn that wrote.

import { Notice } from "obsidian";
import type { EngineDoor } from "./history-view";
import { Host } from "./host";
import { answered, type Outcome } from "./types";

/** An engine the UI can call: this plugin's host, or another's (door.ts `Forwarded`). */
export type Caller = { call(name: string, args: unknown): Promise<Outcome> };

/** How long the engine may keep a person waiting before a Notice says why. */
const SLOW_MS = 1000;

/** Runs `fn`; if it takes more than a second, a Notice says `text` until it ends. */
export async function noticeIfSlow<T>(text: string, fn: () => Promise<T>): Promise<T> {
	let told: Notice | null = null;
	const timer = window.setTimeout(() => {
		told = new Notice(text, 0);
	}, SLOW_MS);
	try {
		return await fn();
	} finally {
		window.clearTimeout(timer);
		(told as Notice | null)?.hide();
	}
}

export class WaitingDoor {
	/** Settles once this plugin's engine is open (rejects when it could not
	 * open, or another engine holds the vault). */
	readonly ready: Promise<Host>;
	/** What the UI calls, once reached. */
	private readonly caller: Promise<Caller>;
	private opened: (host: Host) => void = () => undefined;
	private failed: (e: unknown) => void = () => undefined;
	private reached: (c: Caller) => void = () => undefined;
	private unreached: (e: unknown) => void = () => undefined;
	private readonly listeners = new Set<() => void>();

	/** The door the views and commands are given. */
	readonly door: EngineDoor;

	constructor(thisDevice: () => string | undefined) {
		this.ready = new Promise<Host>((resolve, reject) => {
			this.opened = resolve;
			this.failed = reject;
		});
		this.caller = new Promise<Caller>((resolve, reject) => {
			this.reached = resolve;
			this.unreached = reject;
		});
		// Whoever waits is told; nobody waiting is no unhandled rejection.
		this.ready.catch(() => undefined);
		this.caller.catch(() => undefined);
		this.door = {
			call: async <K extends string>(name: K, args?: unknown) =>
				answered(name, await noticeIfSlow("Datanotes: waiting until the vault is open…", () => this.caller).then((c) => c.call(name, args ?? {}))),
			onChange: (fn: () => void) => {
				this.listeners.add(fn);
				return () => this.listeners.delete(fn);
			},
			thisDevice,
		};
	}

	/** The engine calls go to from now on: this plugin's host, or the engine that holds the vault. */
	reach(c: Caller): void {
		this.reached(c);
		if (c instanceof Host) this.opened(c);
		else this.failed(new Error("another engine holds the vault: the plugin forwards its calls to it"));
	}

	/** No engine can be reached: calls are refused with `e`. */
	fail(e: unknown): void {
		this.unreached(e);
		this.failed(e);
	}

	/** A turn wrote: the views look again. */
	changed(): void {
		for (const fn of this.listeners) fn();
	}
}
