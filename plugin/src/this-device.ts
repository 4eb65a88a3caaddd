// This device as the plugin keeps it (device.ts): its id, which the store's
// files carry, and its key, which signs them. On the desktop in the binary's
// files, so that the plugin and the binary on one machine are one device; on
// mobile in Obsidian's local storage.

import type { App } from "obsidian";
import { type DeviceStore, deviceId, deviceKey, localStore, nodeDeviceStore, nodeKeyStore } from "./device";
import { nodeModule } from "./node-modules";

/** Where this device's id is kept on mobile; its key is beside it. */
const DEVICE_KEY = "datanotes-device";

export class ThisDevice {
	/** The id, once read (null: not yet; undefined: none can be kept). */
	private kept: string | undefined | null = null;

	constructor(private readonly app: App) {}

	/** The id, read (or made) the first time; undefined when none can be kept (warned once). */
	id(): string | undefined {
		if (this.kept === null) this.kept = this.keptId();
		return this.kept;
	}

	/** The id if it was read already, without reading it. */
	known(): string | undefined {
		return this.kept ?? undefined;
	}

	/** Device `id`'s key; null when none can be kept (warned). */
	key(id: string): Uint8Array | null {
		const random = (): Uint8Array => crypto.getRandomValues(new Uint8Array(32));
		const node = nodeStores();
		const store: DeviceStore | null = node ? nodeKeyStore(node.fs, node.proc, node.path, id) : this.local(`${DEVICE_KEY}-key-${id}`);
		const key = store ? deviceKey(store, random) : null;
		if (!key) console.warn("datanotes: no device key can be kept here: this device's store files are trusted by their names alone");
		return key;
	}

	private keptId(): string | undefined {
		const random = (): Uint8Array => crypto.getRandomValues(new Uint8Array(10));
		const node = nodeStores();
		const store: DeviceStore | null = node ? nodeDeviceStore(node.fs, node.proc, node.path) : this.local(DEVICE_KEY);
		const id = store ? deviceId(store, random) : null;
		if (id) return id;
		console.warn("datanotes: no device id can be kept here: the store's files are named as for one device only");
		return undefined;
	}

	private local(key: string): DeviceStore {
		return localStore((k) => this.app.loadLocalStorage(k), (k, v) => this.app.saveLocalStorage(k, v), key);
	}
}

/** Node's modules the binary's files are kept with (desktop), or null. */
function nodeStores(): { fs: typeof import("node:fs"); path: typeof import("node:path"); proc: typeof import("node:process") } | null {
	const fs = nodeModule<typeof import("node:fs")>("fs");
	const path = nodeModule<typeof import("node:path")>("path");
	const proc = nodeModule<typeof import("node:process")>("process");
	return fs && path && proc ? { fs, path, proc } : null;
}
