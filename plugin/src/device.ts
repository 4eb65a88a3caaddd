// This device's id, which the engine's store files carry so that devices
// syncing one vault never write one file with two texts (core/src/log/order.rs).
// Kept where no sync tool carries it: on the desktop (and in the SDK) in the same
// file as the `datanotes` binary keeps it (bridge/src/device.rs), so that the
// plugin and the binary on one machine are one device; on mobile in Obsidian's
// local storage, which is per device.

const ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";
const VALID = /^[a-z0-9]{1,16}$/;

/** Where an id is kept: read (null when none is kept yet) and written. */
export interface DeviceStore {
	read(): string | null;
	/** Keeps `id` unless one was kept meanwhile; the id kept. */
	write(id: string): string;
}

/** A new id: 10 letters and digits from 10 random bytes. */
export function makeDeviceId(random: Uint8Array): string {
	return Array.from(random.slice(0, 10), (b) => ALPHABET[b & 31]).join("");
}

/** The id kept in `store`, made and kept on first use; null when what is kept is
 * not an id or none can be kept (the engine then names its files as for one
 * device only). */
export function deviceId(store: DeviceStore, random: () => Uint8Array): string | null {
	try {
		const id = (store.read() ?? store.write(makeDeviceId(random()))).trim();
		return VALID.test(id) ? id : null;
	} catch {
		return null;
	}
}

interface Env {
	env: Record<string, string | undefined>;
	platform: string;
}

/** The file the binary keeps the id in (bridge/src/device.rs), by the same rules. */
export function deviceFile(proc: Env, join: (...parts: string[]) => string): string | null {
	const v = (k: string): string | null => proc.env[k] || null;
	if (proc.platform === "win32") {
		const base = v("LOCALAPPDATA");
		return base ? join(base, "datanotes", "device") : null;
	}
	const state = v("XDG_STATE_HOME") ?? (v("HOME") ? join(v("HOME") as string, ".local", "state") : null);
	return state ? join(state, "datanotes", "device") : null;
}

type Fs = Pick<typeof import("node:fs"), "readFileSync" | "openSync" | "writeSync" | "closeSync" | "mkdirSync" | "linkSync" | "unlinkSync">;

/** A value kept in `file`: written whole beside it (with `mode`), then linked
 * into place, so that of two processes making one at once the first link wins
 * and both read it. */
function fileStore(fs: Fs, path: typeof import("node:path"), file: string, mode: number): DeviceStore {
	const read = (): string | null => {
		try {
			return fs.readFileSync(file, "utf8");
		} catch {
			return null;
		}
	};
	return {
		read,
		write(value) {
			fs.mkdirSync(path.dirname(file), { recursive: true });
			const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${Math.random().toString(36).slice(2)}`);
			const fd = fs.openSync(tmp, "w", mode);
			try {
				fs.writeSync(fd, `${value}\n`);
			} finally {
				fs.closeSync(fd);
			}
			try {
				fs.linkSync(tmp, file);
			} catch {
				// Kept by another process meanwhile (or links refused: read says which).
			} finally {
				fs.unlinkSync(tmp);
			}
			return (read() ?? "").trim();
		},
	};
}

/** A value kept in Obsidian's local storage (per device: mobile keeps no file of the binary's). */
export function localStore(load: (key: string) => unknown, save: (key: string, value: string) => void, key: string): DeviceStore {
	return {
		read: () => {
			const kept = load(key);
			return typeof kept === "string" ? kept : null;
		},
		write: (value) => {
			save(key, value);
			return value;
		},
	};
}

/** The id in the binary's file; DATANOTES_DEVICE overrides it, as for the binary. */
export function nodeDeviceStore(fs: Fs, proc: Env, path: typeof import("node:path")): DeviceStore | null {
	const fixed = proc.env.DATANOTES_DEVICE;
	if (fixed !== undefined) return { read: () => fixed, write: () => fixed };
	const file = deviceFile(proc, (...parts) => path.join(...parts));
	return file ? fileStore(fs, path, file, 0o644) : null;
}

// This device's key (core/src/seal.rs): it seals the journal entries and the
// webhooks file the engine writes, so that a file a sync brings under this
// device's name is not taken for its own. Kept like the id, where no sync tool
// carries it: on the desktop the binary's file `key.<id>` beside the id's, on
// mobile Obsidian's local storage.

const KEY_HEX = /^(?:[0-9a-f]{2}){16,}$/;

function toHex(bytes: Uint8Array): string {
	return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The key kept in `store`, made (32 random bytes) and kept on first use; null
 * when what is kept is not a key or none can be kept (the engine then trusts
 * this device's files by their names alone). */
export function deviceKey(store: DeviceStore, random: () => Uint8Array): Uint8Array | null {
	try {
		const hex = (store.read() ?? store.write(toHex(random()))).trim();
		if (!KEY_HEX.test(hex)) return null;
		return Uint8Array.from(hex.match(/../g) ?? [], (h) => parseInt(h, 16));
	} catch {
		return null;
	}
}

/** The file the binary keeps device `id`'s key in (bridge/src/device.rs). */
export function keyFile(proc: Env, join: (...parts: string[]) => string, id: string): string | null {
	const idFile = deviceFile(proc, join);
	return idFile ? join(idFile, "..", `key.${id}`) : null;
}

/** Device `id`'s key in the binary's file, readable by the owner alone. */
export function nodeKeyStore(fs: Fs, proc: Env, path: typeof import("node:path"), id: string): DeviceStore | null {
	const file = keyFile(proc, (...parts) => path.join(...parts), id);
	return file ? fileStore(fs, path, file, 0o600) : null;
}
