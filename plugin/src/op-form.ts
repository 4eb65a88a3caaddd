// "Run operation…" as a form: one field per argument, made from the
// registry's JSON Schema (the one MCP tools are described by), so every
// operation (add_column, rename_value, add_check, …) is reached without
// writing JSON: a table's name typed with the tables suggested, text and
// numbers typed, yes or no chosen, a list one item a line, a column's
// definition as fields (definition-fields.ts). Other objects (a row's values,
// a filter) keep a JSON field, and a filter is read back in words as it is
// typed. Check runs the operation as a dry run; the whole arguments can still
// be edited as JSON.

import { type App, Modal, Setting } from "obsidian";
import { definitionFields, Unreadable } from "./definition-fields";
import { describeOutcome } from "./modals";
import { filterWords } from "./rule-words";
import { type Named, TableSuggest } from "./table-suggest";
import { isObject, type OperationInfo, type Outcome } from "./types";

/** One argument's JSON Schema, as the registry writes it. */
export type ParamSchema = NonNullable<OperationInfo["inputSchema"]["properties"]>[string];

/** A write's outcome in a sentence above its answer: what was checked, or
 * done and how to take it back. */
export function outcomeLine(op: OperationInfo, out: Outcome): string {
	if (out.status !== "ok" || op.readOnly) return "";
	const a = out.answer as { summary?: string; dry_run?: boolean; notes_changed?: number; files_changed?: number; hint?: string };
	const what = a.summary ? `: ${a.summary}` : "";
	// A write whose filter matched nothing: said, with why when case is why,
	// rather than "Undo takes it back" of a write that changed nothing.
	if (a.notes_changed === 0 && a.files_changed === 0) {
		const why = typeof a.hint === "string" ? `: ${a.hint}.` : ".";
		return a.dry_run ? `Checked${what}. It would change no note${why}` : `Done${what}. It changed no note${why}`;
	}
	// What else the engine said of it (create_table's notes that break its rules).
	const also = typeof a.hint === "string" && a.hint !== "" ? ` ${a.hint[0].toUpperCase()}${a.hint.slice(1)}.` : "";
	if (a.dry_run) return `Checked${what}. Nothing was written; Run writes it.${also}`;
	return `Done${what}.${op.journaled ? " Undo last write takes it back." : ""}${also}`;
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

interface Field {
	name: string;
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
		// A column's whole definition (alter_column): filled in with the one it has.
		this.fillDefinitions();
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
			case "boolean":
				return { name, ...boolInput(control, required), error };
			case "table":
			case "text":
			case "number":
				return { name, ...textInput(control, kind, kind === "table" ? (input) => new TableSuggest(this.app, input, this.tables) : null), error };
			case "lines":
			case "text-or-lines":
				return { name, ...linesInput(control, kind === "text-or-lines"), error };
			case "definition":
				return { name, ...definitionFields(control, this.app, this.tables), error };
			case "json":
			case "any": {
				const words = FILTERS.has(name) ? this.formEl.createDiv({ cls: "datanotes-muted datanotes-op-words" }) : null;
				return { name, ...jsonInput(control, kind === "any", words), error };
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
			if (!isObject(v)) throw new Error("the arguments are one object: {\"name\": value, …}");
			return v;
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
		this.resultEl.toggleClass("datanotes-error", out === null ? Boolean(failure) : out.status !== "ok");
		this.noteEl.setText(out ? outcomeLine(this.op, out) : "");
	}
}

/** How an input reads its argument back, and shows one. */
interface Input {
	read(): unknown;
	fill(v: unknown): void;
}

function boolInput(control: HTMLElement, required: boolean): Input {
	const select = control.createEl("select", { cls: "dropdown" });
	if (!required) select.createEl("option", { value: "", text: "Default" });
	select.createEl("option", { value: "true", text: "Yes" });
	select.createEl("option", { value: "false", text: "No" });
	return {
		read: () => (select.value === "" ? undefined : select.value === "true"),
		fill: (v) => {
			select.value = typeof v === "boolean" ? String(v) : "";
		},
	};
}

function textInput(control: HTMLElement, kind: "table" | "text" | "number", suggest: ((input: HTMLInputElement) => void) | null): Input {
	const input = control.createEl("input", { type: "text" });
	if (kind === "number") input.inputMode = "numeric";
	// Typed, so that a new table (create_table) or a dropped one
	// (describe_history) can be named; the tables are suggested.
	suggest?.(input);
	return {
		read: () => {
			const t = input.value.trim();
			if (t === "") return undefined;
			// Not a number: sent as typed, for the engine to refuse with its reason.
			if (kind === "number") return Number.isFinite(Number(t)) ? Number(t) : t;
			return kind === "table" ? t : input.value;
		},
		fill: (v) => {
			input.value = v === undefined || v === null ? "" : typeof v === "string" ? v : JSON.stringify(v);
		},
	};
}

function linesInput(control: HTMLElement, oneIsText: boolean): Input {
	const area = control.createEl("textarea", { attr: { rows: 3, placeholder: "One a line" } });
	return {
		read: () => {
			const items = area.value
				.split("\n")
				.map((l) => l.trim())
				.filter((l) => l !== "");
			if (items.length === 0) return undefined;
			return oneIsText && items.length === 1 ? items[0] : items;
		},
		fill: (v) => {
			area.value = Array.isArray(v) ? v.map((x) => (typeof x === "string" ? x : JSON.stringify(x))).join("\n") : typeof v === "string" ? v : "";
		},
	};
}

/** A JSON argument; `any`: a bare word is text. A filter is said back in words under it. */
function jsonInput(control: HTMLElement, any: boolean, words: HTMLElement | null): Input {
	const area = control.createEl("textarea", { cls: "datanotes-op-json", attr: { rows: 3, placeholder: any ? "A value (JSON)" : "JSON" } });
	const read = () => {
		const t = area.value.trim();
		if (t === "") return undefined;
		try {
			return JSON.parse(t) as unknown;
		} catch (e) {
			// A bare word where any value goes is text; elsewhere the JSON must read.
			if (any) return t;
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
	return {
		read,
		fill: (v) => {
			area.value = v === undefined ? "" : JSON.stringify(v);
			say();
		},
	};
}
