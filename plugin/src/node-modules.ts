// Node's modules, which Obsidian's desktop renderer has and mobile has not. The
// plugin imports none, so that its bundle loads on mobile too.

import { Platform } from "obsidian";

/** A Node module: Obsidian's desktop renderer has them (window.require), mobile
 * has not (null). */
export function nodeModule<T>(name: string): T | null {
	const load = (window as Window & { require?: (id: string) => unknown }).require;
	if (!Platform.isDesktopApp || typeof load !== "function") return null;
	try {
		return load(name) as T;
	} catch {
		return null;
	}
}
