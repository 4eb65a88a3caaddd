// When the plugin looks at `.datanotes/` for the files a sync tool brings from
// another device (store-watch.ts finds them), and hands them to the engine:
// before each tick (a note that came with them is then that device's write
// when the round of hand edits looks at it), when the folder changes (desktop:
// Node's watcher; Obsidian reports no change in dot folders) and when Obsidian
// comes back to the foreground. No timer runs while nothing happens.

import type { App, Component } from "obsidian";
import { type Host, STORE_DIR } from "./host";
import { nodeModule } from "./node-modules";
import { StoreWatch } from "./store-watch";
import type { VaultDisk } from "./vault-disk";

/** How long after a change in `.datanotes/` it is looked at: a sync brings files in bursts. */
const STORE_SETTLE_MS = 200;

export interface SyncWatchOptions {
	app: App;
	/** What the watch's events and watcher are registered with (the plugin). */
	owner: Component;
	disk: VaultDisk;
	unloaded: () => boolean;
	/** After a look that was not a tick's: the engine's deadline may have moved. */
	looked: () => void;
}

export class SyncWatch {
	private looking: Promise<void> | null = null;
	private watch: StoreWatch | null = null;
	private host: Host | null = null;
	private soon: number | null = null;

	constructor(private readonly o: SyncWatchOptions) {}

	/** Hands the engine what a sync brought since the last look (nothing before `start`). */
	look(): Promise<void> {
		const { watch, host } = this;
		if (!watch || !host) return Promise.resolve();
		this.looking ??= (async () => {
			try {
				if (!this.o.unloaded()) await host.storeSynced(await watch.poll());
			} catch (e) {
				console.warn("datanotes: the store files a sync brought were not taken in", e);
			} finally {
				this.looking = null;
			}
		})();
		return this.looking;
	}

	/** Takes the store as `host` opened on it, then looks at every change. */
	async start(host: Host, device: string): Promise<void> {
		const adapter = this.o.app.vault.adapter;
		const watch = new StoreWatch({ stat: (p) => adapter.stat(p), list: (p) => adapter.list(p), read: (p) => adapter.read(p) }, device, STORE_DIR);
		await watch.start();
		this.watch = watch;
		this.host = host;
		this.o.owner.registerDomEvent(document, "visibilitychange", () => {
			if (document.visibilityState === "visible") this.lookSoon();
		});
		this.watchFolder();
	}

	private lookSoon(): void {
		this.soon ??= window.setTimeout(() => {
			this.soon = null;
			void this.look().then(() => this.o.looked());
		}, STORE_SETTLE_MS);
	}

	/** On desktop, Node's watcher on `.datanotes/`. */
	private watchFolder(): void {
		const base = this.o.disk.basePath();
		const nodeFs = nodeModule<typeof import("node:fs")>("fs");
		if (base === null || !nodeFs) return;
		try {
			const watcher = nodeFs.watch(`${base}/${STORE_DIR}`, { recursive: true }, () => this.lookSoon());
			watcher.on("error", () => watcher.close());
			this.o.owner.register(() => watcher.close());
		} catch (e) {
			console.warn("datanotes: .datanotes is looked at before each round of hand edits only (no folder watcher here)", e);
		}
	}
}
