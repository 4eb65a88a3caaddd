// The columns' types in Obsidian's property editor (issue 12, point 3): merged
// into <configDir>/types.json, every other entry kept byte for byte.

import { afterEach, expect, test, vi } from "vitest";
import { columnLabel, mergeTypes, nameWords, propertyType, wantedTypes } from "../src/property-types";
import type { TableInfo } from "../src/types";
import { loadFilms } from "./plugin-harness";

function table(name: string, columns: Record<string, string>): TableInfo {
	const cols = Object.fromEntries(Object.entries(columns).map(([c, type]) => [c, { type }]));
	return { name, qualified: `main.public.${name}`, row_count: 0, history: true, columns: cols, base: "" };
}

test("each column type maps to the widget Obsidian shows", () => {
	expect(["integer", "number", "boolean", "date", "datetime", "list", "text", "enum", "link"].map(propertyType)).toEqual([
		"number",
		"number",
		"checkbox",
		"date",
		"datetime",
		"multitext",
		"text",
		"text",
		"text",
	]);
	const { types, conflicts } = wantedTypes([
		table("film", { title: "text", rating: "integer", tags: "list", seen: "boolean", when: "date" }),
		table("review", { rating: "text", title: "text" }),
	]);
	expect([...types]).toEqual([
		["title", "text"],
		["seen", "checkbox"],
		["when", "date"],
	]);
	expect(conflicts).toEqual(["rating: number (film), text (review)"]);
});

test("a column is named in words: its description, else its name with the underscores gone", () => {
	expect(["occurred_at", "title", "seen_in_cinema", "bornIn", "ISBN_code", "x"].map(nameWords)).toEqual(["Occurred at", "Title", "Seen in cinema", "Born in", "ISBN code", "X"]);
	expect(columnLabel("born", { description: "Year of birth" })).toBe("Year of birth");
	expect(columnLabel("occurred_at", { description: "  " })).toBe("Occurred at");
	expect(columnLabel("occurred_at", {})).toBe("Occurred at");
});

// types.json as Obsidian writes it, with entries of the person's own.
const OBSIDIAN = `{
  "types": {
    "aliases": "aliases",
    "cssclasses": "multitext",
    "tags": "tags",
    "rating": "text",
    "mood": "text"
  }
}`;

test("types.json keeps every other entry byte for byte", () => {
	const want = new Map([
		["rating", "number"],
		["year", "number"],
		["seen", "checkbox"],
		["mood", "text"],
	]);
	const out = mergeTypes(OBSIDIAN, want);
	expect(out.changed).toEqual(["rating", "year", "seen"]);
	expect(out.text).toBe(`{
  "types": {
    "aliases": "aliases",
    "cssclasses": "multitext",
    "tags": "tags",
    "rating": "number",
    "mood": "text",
    "year": "number",
    "seen": "checkbox"
  }
}`);
	expect(mergeTypes(out.text, want)).toEqual({ text: null, changed: [] });
	// An empty types object, a missing file.
	expect(mergeTypes('{"types":{}}', new Map([["year", "number"]])).text).toBe('{"types":{\n    "year": "number"\n  }}');
	expect(mergeTypes(null, new Map([["year", "number"]])).text).toBe('{\n  "types": {\n    "year": "number"\n  }\n}');
	// What is not JSON, or has no types, is left alone with the reason.
	const broken = mergeTypes('{"types": {"rating": "text",}', want);
	expect(broken.text).toBeNull();
	expect(broken.error).toMatch(/^types\.json is not JSON \(.+\): left as it is$/);
	expect(mergeTypes('{"other": 1}', want).error).toBe('types.json has no "types" object: left as it is');
});

let unload: (() => void) | null = null;
afterEach(() => {
	unload?.();
	unload = null;
});

test("the plugin writes the film diary's types at start, and again when the schema changes", async () => {
	const { app, plugin, unload: done } = await loadFilms({ ".obsidian/types.json": OBSIDIAN });
	unload = done;
	const adapter = app.vault.adapter;
	const read = async () => JSON.parse(await adapter.read(".obsidian/types.json")) as { types: Record<string, string> };
	await vi.waitFor(async () => expect((await read()).types.year).toBe("number"));
	const t = (await read()).types;
	expect(t).toMatchObject({ rating: "number", minutes: "number", occurred_at: "datetime", day: "date", genres: "multitext", status: "text", director: "text" });
	expect(t).toMatchObject({ aliases: "aliases", tags: "tags", mood: "text" });

	const out = await plugin.door.call("add_column", { table: "film", column: "seen_in_cinema", definition: { type: "boolean" } });
	expect(out.status).toBe("ok");
	await vi.waitFor(async () => expect((await read()).types.seen_in_cinema).toBe("checkbox"));
});
