// A column's definition (add_column, alter_column, in Run operation…'s
// form) as fields rather than JSON.

import type { App } from "obsidian";
import { type Named, TableSuggest } from "./table-suggest";
import { isObject } from "./types";

/** An argument that cannot be read as typed: the field says why. */
export class Unreadable extends Error {}

/** The column types of the schema (docs/reference/schema.md). */
export const TYPES = ["text", "integer", "number", "boolean", "date", "datetime", "enum", "link", "list"];

/** A column's definition (add_column, alter_column) as fields: its type and
 * what the type needs (a list's items, an enum's values, a link's table), the
 * common options, and the rest (inverse, ref_where, generated, …) as JSON. */
/** The definition form's inputs, and `sync`, which shows only those the type needs. */
interface Fields {
	type: HTMLSelectElement;
	items: HTMLSelectElement;
	values: HTMLTextAreaElement;
	table: HTMLInputElement;
	required: HTMLInputElement;
	unique: HTMLInputElement;
	description: HTMLInputElement;
	dflt: HTMLInputElement;
	more: HTMLTextAreaElement;
	sync: () => void;
}

export function definitionFields(el: HTMLElement, app: App, tables: Named[]): { read(): unknown; fill(v: unknown): void } {
	const f = buildFields(el, app, tables);
	return { read: () => readDefinition(f), fill: (v) => fillDefinition(f, v) };
}

function buildFields(el: HTMLElement, app: App, tables: Named[]): Fields {
	const box = el.createDiv({ cls: "datanotes-op-definition" });
	const row = (label: string, cls: string) => {
		const r = box.createEl("label", { cls: `datanotes-op-def-row ${cls}` });
		r.createSpan({ text: label });
		return r;
	};
	const select = (parent: HTMLElement, types: string[]) => {
		const s = parent.createEl("select", { cls: "dropdown" });
		s.createEl("option", { value: "", text: "Choose" });
		for (const t of types) s.createEl("option", { value: t, text: t });
		return s;
	};
	const type = select(row("Type", "is-type"), TYPES);
	const itemsRow = row("Items", "is-items");
	const items = select(itemsRow, TYPES.filter((t) => t !== "list"));
	const valuesRow = row("Values", "is-values");
	const values = valuesRow.createEl("textarea", { attr: { rows: 2, placeholder: "One a line" } });
	const tableRow = row("Table", "is-table");
	const table = tableRow.createEl("input", { type: "text" });
	new TableSuggest(app, table, tables);
	const box2 = (label: string) => row(label, `is-${label.toLowerCase()}`).createEl("input", { type: "checkbox" });
	const required = box2("Required");
	const unique = box2("Unique");
	const description = row("Description", "is-description").createEl("input", { type: "text" });
	const dflt = row("Default", "is-default").createEl("input", { type: "text", attr: { placeholder: "A value" } });
	const more = row("Other options (JSON)", "is-more").createEl("textarea", { attr: { rows: 2, placeholder: '{"inverse": "films"}' } });
	// Only what the chosen type needs is shown.
	const sync = () => {
		const list = type.value === "list";
		const of = list ? items.value : type.value;
		itemsRow.toggleClass("datanotes-hidden", !list);
		valuesRow.toggleClass("datanotes-hidden", of !== "enum");
		tableRow.toggleClass("datanotes-hidden", of !== "link");
	};
	type.addEventListener("change", sync);
	items.addEventListener("change", sync);
	sync();
	return { type, items, values, table, required, unique, description, dflt, more, sync };
}

function readDefinition(f: Fields): unknown {
	const def: Record<string, unknown> = {};
	const list = f.type.value === "list";
	const of = list ? f.items.value : f.type.value;
	if (f.type.value !== "") def.type = f.type.value;
	if (list && f.items.value !== "") def.items = f.items.value;
	const vs = f.values.value.split("\n").map((l) => l.trim()).filter((l) => l !== "");
	if (of === "enum" && vs.length > 0) def.values = vs;
	if (of === "link" && f.table.value.trim() !== "") def.table = f.table.value.trim();
	if (f.required.checked) def.required = true;
	if (f.unique.checked) def.unique = true;
	if (f.description.value.trim() !== "") def.description = f.description.value.trim();
	if (f.dflt.value.trim() !== "") {
		// A number, true or a list as JSON reads it; anything else is text.
		try {
			def.default = JSON.parse(f.dflt.value) as unknown;
		} catch {
			def.default = f.dflt.value.trim();
		}
	}
	if (f.more.value.trim() !== "") {
		let extra: unknown;
		try {
			extra = JSON.parse(f.more.value);
		} catch (e) {
			throw new Unreadable(`other options: not JSON: ${e instanceof Error ? e.message : String(e)}`);
		}
		if (!isObject(extra)) throw new Unreadable('other options: one object, {"option": value}');
		Object.assign(def, extra);
	}
	return Object.keys(def).length === 0 ? undefined : def;
}

const line = (x: unknown): x is string => typeof x === "string" && x !== "" && x.trim() === x && !x.includes("\n");
const yes = (x: unknown): x is true => x === true;
const isJson = (x: string) => {
	try {
		JSON.parse(x);
		return true;
	} catch {
		return false;
	}
};

/** A type the list does not have (a typo) is shown as it is, for the engine to refuse. */
function choose(s: HTMLSelectElement, x: string | undefined): void {
	if (x !== undefined && !Array.from(s.options).some((o) => o.value === x)) s.createEl("option", { value: x, text: x });
	s.value = x ?? "";
}

// A key goes to its field only when the field gives it back as it is;
// anything else stays in the other options, as written.
function fillDefinition(f: Fields, v: unknown): void {
	const def: Record<string, unknown> = isObject(v) ? { ...v } : {};
	const take = <T>(key: string, fits: (x: unknown) => x is T): T | undefined => {
		const x = def[key];
		if (!fits(x)) return undefined;
		delete def[key];
		return x;
	};
	choose(f.type, take("type", line));
	choose(f.items, take("items", line));
	f.values.value = (take("values", (x): x is string[] => Array.isArray(x) && x.length > 0 && x.every(line)) ?? []).join("\n");
	f.table.value = take("table", line) ?? "";
	f.required.checked = take("required", yes) ?? false;
	f.unique.checked = take("unique", yes) ?? false;
	f.description.value = take("description", line) ?? "";
	const d = take("default", (x): x is unknown => (typeof x === "string" ? line(x) && !isJson(x) : x !== null && x !== undefined));
	f.dflt.value = d === undefined ? "" : typeof d === "string" ? d : JSON.stringify(d);
	f.more.value = Object.keys(def).length === 0 ? "" : JSON.stringify(def);
	f.sync();
}
