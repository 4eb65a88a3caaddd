// A row as a form: one field per column, generated from the table's schema
// (text and number inputs, a dropdown for an enum, date and date-time pickers, a
// toggle for a boolean, a list editor, a link field that suggests the target
// table's rows as you type). The engine checks every change with a dry run and
// its refusal shows beside the field it names; only what it accepts is written.

import { AbstractInputSuggest, type App, Modal, Setting } from "obsidian";
import type { EngineDoor } from "./history-view";
import { ruleColumn, ruleText } from "./rule-words";
import type { ColumnInfo, Outcome, RowViolations, TableInfo } from "./types";
import { errorOf } from "./types";

/** A new row, or an existing one read at `version` (its `_version`). */
export type FormMode = { kind: "new" } | EditMode;
export interface EditMode {
	kind: "edit";
	path: string;
	version: string;
	values: Record<string, unknown>;
}

/** A row suggested for a link field (suggest_rows). */
interface Suggestion {
	name: string;
	path: string;
	link: string;
}

/** How long typing waits before the engine checks the form. */
export const CHECK_AFTER_MS = 300;

/** Suggests the target table's rows in a link field, best match first. */
export class LinkSuggest extends AbstractInputSuggest<Suggestion> {
	constructor(
		app: App,
		private readonly input: HTMLInputElement,
		private readonly door: EngineDoor,
		private readonly table: string,
		private readonly from: string,
		private readonly picked: () => void,
	) {
		super(app, input);
	}

	async getSuggestions(query: string): Promise<Suggestion[]> {
		const q = query.replace(/^\s*\[\[/, "").replace(/\]\]\s*$/, "");
		const out = await this.door.call("suggest_rows", { table: this.table, query: q, from: this.from, limit: 20 });
		return out.status === "done" ? (out.answer as { rows: Suggestion[] }).rows : [];
	}

	renderSuggestion(s: Suggestion, el: HTMLElement): void {
		el.setText(s.name);
	}

	selectSuggestion(s: Suggestion): void {
		this.input.value = s.link;
		this.close();
		this.picked();
	}
}

/** One column's field: what it holds now (undefined when empty). */
interface Field {
	column: string;
	info: ColumnInfo;
	value(): unknown;
	set(v: unknown): void;
	/** Changed by the person since the form was filled. */
	touched: boolean;
	error: HTMLElement;
}

/** A number as typed; what is not one goes to the engine as typed, to be refused there. */
function numberOf(s: string): unknown {
	const t = s.trim();
	if (t === "") return undefined;
	const n = Number(t);
	return Number.isFinite(n) ? n : t;
}

/** A link as typed: a bare name is made a wiki link. */
function linkOf(s: string): unknown {
	const t = s.trim();
	if (t === "") return undefined;
	return t.startsWith("[[") ? t : `[[${t}]]`;
}

/** A value as a field shows it. */
function shownText(v: unknown): string {
	if (v === undefined || v === null) return "";
	if (typeof v === "string") return v;
	if (typeof v === "number" || typeof v === "boolean") return String(v);
	return JSON.stringify(v);
}

/** The value of one typed item of a column (or a list's item). */
function itemOf(type: string, s: string): unknown {
	if (type === "integer" || type === "number") return numberOf(s);
	if (type === "link") return linkOf(s);
	return s.trim() === "" ? undefined : s;
}

export class RowFormModal extends Modal {
	private readonly fields: Field[] = [];
	private formError!: HTMLElement;
	private reloadEl!: HTMLElement;
	private submitButton!: HTMLButtonElement;
	private timer: number | null = null;
	/** Set while the fields are filled, so that filling is no change. */
	private filling = false;
	/** The last check's promise, for tests and for submit to wait on. */
	checking: Promise<void> = Promise.resolve();

	constructor(
		app: App,
		private readonly door: EngineDoor,
		private readonly table: TableInfo,
		private mode: FormMode,
		/** Called after a successful write with its answer and the row's path. */
		private readonly written: (path: string, answer: unknown) => void,
	) {
		super(app);
	}

	onOpen(): void {
		const { contentEl } = this;
		contentEl.empty();
		contentEl.addClass("datanotes-form");
		this.setTitle(this.mode.kind === "new" ? `New row of ${this.table.name}` : `Edit ${this.mode.path.split("/").pop() ?? ""}`);
		this.formError = contentEl.createDiv({ cls: "datanotes-error datanotes-form-error" });
		this.reloadEl = contentEl.createDiv({ cls: "datanotes-form-reload" });
		for (const [column, info] of Object.entries(this.table.columns ?? {})) this.fields.push(this.field(column, info));
		this.fill(this.mode.kind === "edit" ? this.mode.values : {});
		const buttons = new Setting(contentEl).controlEl;
		this.submitButton = buttons.createEl("button", { text: this.mode.kind === "new" ? "Add row" : "Save", cls: "mod-cta" });
		this.submitButton.addEventListener("click", () => void this.submit());
	}

	onClose(): void {
		if (this.timer !== null) window.clearTimeout(this.timer);
		this.contentEl.empty();
	}

	/** The field of one column, drawn as a setting row with its error line below.
	 * Plain inputs, a select and Obsidian's toggle markup, so that what the form
	 * reads is what the page shows. */
	private field(column: string, info: ColumnInfo): Field {
		const setting = new Setting(this.contentEl).setName(column).setDesc(info.description ?? "");
		setting.settingEl.addClass("datanotes-field");
		setting.settingEl.dataset.column = column;
		if (info.required) setting.nameEl.createSpan({ cls: "datanotes-required", text: " *", attr: { "aria-label": "required" } });
		const error = this.contentEl.createDiv({ cls: "datanotes-error datanotes-field-error" });
		const field: Field = { column, info, touched: false, error, value: () => undefined, set: () => undefined };
		const changed = () => {
			if (this.filling) return;
			field.touched = true;
			this.schedule();
		};
		const control = setting.controlEl;
		if (info.generated) {
			setting.setDesc(`${info.description ? `${info.description} · ` : ""}computed: ${info.generated}`);
			const input = control.createEl("input", { type: "text" });
			input.disabled = true;
			field.set = (v) => {
				input.value = shownText(v);
			};
			return field;
		}
		if (info.type === "enum") {
			const select = control.createEl("select", { cls: "dropdown" });
			if (!info.required) select.createEl("option", { value: "", text: "" });
			for (const v of info.values ?? []) select.createEl("option", { value: v, text: v });
			select.addEventListener("change", changed);
			field.value = () => (select.value === "" ? undefined : select.value);
			field.set = (v) => {
				select.value = typeof v === "string" ? v : "";
			};
		} else if (info.type === "boolean") {
			const toggle = control.createDiv({ cls: "checkbox-container" });
			const box = toggle.createEl("input", { type: "checkbox" });
			const show = () => toggle.toggleClass("is-enabled", box.checked);
			toggle.addEventListener("click", () => {
				box.checked = !box.checked;
				show();
				changed();
			});
			field.value = () => box.checked;
			field.set = (v) => {
				box.checked = v === true;
				show();
			};
		} else if (info.type === "list") {
			this.listEditor(setting, field, info, changed);
		} else {
			const input = control.createEl("input", { type: "text" });
			if (info.type === "integer" || info.type === "number") input.type = "number";
			if (info.type === "date") input.type = "date";
			if (info.type === "datetime") input.type = "datetime-local";
			if (info.type === "link" && info.table) new LinkSuggest(this.app, input, this.door, info.table, this.from(), changed);
			input.addEventListener("input", changed);
			field.value = () => itemOf(info.type, input.value);
			field.set = (v) => {
				const s = shownText(v);
				// A date-time with seconds or a zone does not fit the picker: typed as text.
				if (input.type === "datetime-local" && s !== "" && !/^\d{4}-\d\d-\d\dT\d\d:\d\d$/.test(s)) input.type = "text";
				input.value = s;
			};
		}
		return field;
	}

	/** A list's items, one input each, with a button to add one and one to remove each. */
	private listEditor(setting: Setting, field: Field, info: ColumnInfo, changed: () => void): void {
		const box = setting.controlEl.createDiv({ cls: "datanotes-list" });
		const items: HTMLInputElement[] = [];
		const itemType = info.items ?? "text";
		const add = (value: string) => {
			const row = box.createDiv({ cls: "datanotes-list-item" });
			const input = row.createEl("input", { type: itemType === "integer" || itemType === "number" ? "number" : "text", value });
			input.addEventListener("input", changed);
			if (itemType === "link" && info.table) new LinkSuggest(this.app, input, this.door, info.table, this.from(), changed);
			const remove = row.createEl("button", { text: "×", attr: { "aria-label": "Remove this item" } });
			remove.addEventListener("click", () => {
				items.splice(items.indexOf(input), 1);
				row.remove();
				changed();
			});
			items.push(input);
			return input;
		};
		const more = setting.controlEl.createEl("button", { text: "Add item", cls: "datanotes-list-add" });
		more.addEventListener("click", () => add("").focus());
		field.value = () => {
			const values = items.map((i) => itemOf(itemType, i.value)).filter((v) => v !== undefined);
			return values.length === 0 ? undefined : values;
		};
		field.set = (v) => {
			box.empty();
			items.length = 0;
			for (const x of Array.isArray(v) ? (v as unknown[]) : v === undefined || v === null ? [] : [v]) add(shownText(x));
		};
	}

	/** The note a link goes in: the row's, or the table's folder for a new one. */
	private from(): string {
		return this.mode.kind === "edit" ? this.mode.path : (this.table.folder ?? "");
	}

	private fill(values: Record<string, unknown>): void {
		this.filling = true;
		for (const f of this.fields) {
			f.set(values[f.column]);
			f.touched = false;
		}
		this.filling = false;
	}

	/** The arguments of the write the form stands for. */
	args(dryRun: boolean): { op: "insert_row" | "update_row"; args: Record<string, unknown> } {
		const editable = this.fields.filter((f) => !f.info.generated);
		if (this.mode.kind === "new") {
			const values: Record<string, unknown> = {};
			for (const f of editable) {
				const v = f.value();
				if (v !== undefined && (f.touched || f.info.type !== "boolean")) values[f.column] = v;
			}
			return { op: "insert_row", args: { table: this.table.qualified, values, dry_run: dryRun } };
		}
		const before = this.mode.values;
		const set: Record<string, unknown> = {};
		const remove: string[] = [];
		for (const f of editable.filter((x) => x.touched)) {
			const v = f.value();
			if (v === undefined) {
				if (f.column in before) remove.push(f.column);
			} else if (JSON.stringify(v) !== JSON.stringify(before[f.column])) set[f.column] = v;
		}
		const args = { table: this.table.qualified, path: this.mode.path, set, remove, if_match: this.mode.version, dry_run: dryRun };
		return { op: "update_row", args };
	}

	/** Checks the form with a dry run shortly after the last change. */
	private schedule(): void {
		if (this.timer !== null) window.clearTimeout(this.timer);
		this.timer = window.setTimeout(() => {
			this.timer = null;
			this.checking = this.check();
		}, CHECK_AFTER_MS);
	}

	/** A dry run now: the refusal beside the fields it names. */
	async check(): Promise<void> {
		const { op, args } = this.args(true);
		this.show(await this.door.call(op, args));
	}

	/** Shows an outcome: each violation under its column's field, the rest above. */
	show(out: Outcome): boolean {
		this.reloadEl.empty();
		if (out.status === "done") return (this.showBroken([]), true);
		const answer = out.answer as { violations?: RowViolations[]; current?: unknown[] };
		if (!this.showBroken(answer.violations ?? [])) this.formError.setText(errorOf(out.answer) ?? "The engine refused the row.");
		if (this.mode.kind === "edit" && Array.isArray(answer.current)) this.offerReload();
		return false;
	}

	/** Rules broken, each under the field it names (the rest above the form):
	 * a refusal's, or those a row breaks now (Edit row… from the Problems
	 * view). False when there are none. */
	showBroken(rows: RowViolations[]): boolean {
		const general: string[] = [];
		const byColumn = new Map<string, string[]>();
		for (const row of rows) {
			for (const v of row.violations) {
				// A CHECK that reads one column of the form is told under it, in words.
				const column = v.column ?? (v.code === "check" ? ruleColumn(v.value) : undefined);
				const field = column === undefined ? undefined : this.fields.find((f) => f.column === column);
				const text = v.code === "check" ? ruleText(v, !field) : v.message;
				if (field) byColumn.set(field.column, [...(byColumn.get(field.column) ?? []), text]);
				else general.push(text);
			}
		}
		for (const f of this.fields) f.error.setText((byColumn.get(f.column) ?? []).join("; "));
		this.formError.setText(general.join("\n"));
		return byColumn.size > 0 || general.length > 0;
	}

	/** The note changed since the form was filled: reload it, or keep typing. */
	private offerReload(): void {
		this.formError.setText("This note changed since the form opened: nothing was written.");
		this.reloadEl.createSpan({ text: "Reload puts what the note holds now in the form (your changes here are dropped). ", cls: "datanotes-muted" });
		this.reloadEl.createEl("button", { text: "Reload" }).addEventListener("click", () => void this.reload());
	}

	async reload(): Promise<void> {
		if (this.mode.kind !== "edit") return;
		const read = await readRow(this.door, this.table.qualified, this.mode.path);
		if (typeof read === "string") {
			this.formError.setText(read);
			return;
		}
		this.mode = read;
		this.reloadEl.empty();
		this.formError.setText("");
		this.fill(read.values);
	}

	/** Writes the row; on a refusal the form stays, with the reasons beside the fields. */
	async submit(): Promise<void> {
		if (this.timer !== null) {
			window.clearTimeout(this.timer);
			this.timer = null;
		}
		this.submitButton.disabled = true;
		try {
			const { op, args } = this.args(false);
			const out = await this.door.call(op, args);
			if (!this.show(out)) return;
			const path = this.mode.kind === "edit" ? writtenPath(out.answer) ?? this.mode.path : (writtenPath(out.answer) ?? "");
			this.close();
			this.written(path, out.answer);
		} finally {
			this.submitButton.disabled = false;
		}
	}
}

/** The path of the row a write created or moved to (its planned edits). */
function writtenPath(answer: unknown): string | null {
	const edits = (answer as { planned_edits?: { path: string; create?: boolean; move_to?: string }[] }).planned_edits ?? [];
	const made = edits.find((e) => e.create === true && e.path.endsWith(".md"));
	if (made) return made.path;
	return edits.find((e) => e.move_to?.endsWith(".md"))?.move_to ?? null;
}

/** A row as an edit form needs it: its values and version, or why not. */
export async function readRow(door: EngineDoor, table: string, path: string): Promise<EditMode | string> {
	const out = await door.call("select_rows", { table, where: { path } });
	if (out.status !== "done") return errorOf(out.answer) ?? "The row could not be read.";
	const row = (out.answer as { rows: Record<string, unknown>[] }).rows[0];
	if (!row) return `${path} is not a row of ${table} (its front matter may not be readable: the Problems view says why).`;
	const values: Record<string, unknown> = {};
	for (const [k, v] of Object.entries(row)) if (!k.startsWith("_") && k !== "path" && k !== "id") values[k] = v;
	return { kind: "edit", path, version: String(row._version), values };
}
