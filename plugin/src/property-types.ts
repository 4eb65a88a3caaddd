// The columns' types reach Obsidian's property editor, so that a rating shows a
// number field, a date a date picker, a boolean a checkbox. Obsidian has no
// public API for property types: they live in <configDir>/types.json, which this
// merges into, changing only the entries of the tables' columns and keeping
// every other byte of the file as it was.

import { type App, normalizePath, Notice } from "obsidian";
import type { EngineDoor } from "./history-view";
import type { TableInfo } from "./types";

/** Keys whose type Obsidian owns: never changed here. */
const OBSIDIAN_OWN = new Set(["tags", "aliases", "cssclasses", "table", "id"]);

/** The property type Obsidian shows for a column of this type. */
export function propertyType(type: string): string {
	switch (type) {
		case "integer":
		case "number":
			return "number";
		case "boolean":
			return "checkbox";
		case "date":
			return "date";
		case "datetime":
			return "datetime";
		case "list":
			return "multitext";
		default:
			return "text";
	}
}

/** A column's name in words: "occurred_at" → "Occurred at", "bornIn" → "Born in"
 * (a word in capitals, "ISBN", stays so). */
export function nameWords(name: string): string {
	const words = name
		.replace(/([a-z0-9])([A-Z])/g, "$1 $2")
		.split(/[_\-.\s]+/)
		.filter((w) => w !== "")
		.map((w) => (w.length > 1 && w === w.toUpperCase() && /[A-Z]/.test(w) ? w : w.toLowerCase()))
		.join(" ");
	return words === "" ? name : words.charAt(0).toUpperCase() + words.slice(1);
}

/** What a form calls a column: its description, else its name in words. */
export function columnLabel(name: string, column: { description?: string }): string {
	const d = column.description?.trim();
	return d ? d : nameWords(name);
}

/** The type each column name should have, and the names two tables disagree on
 * (left out, each said once: "rating: number (film), text (review)"). */
export function wantedTypes(tables: TableInfo[]): { types: Map<string, string>; conflicts: string[] } {
	const seen = new Map<string, Map<string, string[]>>();
	for (const t of tables) {
		for (const [name, col] of Object.entries(t.columns ?? {})) {
			if (OBSIDIAN_OWN.has(name)) continue;
			const byType = seen.get(name) ?? new Map<string, string[]>();
			const type = propertyType(col.type);
			byType.set(type, [...(byType.get(type) ?? []), t.name]);
			seen.set(name, byType);
		}
	}
	const types = new Map<string, string>();
	const conflicts: string[] = [];
	for (const [name, byType] of seen) {
		if (byType.size === 1) types.set(name, [...byType.keys()][0]);
		else conflicts.push(`${name}: ${[...byType].map(([ty, ts]) => `${ty} (${ts.join(", ")})`).join(", ")}`);
	}
	return { types, conflicts };
}

/** Where the value of the top-level "types" object starts and ends ({ and }),
 * scanning the JSON text with its strings skipped; null when it has none. */
function typesObject(text: string): { open: number; close: number } | null {
	let depth = 0;
	let open = -1;
	let lastString = "";
	let afterKey = false;
	for (let i = 0; i < text.length; i++) {
		const c = text[i];
		if (c === '"') {
			let j = i + 1;
			while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
			lastString = text.slice(i, j + 1);
			i = j;
			continue;
		}
		if (c === ":") afterKey = depth === 1 && lastString === '"types"';
		else if (c === "{") {
			depth++;
			if (depth === 2 && afterKey) open = i;
			afterKey = false;
		} else if (c === "}") {
			if (depth === 2 && open >= 0) return { open, close: i };
			depth--;
		} else if (c === "[") depth++;
		else if (c === "]") depth--;
		else if (c === ",") afterKey = false;
	}
	return null;
}

/** types.json with the wanted types merged in: the new text and the names it
 * changed (text null when nothing changes), or why the file was left alone. */
export function mergeTypes(text: string | null, want: Map<string, string>): { text: string | null; changed: string[]; error?: string } {
	if (text === null) {
		if (want.size === 0) return { text: null, changed: [] };
		const types = Object.fromEntries([...want].sort(([a], [b]) => a.localeCompare(b)));
		return { text: JSON.stringify({ types }, null, 2), changed: Object.keys(types) };
	}
	let parsed: unknown;
	try {
		parsed = JSON.parse(text);
	} catch (e) {
		return { text: null, changed: [], error: `types.json is not JSON (${e instanceof Error ? e.message : String(e)}): left as it is` };
	}
	const current = (parsed as { types?: unknown } | null)?.types;
	const range = typesObject(text);
	if (typeof current !== "object" || current === null || Array.isArray(current) || range === null) {
		return { text: null, changed: [], error: 'types.json has no "types" object: left as it is' };
	}
	const have = current as Record<string, unknown>;
	const todo = [...want].filter(([k, v]) => have[k] !== v);
	if (todo.length === 0) return { text: null, changed: [] };
	let body = text.slice(range.open + 1, range.close);
	const added: string[] = [];
	for (const [k, v] of todo) {
		if (k in have) {
			const entry = new RegExp(`(${escape(JSON.stringify(k))}\\s*:\\s*)${escape(JSON.stringify(have[k]))}`);
			body = body.replace(entry, (_m, key: string) => `${key}${JSON.stringify(v)}`);
		} else {
			added.push(`${JSON.stringify(k)}: ${JSON.stringify(v)}`);
		}
	}
	if (added.length > 0) {
		const indent = /\n([ \t]+)"/.exec(body)?.[1] ?? "    ";
		const closing = /\n([ \t]*)$/.exec(body)?.[1] ?? "  ";
		const trimmed = body.replace(/\s*$/, "");
		const sep = trimmed.trim() === "" ? "" : ",";
		body = `${trimmed}${sep}\n${added.map((a) => `${indent}${a}`).join(`,\n`)}\n${closing}`;
	}
	return { text: text.slice(0, range.open + 1) + body + text.slice(range.close), changed: todo.map(([k]) => k) };
}

function escape(s: string): string {
	return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Keeps types.json in step with the schema: at start, and each time
 * metastore.yaml changes. What it cannot do is said once (a console warning and
 * a Notice), until it changes. */
export class PropertyTypes {
	private said = "";

	constructor(
		private readonly app: App,
		private readonly door: EngineDoor,
	) {}

	async sync(): Promise<void> {
		const out = await this.door.call("describe_database", {});
		if (out.status !== "ok") return;
		const { types, conflicts } = wantedTypes(out.answer.tables);
		const adapter = this.app.vault.adapter;
		const path = normalizePath(`${this.app.vault.configDir}/types.json`);
		const text = (await adapter.exists(path)) ? await adapter.read(path) : null;
		const merged = mergeTypes(text, types);
		const problems = conflicts.map((c) => `tables disagree on the type of ${c}; Obsidian's type is left as it is`);
		if (merged.error) problems.push(merged.error);
		const said = problems.join("\n");
		if (said !== this.said) {
			this.said = said;
			if (said) {
				console.warn(`datanotes: ${said}`);
				new Notice(`Datanotes: ${problems[0]}${problems.length > 1 ? ` (and ${problems.length - 1} more: see the console)` : ""}.`, 10000);
			}
		}
		if (merged.text !== null) await adapter.write(path, merged.text);
	}
}
