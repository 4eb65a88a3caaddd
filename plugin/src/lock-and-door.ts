// The vault's lock and the door that holds it (door.ts), on the desktop: at
// open, whether a live `datanotes serve` or `mcp` holds the vault already (the
// plugin then sends its calls there rather than open a second engine); once
// this engine is open, the loopback door through which `datanotes call` and
// `datanotes mcp` reach it. Mobile has neither.

import { Notice, requestUrl } from "obsidian";
import { challenge, type Door, Forwarded, httpGet, LOCK, loopbackUrl, openDoor, parseLock, type Proc, TOKEN } from "./door";
import type { ObsidianFileSystem } from "./fs";
import type { Host } from "./host";
import { nodeModule } from "./node-modules";
import type { ThisDevice } from "./this-device";
import type { VaultDisk } from "./vault-disk";

export interface HoldOptions {
	disk: VaultDisk;
	device: ThisDevice;
	/** True while the person has turned the door off in the settings. */
	shut: () => boolean;
}

/** Node's modules the lock's challenge and the door need (desktop), or null. */
function nodeNet(): { http: typeof import("node:http"); crypto: typeof import("node:crypto"); proc: Proc } | null {
	const http = nodeModule<typeof import("node:http")>("http");
	const crypto = nodeModule<typeof import("node:crypto")>("crypto");
	const proc = nodeModule<Proc>("process");
	return http && crypto && proc ? { http, crypto, proc } : null;
}

export class VaultHold {
	private door: Door | null = null;
	private closed = false;

	constructor(private readonly o: HoldOptions) {}

	/** Where `datanotes call` and `datanotes mcp` reach this engine, once the door is open. */
	url(): string | null {
		return this.door?.url ?? null;
	}

	/** Reads the owner's token again (it was made anew in the settings). */
	async reloadToken(): Promise<void> {
		await this.door?.reloadToken();
	}

	/** The engine that holds the vault already, to forward to; null when none
	 * does. Throws when the lock names a live process that cannot prove it holds it. */
	async elsewhere(fs: ObsidianFileSystem): Promise<Forwarded | null> {
		const lock = parseLock(await fs.readStore(LOCK), this.o.device.id());
		const net = nodeNet();
		if (!lock || !net) return null;
		const token = (await fs.readStore(TOKEN))?.trim() ?? "";
		const answer = await challenge(net.crypto, httpGet(net.http), lock, token, net.proc, this.o.disk.vaultId());
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

	/** Holds the vault for the binary's tools: they forward to `host` rather
	 * than open a second engine. A door that cannot open is said in a Notice. */
	async open(fs: ObsidianFileSystem, host: Host): Promise<void> {
		const net = nodeNet();
		if (!net) return;
		const { http, crypto, proc } = net;
		try {
			const door = await openDoor(
				{
					http,
					fs,
					call: (op, args, actor) => host.call(op, args, actor),
					record: (call) => host.recordToolCall(call),
					pid: proc.pid,
					device: this.o.device.id(),
					now: () => Date.now(),
					newToken: () => crypto.randomBytes(32).toString("hex"),
					crypto,
					ownerOnly: (path) => this.o.disk.ownerOnly(path),
					vault: () => this.o.disk.vaultId(),
					shut: this.o.shut,
				},
				(l, token) => challenge(crypto, httpGet(http), l, token, proc, this.o.disk.vaultId()),
			);
			if (this.closed) return void door.close();
			this.door = door;
		} catch (e) {
			new Notice(
				`Datanotes: ${e instanceof Error ? e.message : String(e)}. Stop that datanotes serve or mcp and reload the plugin: two engines must not write one vault.`,
				0,
			);
		}
	}

	/** Closes the door, and any that opens from now on: first at unload, so
	 * that no forwarded call reaches a closing engine. */
	close(): Promise<void> {
		this.closed = true;
		const door = this.door;
		this.door = null;
		return door ? door.close() : Promise.resolve();
	}
}
