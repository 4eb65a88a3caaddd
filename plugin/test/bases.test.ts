// Tables and views as Obsidian Bases (issue 12, point 2), through the plugin on
// obsidian-test-mocks' vault: "Open table as a base…" writes the .base files
// (the engine keeps them) and opens the one picked; an edited base is kept.

import { TFile } from "obsidian-test-mocks/obsidian";
import { afterEach, expect, test, vi } from "vitest";
import { BaseSuggestModal, baseChoices, openBase, writeBases } from "../src/bases";
import { loadFilms } from "./plugin-harness";

let unload: (() => void) | null = null;
afterEach(() => {
	unload?.();
	unload = null;
	vi.useRealTimers();
});

async function films() {
	vi.useFakeTimers({ toFake: ["Date"], now: Date.UTC(2026, 11, 2, 12) });
	const loaded = await loadFilms();
	unload = loaded.unload;
	return loaded;
}

test("the tables and the view are offered, and the one picked opens as a base, written first", async () => {
	const { app, plugin, original } = await films();
	const choices = await baseChoices(plugin.door);
	if (typeof choices === "string") throw new Error(choices);
	expect(choices.map((c) => `${c.kind} ${c.name} ${c.base}`)).toEqual([
		"table film datanotes/bases/film.base",
		"table genre datanotes/bases/genre.base",
		"table person datanotes/bases/person.base",
		"table watch datanotes/bases/watch.base",
		"view to_watch datanotes/bases/to_watch.base",
	]);
	const picker = new BaseSuggestModal(original, choices, () => undefined);
	expect(picker.getSuggestions("not seen").map((c) => c.name)).toEqual(["to_watch"]);
	expect(app.vault.getAbstractFileByPath("datanotes/bases/to_watch.base")).toBeNull();

	await openBase(original, plugin.door, choices[4]);
	const file = app.vault.getAbstractFileByPath("datanotes/bases/to_watch.base");
	expect(file).toBeInstanceOf(TFile);
	expect(app.workspace.getActiveFile()?.path).toBe("datanotes/bases/to_watch.base");
	const text = await app.vault.read(file as TFile);
	expect(text).toContain('- "note.status == \\"to watch\\""');
	expect(text).toContain("      - property: \"note.year\"\n        direction: ASC\n");
	// Every table's base came with it, in one journaled write.
	expect(app.vault.getAbstractFileByPath("datanotes/bases/watch.base")).toBeInstanceOf(TFile);
	const last = await plugin.door.call("list_migrations", { limit: 1 });
	if (last.status !== "ok") throw new Error("list_migrations failed");
	expect(last.answer.migrations[0].op).toBe("write_bases");
});

test("a base edited in Obsidian is kept, and the notice says so", async () => {
	const { app, plugin, host } = await films();
	await writeBases(plugin.door);
	const file = app.vault.getAbstractFileByPath("datanotes/bases/film.base") as TFile;
	const theirs = "views:\n  - type: cards\n    name: Posters\n";
	await app.vault.modify(file, theirs);
	// The engine hears of the edit through the vault's modify event, and takes it in at its deadline.
	await vi.waitFor(() => expect(host.nextDeadline()).not.toBeNull());
	vi.setSystemTime((host.nextDeadline() as number) + 1);
	await host.tick();
	const out = await plugin.door.call("add_column", { table: "film", column: "country", definition: { type: "text" } });
	expect(out.status, JSON.stringify(out.answer)).toBe("ok");
	expect((out.answer as { bases_kept?: string[] }).bases_kept).toEqual(["datanotes/bases/film.base"]);
	expect(await app.vault.read(file)).toBe(theirs);
	await plugin.door.call("configure_database", { bases: true });
	const said = await writeBases(plugin.door);
	// The base by its name, not its path.
	expect(said).toBe("Datanotes: every Bases file was up to date. Kept as you edited it: film.");
});
