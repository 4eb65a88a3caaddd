// What connects agents to the vault on the desktop: the datanotes binary (the
// settings' path, or the one on the PATH), the bridge the plugin runs for them
// over HTTP, and what the settings' rows for agents and the bridge need.

import type { App } from "obsidian";
import type { AgentContext } from "./agent-settings";
import { ownerTokenOf } from "./agents";
import { Bridge, findBinary } from "./bridge";
import type { BridgeContext } from "./bridge-settings";
import type { VaultHold } from "./lock-and-door";
import { nodeModule } from "./node-modules";
import type { PluginSettings } from "./settings";
import type { VaultDisk } from "./vault-disk";

export interface AgentWiringOptions {
	app: App;
	disk: VaultDisk;
	hold: VaultHold;
	/** The plugin's version: the bridge's binary must be the same. */
	version: string;
	settings: PluginSettings;
	save: () => Promise<void>;
}

export class Agents {
	/** The bridge for agents over HTTP (desktop, with a vault folder on disk), not started. */
	readonly bridge: Bridge | null = null;
	/** The datanotes binary on the PATH, if any (desktop). */
	readonly found: () => string | null = () => null;

	constructor(private readonly o: AgentWiringOptions) {
		const cp = nodeModule<typeof import("node:child_process")>("child_process");
		const nodeFs = nodeModule<typeof import("node:fs")>("fs");
		const proc = nodeModule<typeof import("node:process")>("process");
		const vault = o.disk.basePath();
		if (!cp || !nodeFs || !proc || vault === null) return;
		const runnable = (p: string) => {
			try {
				nodeFs.accessSync(p, nodeFs.constants.X_OK);
				return nodeFs.statSync(p).isFile();
			} catch {
				return false;
			}
		};
		this.found = () => findBinary(proc.env.PATH, proc.env.HOME ?? proc.env.USERPROFILE, proc.platform === "win32", runnable);
		this.bridge = new Bridge({
			cp,
			vault,
			version: o.version,
			env: proc.env,
			binary: () => {
				const path = this.binary();
				return path ? { path } : { error: "datanotes was not found on the PATH: install it, or give its path in the setting Datanotes binary" };
			},
			port: () => o.settings.agentPort,
			setTimer: (fn, ms) => window.setTimeout(fn, ms),
			clearTimer: (id) => window.clearTimeout(id),
			now: () => Date.now(),
		});
	}

	/** The binary the settings name, or else the one on the PATH. */
	binary(): string | null {
		return this.o.settings.agentBinary.trim() || this.found();
	}

	/** On desktop, what the settings need to connect an agent: the vault's
	 * folder, the door's address and the tokens (agents.ts). */
	context(): AgentContext | undefined {
		const crypto = nodeModule<typeof import("node:crypto")>("crypto");
		if (!crypto) return undefined;
		const { app, disk, hold } = this.o;
		return {
			app,
			vaultPath: () => disk.basePath(),
			doorUrl: () => hold.url(),
			tokens: {
				fs: disk.fileSystem(),
				sha256: (t) => crypto.createHash("sha256").update(t).digest("hex"),
				newToken: () => crypto.randomBytes(32).toString("hex"),
				ownerOnly: (path) => disk.ownerOnly(path),
				now: () => Date.now(),
			},
			tokenChanged: () => hold.reloadToken(),
			copy: (text) => navigator.clipboard.writeText(text),
		};
	}

	/** What the bridge's settings rows need (desktop, with agents' context). */
	bridgeContext(agents: AgentContext | undefined): BridgeContext | undefined {
		if (!this.bridge || !agents) return undefined;
		return {
			bridge: this.bridge,
			settings: this.o.settings,
			save: this.o.save,
			found: () => this.found(),
			ownerToken: () => ownerTokenOf(agents.tokens),
			copy: (text) => agents.copy(text),
		};
	}
}
