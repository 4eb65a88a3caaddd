// The command palette: run any operation, undo the last write, check the
// tables, open the history panel (on its Table section to restore a table).

import { type App, Notice, type Plugin } from "obsidian";
import type { EngineDoor, Section } from "./history-view";
import { refusalText } from "./host";
import { ArgumentsModal, OperationSuggestModal } from "./modals";
import type { OperationInfo } from "./types";

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
}

function fail(e: unknown): void {
	new Notice(`Datanotes: ${e instanceof Error ? e.message : String(e)}`, 10000);
}

/** list_migrations limit 1, then undo_migration of that entry. */
export async function undoLast(door: EngineDoor): Promise<string> {
	const list = await door.call("list_migrations", { limit: 1 });
	if (list.status !== "done") return refusalText(list);
	const last = list.answer.migrations[0];
	if (!last) return "Datanotes: nothing to undo.";
	const out = await door.call("undo_migration", { migration_id: last.migration_id });
	if (out.status !== "done") return refusalText(out);
	return `Datanotes: undid ${last.op}${last.summary ? ` (${last.summary})` : ""}.`;
}

export function registerCommands(plugin: Plugin, ctx: CommandContext): void {
	plugin.addCommand({
		id: "run-operation",
		name: "Run operation…",
		callback: () => {
			const ops = ctx.operations();
			if (ops.length === 0) return fail("the engine is still loading");
			new OperationSuggestModal(ctx.app, ops, (op) => {
				new ArgumentsModal(ctx.app, op, (args) => ctx.door.call(op.name, args)).open();
			}).open();
		},
	});
	plugin.addCommand({
		id: "undo-last-write",
		name: "Undo last write",
		callback: () => {
			undoLast(ctx.door).then((text) => new Notice(text, 10000), fail);
		},
	});
	plugin.addCommand({
		id: "check-tables",
		name: "Check tables",
		callback: () => {
			ctx.checkTables().catch(fail);
		},
	});
	plugin.addCommand({
		id: "open-problems",
		name: "Open problems",
		callback: () => {
			ctx.openProblems().catch(fail);
		},
	});
	plugin.addCommand({
		id: "open-history",
		name: "Open history",
		callback: () => {
			ctx.openHistory().catch(fail);
		},
	});
	plugin.addCommand({
		id: "restore-table",
		name: "Restore table…",
		callback: () => {
			ctx.openHistory("table").catch(fail);
		},
	});
}
