// Devices by a name their person gave them (issue 53): the history said "on
// tpmqmlnez4". The setting "Device name" (by default the platform and the
// computer's name: "Linux laptop") is written into this device's settings
// file in the store (configure_database `deviceName`), which a sync tool
// carries to the vault's other devices, so that each of them shows this
// device's changes by that name too (describe_database `devices`). Ids stay
// behind Details.

import { Platform } from "obsidian";
import type { EngineDoor } from "./history-view";
import { refusalShort } from "./display";

/** The longest name the engine keeps (core/src/settings.rs MAX_DEVICE_NAME). */
export const MAX_NAME = 64;

/** What a device is, as its default name says it. */
export interface Machine {
	/** "Linux", "macOS", "Windows", "iPhone", "iPad", "Android phone", … */
	kind: string;
	/** The computer's name (desktop), if the system gives one. */
	hostname?: string | null;
}

/** "Linux laptop": the platform, then the computer's name without its domain
 * (".local", ".lan"); the platform alone ("iPhone") when there is none. */
export function defaultDeviceName(m: Machine): string {
	const host = (m.hostname ?? "").split(".")[0].trim();
	const named = host === "" || /^localhost$/i.test(host) ? m.kind : `${m.kind} ${host}`;
	return named.slice(0, MAX_NAME).trim();
}

/** This device as Obsidian and (on desktop) Node see it. */
export function thisMachine(): Machine {
	if (Platform.isIosApp) return { kind: Platform.isTablet ? "iPad" : "iPhone" };
	if (Platform.isAndroidApp) return { kind: Platform.isTablet ? "Android tablet" : "Android phone" };
	const kind = Platform.isMacOS ? "macOS" : Platform.isWin ? "Windows" : Platform.isLinux ? "Linux" : "Computer";
	return { kind, hostname: hostname() };
}

/** The computer's name, from Node's os module (Obsidian's desktop renderer has it). */
function hostname(): string | null {
	const load = (window as Window & { require?: (id: string) => unknown }).require;
	if (!Platform.isDesktopApp || typeof load !== "function") return null;
	try {
		return (load("os") as typeof import("node:os")).hostname();
	} catch {
		return null;
	}
}

/** The name this device goes by: the setting, else the default. */
export function deviceName(setting: string, machine: Machine = thisMachine()): string {
	const given = setting.replace(/\s+/g, " ").trim().slice(0, MAX_NAME).trim();
	return given === "" ? defaultDeviceName(machine) : given;
}

/** Writes `name` as this device's in the store when the engine holds another
 * (or none); null when it is kept, else why not, in words. */
export async function keepDeviceName(door: EngineDoor, name: string): Promise<string | null> {
	const me = door.thisDevice?.();
	// An engine without a device id names no device: nothing to keep.
	if (me === undefined) return null;
	try {
		const db = await door.call("describe_database", {});
		if (db.status === "ok" && db.answer.devices?.[me] === name) return null;
		const out = await door.call("configure_database", { deviceName: name });
		return out.status === "ok" ? null : refusalShort(out);
	} catch (e) {
		// An engine that went away (the plugin unloading): the next start tries again.
		return `the device's name is kept here; the engine could not take it: ${e instanceof Error ? e.message : String(e)}`;
	}
}

/** The devices' names as the views show them: the engine's list (by id), and
 * which id is this device's. */
export interface DeviceNames {
	names: Record<string, string>;
	me?: string;
}

/** The names the engine holds (none when it cannot say). */
export async function readDeviceNames(door: EngineDoor): Promise<DeviceNames> {
	const me = door.thisDevice?.();
	try {
		const db = await door.call("describe_database", {});
		return { names: db.status === "ok" ? (db.answer.devices ?? {}) : {}, me };
	} catch {
		return { names: {}, me };
	}
}

/** A device in words: its name (this device's too), "this device" or
 * "another device" while it has none; never its id. Another device that took
 * this one's name is told apart. */
export function deviceWords(device: string | undefined, known: DeviceNames): string {
	if (!device) return "";
	const name = (id: string | undefined) => (id === undefined ? undefined : known.names[id]?.trim() || undefined);
	const mine = name(known.me);
	if (device === known.me) return mine ?? "this device";
	const theirs = name(device);
	if (theirs === undefined) return "another device";
	return theirs === mine ? `${theirs} (another device)` : theirs;
}
