// Issue 11's figures: the history panel draws a table of 1,000 versions and a
// journal of 10,000 entries (paged: 50 at a time), printed as JSON on one line
// ("datanotes-bench {...}"), not asserted as timers. The door answers as the
// engine would, from histories made here, slicing what the panel asks for, so
// the figures are the panel's own cost.

import { App, WorkspaceLeaf } from "obsidian-test-mocks/obsidian";
import { expect, test } from "vitest";
import { type EngineDoor, HistoryView } from "../src/history-view";
import type { Commit, Migration, Outcome } from "../src/types";

function done(answer: unknown): Outcome {
	return { status: "ok", http: 200, answer, store: [], log: [], deliveries: [] };
}

const commits: Commit[] = Array.from({ length: 1000 }, (_, i) => ({
	version: 999 - i,
	timestamp: new Date(Date.UTC(2026, 0, 1) + (999 - i) * 60_000).toISOString(),
	operation: i % 7 === 0 ? "EXTERNAL_EDIT" : "UPDATE",
	operation_metrics: { rows_inserted: 0, rows_updated: 1 + (i % 3), rows_deleted: 0 },
	migration_id: i % 7 === 0 ? null : `m${999 - i}`,
}));

const migrations: Migration[] = Array.from({ length: 10_000 }, (_, i) => ({
	migration_id: `20260101T000000-update_row-${9999 - i}`,
	op: "update_row",
	summary: "update film",
	table: "main.public.film",
	executed_at: new Date(Date.UTC(2026, 0, 1) + (9999 - i) * 1000).toISOString(),
	by: "obsidian",
	undone: i % 13 === 0,
	notes_changed: 1,
}));

const door: EngineDoor = {
	call: async (name: string, args?: unknown) => {
		const a = (args ?? {}) as { limit?: number };
		if (name === "describe_database") return done({ tables: [{ name: "film", qualified: "main.public.film", row_count: 10_000, history: true }] });
		if (name === "describe_history") return done({ table: "main.public.film", history: commits.slice(0, a.limit ?? 50) });
		if (name === "list_migrations") return done({ total: migrations.length, migrations: migrations.slice(0, a.limit ?? 50) });
		throw new Error(`the bench's door answers no ${name}`);
	},
	onChange: () => () => undefined,
} as EngineDoor;

test("bench: the history panel draws 1,000 versions and a journal of 10,000 entries", async () => {
	const view = new HistoryView(WorkspaceLeaf.create2__(App.createConfigured__()).asOriginalType3__(), door);
	let t = performance.now();
	await view.onOpen();
	const journal = performance.now() - t;
	expect(view.contentEl.querySelectorAll(".datanotes-history-row")).toHaveLength(50);
	t = performance.now();
	await view.show("table");
	const table = performance.now() - t;
	expect(view.contentEl.querySelectorAll(".datanotes-version")).toHaveLength(50);
	t = performance.now();
	view.contentEl.querySelector<HTMLButtonElement>(".datanotes-more")?.click();
	for (let i = 0; i < 200 && view.contentEl.querySelectorAll(".datanotes-version").length < 100; i++) await new Promise((r) => setTimeout(r, 1));
	const more = performance.now() - t;
	expect(view.contentEl.querySelectorAll(".datanotes-version")).toHaveLength(100);
	const ms = (x: number) => Math.round(x * 10) / 10;
	console.log(`datanotes-bench ${JSON.stringify({ journal_10000_first_page_ms: ms(journal), table_1000_versions_first_page_ms: ms(table), table_second_page_ms: ms(more) })}`);
	await view.onClose();
});
