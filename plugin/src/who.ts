// Who wrote a change, in words (issue 53): the engine records an actor,
// "obsidian" for the person in Obsidian, "engine" for Datanotes' own upkeep,
// "cli" for the command line, and for an agent the credential it called with
// (the owner's token, "owner", or a named token's name), then "/" and its MCP
// client when it named one. The history names them so, and the journal's Who
// filter groups them by credential.

import type { Migration } from "./types";

/** Who wrote an entry, as the Who filter groups it: the credential of its
 * actor ("obsidian", "engine", "cli", "owner" or a token's name); an MCP
 * client after a "/" is the same credential. */
export function whoKey(by: string | undefined): string {
	return (by ?? "").split("/")[0];
}

/** Who wrote an entry, for its line in the history: "in Obsidian", "by
 * Datanotes", "by claude-code (your token)", "by an agent (token reader)". */
export function whoWords(by: string | undefined): string {
	if (!by) return "";
	const [key, ...rest] = by.split("/");
	const client = rest.join("/");
	if (key === "obsidian") return "in Obsidian";
	if (key === "engine") return "by Datanotes";
	if (key === "cli") return "from the command line";
	const token = key === "owner" ? "your token" : `token ${key}`;
	return client ? `by ${client} (${token})` : `by an agent (${token})`;
}

/** A Who choice in words. */
export function whoLabel(key: string): string {
	if (key === "obsidian") return "People in Obsidian";
	if (key === "engine") return "Datanotes by itself";
	if (key === "cli") return "The command line";
	if (key === "owner") return "Agents with your token";
	return `Agents with the token “${key}”`;
}

const FIRST = ["obsidian", "engine", "cli", "owner"];

/** The Who choices for these entries (and `chosen`, listed or not): people,
 * Datanotes, the command line, then agents by token. */
export function whoOptions(migrations: Migration[], chosen = ""): [string, string][] {
	const keys = new Set(migrations.map((m) => whoKey(m.by)).filter((k) => k !== ""));
	if (chosen !== "") keys.add(chosen);
	const rank = (k: string) => (FIRST.includes(k) ? FIRST.indexOf(k) : FIRST.length);
	return [...keys].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b)).map((k) => [k, whoLabel(k)]);
}
