// The command palette: run any operation, undo the last write, check the
// tables, open the history panel (on its Table section to restore a table),
// search the notes by meaning.

import { type App, Notice, type Plugin } from "obsidian";
import type { EngineDoor, Section } from "./history-view";
import { BaseSuggestModal, baseChoices, basesAvailable, openBase, writeBases } from "./bases";
import { changedNothing, operationWords, readNotesOf, refusalShort } from "./display";
import { MeaningModal } from "./meaning";
import { installMeaningModel, type MeaningModel } from "./model-install";
import { OperationSuggestModal } from "./modals";
import { OperationFormModal } from "./op-form";
import type { Named } from "./table-suggest";
import type { Migration, OperationInfo, Outcome } from "./types";
import { refusalNotice } from "./notice-buttons";

/** What the commands need of the plugin. */
export interface CommandContext {
	app: App;
	door: EngineDoor;
	/** The registry of operations (WasmEngine.operations()), once the engine is loaded. */
	operations(): OperationInfo[];
	/** Opens the history panel, on a section when given. */
	openHistory(section?: Section): Promise<void>;
	openProblems(): Promise<void>;
	/** Runs check_table over every table and shows the Problems view. */
	checkTables(): Promise<void>;
	/** Search by meaning's model on this device, and how it gets there (model-install.ts). */
	model: MeaningModel;
	/** Opens a row's form (a refused undo's way out). */
	editRow?: (path: string) => void;
}

function fail(e: unknown): void {
	new Notice(`Datanotes: ${e instanceof Error ? e.message : String(e)}`, 10000);
}

/** How many journal entries Undo and Redo look through. */
const LOOK_BACK = 50;

/** The newest write still in effect (not undone, not an undo) that changed
 * something: what Undo undoes, so that Undo again steps further back. An agent's
 * write that changed nothing would otherwise take the person's Undo, which then
 * says it undid something and changes nothing. */
export function undoTarget(migrations: Migration[]): Migration | null {
	return migrations.find((m) => !m.undone && m.undoes === undefined && !changedNothing(m)) ?? null;
}

/** The undo that Redo undoes: the newest undo still in effect, unless a write
 * came after it (as in an editor, a new write ends what can be redone; one that
 * changed nothing does not). Redos (undos of undos) are stepped over. */
export function redoTarget(migrations: Migration[]): Migration | null {
	const byId = new Map(migrations.map((m) => [m.migration_id, m]));
	for (const m of migrations) {
		if (m.undoes === undefined && changedNothing(m)) continue;
		if (m.undoes === undefined) return null;
		const redo = byId.get(m.undoes)?.undoes !== undefined;
		if (!redo && !m.undone) return m;
	}
	return null;
}

const lowerFirst = (s: string): string => s.charAt(0).toLowerCase() + s.slice(1);

/** Undoes the newest write still in effect. */
export async function undoLast(door: EngineDoor, refused: (out: Outcome) => void = () => undefined): Promise<string> {
	const list = await door.call("list_migrations", { limit: LOOK_BACK });
	if (list.status !== "ok") return `Datanotes: ${refusalShort(list)}`;
	const last = undoTarget(list.answer.migrations);
	if (!last) return "Datanotes: nothing to undo.";
	const notesOf = await readNotesOf(door, [last]);
	const out = await door.call("undo_migration", { migration_id: last.migration_id });
	if (out.status !== "ok") {
		refused(out);
		return `Datanotes: ${refusalShort(out)}`;
	}
	return `Datanotes: Undid: ${lowerFirst(operationWords(last, list.answer.migrations, notesOf))}.`;
}

/** Redoes the last undo: undo_migration of that undo. */
export async function redoLast(door: EngineDoor, refused: (out: Outcome) => void = () => undefined): Promise<string> {
	const list = await door.call("list_migrations", { limit: LOOK_BACK });
	if (list.status !== "ok") return `Datanotes: ${refusalShort(list)}`;
	const undo = redoTarget(list.answer.migrations);
	if (!undo) return "Datanotes: nothing to redo.";
	const undone = list.answer.migrations.find((m) => m.migration_id === undo.undoes);
	const notesOf = await readNotesOf(door, undone ? [undone] : []);
	const out = await door.call("undo_migration", { migration_id: undo.migration_id });
	if (out.status !== "ok") {
		refused(out);
		return `Datanotes: ${refusalShort(out)}`;
	}
	return `Datanotes: Redid${undone ? `: ${lowerFirst(operationWords(undone, list.answer.migrations, notesOf))}` : " the last undo"}.`;
}

/** A column's definition as the schema holds it now (alter_column starts from it). */
export function definitionLookup(door: EngineDoor): (table: string, column: string) => Promise<unknown> {
	return async (table, column) => {
		const now = await door.call("describe_database", {});
		if (now.status !== "ok") return undefined;
		return now.answer.tables.find((t) => t.name === table || t.qualified === table)?.columns?.[column];
	};
}

/** The form of one operation, with the tables and views to pick from. */
async function openOperation(ctx: CommandContext, op: OperationInfo): Promise<void> {
	const db = await ctx.door.call("describe_database", {});
	// Without the list (a damaged schema), the table is typed.
	const named: Named[] = db.status === "ok" ? [...db.answer.tables, ...db.answer.views] : [];
	new OperationFormModal(ctx.app, op, named, (args) => ctx.door.call(op.name, args), definitionLookup(ctx.door)).open();
}

/** Undo or Redo last write, said in a Notice; a refusal that names one row offers to edit it. */
async function undoOrRedo(ctx: CommandContext, run: (door: EngineDoor, refused: (out: Outcome) => void) => Promise<string>): Promise<void> {
	let refused: Outcome | null = null;
	const text = await run(ctx.door, (out) => (refused = out));
	refusalNotice(text, refused, ctx.editRow);
}

/** The commands that open a panel or run one step: id, name, and what they do. */
const PLAIN: [string, string, (ctx: CommandContext) => Promise<unknown>][] = [
	["undo-last-write", "Undo last write", (ctx) => undoOrRedo(ctx, undoLast)],
	["redo-last-undo", "Redo last undo", (ctx) => undoOrRedo(ctx, redoLast)],
	["check-tables", "Check tables", (ctx) => ctx.checkTables()],
	["open-problems", "Open problems", (ctx) => ctx.openProblems()],
	["open-history", "Open history", (ctx) => ctx.openHistory()],
	["show-note-history", "Show this note's history", (ctx) => ctx.openHistory("note")],
	["restore-table", "Restore table…", (ctx) => ctx.openHistory("table")],
	["write-bases", "Write Bases files", (ctx) => writeBases(ctx.door).then((said) => new Notice(said, 8000))],
	["rewind-database", "Rewind database…", (ctx) => ctx.openHistory("database")],
	["install-meaning-model", "Install the model to search by meaning", (ctx) => installMeaningModel(ctx.app, ctx.model)],
	["search-by-meaning", "Search by meaning…", async (ctx) => new MeaningModal(ctx.app, ctx.door).open()],
];

export function registerCommands(plugin: Plugin, ctx: CommandContext): void {
	plugin.addCommand({
		id: "run-operation",
		name: "Run operation…",
		callback: () => {
			const ops = ctx.operations();
			if (ops.length === 0) return fail("the engine is still loading");
			new OperationSuggestModal(ctx.app, ops, (op) => void openOperation(ctx, op)).open();
		},
	});
	const plain = (from: number, to?: number) => {
		for (const [id, name, run] of PLAIN.slice(from, to)) plugin.addCommand({ id, name, callback: () => void run(ctx).catch(fail) });
	};
	// In the palette's order: the history's commands, then the tables' as bases.
	const bases = PLAIN.findIndex(([id]) => id === "write-bases");
	plain(0, bases);
	plugin.addCommand({
		id: "open-base",
		name: "Open table as a base…",
		// Hidden where Obsidian has no Bases (before 1.9): there is nothing to open it in.
		checkCallback: (checking) => {
			if (!basesAvailable()) return false;
			if (checking) return true;
			void baseChoices(ctx.door).then((choices) => {
				if (typeof choices === "string") return void new Notice(choices, 10000);
				new BaseSuggestModal(ctx.app, choices, (c) => void openBase(ctx.app, ctx.door, c).catch(fail)).open();
			}, fail);
			return true;
		},
	});
	plain(bases);
}
