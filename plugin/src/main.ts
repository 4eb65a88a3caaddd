// The Datanotes plugin: wires the wasm engine to the vault. The engine decides;
// host.ts carries its calls out, fs.ts touches the files, the rest is UI.

import { FileSystemAdapter, Notice, Platform, Plugin, requestUrl, setIcon, TAbstractFile, TFile, type WorkspaceLeaf } from "obsidian";
import wasmBytes from "../wasm/datanotes_core_bg.wasm";
import type { AgentContext } from "./agent-settings";
import { ownerTokenOf } from "./agents";
import { Bridge, findBinary } from "./bridge";
import { type BridgeContext, bridgeStatus } from "./bridge-settings";
import { registerCommands } from "./commands";
import { challenge, type Door, Forwarded, httpGet, LOCK, loopbackUrl, openDoor, parseLock, type Proc, TOKEN, type VaultId, vaultIdOf } from "./door";
import { type DeviceStore, deviceId, deviceKey, localStore, nodeDeviceStore, nodeKeyStore } from "./device";
import { deviceName, keepDeviceName } from "./device-name";
import { compileEngine, loadEngine, openEngine, operations } from "./engine";
import { ObsidianFileSystem } from "./fs";
import { type Links, NO_LINKS, nodeLinks } from "./links";
import { meaningModel } from "./model-install";
import { type EngineDoor, HistoryView, type Section, VIEW_TYPE_HISTORY } from "./history-view";
import { batches, Host, METASTORE, type PostResult, STORE_DIR } from "./host";
import { PropertyTypes } from "./property-types";
import { RowForms } from "./row-commands";
import { NOT_CHECKED, Problems, ProblemsView, statusText, tellNotice, VIEW_TYPE_PROBLEMS } from "./problems";
import { StoreWatch } from "./store-watch";
import { notesCachePath } from "./store-files";
import { DatanotesSettingTab, DEFAULT_SETTINGS, type PluginSettings } from "./settings";
import { answered, type Delivery, type EngineApi, type NoteFile, type NoteListed, type OperationInfo, type Outcome, type StoreFile, type VaultEvent } from "./types";
import { WorkerEngine } from "./worker-engine";

/** The engine worker's code (engine-worker.ts), set by esbuild.config.mjs; absent
 * in the tests, where the engine runs in their thread. */
declare const ENGINE_WORKER: string | undefined;
const ENGINE_WORKER_SOURCE: string = typeof ENGINE_WORKER === "string" ? ENGINE_WORKER : "";

/** The plugin sleeps until the engine's next deadline (battery, on mobile most of
 * all). Only while git works, or store writes wait for room, it looks again this
 * often (ms): neither is a vault event that would wake it. */
const RECHECK_MS = 2000;
/** A timer further away than this is set again when it fires (timers wrap at 2^31 ms). */
const LONGEST_WAIT_MS = 3_600_000;

type Change = Pick<VaultEvent, "kind" | "path" | "from">;

/** An engine the UI can call. */
type Caller = { call(name: string, args: unknown): Promise<Outcome> };

/** From this many notes the engine runs in a worker: opening fewer takes under
 * about 50 ms on the main thread, less than a worker takes to start. */
const WORKER_MIN_NOTES = 2000;

/** How long the engine may keep a person waiting before a Notice says why. */
const SLOW_MS = 1000;
/** Where this device's id is kept on mobile (device.ts). */
const DEVICE_KEY = "datanotes-device";
/** How long after a change in `.datanotes/` it is looked at: a sync brings files in bursts. */
const STORE_SETTLE_MS = 200;
/** How long after the open the rows it did not read are read: Obsidian's own
 * start, and other plugins', go first. */
const READ_ROWS_AFTER_MS = 1000;

export default class DatanotesPlugin extends Plugin {
	settings: PluginSettings = { ...DEFAULT_SETTINGS };
	private host: Host | null = null;
	private fs: ObsidianFileSystem | null = null;
	/** The registry, asked of the engine when the palette first needs it: its
	 * schemas took a tenth of a small vault's start. */
	private ops: OperationInfo[] | null = null;
	private engineLoaded = false;
	private opened: (host: Host) => void = () => undefined;
	private failed: (e: unknown) => void = () => undefined;
	/** Settles once the engine is open (or could not open). */
	private readonly ready: Promise<Host> = new Promise<Host>((resolve, reject) => {
		this.opened = resolve;
		this.failed = reject;
	});
	private reached: (e: Caller) => void = () => undefined;
	private unreached: (e: unknown) => void = () => undefined;
	/** What the UI calls: the plugin's engine, or the engine that holds the vault. */
	private readonly caller: Promise<Caller> = new Promise<Caller>((resolve, reject) => {
		this.reached = resolve;
		this.unreached = reject;
	});
	private early: Change[] | null = [];
	/** This device's id, once read (null: not yet). */
	private deviceId: string | undefined | null = null;
	private listeners = new Set<() => void>();
	/** The timer set for the engine's deadline, and that deadline. */
	private timer: number | null = null;
	private timerAt: number | null = null;
	private ticking = false;
	/** Hands the engine what a sync brought to the store (watchStore). */
	private lookAtStore: () => Promise<void> = async () => undefined;
	/** What the last tick found: git at work in the vault (link repair waits for it). */
	private gitBusy = false;
	private unloaded = false;
	/** Where `datanotes call` and `datanotes mcp` reach this engine (desktop). */
	private frontDoor: Door | null = null;
	/** The datanotes binary on the PATH, if any (desktop). */
	private foundBinary: () => string | null = () => null;
	/** The bridge for agents over HTTP (desktop, with a vault folder on disk). */
	bridge: Bridge | null = null;
	/** How long the last start took, from loading the engine to the door open (ms). */
	openedInMs: number | null = null;
	/** The rows the open left unread, read in the background (`Host.readRows`). */
	rowsRead: Promise<void> = Promise.resolve();

	/** The engine as the UI calls it: waits until the engine is open. */
	readonly door: EngineDoor = {
		call: async <K extends string>(name: K, args?: unknown) => answered(name, await (await this.engineFor(name)).call(name, args ?? {})),
		onChange: (fn: () => void) => {
			this.listeners.add(fn);
			return () => this.listeners.delete(fn);
		},
		thisDevice: () => this.deviceId ?? undefined,
	};

	/** The columns' types in Obsidian's property editor (types.json). */
	readonly propertyTypes: PropertyTypes = new PropertyTypes(this.app, this.door);

	/** The row forms (New row…, Edit row…) and the tables they know. */
	readonly rowForms: RowForms = new RowForms(this.app, this.door);

	/** The rows that break a rule, for the status bar and the Problems view. */
	readonly problems: Problems = new Problems(this.door, (path, p) => {
		if (this.settings.handEditNotices) tellNotice(path, p);
	});

	async onload(): Promise<void> {
		this.ready.catch(() => undefined);
		this.caller.catch(() => undefined);
		this.settings = { ...DEFAULT_SETTINGS, ...((await this.loadData()) as Partial<PluginSettings> | null) };

		this.bridge = this.makeBridge();
		const openNote = (path: string) => void this.app.workspace.openLinkText(path, "", false);
		this.registerView(VIEW_TYPE_HISTORY, (leaf: WorkspaceLeaf) => new HistoryView(leaf, this.door));
		this.registerView(VIEW_TYPE_PROBLEMS, (leaf: WorkspaceLeaf) => new ProblemsView(leaf, this.problems, openNote, (path, broken) => void this.rowForms.editRow(path, broken)));
		registerCommands(this, {
			app: this.app,
			door: this.door,
			operations: () => (this.engineLoaded ? (this.ops ??= operations()) : []),
			openHistory: (section) => this.openHistory(section),
			openProblems: () => this.openProblems(),
			checkTables: async () => {
				await this.problems.check();
				const said = this.problems.error ?? `${statusText(this.problems.count()) || "every row keeps the rules of its table"}.`;
				new Notice(`Datanotes: ${said}`, this.problems.error === null ? 5000 : 15000);
				await this.openProblems();
			},
			model: meaningModel({
				app: this.app,
				cp: nodeModule<typeof import("node:child_process")>("child_process"),
				binary: () => this.settings.agentBinary.trim() || this.foundBinary(),
				vault: this.app.vault.adapter instanceof FileSystemAdapter ? this.app.vault.adapter.getBasePath() : null,
			}),
		});
		const bar = this.addStatusBarItem();
		bar.addClass("datanotes-status", "mod-clickable");
		bar.setAttribute("aria-label", "Open the rows that break a rule");
		bar.hide();
		const icon = bar.createSpan({ cls: "datanotes-status-icon" });
		setIcon(icon, "alert-triangle");
		const label = bar.createSpan();
		bar.addEventListener("click", () => void this.openProblems());
		this.register(
			this.problems.onChange(() => {
				// An error (metastore.yaml unreadable): the Problems view says why.
				const text = this.problems.error === null ? statusText(this.problems.count()) : NOT_CHECKED;
				label.setText(text);
				if (text) bar.show();
				else bar.hide();
			}),
		);
		this.register(this.door.onChange(() => void this.problems.follow()));
		this.rowForms.register(this);
		const agents = this.agentContext();
		this.addSettingTab(
			new DatanotesSettingTab(this.app, this, {
				door: this.door,
				settings: this.settings,
				save: () => this.saveData(this.settings),
				agents,
				bridge: this.bridgeContext(agents),
			}),
		);
		this.showBridge();
		this.addRibbonIcon("history", "Datanotes history", () => void this.openHistory());

		this.app.workspace.onLayoutReady(() => {
			// Registered here, so the creates Obsidian fires for every file at load are not seen.
			this.watchVault();
			// The tables change only with metastore.yaml (an engine write or a hand edit):
			// the forms' tables and the property types are read again then, not at every write.
			const schemaChanged = (f: TAbstractFile) => {
				if (f.path !== METASTORE) return;
				void this.rowForms.refresh();
				void this.propertyTypes.sync();
			};
			this.registerEvent(this.app.vault.on("modify", schemaChanged));
			this.registerEvent(this.app.vault.on("create", schemaChanged));
			this.start().then(
				(c) => {
					this.reached(c);
					if (c instanceof Host) this.opened(c);
					else this.failed(new Error("another engine holds the vault: the plugin forwards its calls to it"));
					void this.problems.check();
					void this.rowsRead.then(() => keepDeviceName(this.door, deviceName(this.settings.deviceName))).then((why) => why && console.warn(`datanotes: ${why}`));
					void this.propertyTypes.sync();
					void this.rowForms.refresh();
					if (this.settings.serveAgents && !this.unloaded) void this.bridge?.start();
				},
				(e) => {
					this.unreached(e);
					this.failed(e);
					console.error("datanotes: the engine could not start", e);
					new Notice(`Datanotes could not start: ${e instanceof Error ? e.message : String(e)}`, 0);
				},
			);
		});
	}

	/** The engine, once the vault is open. A call that waits for it more than a
	 * second says so, rather than seem to hang (a large vault takes a while). */
	private async engineFor(op: string): Promise<Caller> {
		let told: Notice | null = null;
		const timer = window.setTimeout(() => {
			told = new Notice("Datanotes: waiting until the vault is open…", 0);
		}, SLOW_MS);
		try {
			return await this.caller;
		} finally {
			window.clearTimeout(timer);
			(told as Notice | null)?.hide();
		}
	}

	/** The engine's host once the vault is open (rejects when it could not open). */
	whenReady(): Promise<Host> {
		return this.ready;
	}

	onunload(): void {
		this.unloaded = true;
		this.clearDeadline();
		const host = this.host;
		this.host = null;
		const door = this.frontDoor;
		this.frontDoor = null;
		void this.bridge?.stop();
		// The door first: a forwarded call must not reach a closing engine.
		void (door ? door.close() : Promise.resolve()).finally(() => host?.close());
	}

	/** Loads the engine on the vault and the store, then runs what the store asks. */
	private async start(): Promise<Caller> {
		const t0 = Date.now();
		// An open that takes more than a second shows that it is under way.
		let opening: Notice | null = null;
		const slow = window.setTimeout(() => {
			opening = new Notice("Datanotes: opening the vault…", 0);
		}, SLOW_MS);
		try {
			return await this.openVault(t0);
		} finally {
			window.clearTimeout(slow);
			(opening as Notice | null)?.hide();
		}
	}

	private async openVault(t0: number): Promise<Caller> {
		const zlib = nodeModule<typeof import("node:zlib")>("zlib");
		const module = await compileEngine(wasmBytes, zlib ? (b) => zlib.gunzipSync(b) : undefined);
		await loadEngine(module);
		this.engineLoaded = true;
		const fs = new ObsidianFileSystem(this.app, (path) => this.ownerOnly(path), this.links());
		const forwarded = await this.heldElsewhere(fs);
		if (forwarded) {
			this.early = null;
			return forwarded;
		}
		// Listed, not read: the engine names the notes it needs (below).
		const [files, store] = await Promise.all([fs.listVault(), fs.listStore()]);
		for (const w of fs.warnings) console.warn(`datanotes: ${w}`);
		if (fs.warnings.length > 0) {
			new Notice(`Datanotes: ${fs.warnings.length} symbolic link(s) left out of the tables (the developer console names them); the engine never reads or writes through links.`);
		}
		if (this.unloaded) throw new Error("the plugin was disabled while it opened the vault");
		const device = this.device();
		// What the engine derived from each note at the last open: the notes whose
		// size and mtime it vouches for are not parsed again.
		const cache = await fs.readStoreBytes(notesCachePath(device)).catch(() => null);
		const engine = await this.startEngine(module, files, store, device, cache);
		// The notes the cache does not vouch for. A row unchanged since the last
		// open is read in the background once the engine answers (below), a note
		// outside the tables when a turn needs its text.
		// Handed over a batch at a time, in the engine's order (a sync tool's
		// copy after its original): neither the engine nor Obsidian holds every
		// text at once.
		const sizes = new Map(files.map((f) => [f.path, "size" in f ? f.size : f.text.length]));
		for (const wanted of batches(await engine.toRead(), (p) => sizes.get(p) ?? 0)) {
			if (this.unloaded) break;
			const { files: read, gone } = await fs.readNotes(wanted);
			// A note left unread would look removed to the engine's comparison
			// with what it last knew: the open fails instead, as a read at open did.
			const unread = wanted.length - read.length - gone.length;
			if (unread > 0) {
				engine.free();
				const done = new Set([...read.map((f) => f.path), ...gone]);
				throw new Error(`${unread} note(s) could not be read, ${wanted.find((p) => !done.has(p))} first: check that Obsidian may read them, then reload the plugin`);
			}
			await engine.readNotes(read, gone, true);
		}
		if (this.unloaded) {
			// Disabled while a worker opened the vault: nothing may outlive the plugin.
			engine.free();
			throw new Error("the plugin was disabled while it opened the vault");
		}
		const host = new Host(engine, fs, {
			actor: "obsidian",
			warn: (line) => console.warn(`datanotes: ${line}`),
			post: (d) => post(d),
			sleep: (ms) => new Promise((resolve) => window.setTimeout(resolve, ms)),
		});
		this.fs = fs;
		this.host = host;
		host.onChange(() => {
			this.schedule();
			for (const fn of this.listeners) fn();
		});
		await host.open();
		void host.keepCache();
		this.rowsRead = new Promise<void>((resolve) => window.setTimeout(resolve, READ_ROWS_AFTER_MS)).then(async () => {
			try {
				if (!this.unloaded) await host.readRows();
			} catch (e) {
				// Nothing is lost: a turn that needs a row reads it first.
				console.warn("datanotes: the rows were not read in the background", e);
			}
		});
		// Changes seen while the engine was opening: the engine skips those it read already.
		const early = this.early ?? [];
		this.early = null;
		for (const c of early) void host.observe(c);
		this.schedule();
		if (device !== undefined) await this.watchStore(host, device);
		await this.openFrontDoor(fs, host);
		this.openedInMs = Date.now() - t0;
		return host;
	}

	/** Looks at `.datanotes/` for the files a sync tool brings from another
	 * device, and hands them to the engine (store-watch.ts): before each tick (a
	 * note that came with them is then that device's write when the round of
	 * hand edits looks at it), when the folder changes (desktop: Node's watcher;
	 * Obsidian reports no change in dot folders) and when Obsidian comes back to
	 * the foreground. No timer runs while nothing happens. */
	private async watchStore(host: Host, device: string): Promise<void> {
		const adapter = this.app.vault.adapter;
		const watch = new StoreWatch({ stat: (p) => adapter.stat(p), list: (p) => adapter.list(p), read: (p) => adapter.read(p) }, device, STORE_DIR);
		await watch.start();
		let looking: Promise<void> | null = null;
		this.lookAtStore = () => {
			looking ??= (async () => {
				try {
					if (!this.unloaded) await host.storeSynced(await watch.poll());
				} catch (e) {
					console.warn("datanotes: the store files a sync brought were not taken in", e);
				} finally {
					looking = null;
				}
			})();
			return looking;
		};
		let soon: number | null = null;
		const lookSoon = (): void => {
			soon ??= window.setTimeout(() => {
				soon = null;
				void this.lookAtStore().then(() => this.schedule());
			}, STORE_SETTLE_MS);
		};
		this.registerDomEvent(document, "visibilitychange", () => {
			if (document.visibilityState === "visible") lookSoon();
		});
		const nodeFs = nodeModule<typeof import("node:fs")>("fs");
		if (!(adapter instanceof FileSystemAdapter) || !nodeFs) return;
		try {
			const watcher = nodeFs.watch(`${adapter.getBasePath()}/${STORE_DIR}`, { recursive: true }, lookSoon);
			watcher.on("error", () => watcher.close());
			this.register(() => watcher.close());
		} catch (e) {
			console.warn("datanotes: .datanotes is looked at before each round of hand edits only (no folder watcher here)", e);
		}
	}

	/** The engine in a Web Worker, so that its work never holds up Obsidian; in
	 * this thread for a small vault (whose work is short, and a worker's start
	 * would be most of it) or when no worker can be started (then it says why). */
	private async startEngine(module: WebAssembly.Module, files: (NoteFile | NoteListed)[], store: StoreFile[], device?: string, cache?: Uint8Array | null): Promise<EngineApi> {
		const key = device === undefined ? null : this.keptKey(device);
		if (ENGINE_WORKER_SOURCE && typeof Worker === "function" && files.length >= WORKER_MIN_NOTES) {
			let url: string | null = null;
			let worker: Worker | null = null;
			try {
				url = URL.createObjectURL(new Blob([ENGINE_WORKER_SOURCE], { type: "text/javascript" }));
				worker = new Worker(url);
				const engine = new WorkerEngine(worker);
				await engine.init(module, files, store, Date.now(), crypto.getRandomValues(new Uint8Array(32)), device, cache, key);
				return engine;
			} catch (e) {
				worker?.terminate();
				console.warn("datanotes: the engine runs on Obsidian's main thread (its worker did not start):", e);
			} finally {
				if (url) URL.revokeObjectURL(url);
			}
		}
		return openEngine(files, store, Date.now(), undefined, device, cache, key);
	}

	/** Device `id`'s key (device.ts): the binary's file on the desktop, Obsidian's
	 * local storage on mobile; null when none can be kept (warned). */
	private keptKey(id: string): Uint8Array | null {
		const random = (): Uint8Array => crypto.getRandomValues(new Uint8Array(32));
		const fs = nodeModule<typeof import("node:fs")>("fs");
		const path = nodeModule<typeof import("node:path")>("path");
		const proc = nodeModule<typeof import("node:process")>("process");
		const local = `${DEVICE_KEY}-key-${id}`;
		const store: DeviceStore | null =
			fs && path && proc ? nodeKeyStore(fs, proc, path, id) : localStore((k) => this.app.loadLocalStorage(k), (k, v) => this.app.saveLocalStorage(k, v), local);
		const key = store ? deviceKey(store, random) : null;
		if (!key) console.warn("datanotes: no device key can be kept here: this device's store files are trusted by their names alone");
		return key;
	}

	/** This device's id (device.ts): the binary's file on the desktop, Obsidian's
	 * local storage on mobile; undefined when none can be kept (warned once). */
	private device(): string | undefined {
		if (this.deviceId === null) this.deviceId = this.keptDevice();
		return this.deviceId;
	}

	private keptDevice(): string | undefined {
		const random = (): Uint8Array => crypto.getRandomValues(new Uint8Array(10));
		const fs = nodeModule<typeof import("node:fs")>("fs");
		const path = nodeModule<typeof import("node:path")>("path");
		const proc = nodeModule<typeof import("node:process")>("process");
		const store: DeviceStore | null =
			fs && path && proc ? nodeDeviceStore(fs, proc, path) : localStore((k) => this.app.loadLocalStorage(k), (k, v) => this.app.saveLocalStorage(k, v), DEVICE_KEY);
		const id = store ? deviceId(store, random) : null;
		if (id) return id;
		console.warn("datanotes: no device id can be kept here: the store's files are named as for one device only");
		return undefined;
	}

	/** On desktop: the engine that holds the vault already (a live `datanotes serve`
	 * or `mcp`), to forward to rather than open a second engine. */
	private async heldElsewhere(fs: ObsidianFileSystem): Promise<Forwarded | null> {
		const lock = parseLock(await fs.readStore(LOCK), this.device());
		const http = nodeModule<typeof import("node:http")>("http");
		const crypto = nodeModule<typeof import("node:crypto")>("crypto");
		const proc = nodeModule<Proc>("process");
		if (!lock || !http || !crypto || !proc) return null;
		const token = (await fs.readStore(TOKEN))?.trim() ?? "";
		const answer = await challenge(crypto, httpGet(http), lock, token, proc, this.vaultId());
		// An engine of another vault (the same token) holds not this one.
		if (answer === "silent" || answer === "elsewhere") return null;
		if (answer === "wrong") {
			const why = token ? "cannot prove it holds the vault's token (.datanotes/token)" : "cannot be reached: .datanotes/token is missing";
			throw new Error(
				`this vault is held by process ${lock.pid} at ${loopbackUrl(lock)}, which ${why}: stop it, or start it without DATANOTES_TOKEN; if it is not datanotes, delete .datanotes/lock`,
			);
		}
		new Notice(`Datanotes: this vault is held by process ${lock.pid} at ${loopbackUrl(lock)} (datanotes serve or mcp); the plugin sends its calls there.`);
		return new Forwarded(lock, token, async (url, body, headers) => {
			const r = await requestUrl({ url, method: "POST", body, headers, throw: false });
			return { status: r.status, text: r.text };
		});
	}

	/** On desktop, what the settings need to connect an agent: the vault's folder,
	 * the door's address and the tokens (agents.ts). */
	private agentContext(): AgentContext | undefined {
		const crypto = nodeModule<typeof import("node:crypto")>("crypto");
		if (!crypto) return undefined;
		const adapter = this.app.vault.adapter;
		return {
			app: this.app,
			vaultPath: () => (adapter instanceof FileSystemAdapter ? adapter.getBasePath() : null),
			doorUrl: () => this.frontDoor?.url ?? null,
			tokens: {
				fs: new ObsidianFileSystem(this.app, (path) => this.ownerOnly(path), this.links()),
				sha256: (t) => crypto.createHash("sha256").update(t).digest("hex"),
				newToken: () => crypto.randomBytes(32).toString("hex"),
				ownerOnly: (path) => this.ownerOnly(path),
				now: () => Date.now(),
			},
			tokenChanged: async () => {
				await this.frontDoor?.reloadToken();
			},
			copy: (text) => navigator.clipboard.writeText(text),
		};
	}

	/** On desktop with the vault on disk: the bridge, not started. */
	private makeBridge(): Bridge | null {
		const cp = nodeModule<typeof import("node:child_process")>("child_process");
		const nodeFs = nodeModule<typeof import("node:fs")>("fs");
		const proc = nodeModule<typeof import("node:process")>("process");
		const adapter = this.app.vault.adapter;
		if (!cp || !nodeFs || !proc || !(adapter instanceof FileSystemAdapter)) return null;
		const runnable = (p: string) => {
			try {
				nodeFs.accessSync(p, nodeFs.constants.X_OK);
				return nodeFs.statSync(p).isFile();
			} catch {
				return false;
			}
		};
		this.foundBinary = () => findBinary(proc.env.PATH, proc.env.HOME ?? proc.env.USERPROFILE, proc.platform === "win32", runnable);
		return new Bridge({
			cp,
			vault: adapter.getBasePath(),
			version: this.manifest.version,
			env: proc.env,
			binary: () => {
				const path = this.settings.agentBinary.trim() || this.foundBinary();
				return path ? { path } : { error: "datanotes was not found on the PATH: install it, or give its path in the setting Datanotes binary" };
			},
			port: () => this.settings.agentPort,
			setTimer: (fn, ms) => window.setTimeout(fn, ms),
			clearTimer: (id) => window.clearTimeout(id),
			now: () => Date.now(),
		});
	}

	private bridgeContext(agents: AgentContext | undefined): BridgeContext | undefined {
		if (!this.bridge || !agents) return undefined;
		return {
			bridge: this.bridge,
			settings: this.settings,
			save: () => this.saveData(this.settings),
			found: () => this.foundBinary(),
			ownerToken: () => ownerTokenOf(agents.tokens),
			copy: (text) => agents.copy(text),
		};
	}

	/** The bridge's state in the status bar, while it is on. */
	private showBridge(): void {
		if (this.bridge) this.register(bridgeStatus(this.addStatusBarItem(), this.bridge));
	}

	/** On desktop, the vault's symbolic links as the disk has them (links.ts). */
	private links(): Links {
		const adapter = this.app.vault.adapter;
		const nodeFs = nodeModule<typeof import("node:fs")>("fs");
		if (!(adapter instanceof FileSystemAdapter) || !nodeFs) return NO_LINKS;
		return nodeLinks(nodeFs, adapter.getBasePath());
	}

	/** On desktop, this vault as lock proofs name it (door.ts `vaultIdOf`). */
	private vaultId(): VaultId {
		const adapter = this.app.vault.adapter;
		const nodeFs = nodeModule<typeof import("node:fs")>("fs");
		if (!(adapter instanceof FileSystemAdapter) || !nodeFs) return { path: "", store: "" };
		return vaultIdOf(nodeFs, Platform.isWin ? "win32" : "other", adapter.getBasePath());
	}

	/** On desktop, makes a store file readable by its owner alone (chmod 600). */
	private async ownerOnly(path: string): Promise<void> {
		const adapter = this.app.vault.adapter;
		const nodeFs = nodeModule<typeof import("node:fs")>("fs");
		if (!(adapter instanceof FileSystemAdapter) || !nodeFs) return;
		await nodeFs.promises.chmod(`${adapter.getBasePath()}/${STORE_DIR}/${path}`, 0o600);
	}

	/** On desktop, holds the vault for the binary's tools: they forward to this
	 * engine rather than open a second one (see door.ts). */
	private async openFrontDoor(fs: ObsidianFileSystem, host: Host): Promise<void> {
		const http = nodeModule<typeof import("node:http")>("http");
		const crypto = nodeModule<typeof import("node:crypto")>("crypto");
		const proc = nodeModule<Proc>("process");
		if (!http || !crypto || !proc) return;
		try {
			const door = await openDoor(
				{
					http,
					fs,
					call: (op, args, actor) => host.call(op, args, actor),
					record: (call) => host.recordToolCall(call),
					pid: proc.pid,
					device: this.device(),
					now: () => Date.now(),
					newToken: () => crypto.randomBytes(32).toString("hex"),
					crypto,
					ownerOnly: (path) => this.ownerOnly(path),
					vault: () => this.vaultId(),
					shut: () => !this.settings.loopbackDoor,
				},
				(l, token) => challenge(crypto, httpGet(http), l, token, proc, this.vaultId()),
			);
			if (this.unloaded) return void door.close();
			this.frontDoor = door;
		} catch (e) {
			new Notice(
				`Datanotes: ${e instanceof Error ? e.message : String(e)}. Stop that datanotes serve or mcp and reload the plugin: two engines must not write one vault.`,
				0,
			);
		}
	}

	private watchVault(): void {
		const on = (kind: VaultEvent["kind"]) => (file: TAbstractFile, from?: string) => {
			if (!(file instanceof TFile)) return;
			this.changed(kind === "renamed" ? { kind, path: file.path, from } : { kind, path: file.path });
		};
		this.registerEvent(this.app.vault.on("create", on("created")));
		this.registerEvent(this.app.vault.on("modify", on("modified")));
		this.registerEvent(this.app.vault.on("delete", on("removed")));
		this.registerEvent(this.app.vault.on("rename", on("renamed")));
	}

	private changed(c: Change): void {
		if (this.early) {
			this.early.push(c);
			return;
		}
		const host = this.host;
		if (!host) return;
		host.observe(c).then(
			() => this.schedule(),
			(e) => console.warn("datanotes: a vault change was not reported", e),
		);
	}

	private async tick(): Promise<void> {
		const host = this.host;
		// One tick at a time: a long write must not stack ticks behind it.
		if (!host || this.ticking) return;
		this.ticking = true;
		try {
			this.gitBusy = this.fs ? await this.fs.gitBusy() : false;
			host.setGitBusy(this.gitBusy);
			await this.lookAtStore();
			await host.tick();
		} catch (e) {
			console.warn("datanotes: tick failed", e);
		} finally {
			this.ticking = false;
		}
		this.schedule();
	}

	/** One timer, for the engine's next deadline (or a recheck while git works or
	 * writes are owed); none while nothing is due. */
	private schedule(): void {
		const host = this.host;
		if (!host) return;
		const now = Date.now();
		let next = host.nextDeadline();
		if (this.gitBusy || host.owes()) next = Math.min(next ?? Number.POSITIVE_INFINITY, now + RECHECK_MS);
		if (next === null || (this.timerAt !== null && this.timerAt <= next)) return;
		this.clearDeadline();
		this.timerAt = next;
		const due = next;
		const wait = Math.min(Math.max(0, due - now) + 5, LONGEST_WAIT_MS);
		this.timer = window.setTimeout(() => {
			this.timer = null;
			this.timerAt = null;
			if (Date.now() < due) this.schedule();
			else void this.tick();
		}, wait);
	}

	/** When the next tick is set for (ms since the epoch), if any: for the tests. */
	wakesAt(): number | null {
		return this.timerAt;
	}

	private clearDeadline(): void {
		if (this.timer !== null) window.clearTimeout(this.timer);
		this.timer = null;
		this.timerAt = null;
	}

	/** Opens the Problems view in the right sidebar (or reveals it). */
	async openProblems(): Promise<void> {
		await this.reveal(VIEW_TYPE_PROBLEMS);
	}

	async openHistory(section?: Section): Promise<void> {
		const leaf = await this.reveal(VIEW_TYPE_HISTORY);
		if (section && leaf?.view instanceof HistoryView) await leaf.view.show(section);
	}

	/** The leaf of a view of this type, opened in the right sidebar if none is, and revealed. */
	private async reveal(type: string): Promise<WorkspaceLeaf | null> {
		const { workspace } = this.app;
		let leaf: WorkspaceLeaf | null = workspace.getLeavesOfType(type)[0] ?? null;
		if (!leaf) {
			leaf = workspace.getRightLeaf(false);
			if (!leaf) return null;
			await leaf.setViewState({ type, active: true });
		}
		await workspace.revealLeaf(leaf);
		return leaf;
	}
}

/** A Node module: Obsidian's desktop renderer has them (window.require), mobile
 * has not (null). The plugin imports none, so its bundle loads on mobile too. */
function nodeModule<T>(name: string): T | null {
	const load = (window as Window & { require?: (id: string) => unknown }).require;
	if (!Platform.isDesktopApp || typeof load !== "function") return null;
	try {
		return load(name) as T;
	} catch {
		return null;
	}
}

/** A webhook delivery, through Obsidian's requestUrl (no CORS, desktop and mobile). */
async function post(d: Delivery): Promise<PostResult> {
	if (!/^https?:\/\//i.test(d.url)) return { error: `${d.url} is not an http or https URL: not delivered` };
	const headers: Record<string, string> = {};
	for (const [k, v] of d.headers) headers[k] = v;
	const typed = Object.keys(headers).some((k) => k.toLowerCase() === "content-type");
	const res = await requestUrl({
		url: d.url,
		method: "POST",
		body: d.body,
		headers,
		contentType: typed ? undefined : "application/json",
		throw: false,
	});
	return { status: res.status };
}
