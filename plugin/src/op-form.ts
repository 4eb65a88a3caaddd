// "Run operation…" as a form: one field per argument, made from the
// registry's JSON Schema (the one MCP tools are described by), so every
// operation (add_column, rename_value, add_check, …) is reached without
// writing JSON: a table's name typed with the tables suggested, text and
// numbers typed, yes or no chosen, a list one item a line. What only JSON
// says (a column's definition, a filter) keeps a JSON field of its own, and a
// filter is read back in words as it is typed. Check runs the operation as a
// dry run; the whole arguments can still be edited as JSON.

import { AbstractInputSuggest, type App, Modal, Setting } from "obsidian";
import { describeOutcome } from "./modals";
import { filterWords } from "./rule-words";
import type { OperationInfo, Outcome } from "./types";

/** A table or a view to pick for a `table` argument. */
export interface Named {
	name: string;
	qualified: string;
}

/** One argument's JSON Schema, as the registry writes it. */
export type ParamSchema = NonNullable<OperationInfo["inputSchema"]["properties"]>[string];

/** Suggests the tables and views whose name holds what is typed. */
export class TableSuggest extends AbstractInputSuggest<Named> {
	constructor(
		app: App,
		private readonly input: HTMLInputElement,
		private readonly tables: Named[],
	) {
		super(app, input);
	}

	getSuggestions(query: string): Named[] {
		const q = query.trim().toLowerCase();
		return this.tables.filter((t) => t.qualified.toLowerCase().includes(q));
	}

	renderSuggestion(t: Named, el: HTMLElement): void {
		el.setText(t.name);
		if (t.name !== t.qualified) el.createEl("small", { text: ` ${t.qualified}`, cls: "datanotes-muted" });
	}

	selectSuggestion(t: Named): void {
		// The short name, unless two schemas share it.
		this.input.value = this.tables.filter((o) => o.name === t.name).length === 1 ? t.name : t.qualified;
		this.input.dispatchEvent(new Event("input"));
		this.input.dispatchEvent(new Event("change"));
		this.close();
	}
}

/** A write's outcome in a sentence above its answer: what was checked, or
 * done and how to take it back. */
export function outcomeLine(op: OperationInfo, out: Outcome): string {
	if (out.status !== "done" || op.readOnly) return "";
	const a = out.answer as { summary?: string; dry_run?: boolean };
	const what = a.summary ? `: ${a.summary}` : "";
	if (a.dry_run) return `Checked${what}. Nothing was written; Run writes it.`;
	return `Done${what}.${op.journaled ? " Undo last write takes it back." : ""}`;
}

/** Two JSON values alike, whatever the order of their keys; a list of one
 * text is that text (an argument that takes either). */
function same(a: unknown, b: unknown): boolean {
	const one = (v: unknown) => (Array.isArray(v) && v.length === 1 && typeof v[0] === "string" ? v[0] : v);
	const sorted = (v: unknown): unknown => {
		if (Array.isArray(v)) return v.map(sorted);
		if (typeof v !== "object" || v === null) return v;
		return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted((v as Record<string, unknown>)[k])]));
	};
	return JSON.stringify(sorted(one(a))) === JSON.stringify(sorted(one(b)));
}

/** The column types of the schema (docs/reference/schema.md). */
const TYPES = ["text", "integer", "number", "boolean", "date", "datetime", "enum", "link", "list"];

/** A column's definition (add_column, alter_column) as fields: its type and
 * what the type needs (a list's items, an enum's values, a link's table), the
 * common options, and the rest (inverse, ref_where, generated, …) as JSON. */
function definitionEditor(el: HTMLElement, app: App, tables: Named[]): { read(): unknown; fill(v: unknown): void } {
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
	const box2 = (label: string) => {
		const r = row(label, `is-${label.toLowerCase()}`);
		return r.createEl("input", { type: "checkbox" });
	};
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
	const read = (): unknown => {
		const def: Record<string, unknown> = {};
		const list = type.value === "list";
		const of = list ? items.value : type.value;
		if (type.value !== "") def.type = type.value;
		if (list && items.value !== "") def.items = items.value;
		const vs = values.value.split("\n").map((l) => l.trim()).filter((l) => l !== "");
		if (of === "enum" && vs.length > 0) def.values = vs;
		if (of === "link" && table.value.trim() !== "") def.table = table.value.trim();
		if (required.checked) def.required = true;
		if (unique.checked) def.unique = true;
		if (description.value.trim() !== "") def.description = description.value.trim();
		if (dflt.value.trim() !== "") {
			// A number, true or a list as JSON reads it; anything else is text.
			try {
				def.default = JSON.parse(dflt.value) as unknown;
			} catch {
				def.default = dflt.value.trim();
			}
		}
		if (more.value.trim() !== "") {
			let extra: unknown;
			try {
				extra = JSON.parse(more.value);
			} catch (e) {
				throw new Unreadable(`other options: not JSON: ${e instanceof Error ? e.message : String(e)}`);
			}
			if (typeof extra !== "object" || extra === null || Array.isArray(extra)) throw new Unreadable('other options: one object, {"option": value}');
			Object.assign(def, extra);
		}
		return Object.keys(def).length === 0 ? undefined : def;
	};
	// A key goes to its field only when the field gives it back as it is;
	// anything else stays in the other options, as written.
	const fill = (v: unknown) => {
		const def: Record<string, unknown> = typeof v === "object" && v !== null && !Array.isArray(v) ? { ...(v as Record<string, unknown>) } : {};
		const take = <T>(key: string, fits: (x: unknown) => x is T): T | undefined => {
			const x = def[key];
			if (!fits(x)) return undefined;
			delete def[key];
			return x;
		};
		const line = (x: unknown): x is string => typeof x === "string" && x !== "" && x.trim() === x && !x.includes("\n");
		const yes = (x: unknown): x is true => x === true;
		const json = (x: string) => {
			try {
				JSON.parse(x);
				return true;
			} catch {
				return false;
			}
		};
		// A type the list does not have (a typo) is shown as it is, for the engine to refuse.
		const choose = (s: HTMLSelectElement, x: string | undefined) => {
			if (x !== undefined && !Array.from(s.options).some((o) => o.value === x)) s.createEl("option", { value: x, text: x });
			s.value = x ?? "";
		};
		choose(type, take("type", line));
		choose(items, take("items", line));
		values.value = (take("values", (x): x is string[] => Array.isArray(x) && x.length > 0 && x.every(line)) ?? []).join("\n");
		table.value = take("table", line) ?? "";
		required.checked = take("required", yes) ?? false;
		unique.checked = take("unique", yes) ?? false;
		description.value = take("description", line) ?? "";
		const d = take("default", (x): x is unknown => (typeof x === "string" ? line(x) && !json(x) : x !== null && x !== undefined));
		dflt.value = d === undefined ? "" : typeof d === "string" ? d : JSON.stringify(d);
		more.value = Object.keys(def).length === 0 ? "" : JSON.stringify(def);
		sync();
	};
	return { read, fill };
}

/** How a field reads and shows an argument. */
type Kind = "table" | "text" | "number" | "boolean" | "lines" | "text-or-lines" | "definition" | "json" | "any";

/** The field for an argument: a table's name gets the tables suggested. */
export function kindOf(name: string, p: ParamSchema): Kind {
	const type = Array.isArray(p.type) ? p.type.find((t) => t !== "null") : p.type;
	if (name === "table" && type === "string") return "table";
	if (name === "definition" && type === "object") return "definition";
	if (type === "string") return "text";
	if (type === "integer" || type === "number") return "number";
	if (type === "boolean") return "boolean";
	if (type === "array" && p.items?.type === "string") return "lines";
	if (p.anyOf?.some((a) => a.type === "string") && p.anyOf.some((a) => a.type === "array")) return "text-or-lines";
	if (type === "object" || type === "array") return "json";
	return "any";
}

/** An argument that cannot be read as typed: the field says why. */
class Unreadable extends Error {}

interface Field {
	name: string;
	kind: Kind;
	/** The argument as typed; undefined when left empty (not given). */
	read(): unknown;
	fill(v: unknown): void;
	error: HTMLElement;
}

/** The filter arguments, read back in words beside their JSON. */
const FILTERS = new Set(["where", "check", "ref_where", "ref_by"]);

export class OperationFormModal extends Modal {
	private fields: Field[] = [];
	private formEl!: HTMLElement;
	private jsonEl!: HTMLTextAreaElement;
	private jsonMode = false;
	private resultEl!: HTMLElement;
	private noteEl!: HTMLElement;
	private modeButton!: HTMLButtonElement;
	private buttons: HTMLButtonElement[] = [];

	constructor(
		app: App,
		private readonly op: OperationInfo,
		/** The tables, then the views (describe_database). */
		private readonly tables: Named[],
		private readonly run: (args: unknown) => Promise<Outcome>,
		/** A column's definition as metastore.yaml holds it, for alter_column. */
		private readonly definitionOf?: (table: string, column: string) => Promise<unknown>,
	) {
		super(app);
	}

	/** Done once alter_column's definition is filled from the column named. */
	filled: Promise<void> = Promise.resolve();

	onOpen(): void {
		const { contentEl, op } = this;
		contentEl.empty();
		this.fields = [];
		this.buttons = [];
		this.jsonMode = false;
		this.setTitle(op.title);
		contentEl.addClass("datanotes-modal", "datanotes-form");
		contentEl.createEl("p", { text: op.description, cls: "datanotes-muted" });
		this.formEl = contentEl.createDiv({ cls: "datanotes-op-fields" });
		const props = Object.entries(op.inputSchema.properties ?? {}).filter(([name]) => name !== "dry_run");
		const required = new Set(op.inputSchema.required ?? []);
		// Required arguments first, each group in the registry's order.
		props.sort(([a], [b]) => Number(required.has(b)) - Number(required.has(a)));
		for (const [name, p] of props) this.fields.push(this.field(name, p, required.has(name)));
		if (props.length === 0) this.formEl.createEl("p", { text: "This operation takes no arguments.", cls: "datanotes-muted" });
		if (op.name === "alter_column") this.fillDefinitions();
		this.jsonEl = contentEl.createEl("textarea", { cls: "datanotes-args datanotes-hidden" });
		this.jsonEl.rows = 10;

		const bar = new Setting(contentEl).controlEl;
		this.modeButton = bar.createEl("button", { text: "Edit as JSON", cls: "datanotes-op-mode" });
		this.modeButton.addEventListener("click", () => this.toggleJson());
		if (op.inputSchema.properties?.dry_run) {
			const check = bar.createEl("button", { text: "Check", cls: "datanotes-op-check" });
			check.addEventListener("click", () => void this.submit(true));
			this.buttons.push(check);
		}
		const go = bar.createEl("button", { text: "Run", cls: `datanotes-op-run ${op.destructive ? "mod-warning" : "mod-cta"}` });
		go.addEventListener("click", () => void this.submit(false));
		this.buttons.push(go);
		this.noteEl = contentEl.createDiv({ cls: "datanotes-muted datanotes-op-note" });
		this.resultEl = contentEl.createEl("pre", { cls: "datanotes-result" });
	}

	onClose(): void {
		this.contentEl.empty();
	}

	/** One argument's row: its name (marked when required), what it is, its input. */
	private field(name: string, p: ParamSchema, required: boolean): Field {
		const kind = kindOf(name, p);
		const setting = new Setting(this.formEl).setName(required ? `${name} *` : name).setDesc(p.description ?? "");
		setting.settingEl.addClass("datanotes-field");
		setting.settingEl.dataset.param = name;
		const control = setting.controlEl;
		const error = this.formEl.createDiv({ cls: "datanotes-field-error" });
		switch (kind) {
			case "boolean": {
				const select = control.createEl("select", { cls: "dropdown" });
				if (!required) select.createEl("option", { value: "", text: "Default" });
				select.createEl("option", { value: "true", text: "Yes" });
				select.createEl("option", { value: "false", text: "No" });
				const read = () => (select.value === "" ? undefined : select.value === "true");
				const fill = (v: unknown) => {
					select.value = typeof v === "boolean" ? String(v) : "";
				};
				return { name, kind, read, fill, error };
			}
			case "table":
			case "text":
			case "number": {
				const input = control.createEl("input", { type: "text" });
				if (kind === "number") input.inputMode = "numeric";
				// Typed, so that a new table (create_table) or a dropped one
				// (describe_history) can be named; the tables are suggested.
				if (kind === "table") new TableSuggest(this.app, input, this.tables);
				const read = () => {
					const t = input.value.trim();
					if (t === "") return undefined;
					// Not a number: sent as typed, for the engine to refuse with its reason.
					if (kind === "number") return Number.isFinite(Number(t)) ? Number(t) : t;
					return kind === "table" ? t : input.value;
				};
				const fill = (v: unknown) => {
					input.value = v === undefined || v === null ? "" : typeof v === "string" ? v : JSON.stringify(v);
				};
				return { name, kind, read, fill, error };
			}
			case "lines":
			case "text-or-lines": {
				const area = control.createEl("textarea", { attr: { rows: 3, placeholder: "One a line" } });
				const read = () => {
					const items = area.value
						.split("\n")
						.map((l) => l.trim())
						.filter((l) => l !== "");
					if (items.length === 0) return undefined;
					return kind === "text-or-lines" && items.length === 1 ? items[0] : items;
				};
				const fill = (v: unknown) => {
					area.value = Array.isArray(v) ? v.map((x) => (typeof x === "string" ? x : JSON.stringify(x))).join("\n") : typeof v === "string" ? v : "";
				};
				return { name, kind, read, fill, error };
			}
			case "definition": {
				const editor = definitionEditor(control, this.app, this.tables);
				return { name, kind, ...editor, error };
			}
			case "json":
			case "any": {
				const area = control.createEl("textarea", { cls: "datanotes-op-json", attr: { rows: 3, placeholder: kind === "json" ? "JSON" : "A value (JSON)" } });
				const words = FILTERS.has(name) ? this.formEl.createDiv({ cls: "datanotes-muted datanotes-op-words" }) : null;
				const read = () => {
					const t = area.value.trim();
					if (t === "") return undefined;
					try {
						return JSON.parse(t) as unknown;
					} catch (e) {
						// A bare word where any value goes is text; elsewhere the JSON must read.
						if (kind === "any") return area.value.trim();
						throw new Unreadable(`not JSON: ${e instanceof Error ? e.message : String(e)}`);
					}
				};
				const say = () => {
					if (!words) return;
					let f: unknown;
					try {
						f = read();
					} catch {
						f = undefined;
					}
					const text = f === undefined ? null : filterWords(f);
					words.setText(text === null ? "" : `Reads: ${text}`);
				};
				area.addEventListener("input", say);
				const fill = (v: unknown) => {
					area.value = v === undefined ? "" : JSON.stringify(v);
					say();
				};
				return { name, kind, read, fill, error };
			}
		}
	}

	/** alter_column replaces a column's whole definition: it starts from the
	 * column's own, so that changing one option does not drop the others.
	 * Filled again when another column is named, unless it was edited. */
	private fillDefinitions(): void {
		const by = (n: string) => this.fields.find((f) => f.name === n);
		const [table, column, definition] = [by("table"), by("column"), by("definition")];
		const definitionOf = this.definitionOf;
		if (!table || !column || !definition || !definitionOf) return;
		let last: string | undefined;
		const fill = async () => {
			const [t, c] = [table.read(), column.read()];
			const now = JSON.stringify(definition.read() ?? null);
			if (typeof t !== "string" || typeof c !== "string" || (now !== "null" && now !== last)) return;
			const def = await definitionOf(t, c);
			if (def === undefined || def === null) return;
			definition.fill(def);
			last = JSON.stringify(definition.read() ?? null);
		};
		for (const name of ["table", "column"]) {
			this.formEl.querySelector(`.datanotes-field[data-param="${name}"] input`)?.addEventListener("change", () => {
				this.filled = fill();
			});
		}
	}

	/** The arguments the form holds; null when a field cannot be read (it says why). */
	args(): Record<string, unknown> | null {
		return this.jsonMode ? this.fromJson() : this.readFields();
	}

	private readFields(): Record<string, unknown> | null {
		const args: Record<string, unknown> = {};
		let ok = true;
		for (const f of this.fields) {
			f.error.setText("");
			try {
				const v = f.read();
				if (v !== undefined) args[f.name] = v;
			} catch (e) {
				if (!(e instanceof Unreadable)) throw e;
				f.error.setText(e.message);
				ok = false;
			}
		}
		return ok ? args : null;
	}

	private fromJson(): Record<string, unknown> | null {
		const text = this.jsonEl.value.trim();
		try {
			const v: unknown = text === "" ? {} : JSON.parse(text);
			if (typeof v !== "object" || v === null || Array.isArray(v)) throw new Error("the arguments are one object: {\"name\": value, …}");
			return v as Record<string, unknown>;
		} catch (e) {
			this.show(null, `The arguments are not JSON: ${e instanceof Error ? e.message : String(e)}`);
			return null;
		}
	}

	/** Between the fields and the arguments as JSON, carrying what is typed. */
	toggleJson(): void {
		if (!this.jsonMode) {
			const args = this.args();
			if (args === null) return;
			this.jsonEl.value = JSON.stringify(args, null, 2);
		} else {
			const args = this.fromJson();
			if (args === null) return;
			for (const f of this.fields) f.fill(args[f.name]);
			// What the fields cannot give back as written (an argument the
			// operation does not take, a flag given as text, …) stays JSON.
			const back = this.readFields();
			const lost = Object.keys({ ...args, ...back }).filter((k) => !same(args[k], back?.[k]));
			if (lost.length > 0) {
				this.show(null, `The form cannot show ${lost.join(", ")} as written: edit the arguments here.`);
				return;
			}
			this.show(null, "");
		}
		this.jsonMode = !this.jsonMode;
		this.formEl.toggleClass("datanotes-hidden", this.jsonMode);
		this.jsonEl.toggleClass("datanotes-hidden", !this.jsonMode);
		this.modeButton.setText(this.jsonMode ? "Edit as a form" : "Edit as JSON");
	}

	/** Runs the operation (as a dry run for Check) and shows what came back. */
	async submit(dryRun: boolean): Promise<Outcome | null> {
		const args = this.args();
		if (args === null) return null;
		if (dryRun) args.dry_run = true;
		for (const b of this.buttons) b.disabled = true;
		try {
			const out = await this.run(args);
			this.show(out);
			return out;
		} catch (e) {
			this.show(null, e instanceof Error ? e.message : String(e));
			return null;
		} finally {
			for (const b of this.buttons) b.disabled = false;
		}
	}

	private show(out: Outcome | null, failure?: string): void {
		this.resultEl.setText(out ? describeOutcome(out) : (failure ?? ""));
		this.resultEl.toggleClass("datanotes-error", out === null ? Boolean(failure) : out.status !== "done");
		this.noteEl.setText(out ? outcomeLine(this.op, out) : "");
	}
}
