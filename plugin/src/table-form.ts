// "Make a table of this folder…" (a folder's context menu) and "New table…"
// (the palette): a table made without writing JSON. For a folder of notes the
// engine reads their front matter first (infer_table) and proposes a column
// for each key, with its type and what it saw; the person keeps, renames or
// retypes them, marks the required ones and picks the column that names new
// notes. The engine checks it as it is built (a dry run of create_table);
// Create writes it, journaled, so Undo last write takes it back. The engine's
// answer counts the folder's notes that break the rules as they stand: the
// form says so before Create, and the notice after.

import { type App, Setting } from "obsidian";
import { CheckedForm, labelled } from "./checked-form";
import { TYPES } from "./definition-fields";
import type { EngineDoor } from "./history-view";
import { type Named, TableSuggest } from "./table-suggest";

/** A column infer_table proposes. */
export interface InferredColumn {
	name: string;
	type: string;
	items?: string;
	stats: { present: number; filled: number; examples: unknown[] };
}

interface ColumnRow {
	el: HTMLElement;
	keep: HTMLInputElement;
	name: HTMLInputElement;
	type: HTMLSelectElement;
	items: HTMLSelectElement;
	/** An enum's values (comma separated), or a link's table. */
	extra: HTMLInputElement;
	/** The tables suggested in `extra` while it names a link's table. */
	suggest: TableSuggest;
	required: HTMLInputElement;
}

/** A table's name from its folder's: "Reading/Books 2026" is "books_2026". */
export function tableNameOf(folder: string): string {
	const last = folder.split("/").filter((p) => p !== "").pop() ?? "";
	const name = last
		.toLowerCase()
		.normalize("NFD")
		.replace(/[\u0300-\u036f]/g, "")
		.replace(/[^a-z0-9_]+/g, "_")
		.replace(/^_+|_+$/g, "");
	return /^[0-9]/.test(name) ? `t_${name}` : name;
}

/** What infer_table saw of a key: "in 2 of 2 notes, e.g. Dune, Emma". */
export function seenText(c: InferredColumn, notes: number): string {
	const examples = c.stats.examples.map((e) => (typeof e === "string" ? e : JSON.stringify(e))).join(", ");
	return `in ${c.stats.present} of ${notes} notes${examples === "" ? "" : `, e.g. ${examples}`}`;
}

export class TableFormModal extends CheckedForm {
	protected readonly op = "create_table";
	protected readonly thing = "table";
	private descEl!: HTMLInputElement;
	private folderEl!: HTMLInputElement;
	private namingEl!: HTMLSelectElement;
	private historyEl!: HTMLInputElement;
	private columnsEl!: HTMLElement;
	private noteEl!: HTMLElement;
	/** What reading the folder found, the first line of the note under the form. */
	private readLine = "";
	/** The columns proposed and added, in the form's order. */
	readonly rows: ColumnRow[] = [];
	/** The notes of the folder as infer_table last counted them. */
	notes = 0;

	constructor(
		app: App,
		protected readonly door: EngineDoor,
		/** The tables and views, for a link column's target. */
		private readonly tables: Named[],
		/** The folder whose notes become the rows; null for a table of its own folder. */
		private readonly folder: string | null,
		/** Told once the table is written: its name, and how many rows break a rule. */
		private readonly created: (name: string, broken: number) => void,
	) {
		super(app);
	}

	/** Set when the folder's notes are read: a test waits for it. */
	ready: Promise<void> = Promise.resolve();

	onOpen(): void {
		const el = this.contentEl;
		el.empty();
		el.addClass("datanotes-form");
		this.setTitle(this.folder === null ? "New table" : `Make ${this.folder} a table`);
		this.drawHead(el);
		const changed = () => this.schedule();
		this.nameEl.value = this.folder === null ? "" : tableNameOf(this.folder);
		this.descEl = labelled(new Setting(el).setName("Description").setDesc("What the table holds: agents read it.").controlEl.createEl("input", { type: "text" }), "Description");
		this.descEl.addEventListener("input", changed);
		const folder = new Setting(el)
			.setName("Folder")
			.setDesc(this.folder === null ? "Empty: the table's rows go to a folder of its own under datanotes/. A folder of notes: they become its rows." : "Its notes become the table's rows; none of them is changed.");
		this.folderEl = labelled(folder.controlEl.createEl("input", { type: "text" }), "Folder");
		this.folderEl.value = this.folder ?? "";
		this.folderEl.readOnly = this.folder !== null;
		this.folderEl.addEventListener("change", () => void this.readFolder());
		this.namingEl = labelled(
			new Setting(el).setName("Name new notes from").setDesc("The column whose value names the note of a row added later.").controlEl.createEl("select", { cls: "dropdown" }),
			"Name new notes from",
		);
		this.namingEl.addEventListener("change", changed);
		this.historyEl = labelled(
			new Setting(el).setName("Keep a history").setDesc("Every version of the table, to read as of a moment, compare and restore.").controlEl.createEl("input", { type: "checkbox" }),
			"Keep a history",
		);
		this.historyEl.checked = true;
		this.historyEl.addEventListener("change", changed);
		new Setting(el).setName("Columns").setDesc("Untick a proposed column to leave that key out of the table.");
		this.columnsEl = el.createDiv({ cls: "datanotes-list datanotes-table-columns" });
		el.createEl("button", { text: "Add column", cls: "datanotes-add-column" }).addEventListener("click", () => {
			this.addColumn({ name: "", type: "text", stats: { present: 0, filled: 0, examples: [] } }, false);
			this.schedule();
		});
		this.drawCreate(el);
		this.noteEl = el.createDiv({ cls: "datanotes-muted datanotes-op-note" });
		this.namings();
		this.ready = this.readFolder();
	}

	/** The folder's notes read again: a proposed column for each key. */
	async readFolder(): Promise<void> {
		for (const r of this.rows.filter((r) => r.el.dataset.inferred === "true")) this.removeColumn(r);
		const folder = this.folderEl.value.trim();
		this.notes = 0;
		if (folder === "") return void this.schedule();
		const out = await this.door.call("infer_table", { folder });
		// Refused (no such folder, say): in words above the form, and Create waits.
		if (!this.show(out)) return;
		const found = out.answer as { files: number; columns: InferredColumn[]; skipped: { path: string }[] };
		this.notes = found.files;
		for (const c of found.columns) this.addColumn(c, true);
		const skipped = found.skipped.length > 0 ? ` ${found.skipped.length} whose front matter cannot be read (check_table will list them).` : "";
		this.readLine = found.files === 0 ? "No notes in this folder yet." : `${found.files} notes read.${skipped}`;
		this.noteEl.setText(this.readLine);
		// The usual naming column, when the notes have it.
		const named = ["title", "name"].find((n) => found.columns.some((c) => c.name === n && c.type === "text"));
		if (named && this.namingEl.value === "") this.namingEl.value = named;
		await this.check();
	}

	addColumn(c: InferredColumn, inferred: boolean): ColumnRow {
		const el = this.columnsEl.createDiv({ cls: "datanotes-list-item datanotes-table-column" });
		el.dataset.inferred = String(inferred);
		const keep = el.createEl("input", { type: "checkbox" });
		keep.checked = true;
		const name = labelled(el.createEl("input", { type: "text", attr: { placeholder: "Column name" } }), "Column name");
		name.value = c.name;
		const type = el.createEl("select", { cls: "dropdown" });
		for (const t of TYPES) type.createEl("option", { value: t, text: t });
		// A link with no table to point at stays text until one is named.
		type.value = c.type === "link" && this.tables.length === 0 ? "text" : TYPES.includes(c.type) ? c.type : "text";
		const items = el.createEl("select", { cls: "dropdown" });
		for (const t of TYPES.filter((t) => t !== "list")) items.createEl("option", { value: t, text: t });
		items.value = c.items !== undefined && TYPES.includes(c.items) ? c.items : "text";
		const extra = el.createEl("input", { type: "text" });
		// Tables are suggested while it names a link's table, not an enum's values.
		const of = () => (type.value === "list" ? items.value : type.value);
		const suggest = new TableSuggest(this.app, extra, this.tables, () => of() === "link");
		this.suggests.add(suggest);
		const label = el.createEl("label", { cls: "datanotes-table-required" });
		const required = label.createEl("input", { type: "checkbox" });
		label.appendText(" required");
		// Proposed required when every note has a value.
		required.checked = inferred && this.notes > 0 && c.stats.filled === this.notes;
		if (inferred) el.createDiv({ text: seenText(c, this.notes), cls: "datanotes-muted datanotes-table-seen" });
		const row: ColumnRow = { el, keep, name, type, items, extra, suggest, required };
		// Each control named with its column's name, for a screen reader reading one row of many.
		const named = () => {
			const n = name.value.trim() || "the new column";
			keep.setAttribute("aria-label", `Keep ${n}`);
			type.setAttribute("aria-label", `Type of ${n}`);
			items.setAttribute("aria-label", `Type of the items of ${n}`);
			extra.setAttribute("aria-label", of() === "enum" ? `Values of ${n}` : `The table ${n} links to`);
		};
		const sync = () => {
			items.toggleClass("datanotes-hidden", type.value !== "list");
			extra.toggleClass("datanotes-hidden", of() !== "enum" && of() !== "link");
			extra.placeholder = of() === "enum" ? "Values, comma separated" : "The table it links to";
			named();
			// An enum starts from the values the notes hold.
			if (of() === "enum" && extra.value === "") extra.value = c.stats.examples.filter((e) => typeof e === "string").join(", ");
			this.namings();
		};
		for (const i of [keep, type, items, required]) i.addEventListener("change", () => (sync(), this.schedule()));
		for (const i of [name, extra]) i.addEventListener("input", () => (named(), this.namings(), this.schedule()));
		if (!inferred) {
			el.createEl("button", { text: "×", attr: { "aria-label": "Remove this column" } }).addEventListener("click", () => {
				this.removeColumn(row);
				this.schedule();
			});
		}
		this.rows.push(row);
		sync();
		return row;
	}

	private removeColumn(r: ColumnRow): void {
		this.suggests.delete(r.suggest);
		r.suggest.close();
		this.rows.splice(this.rows.indexOf(r), 1);
		r.el.remove();
		this.namings();
	}

	/** The kept text columns, to name new notes from. */
	private namings(): void {
		const was = this.namingEl.value;
		this.namingEl.empty();
		this.namingEl.createEl("option", { value: "", text: "None" });
		for (const r of this.rows) {
			const n = r.name.value.trim();
			if (r.keep.checked && n !== "" && r.type.value === "text") this.namingEl.createEl("option", { value: n, text: n });
		}
		this.namingEl.value = Array.from(this.namingEl.options).some((o) => o.value === was) ? was : "";
	}

	/** create_table's arguments for what the form holds. */
	args(dryRun: boolean): Record<string, unknown> {
		const columns: Record<string, unknown> = {};
		for (const r of this.rows) {
			const name = r.name.value.trim();
			if (!r.keep.checked || name === "") continue;
			const def: Record<string, unknown> = { type: r.type.value };
			const of = r.type.value === "list" ? r.items.value : r.type.value;
			if (r.type.value === "list") def.items = r.items.value;
			if (of === "enum") def.values = r.extra.value.split(",").map((v) => v.trim()).filter((v) => v !== "");
			if (of === "link") def.table = r.extra.value.trim();
			if (r.required.checked) def.required = true;
			columns[name] = def;
		}
		const args: Record<string, unknown> = { table: this.nameEl.value.trim(), columns, dry_run: dryRun };
		if (this.descEl.value.trim() !== "") args.description = this.descEl.value.trim();
		if (this.folderEl.value.trim() !== "") args.folder = this.folderEl.value.trim();
		if (this.namingEl.value !== "") args.name_from = this.namingEl.value;
		if (!this.historyEl.checked) args.history = false;
		return args;
	}

	/** The folder's notes as the table would take them: how many break its rules. */
	protected checked(answer: unknown): void {
		const { rows_found: found, rows_breaking_rules: breaking } = answer as { rows_found?: number; rows_breaking_rules?: number };
		if (found === undefined || breaking === undefined) return void this.noteEl.setText(this.readLine);
		const rules =
			breaking === 0
				? `${found === 1 ? "It keeps" : `All ${found} keep`} the table's rules as they stand.`
				: `${breaking === found ? (found === 1 ? "It breaks" : `All ${found} break`) : `${breaking} of them ${breaking === 1 ? "breaks" : "break"}`} the table's rules as they stand: kept as written, and listed by Open problems once made.`;
		this.noteEl.setText(this.readLine === "" ? rules : `${this.readLine} ${rules}`);
	}

	/** Notes made rows as they are: those breaking a rule are counted and told, not refused. */
	protected written(name: string, answer: unknown): void {
		this.created(name, (answer as { rows_breaking_rules?: number }).rows_breaking_rules ?? 0);
	}
}
