// Where the forms open: "New row…" (the palette, and a table folder's context
// menu), "Edit row…" (the palette, a row's file menu and the editor's menu),
// "New view…" (the palette), "New table…" (the palette) and "Make a table of
// this folder…" (the context menu of a folder that is no table's).

import { type App, type Menu, Notice, type Plugin, SuggestModal, TFile, TFolder, type TAbstractFile } from "obsidian";
import type { EngineDoor } from "./history-view";
import { baseChoices, basesAvailable, openBase } from "./bases";
import { refusalShort } from "./display";
import { readRow, RowFormModal } from "./row-form";
import { TableFormModal } from "./table-form";
import { ViewFormModal } from "./view-form";
import type { RowViolations, TableInfo } from "./types";

class TableSuggestModal extends SuggestModal<TableInfo> {
	constructor(
		app: App,
		private readonly tables: TableInfo[],
		private readonly chosen: (t: TableInfo) => void,
	) {
		super(app);
		this.setPlaceholder("Table to add a row to…");
	}

	getSuggestions(query: string): TableInfo[] {
		const q = query.trim().toLowerCase();
		return this.tables.filter((t) => q === "" || t.name.includes(q.replace(/ /g, "_")) || (t.description ?? "").toLowerCase().includes(q));
	}

	renderSuggestion(t: TableInfo, el: HTMLElement): void {
		el.createDiv({ text: t.name });
		if (t.description) el.createEl("small", { text: t.description, cls: "datanotes-muted" });
	}

	onChooseSuggestion(t: TableInfo): void {
		this.chosen(t);
	}
}

export class RowForms {
	/** The tables as last read: menus are drawn at once, so they read these. */
	private tables: TableInfo[] = [];

	constructor(
		private readonly app: App,
		private readonly door: EngineDoor,
	) {}

	/** Reads the tables again (at start, and when the engine says something changed). */
	async refresh(): Promise<string | null> {
		const out = await this.door.call("describe_database", {});
		if (out.status !== "ok") return refusalShort(out);
		this.tables = out.answer.tables;
		return null;
	}

	/** The table whose rows this folder holds. */
	tableOfFolder(folder: string): TableInfo | undefined {
		return this.tables.find((t) => t.folder === `${folder}/`);
	}

	/** The table a note is a row of: the deepest table folder holding it. */
	tableOfPath(path: string | undefined): TableInfo | undefined {
		if (path === undefined || !path.endsWith(".md")) return undefined;
		const holding = this.tables.filter((t) => t.folder !== undefined && path.startsWith(t.folder));
		return holding.sort((a, b) => (b.folder?.length ?? 0) - (a.folder?.length ?? 0))[0];
	}

	/** The form for a new row of `table`; the note opens once it is written. */
	newRow(table: TableInfo): RowFormModal {
		const modal = new RowFormModal(
			this.app,
			this.door,
			table,
			{ kind: "new" },
			(path) => {
				if (path) void this.app.workspace.openLinkText(path, "", false);
			},
			this.tables,
		);
		modal.open();
		return modal;
	}

	/** The form for the row at `path`, filled with what it holds now. */
	async editRow(path: string | undefined, broken: RowViolations["violations"] = []): Promise<RowFormModal | null> {
		if (this.tables.length === 0) await this.refresh();
		const table = this.tableOfPath(path);
		if (!table || path === undefined) {
			new Notice("Datanotes: this note is not a row of a table.");
			return null;
		}
		const row = await readRow(this.door, table.qualified, path);
		if (typeof row === "string") {
			new Notice(`Datanotes: ${row}`, 10000);
			return null;
		}
		const name = (path.split("/").pop() ?? path).replace(/\.md$/, "");
		const modal = new RowFormModal(this.app, this.door, table, row, () => new Notice(`Datanotes: ${name} saved.`), this.tables);
		modal.open();
		// From the Problems view: the rules the row breaks now, under their fields.
		if (broken.length > 0) modal.showBroken([{ path, violations: broken }]);
		return modal;
	}

	/** "New row…" from the palette: pick the table first. */
	async pickTable(): Promise<void> {
		const failed = await this.refresh();
		if (failed) return void new Notice(`Datanotes: ${failed}`, 10000);
		if (this.tables.length === 0) return void new Notice("Datanotes: there are no tables yet: New table… makes one.");
		new TableSuggestModal(this.app, this.tables, (t) => this.newRow(t)).open();
	}

	/** "New view…": a view of one of the tables; once made, it opens as a base. */
	async newView(): Promise<ViewFormModal | null> {
		const failed = await this.refresh();
		if (failed) return (new Notice(`Datanotes: ${failed}`, 10000), null);
		if (this.tables.length === 0) return (new Notice("Datanotes: there are no tables yet: New table… makes one."), null);
		const modal = new ViewFormModal(this.app, this.door, this.tables, (name) => {
			new Notice(`Datanotes: view ${name} created (Undo last write takes it back).`);
			// Opened as a base where Obsidian has Bases.
			if (!basesAvailable()) return;
			void baseChoices(this.door).then((choices) => {
				const base = typeof choices === "string" ? undefined : choices.find((c) => c.kind === "view" && c.name === name);
				if (base) void openBase(this.app, this.door, base);
			});
		});
		modal.open();
		return modal;
	}

	/** "New table…", or a folder's notes made a table's rows. */
	async newTable(folder: string | null): Promise<TableFormModal | null> {
		const failed = await this.refresh();
		if (failed) return (new Notice(`Datanotes: ${failed}`, 10000), null);
		const modal = new TableFormModal(this.app, this.door, this.tables, folder, (name, broken) => {
			const rules = broken === 0 ? "" : ` ${broken === 1 ? "1 row breaks" : `${broken} rows break`} a rule: Open problems lists them.`;
			new Notice(`Datanotes: table ${name} created (Undo last write takes it back).${rules}`, 10000);
			void this.refresh();
		});
		modal.open();
		return modal;
	}

	/** A folder whose notes could become a table's rows: none of a table's,
	 * outside the engine's folder and dot folders. */
	private couldBeTable(folder: TFolder): boolean {
		const path = folder.path;
		if (folder.isRoot() || path === "datanotes" || path.startsWith("datanotes/")) return false;
		if (path.split("/").some((p) => p.startsWith("."))) return false;
		return !this.tables.some((t) => t.folder !== undefined && (`${path}/`.startsWith(t.folder) || t.folder.startsWith(`${path}/`)));
	}

	private fileMenu(menu: Menu, file: TAbstractFile): void {
		const table = file instanceof TFolder ? this.tableOfFolder(file.path) : undefined;
		if (table) menu.addItem((i) => i.setTitle("New row…").setIcon("plus").onClick(() => this.newRow(table)));
		if (file instanceof TFolder && !table && this.couldBeTable(file)) {
			menu.addItem((i) => i.setTitle("Make a table of this folder…").setIcon("table").onClick(() => void this.newTable(file.path)));
		}
		if (file instanceof TFile && this.tableOfPath(file.path)) {
			menu.addItem((i) => i.setTitle("Edit row…").setIcon("pencil").onClick(() => void this.editRow(file.path)));
		}
	}

	register(plugin: Plugin): void {
		plugin.addCommand({ id: "new-row", name: "New row…", callback: () => void this.pickTable() });
		plugin.addCommand({ id: "new-view", name: "New view…", callback: () => void this.newView() });
		plugin.addCommand({ id: "new-table", name: "New table…", callback: () => void this.newTable(null) });
		plugin.addCommand({
			id: "edit-row",
			name: "Edit row…",
			checkCallback: (checking) => {
				const path = this.app.workspace.getActiveFile()?.path;
				if (this.tables.length > 0 && !this.tableOfPath(path)) return false;
				if (!checking) void this.editRow(path);
				return true;
			},
		});
		plugin.registerEvent(this.app.workspace.on("file-menu", (menu, file) => this.fileMenu(menu, file)));
		plugin.registerEvent(
			this.app.workspace.on("editor-menu", (menu, _editor, info) => {
				const path = info.file?.path;
				if (this.tableOfPath(path)) menu.addItem((i) => i.setTitle("Edit row…").setIcon("pencil").onClick(() => void this.editRow(path)));
			}),
		);
	}
}
