// "New view…": a view (a saved query over a table) made without writing JSON:
// its table, the columns it shows, conditions a row must meet (all of them) and
// its order. The engine checks it as it is built; Create writes it (journaled,
// so Undo last write takes it back) and opens it as a base.

import { type App, Setting } from "obsidian";
import { CheckedForm, labelled } from "./checked-form";
import type { EngineDoor } from "./history-view";
import type { TableInfo } from "./types";

/** The operators a condition offers, as the filter language names them. */
export const OPERATORS: [string, string][] = [
	["eq", "is"],
	["ne", "is not"],
	["gt", ">"],
	["gte", "≥"],
	["lt", "<"],
	["lte", "≤"],
	["contains", "contains"],
	["starts_with", "starts with"],
	["set", "has a value"],
	["unset", "has no value"],
];

interface Condition {
	column: HTMLSelectElement;
	op: HTMLSelectElement;
	value: HTMLInputElement;
}

interface Sort {
	column: HTMLSelectElement;
	desc: HTMLSelectElement;
}

/** A condition's value as the column's type reads it. */
function typed(type: string | undefined, s: string): unknown {
	const t = s.trim();
	if ((type === "integer" || type === "number") && t !== "" && Number.isFinite(Number(t))) return Number(t);
	if (type === "boolean" && (t === "true" || t === "false")) return t === "true";
	if (type === "link" && t !== "" && !t.startsWith("[[")) return `[[${t}]]`;
	return s;
}

export class ViewFormModal extends CheckedForm {
	protected readonly op = "create_view";
	protected readonly thing = "view";
	private descEl!: HTMLInputElement;
	private tableEl!: HTMLSelectElement;
	private columnsEl!: HTMLElement;
	private conditionsEl!: HTMLElement;
	private sortsEl!: HTMLElement;
	private conditions: Condition[] = [];
	private sorts: Sort[] = [];

	constructor(
		app: App,
		protected readonly door: EngineDoor,
		private readonly tables: TableInfo[],
		/** Called with the view's name once it is written. */
		private readonly created: (name: string) => void,
	) {
		super(app);
	}

	onOpen(): void {
		const el = this.contentEl;
		el.empty();
		el.addClass("datanotes-form");
		this.setTitle("New view");
		this.drawHead(el);
		const changed = () => this.schedule();
		this.descEl = labelled(new Setting(el).setName("Description").controlEl.createEl("input", { type: "text" }), "Description");
		this.descEl.addEventListener("input", changed);
		this.tableEl = labelled(new Setting(el).setName("Table").controlEl.createEl("select", { cls: "dropdown" }), "Table");
		// By name, and by description where the table has one (never main.public.…).
		for (const t of this.tables) this.tableEl.createEl("option", { value: t.qualified, text: t.description ? `${t.name}: ${t.description}` : t.name });
		this.tableEl.addEventListener("change", () => {
			this.drawTable();
			changed();
		});
		new Setting(el).setName("Columns").setDesc("The columns it shows, in the table's order; none ticked shows them all.");
		this.columnsEl = el.createDiv({ cls: "datanotes-view-columns" });
		new Setting(el).setName("Rows").setDesc("The rows it shows meet every condition.");
		this.conditionsEl = el.createDiv({ cls: "datanotes-list" });
		el.createEl("button", { text: "Add condition", cls: "datanotes-add-condition" }).addEventListener("click", () => this.addCondition());
		new Setting(el).setName("Order");
		this.sortsEl = el.createDiv({ cls: "datanotes-list" });
		el.createEl("button", { text: "Add sort", cls: "datanotes-add-sort" }).addEventListener("click", () => this.addSort());
		this.drawCreate(el);
		this.drawTable();
	}

	private table(): TableInfo | undefined {
		return this.tables.find((t) => t.qualified === this.tableEl.value);
	}

	private columnNames(): string[] {
		return Object.keys(this.table()?.columns ?? {});
	}

	/** The table's columns as boxes to tick; its conditions and sorts start again. */
	private drawTable(): void {
		this.columnsEl.empty();
		for (const c of this.columnNames()) {
			const label = this.columnsEl.createEl("label", { cls: "datanotes-view-column" });
			const box = label.createEl("input", { type: "checkbox", value: c });
			box.addEventListener("change", () => this.schedule());
			label.appendText(` ${c}`);
		}
		this.conditionsEl.empty();
		this.conditions = [];
		this.sortsEl.empty();
		this.sorts = [];
	}

	private columnSelect(parent: HTMLElement, label: string): HTMLSelectElement {
		const select = labelled(parent.createEl("select", { cls: "dropdown" }), label);
		for (const c of this.columnNames()) select.createEl("option", { value: c, text: c });
		select.addEventListener("change", () => this.schedule());
		return select;
	}

	addCondition(): Condition {
		const row = this.conditionsEl.createDiv({ cls: "datanotes-list-item" });
		const n = this.conditions.length + 1;
		const column = this.columnSelect(row, `Column of condition ${n}`);
		const op = labelled(row.createEl("select", { cls: "dropdown" }), `Comparison of condition ${n}`);
		for (const [v, text] of OPERATORS) op.createEl("option", { value: v, text });
		const value = labelled(row.createEl("input", { type: "text", attr: { placeholder: "Value" } }), `Value of condition ${n}`);
		const c: Condition = { column, op, value };
		op.addEventListener("change", () => {
			value.toggleClass("datanotes-hidden", op.value === "set" || op.value === "unset");
			this.schedule();
		});
		value.addEventListener("input", () => this.schedule());
		row.createEl("button", { text: "×", attr: { "aria-label": "Remove this condition" } }).addEventListener("click", () => {
			this.conditions.splice(this.conditions.indexOf(c), 1);
			row.remove();
			this.schedule();
		});
		this.conditions.push(c);
		return c;
	}

	addSort(): Sort {
		const row = this.sortsEl.createDiv({ cls: "datanotes-list-item" });
		const n = this.sorts.length + 1;
		const column = this.columnSelect(row, `Column of sort ${n}`);
		const desc = labelled(row.createEl("select", { cls: "dropdown" }), `Direction of sort ${n}`);
		desc.createEl("option", { value: "", text: "Ascending" });
		desc.createEl("option", { value: "desc", text: "Descending" });
		desc.addEventListener("change", () => this.schedule());
		const s: Sort = { column, desc };
		row.createEl("button", { text: "×", attr: { "aria-label": "Remove this sort" } }).addEventListener("click", () => {
			this.sorts.splice(this.sorts.indexOf(s), 1);
			row.remove();
			this.schedule();
		});
		this.sorts.push(s);
		return s;
	}

	/** create_view's arguments for what the form holds. */
	args(dryRun: boolean): Record<string, unknown> {
		const types = this.table()?.columns ?? {};
		const where: Record<string, unknown>[] = this.conditions.map((c) => {
			const col = c.column.value;
			if (c.op.value === "set") return { [col]: { exists: true } };
			if (c.op.value === "unset") return { [col]: { exists: false } };
			return { [col]: { [c.op.value]: typed(types[col]?.type, c.value.value) } };
		});
		const columns = Array.from(this.columnsEl.querySelectorAll<HTMLInputElement>("input:checked")).map((b) => b.value);
		const args: Record<string, unknown> = { name: this.nameEl.value.trim(), table: this.tableEl.value, dry_run: dryRun };
		if (this.descEl.value.trim() !== "") args.description = this.descEl.value.trim();
		if (columns.length > 0) args.columns = columns;
		if (where.length === 1) args.where = where[0];
		if (where.length > 1) args.where = { and: where };
		if (this.sorts.length > 0) args.order_by = this.sorts.map((s) => `${s.column.value}${s.desc.value === "desc" ? " desc" : ""}`);
		return args;
	}

	protected written(name: string): void {
		this.created(name);
	}

	/** For tests: fills the name, description and table. */
	fill(name: string, table: string, description = ""): void {
		this.nameEl.value = name;
		this.descEl.value = description;
		this.tableEl.value = table;
		this.drawTable();
	}
}
