// The Datanotes plugin: wires the wasm engine to the vault. The engine decides;
// host.ts carries its calls out, fs.ts touches the files, the rest is UI. What
// the plugin holds is each a module's: opening.ts opens the engine (in the
// thread engine-thread.ts chooses), this-device.ts is this device,
// lock-and-door.ts the vault's lock and the door for the binary's tools,
// vault-watch.ts and sync-watch.ts what changes in the vault and its store,
// between-calls.ts the engine's deadlines, waiting-door.ts the engine as the
// views call it, agent-wiring.ts the binary and the bridge for agents.

import { Notice, Plugin, type WorkspaceLeaf } from "obsidian";
import { Agents } from "./agent-wiring";
import { BetweenCalls } from "./between-calls";
import type { Bridge } from "./bridge";
import { registerCommands } from "./commands";
import { operations } from "./engine";
import { type EngineDoor, HistoryView, type Section, VIEW_TYPE_HISTORY } from "./history-view";
import type { Host } from "./host";
import { VaultHold } from "./lock-and-door";
import { deviceName, keepDeviceName } from "./device-name";
import { meaningModel } from "./model-install";
import { nodeModule } from "./node-modules";
import { openVault } from "./opening";
import { Problems, ProblemsView, statusText, tellNotice, VIEW_TYPE_PROBLEMS } from "./problems";
import { PropertyTypes } from "./property-types";
import { putBack } from "./put-back";
import { RowForms } from "./row-commands";
import { DatanotesSettingTab, DEFAULT_SETTINGS, type PluginSettings } from "./settings";
import { showBridge, showProblems } from "./status-bar";
import { SyncWatch } from "./sync-watch";
import { ThisDevice } from "./this-device";
import type { OperationInfo } from "./types";
import { VaultDisk } from "./vault-disk";
import { watchSchema, watchVault } from "./vault-watch";
import { type Caller, noticeIfSlow, WaitingDoor } from "./waiting-door";

export default class DatanotesPlugin extends Plugin {
	settings: PluginSettings = { ...DEFAULT_SETTINGS };
	/** This plugin's engine, once open (null: not yet, forwarded, or unloaded). */
	private host: Host | null = null;
	/** The registry, asked of the engine when the palette first needs it: its
	 * schemas took a tenth of a small vault's start. */
	private ops: OperationInfo[] | null = null;
	private engineLoaded = false;
	private unloaded = false;
	private readonly disk = new VaultDisk(this.app);
	private readonly device = new ThisDevice(this.app);
	private readonly waiting = new WaitingDoor(() => this.device.known());
	private readonly hold = new VaultHold({ disk: this.disk, device: this.device, shut: () => !this.settings.loopbackDoor });
	private readonly syncWatch = new SyncWatch({ app: this.app, owner: this, disk: this.disk, unloaded: () => this.unloaded, looked: () => this.loop.schedule() });
	/** Between the engine's calls: its deadlines, owed writes, the vault's changes. */
	private readonly loop = new BetweenCalls({
		setTimer: (fn, ms) => {
			const id = window.setTimeout(fn, ms);
			return () => window.clearTimeout(id);
		},
		warn: (line, e) => console.warn(`datanotes: ${line}`, e),
		beforeTick: () => this.syncWatch.look(),
	});
	/** The bridge for agents over HTTP (desktop, with a vault folder on disk). */
	bridge: Bridge | null = null;
	/** How long the last start took, from loading the engine to the door open (ms). */
	openedInMs: number | null = null;
	/** The rows the open left unread, read in the background (`Host.readRows`). */
	rowsRead: Promise<void> = Promise.resolve();

	/** The engine as the UI calls it: waits until the engine is open. */
	readonly door: EngineDoor = this.waiting.door;

	/** The columns' types in Obsidian's property editor (types.json). */
	readonly propertyTypes: PropertyTypes = new PropertyTypes(this.app, this.door);

	/** The row forms (New row…, Edit row…) and the tables they know. */
	readonly rowForms: RowForms = new RowForms(this.app, this.door);

	/** The rows that break a rule, for the status bar and the Problems view. */
	readonly problems: Problems = new Problems(this.door, (path, p) => {
		if (!this.settings.handEditNotices) return;
		tellNotice(path, p, {
			editRow: (row, broken) => void this.rowForms.editRow(row, broken),
			putBack: (row) => void putBack(this.app, this.door, row, (said) => new Notice(`Datanotes: ${said}`, 10000)),
		});
	});

	async onload(): Promise<void> {
		this.settings = { ...DEFAULT_SETTINGS, ...((await this.loadData()) as Partial<PluginSettings> | null) };
		const save = () => this.saveData(this.settings);
		const agents = new Agents({ app: this.app, disk: this.disk, hold: this.hold, version: this.manifest.version, settings: this.settings, save });
		this.bridge = agents.bridge;
		const openNote = (path: string) => void this.app.workspace.openLinkText(path, "", false);
		const editRow = (path: string) => void this.rowForms.editRow(path);
		this.registerView(VIEW_TYPE_HISTORY, (leaf: WorkspaceLeaf) => new HistoryView(leaf, this.door, editRow));
		this.registerView(VIEW_TYPE_PROBLEMS, (leaf: WorkspaceLeaf) => new ProblemsView(leaf, this.problems, openNote, (path, broken) => void this.rowForms.editRow(path, broken)));
		registerCommands(this, {
			app: this.app,
			door: this.door,
			operations: () => (this.engineLoaded ? (this.ops ??= operations()) : []),
			openHistory: (section) => this.openHistory(section),
			openProblems: () => this.openProblems(),
			checkTables: () => this.checkTables(),
			editRow,
			model: meaningModel({ app: this.app, cp: nodeModule<typeof import("node:child_process")>("child_process"), binary: () => agents.binary(), vault: this.disk.basePath() }),
		});
		showProblems(this, this.problems, () => void this.openProblems());
		this.register(this.door.onChange(() => void this.problems.follow()));
		this.rowForms.register(this);
		const context = agents.context();
		this.addSettingTab(new DatanotesSettingTab(this.app, this, { door: this.door, settings: this.settings, save, agents: context, bridge: agents.bridgeContext(context) }));
		showBridge(this, this.bridge);
		this.addRibbonIcon("history", "Datanotes history", () => void this.openHistory());
		this.app.workspace.onLayoutReady(() => this.layoutReady());
	}

	private layoutReady(): void {
		// Registered here, so the creates Obsidian fires for every file at load are not seen.
		watchVault(this, this.app.vault, (c) => this.loop.observe(c));
		watchSchema(this, this.app.vault, () => {
			this.background(this.rowForms.refresh());
			this.background(this.propertyTypes.sync());
		});
		noticeIfSlow("Datanotes: opening the vault…", () => this.start()).then(
			(c) => {
				this.waiting.reach(c);
				void this.problems.check();
				this.background(this.rowsRead.then(() => keepDeviceName(this.waiting.door, deviceName(this.settings.deviceName))).then((why) => why && console.warn(`datanotes: ${why}`)));
				this.background(this.propertyTypes.sync());
				this.background(this.rowForms.refresh());
				if (this.settings.serveAgents && !this.unloaded) void this.bridge?.start();
			},
			(e) => {
				this.waiting.fail(e);
				console.error("datanotes: the engine could not start", e);
				new Notice(`Datanotes could not start: ${e instanceof Error ? e.message : String(e)}`, 0);
			},
		);
	}

	/** Opens the engine on the vault and the store (or reaches the engine that
	 * holds the vault), then runs the loop, the store's watch and the door. */
	private async start(): Promise<Caller> {
		const t0 = Date.now();
		const opened = await openVault({
			app: this.app,
			disk: this.disk,
			device: this.device,
			elsewhere: (fs) => this.hold.elsewhere(fs),
			unloaded: () => this.unloaded,
			loaded: () => {
				this.engineLoaded = true;
			},
			made: (host) => {
				this.host = host;
				host.onChange(() => this.waiting.changed());
			},
		});
		if ("forwarded" in opened) {
			this.loop.forgo();
			return opened.forwarded;
		}
		const { host, fs } = opened;
		this.rowsRead = opened.rowsRead;
		this.loop.attach(host, () => fs.gitBusy());
		const device = this.device.id();
		if (device !== undefined) await this.syncWatch.start(host, device);
		await this.hold.open(fs, host);
		this.openedInMs = Date.now() - t0;
		return host;
	}

	/** The engine's host once the vault is open (rejects when it could not open). */
	whenReady(): Promise<Host> {
		return this.waiting.ready;
	}

	/** Work started after the open that nobody waits for: a failure is said
	 * in the console, unless the plugin was unloaded meanwhile (the engine is
	 * closed then, and every call refused). */
	private background(work: Promise<unknown>): void {
		work.catch((e: unknown) => {
			if (!this.unloaded) console.warn("datanotes:", e);
		});
	}

	onunload(): void {
		this.unloaded = true;
		this.loop.stop();
		const host = this.host;
		this.host = null;
		void this.bridge?.stop();
		// The door first: a forwarded call must not reach a closing engine.
		void this.hold.close().finally(() => host?.close());
	}

	/** When the next tick is set for (ms since the epoch), if any: for the tests. */
	wakesAt(): number | null {
		return this.loop.wakesAt();
	}

	private async checkTables(): Promise<void> {
		await this.problems.check();
		const said = this.problems.error ?? `${statusText(this.problems.count()) || "every row keeps the rules of its table"}.`;
		new Notice(`Datanotes: ${said}`, this.problems.error === null ? 5000 : 15000);
		await this.openProblems();
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
