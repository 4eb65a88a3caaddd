// A row as a form, as good as Obsidian's Properties: one field per column,
// named by its description or its name in words, with the widget Obsidian uses
// for the property's type (text, number, checkbox, date and date-time pickers,
// a dropdown for an enum, pills for a list, a link shown by its row's title
// with the target table's rows suggested as you type, and "Create …" for a row
// that is not there yet). A generated column shows, read only, what it will
// hold once saved. The engine checks every change with a dry run: Save is
// disabled with the reason beside it while the engine refuses, and a field's
// error shows once the field is left or Save is tried. Enter saves, Escape
// cancels; the engine's own text stays behind Details.

import { type App, Modal, Setting } from "obsidian";
import { noteTitle, refusalShort, shortTable } from "./display";
import { formFooter } from "./form-footer";
import { ShownSuggest } from "./shown-suggest";
import type { EngineDoor } from "./history-view";
import { columnLabel, nameWords } from "./property-types";
import { ruleColumn, ruleText } from "./rule-words";
import type { ColumnInfo, Outcome, RowViolations, TableInfo } from "./types";
import { errorOf } from "./types";

/** A new row (with values to start from), or an existing one read at `version` (its `_version`). */
export type FormMode = { kind: "new"; values?: Record<string, unknown> } | EditMode;
export interface EditMode {
	kind: "edit";
	path: string;
	version: string;
	values: Record<string, unknown>;
}

/** A row suggested for a link field (suggest_rows). */
export interface Suggestion {
	name: string;
	path: string;
	link: string;
}

/** A row to make, offered when what was typed names none. */
export interface Creation {
	create: string;
}

type Offer = Suggestion | Creation;

/** How long typing waits before the engine checks the form. */
export const CHECK_AFTER_MS = 300;

/** The title of the row a link names: its note's name ("[[people/Fritz Lang|Fritz]]" → "Fritz Lang"). */
export function linkTitle(link: string): string {
	const inner = link.trim().replace(/^\[\[/, "").replace(/\]\]$/, "");
	const target = inner.split("|")[0].split("#")[0];
	return (target.split("/").pop() ?? target).replace(/\.md$/, "").trim();
}

/** Suggests the target table's rows in a link field by their titles, best
 * match first, and "Create “…” in <table>" when what was typed names none. */

/** Labels an input for screen readers (its column's name, unless another is given). */
type Labelled = <T extends HTMLElement>(el: T, name?: string) => T;

/** A list column's pills as the form holds them. */
interface PillList {
	items: unknown[];
	draw(): void;
	add(v: unknown): void;
	changed(): void;
}

/** What adds to a list column: its control, and what is typed in it, not yet a pill. */
interface Adder {
	control: HTMLInputElement | HTMLSelectElement;
	pending(): unknown;
}

export class LinkSuggest extends ShownSuggest<Offer> {
	constructor(
		app: App,
		private readonly input: HTMLInputElement,
		private readonly door: EngineDoor,
		readonly table: string,
		private readonly from: string,
		private readonly picked: (s: Suggestion) => void,
		private readonly create: ((name: string) => void) | null = null,
	) {
		super(app, input);
	}

	async getSuggestions(query: string): Promise<Offer[]> {
		const q = query.replace(/^\s*\[\[/, "").replace(/\]\]\s*$/, "").trim();
		const out = await this.door.call("suggest_rows", { table: this.table, query: q, from: this.from, limit: 20 });
		const rows = out.status === "ok" ? (out.answer as { rows: Suggestion[] }).rows : [];
		const offers: Offer[] = [...rows];
		if (this.create && q !== "" && !rows.some((r) => r.name.toLowerCase() === q.toLowerCase())) offers.push({ create: q });
		return offers;
	}

	renderSuggestion(s: Offer, el: HTMLElement): void {
		if ("create" in s) {
			el.addClass("datanotes-suggest-create");
			el.setText(`Create “${s.create}” in ${shortTable(this.table)}`);
		} else el.setText(s.name);
	}

	selectSuggestion(s: Offer): void {
		this.close();
		if ("create" in s) this.create?.(s.create);
		else this.picked(s);
	}
}

/** One column's field: what it holds now (undefined when empty). */
interface Field {
	column: string;
	info: ColumnInfo;
	/** What a person reads for it. */
	label: string;
	value(): unknown;
	set(v: unknown): void;
	/** Changed by the person since the form was filled. */
	touched: boolean;
	/** Left by the person (or Save tried): its errors show. */
	left: boolean;
	/** The form's change count when it last changed: a check older than that does not speak of it. */
	changedAt: number;
	/** Its setting row, and the error line under it. */
	row: HTMLElement;
	error: HTMLElement;
	/** Below the error: what a person can do about it ("Create …"). */
	offer: HTMLElement;
	/** Where focus goes for this field (null for a generated one). */
	control: HTMLElement | null;
	suggest?: LinkSuggest;
	/** For a link (or list of links): fills in a row just made. */
	linkTo?: (link: string) => void;
	/** For a link (or list of links): opens the form of a new row of its table, named so. */
	create?: ((name: string) => void) | null;
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

/** A value as a person reads it: a link by its title, a list's items by commas. */
function valueText(v: unknown, type: string): string {
	if (v === undefined || v === null) return "";
	if (Array.isArray(v)) return v.map((x) => valueText(x, type)).join(", ");
	if (typeof v === "string" && /^\[\[.*\]\]$/.test(v)) return linkTitle(v);
	if (typeof v === "boolean") return v ? "Yes" : "No";
	return shownText(v);
}

/** The value of one typed item of a column (or a list's item). */
function itemOf(type: string, s: string): unknown {
	if (type === "integer" || type === "number") return numberOf(s);
	if (type === "link") return linkOf(s);
	return s.trim() === "" ? undefined : s;
}

/** Names joined for a sentence: "Title", "Title and Year", "Title, Year and Rating". */
function listWords(names: string[]): string {
	return names.length <= 1 ? (names[0] ?? "") : `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`;
}

/** The columns a template reads, in words: "{film.title} ({occurred_at|%d/%m})" → Film, Occurred at. */
function templateColumns(template: string, labels: Map<string, string>): string[] {
	const out: string[] = [];
	for (const m of template.matchAll(/\{([^}|]+)/g)) {
		const col = m[1].split(".")[0].trim();
		const label = labels.get(col) ?? nameWords(col);
		if (!out.includes(label)) out.push(label);
	}
	return out;
}

/** Engine text a person reads under a field: tables by their short name, notes by their title. */
function plainWords(text: string): string {
	return text
		.replace(/\[\[([^\]]+)\]\]/g, (_m, l: string) => `“${linkTitle(l)}”`)
		.replace(/(?:[\w-]+\/)+([^/\s]+)\.md\b/g, "“$1”")
		.replace(/\b\w+\.\w+\.(\w+)\b/g, "$1");
}

type Violation = RowViolations["violations"][number];

export class RowFormModal extends Modal {
	private readonly fields: Field[] = [];
	private formError!: HTMLElement;
	private reloadEl!: HTMLElement;
	private reasonEl!: HTMLElement;
	private detailsEl!: HTMLDetailsElement;
	private detailsText!: HTMLElement;
	private submitButton!: HTMLButtonElement;
	private timer: number | null = null;
	/** Set while the fields are filled, so that filling is no change. */
	private filling = false;
	private closed = false;
	/** Changes made so far, and how many the last check answered saw. */
	private edits = 0;
	private checkedAt = 0;
	private seq = 0;
	/** The last dry run's outcome (null before the first). */
	private outcome: Outcome | null = null;
	/** Rules the row broke when the form opened (from the Problems view), until a change is checked. */
	private standing: RowViolations[] = [];
	/** Save was tried: every error shows. */
	private attempted = false;
	private saving = false;
	/** The last check's promise, for tests and for submit to wait on. */
	checking: Promise<void> = Promise.resolve();
	/** The last form opened by "Create …" (for tests). */
	created: RowFormModal | null = null;
	private static forms = 0;
	private readonly idBase = `datanotes-row-form-${++RowFormModal.forms}`;

	constructor(
		app: App,
		private readonly door: EngineDoor,
		private readonly table: TableInfo,
		private mode: FormMode,
		/** Called after a successful write with its answer and the row's path. */
		private readonly written: (path: string, answer: unknown) => void,
		/** Every table, for a link's "Create …" (none: not offered). */
		private readonly tables: TableInfo[] = [],
	) {
		super(app);
	}

	onOpen(): void {
		const { contentEl } = this;
		contentEl.empty();
		contentEl.addClass("datanotes-form", "datanotes-row-form");
		this.setTitle(this.mode.kind === "new" ? `New row of ${nameWords(this.table.name).toLowerCase()}` : `Edit ${linkTitle(this.mode.path)}`);
		this.formError = contentEl.createDiv({ cls: "datanotes-error datanotes-form-error", attr: { role: "alert" } });
		this.reloadEl = contentEl.createDiv({ cls: "datanotes-form-reload" });
		const labels = new Map(Object.entries(this.table.columns ?? {}).map(([c, info]) => [c, columnLabel(c, info)]));
		for (const [column, info] of Object.entries(this.table.columns ?? {})) this.fields.push(this.field(column, info, labels));
		this.fill(this.mode.kind === "edit" ? this.mode.values : (this.mode.values ?? {}));
		// Values a new row starts from (a name typed in another form) are written as if typed.
		const start = this.mode.kind === "new" ? (this.mode.values ?? {}) : {};
		for (const f of this.fields) if (start[f.column] !== undefined && !f.info.generated) f.touched = true;

		const footer = formFooter(contentEl, this.idBase, this.mode.kind === "new" ? "Add row" : "Save", () => void this.submit(), () => this.close());
		({ reason: this.reasonEl, details: this.detailsEl, detailsText: this.detailsText, button: this.submitButton } = footer);
		this.modalEl.addEventListener("keydown", (evt) => this.onKey(evt));

		// A new row is checked at once: Save waits for the engine's word.
		if (this.mode.kind === "new") {
			this.submitButton.disabled = true;
			this.checking = this.check();
		}
		const first = this.fields.find((f) => f.control)?.control;
		first?.focus();
		// Opened from a menu or the palette, whose closing may take focus back: focus again once it has.
		window.setTimeout(() => {
			if (!this.closed && !this.modalEl.contains(this.modalEl.ownerDocument.activeElement)) first?.focus();
		}, 0);
	}

	close(): void {
		if (this.closed) return;
		this.closed = true;
		super.close();
	}

	onClose(): void {
		if (this.timer !== null) window.clearTimeout(this.timer);
		for (const f of this.fields) f.suggest?.close();
		this.contentEl.empty();
	}

	/** Enter saves (unless a suggestion or a pill takes it), Escape cancels. */
	private onKey(evt: KeyboardEvent): void {
		if (evt.defaultPrevented || evt.isComposing) return;
		if (evt.key === "Escape") {
			evt.preventDefault();
			evt.stopPropagation();
			// Escape closes the suggestions first, then the form.
			const open = this.fields.find((f) => f.suggest?.shown);
			if (open) open.suggest?.close();
			else this.close();
			return;
		}
		if (evt.key !== "Enter" || evt.shiftKey || evt.altKey || evt.ctrlKey || evt.metaKey) return;
		const t = evt.target;
		if (t instanceof HTMLButtonElement || t instanceof HTMLTextAreaElement || (t instanceof HTMLElement && t.tagName === "SUMMARY")) return;
		if (this.fields.some((f) => f.suggest?.shown)) return;
		evt.preventDefault();
		void this.submit();
	}

	/** The field of one column: a setting row named for a person, its control
	 * labelled for screen readers, its error line below. */
	private field(column: string, info: ColumnInfo, labels: Map<string, string>): Field {
		const label = labels.get(column) ?? nameWords(column);
		const setting = new Setting(this.contentEl).setName(label);
		if (info.description?.trim()) setting.setDesc(nameWords(column));
		setting.settingEl.addClass("datanotes-field");
		setting.nameEl.addClass("datanotes-field-name");
		setting.descEl.addClass("datanotes-field-desc");
		setting.settingEl.dataset.column = column;
		if (info.required && !info.generated) setting.nameEl.createSpan({ cls: "datanotes-required", text: " *", attr: { "aria-hidden": "true" } });
		const errorId = `${this.idBase}-${column}-error`;
		const error = this.contentEl.createDiv({ cls: "datanotes-error datanotes-field-error", attr: { id: errorId, "aria-live": "polite" } });
		const offer = this.contentEl.createDiv({ cls: "datanotes-field-offer" });
		const field: Field = { column, info, label, touched: false, left: false, changedAt: 0, row: setting.settingEl, error, offer, control: null, value: () => undefined, set: () => undefined };
		const changed = () => {
			if (this.filling) return;
			field.touched = true;
			field.changedAt = ++this.edits;
			this.render();
			this.schedule();
		};
		/** A control of this field: named by the label, told by the error line. */
		const labelled: Labelled = <T extends HTMLElement>(el: T, name = label): T => {
			el.setAttr("aria-label", name);
			el.setAttr("aria-describedby", errorId);
			if (info.required) el.setAttr("aria-required", "true");
			return el;
		};
		setting.settingEl.addEventListener("focusout", (evt) => {
			const next = evt.relatedTarget;
			if (next instanceof Node && setting.settingEl.contains(next)) return;
			if (field.left) return;
			field.left = true;
			this.render();
		});
		if (info.generated) computedField(setting, field, info, templateColumns(info.generated, labels));
		else if (info.type === "list") this.pills(setting, field, info, changed, labelled);
		else if (info.type === "link") this.linkField(setting, field, info, changed, labelled);
		else this.plainField(setting.controlEl, field, info, changed, labelled);
		return field;
	}

	/** An enum's dropdown, a boolean's checkbox, or a box to type in (a number's, a date's picker). */
	private plainField(control: HTMLElement, field: Field, info: ColumnInfo, changed: () => void, labelled: Labelled): void {
		const id = `${this.idBase}-${field.column}`;
		if (info.type === "enum") {
			const select = labelled(control.createEl("select", { cls: "dropdown", attr: { id } }));
			select.createEl("option", { value: "", text: "" });
			for (const v of info.values ?? []) select.createEl("option", { value: v, text: v });
			select.addEventListener("change", changed);
			field.control = select;
			field.value = () => (select.value === "" ? undefined : select.value);
			field.set = (v) => {
				const s = typeof v === "string" ? v : "";
				// A value the schema does not list (a hand edit) stays shown, to be refused.
				if (s !== "" && !Array.from(select.options).some((o) => o.value === s)) select.createEl("option", { value: s, text: s });
				select.value = s;
			};
			return;
		}
		if (info.type === "boolean") {
			const box = labelled(control.createEl("input", { type: "checkbox", cls: "datanotes-checkbox", attr: { id } }));
			box.addEventListener("change", changed);
			field.control = box;
			field.value = () => box.checked;
			field.set = (v) => {
				box.checked = v === true;
			};
			return;
		}
		const input = labelled(control.createEl("input", { type: "text", attr: { id } }));
		if (info.type === "integer" || info.type === "number") input.type = "number";
		if (info.type === "date") input.type = "date";
		if (info.type === "datetime") input.type = "datetime-local";
		input.addEventListener("input", changed);
		field.control = input;
		field.value = () => itemOf(info.type, input.value);
		field.set = (v) => {
			const s = shownText(v);
			// A date-time with seconds or a zone does not fit the picker: typed as text.
			if (input.type === "datetime-local" && s !== "" && !/^\d{4}-\d\d-\d\dT\d\d:\d\d$/.test(s)) input.type = "text";
			input.value = s;
		};
	}

	/** A link: the row's title in the box, the row's link behind it; typing
	 * suggests the target table's rows, and offers to make one. */
	private linkField(setting: Setting, field: Field, info: ColumnInfo, changed: () => void, labelled: <T extends HTMLElement>(el: T) => T): void {
		const input = labelled(setting.controlEl.createEl("input", { type: "text", cls: "datanotes-link-input", attr: { id: `${this.idBase}-${field.column}` } }));
		/** The link chosen or read, while the box still shows its title. */
		let link: string | null = null;
		const choose = (l: string) => {
			link = l;
			input.value = linkTitle(l);
			changed();
		};
		input.addEventListener("input", changed);
		field.control = input;
		field.linkTo = (l) => {
			choose(l);
			input.focus();
		};
		if (info.table) {
			field.create = this.creator(info.table, field);
			field.suggest = new LinkSuggest(this.app, input, this.door, info.table, this.from(), (s) => choose(s.link), field.create);
		}
		field.value = () => {
			const typed = input.value.trim();
			if (typed === "") return undefined;
			return link !== null && linkTitle(link) === typed ? link : linkOf(typed);
		};
		field.set = (v) => {
			link = typeof v === "string" && v.trim() !== "" ? v : null;
			input.value = link === null ? shownText(v) : linkTitle(link);
		};
	}

	/** A list as pills, each with its remove button, and a box to add one
	 * (Enter adds; a list of links suggests rows; a list of enum values picks). */
	private pills(setting: Setting, field: Field, info: ColumnInfo, changed: () => void, labelled: Labelled): void {
		const itemType = info.items ?? "text";
		const box = setting.controlEl.createDiv({ cls: "datanotes-pills multi-select-container" });
		const items: unknown[] = [];
		const pillsEl = box.createDiv({ cls: "datanotes-pill-list" });
		let adder: HTMLInputElement | HTMLSelectElement | null = null;
		const draw = () => {
			pillsEl.empty();
			items.forEach((item, i) => {
				const text = itemType === "link" && typeof item === "string" ? linkTitle(item) : shownText(item);
				const pill = pillsEl.createDiv({ cls: "datanotes-pill multi-select-pill" });
				pill.createSpan({ cls: "datanotes-pill-text multi-select-pill-content", text });
				const remove = pill.createEl("button", { cls: "datanotes-pill-remove multi-select-pill-remove-button", text: "×", attr: { "aria-label": `Remove ${text}` } });
				remove.addEventListener("click", () => {
					items.splice(i, 1);
					draw();
					changed();
					adder?.focus();
				});
			});
		};
		const add = (v: unknown) => {
			if (v === undefined) return;
			items.push(v);
			draw();
			changed();
		};
		const list: PillList = { items, draw, add, changed };
		const made = itemType === "enum" ? this.enumAdder(box, field, info, list, labelled) : this.textAdder(box, field, info, list, labelled);
		adder = made.control;
		field.control = made.control;
		field.value = () => {
			const values = [...items, made.pending()].filter((v) => v !== undefined);
			return values.length === 0 ? undefined : values;
		};
		field.set = (v) => {
			items.length = 0;
			for (const x of Array.isArray(v) ? (v as unknown[]) : v === undefined || v === null ? [] : [v]) if (x !== null) items.push(x);
			draw();
		};
	}

	/** A list of enum values: a dropdown adds the one picked. */
	private enumAdder(box: HTMLElement, field: Field, info: ColumnInfo, list: PillList, labelled: Labelled): Adder {
		const select = labelled(box.createEl("select", { cls: "dropdown datanotes-pill-input", attr: { id: `${this.idBase}-${field.column}` } }), `Add to ${field.label}`);
		select.createEl("option", { value: "", text: "Add…" });
		for (const v of info.values ?? []) select.createEl("option", { value: v, text: v });
		select.addEventListener("change", () => {
			if (select.value !== "") list.add(select.value);
			select.value = "";
		});
		return { control: select, pending: () => undefined };
	}

	/** A list of typed items: Enter, or leaving the box, makes a pill of what is typed, as in Properties. */
	private textAdder(box: HTMLElement, field: Field, info: ColumnInfo, list: PillList, labelled: Labelled): Adder {
		const itemType = info.items ?? "text";
		const input = labelled(
			box.createEl("input", {
				type: itemType === "integer" || itemType === "number" ? "number" : "text",
				cls: "datanotes-pill-input multi-select-input",
				attr: { id: `${this.idBase}-${field.column}`, placeholder: "Add…" },
			}),
			`Add to ${field.label}`,
		);
		const pending = () => itemOf(itemType, input.value);
		const commit = () => {
			const v = pending();
			input.value = "";
			list.add(v);
		};
		input.addEventListener("keydown", (evt) => {
			// Backspace in the empty box takes the last pill back, as in Properties.
			if (evt.key === "Backspace" && input.value === "" && list.items.length > 0 && !evt.defaultPrevented) {
				evt.preventDefault();
				list.items.pop();
				list.draw();
				list.changed();
				return;
			}
			if (evt.key !== "Enter" || evt.defaultPrevented || evt.isComposing || field.suggest?.shown) return;
			if (input.value.trim() === "") return; // Enter on an empty box saves the form.
			evt.preventDefault();
			commit();
		});
		input.addEventListener("input", () => list.changed());
		// Left with text in the box: it becomes a pill, as in Properties.
		input.addEventListener("blur", () => {
			if (input.value.trim() !== "" && !field.suggest?.shown) commit();
		});
		if (itemType === "link" && info.table) {
			const pick = (l: string) => {
				input.value = "";
				list.add(l);
			};
			field.create = this.creator(info.table, field);
			field.suggest = new LinkSuggest(this.app, input, this.door, info.table, this.from(), (s) => pick(s.link), field.create);
			field.linkTo = (l) => {
				// The row made for a pill that named it: the pill stays, now a link that resolves.
				if (list.items.some((x) => typeof x === "string" && linkTitle(x) === linkTitle(l))) list.changed();
				else pick(l);
				input.focus();
			};
		}
		return { control: input, pending };
	}

	/** "Create “…” in <table>": a second form for that table, its name filled
	 * in; once written, the link is this field's. Null when that table is not known. */
	private creator(tableName: string, field: Field): ((name: string) => void) | null {
		const target = this.tables.find((t) => t.name === tableName || t.qualified === tableName);
		if (!target) return null;
		return (name) => {
			const values: Record<string, unknown> = {};
			const nameFrom = target.name_from;
			if (nameFrom && target.columns?.[nameFrom] && !nameFrom.includes("{")) values[nameFrom] = name;
			const form = new RowFormModal(
				this.app,
				this.door,
				target,
				{ kind: "new", values },
				(path) => {
					if (path) field.linkTo?.(`[[${linkTitle(path)}]]`);
				},
				this.tables,
			);
			form.open();
			this.created = form;
		};
	}

	/** The suggester of a link field (for tests, and the keyboard). */
	suggestOf(column: string): LinkSuggest | undefined {
		return this.fields.find((f) => f.column === column)?.suggest;
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

	/** A dry run now: what the engine says of the form as it is, shown as the
	 * fields' errors (those left), Save's state and the computed columns. */
	async check(): Promise<void> {
		const seq = ++this.seq;
		const at = this.edits;
		const { op, args } = this.args(true);
		let out: Outcome;
		try {
			out = await this.door.call(op, args);
		} catch (e) {
			// The engine went away (the plugin unloaded) or failed: said beside Save, its words in Details.
			const error = `The engine could not check the row: ${e instanceof Error ? e.message : String(e)}`;
			out = { status: "internal", http: 500, answer: { error }, store: [], log: [], deliveries: [] };
		}
		if (seq !== this.seq || this.closed) return;
		this.outcome = out;
		this.checkedAt = at;
		this.computed(out);
		this.render();
	}

	/** The generated columns as the write would leave them. */
	private computed(out: Outcome): void {
		const generated = this.fields.filter((f) => f.info.generated);
		if (generated.length === 0) return;
		if (out.status !== "ok") {
			if (this.mode.kind === "new") for (const f of generated) f.set(undefined);
			return;
		}
		const edits = (out.answer as { planned_edits?: { path: string; create?: boolean; move_to?: string; set?: Record<string, unknown> }[] }).planned_edits ?? [];
		const mode = this.mode;
		const edit =
			mode.kind === "new" ? edits.find((e) => e.create === true && e.path.endsWith(".md")) : edits.find((e) => e.path === mode.path && e.set !== undefined);
		for (const f of generated) {
			if (edit?.set && f.column in edit.set) f.set(edit.set[f.column]);
			else if (mode.kind === "new" && edit) f.set(undefined);
		}
	}

	/** The violations the form answers to now: the last check's, or those the row broke when opened. */
	private violations(): RowViolations[] {
		const out = this.outcome;
		const refused = out !== null && out.status !== "ok" ? ((out.answer as { violations?: RowViolations[] }).violations ?? []) : [];
		const taken = this.nameTaken();
		// A rule the row broke when opened stays told under its field until that field changes
		// (the engine may take a write that leaves it as it was); one above the form, until a change is checked.
		const standing = this.standing
			.map((r) => ({ ...r, violations: r.violations.filter((v) => (this.fieldOf(v) ? !this.fieldOf(v)?.touched : this.checkedAt === 0)) }))
			.filter((r) => r.violations.length > 0);
		return [...standing, ...refused, ...(taken ? [taken] : [])];
	}

	/** The refusal's lines about the row (the engine's first line, Hint and Docs left out). */
	private refusalLines(): string[] {
		const out = this.outcome;
		if (out === null || out.status === "ok") return [];
		const lines = (errorOf(out.answer) ?? "").split("\n").slice(1);
		return lines.filter((l) => l.trim() !== "" && !/^(Hint|Docs):/.test(l)).map((l) => l.replace(/^\S+\.md: /, ""));
	}

	/** "Its name would be …, which another note holds": told under the column the note is named from. */
	private nameTaken(): RowViolations | null {
		for (const line of this.refusalLines()) {
			const m = /^its name would be (.+), which another note holds/.exec(line);
			if (!m) continue;
			const from = this.table.name_from ?? "";
			const column = from.includes("{") ? /\{([^}|.]+)/.exec(from)?.[1]?.trim() : from;
			// Already told there (a unique column's own violation says it better).
			const refused = (this.outcome?.answer as { violations?: RowViolations[] }).violations ?? [];
			if (refused.some((r) => r.violations.some((v) => v.column === column))) return null;
			return { path: "", violations: [{ code: "name_taken", column: column || undefined, message: `Another note is already called “${linkTitle(m[1])}”.` }] };
		}
		return null;
	}

	/** The field a violation speaks of (a CHECK that reads one column: that column's). */
	private fieldOf(v: Violation): Field | undefined {
		const column = v.column ?? (v.code === "check" ? ruleColumn(v.value) : undefined);
		return column === undefined ? undefined : this.fields.find((f) => f.column === column);
	}

	/** A violation in words, under its field or above the form. */
	private words(v: Violation, field: Field | undefined): string {
		switch (v.code) {
			case "required":
				return "Required.";
			case "broken_link": {
				const target = /^\[\[(.*?)\]\]/.exec(v.message)?.[1];
				const meant = /did you mean \[\[(.*?)\]\]/.exec(v.message)?.[1];
				const table = field?.info.table ? shortTable(field.info.table) : "the linked table";
				if (target === undefined) return plainWords(v.message);
				if (/ is .*, not a row of /.test(v.message)) return `“${linkTitle(target)}” is not a row of ${table}.`;
				return `No row of ${table} is called “${linkTitle(target)}”.${meant ? ` Did you mean ${linkTitle(meant)}?` : ""}`;
			}
			case "unique": {
				const other = /is also the value of (.+)$/.exec(v.message)?.[1];
				return other ? `${linkTitle(other)} already has this value.` : plainWords(v.message);
			}
			case "name_taken":
				return v.message;
			case "check":
				return ruleText(v, !field);
			case "ref_where":
			case "ref_by":
				return plainWords(ruleText(v, !field).replace(/^[\w.[\]]+: /, ""));
			default: {
				const said = plainWords(v.message);
				return said.charAt(0).toUpperCase() + said.slice(1);
			}
		}
	}

	/** Shows the form as the last check left it: errors under the fields left,
	 * the rest above once Save was tried or a field left, Save and its reason. */
	private render(): void {
		if (this.closed) return;
		const byField = new Map<Field, Violation[]>();
		const general: string[] = [];
		for (const row of this.violations()) {
			for (const v of row.violations) {
				const field = this.fieldOf(v);
				if (field) byField.set(field, [...(byField.get(field) ?? []), v]);
				else general.push(this.words(v, undefined));
			}
		}
		const standing = new Set(this.standing.flatMap((r) => r.violations));
		for (const f of this.fields) {
			const vs = byField.get(f) ?? [];
			const fresh = f.changedAt <= this.checkedAt;
			const show = vs.filter((v) => standing.has(v) || ((f.left || this.attempted) && fresh));
			f.error.setText([...new Set(show.map((v) => this.words(v, f)))].join("\n"));
			this.offerCreate(f, show);
			const invalid = show.length > 0;
			f.control?.setAttr("aria-invalid", invalid ? "true" : "false");
			f.row.toggleClass("is-invalid", invalid);
		}
		const out = this.outcome;
		const refused = out !== null && out.status !== "ok";
		const answer = (out?.answer ?? {}) as { violations?: RowViolations[]; current?: unknown[] };
		const stale = this.mode.kind === "edit" && out !== null && out.status !== "ok" && Array.isArray(answer.current);
		const anyLeft = this.attempted || this.fields.some((f) => f.left);
		if (stale) this.formError.setText("This note changed since the form opened: nothing was written.");
		else if (refused && general.length === 0 && byField.size === 0) this.formError.setText(this.attempted ? this.refusalLines().map(plainWords).join("\n") : "");
		else this.formError.setText(anyLeft || this.standing.length > 0 ? [...new Set(general)].join("\n") : "");
		if (stale && this.reloadEl.childElementCount === 0) this.offerReload();
		if (!stale) this.reloadEl.empty();

		const pending = out === null && this.mode.kind === "new";
		this.submitButton.disabled = refused || pending || this.saving;
		this.reasonEl.setText(refused ? this.reason(byField, general.length, stale) : pending ? "Checking…" : "");
		const text = refused ? (errorOf(out.answer) ?? "") : "";
		this.detailsText.setText(text);
		this.detailsEl.hidden = text === "";
	}

	/** Under a link that names no row: a button that makes it. */
	private offerCreate(f: Field, shown: Violation[]): void {
		f.offer.empty();
		const create = f.create;
		if (!create) return;
		for (const v of shown) {
			const target = v.code === "broken_link" && !/ is .*, not a row of /.test(v.message) ? /^\[\[(.*?)\]\]/.exec(v.message)?.[1] : undefined;
			if (target === undefined) continue;
			const name = linkTitle(target);
			const button = f.offer.createEl("button", { cls: "datanotes-create-row", text: `Create “${name}” in ${shortTable(f.info.table)}` });
			button.addEventListener("click", () => create(name));
		}
	}

	/** Why Save is disabled, in a sentence: what to fill in, what to fix. */
	private reason(byField: Map<Field, Violation[]>, general: number, stale: boolean): string {
		if (stale) return "This note changed since the form opened: reload it to save.";
		const fill: string[] = [];
		const fix: string[] = [];
		for (const f of this.fields) {
			const vs = byField.get(f);
			if (!vs) continue;
			if (vs.every((v) => v.code === "required")) fill.push(f.label);
			else fix.push(f.label);
		}
		const parts: string[] = [];
		if (fill.length > 0) parts.push(`fill in ${listWords(fill)}`);
		if (fix.length > 0) parts.push(`fix ${listWords(fix)}`);
		if (general > 0) parts.push(general === 1 ? "keep the rule said above" : "keep the rules said above");
		if (parts.length === 0) {
			const said = this.refusalLines().map(plainWords)[0];
			return said ? `Cannot save: ${said}` : "The row cannot be saved as it is (see details).";
		}
		const said = parts.length <= 1 ? parts.join("") : `${parts.slice(0, -1).join(", ")}, and ${parts[parts.length - 1]}`;
		return `To save, ${said}.`;
	}

	/** Rules the row breaks now (Edit row… from the Problems view), each under
	 * the field it names (the rest above the form), until the person changes
	 * something. False when there are none. */
	showBroken(rows: RowViolations[]): boolean {
		this.standing = rows.filter((r) => r.violations.length > 0);
		// Their fields count as seen: what the engine says of them after a change shows at once.
		for (const v of this.standing.flatMap((r) => r.violations)) {
			const f = this.fieldOf(v);
			if (f) f.left = true;
		}
		this.render();
		return this.standing.length > 0;
	}

	/** Shows an outcome (a write's or a dry run's). True when it was done. */
	show(out: Outcome): boolean {
		this.outcome = out;
		this.checkedAt = this.edits;
		this.render();
		return out.status === "ok";
	}

	/** The note changed since the form was filled: reload it, or keep typing. */
	private offerReload(): void {
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
		this.outcome = null;
		this.standing = [];
		this.fill(read.values);
		this.render();
	}

	/** Checked, then written; on a refusal the form stays, every error shown. */
	async submit(): Promise<boolean> {
		if (this.timer !== null) {
			window.clearTimeout(this.timer);
			this.timer = null;
		}
		if (this.saving || this.closed) return false;
		this.attempted = true;
		this.saving = true;
		this.submitButton.disabled = true;
		try {
			this.checking = this.check();
			await this.checking;
			if (this.outcome?.status !== "ok") {
				this.focusFirstError();
				return false;
			}
			const { op, args } = this.args(false);
			const out = await this.door.call(op, args);
			if (!this.show(out)) return false;
			const path = this.mode.kind === "edit" ? (writtenPath(out.answer) ?? this.mode.path) : (writtenPath(out.answer) ?? "");
			this.close();
			this.written(path, out.answer);
			return true;
		} finally {
			this.saving = false;
			this.render();
		}
	}

	private focusFirstError(): void {
		const bad = this.fields.find((f) => f.control && f.error.textContent !== "");
		bad?.control?.focus();
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
	if (out.status !== "ok") return refusalShort(out);
	const row = (out.answer as { rows: Record<string, unknown>[] }).rows[0];
	if (!row) return `${noteTitle(path)} is not a row of ${shortTable(table)}: its front matter may not be readable (the Problems view says why).`;
	const values: Record<string, unknown> = {};
	for (const [k, v] of Object.entries(row)) if (!k.startsWith("_") && k !== "path" && k !== "id") values[k] = v;
	return { kind: "edit", path, version: String(row._version), values };
}

/** A generated column: shown as computed, never typed in. */
function computedField(setting: Setting, field: Field, info: ColumnInfo, from: string[]): void {
	setting.setDesc(from.length > 0 ? `Computed from ${listWords(from)}` : "Computed");
	setting.settingEl.addClass("datanotes-generated");
	const shown = setting.controlEl.createDiv({ cls: "datanotes-computed", attr: { "aria-live": "polite" } });
	field.set = (v) => {
		const text = valueText(v, info.items ?? info.type);
		shown.setText(text === "" ? "Computed when saved" : text);
		shown.toggleClass("datanotes-muted", text === "");
	};
}
