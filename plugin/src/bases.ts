// Tables and views as Obsidian Bases: the engine keeps a .base file for each
// (core/src/bases.rs); "Open table as a base…" picks one and opens it, writing
// the files first when it is missing.

import { type App, Notice, requireApiVersion, SuggestModal, TFile } from "obsidian";
import type { EngineDoor } from "./history-view";
import { listWords, noteTitle, refusalShort } from "./display";

/** The Obsidian that opens a .base file: Bases came with 1.9. Below it the
 * engine may keep the files, but nothing opens them as a base. */
export const BASES_API = "1.9.0";

/** Whether this Obsidian has Bases. */
export function basesAvailable(): boolean {
	return requireApiVersion(BASES_API);
}

/** A table or view and its base file. */
export interface BaseChoice {
	name: string;
	kind: "table" | "view";
	description?: string;
	base: string;
}

/** Every table and view with its base file, or the refusal's text. */
export async function baseChoices(door: EngineDoor): Promise<BaseChoice[] | string> {
	const out = await door.call("describe_database", {});
	if (out.status !== "ok") return `Datanotes: ${refusalShort(out)}`;
	const tables = out.answer.tables.map((t): BaseChoice => ({ name: t.name, kind: "table", description: t.description, base: t.base }));
	const views = (out.answer.views ?? []).map((v): BaseChoice => ({ name: v.name, kind: "view", description: v.description ?? `a view of ${v.table.split(".").pop() ?? v.table}`, base: v.base }));
	return [...tables, ...views];
}

/** Writes the base files that are missing or out of step (write_bases): the
 * notice says what was written and what was kept as the person edited it. */
export async function writeBases(door: EngineDoor): Promise<string> {
	const out = await door.call("write_bases", {});
	if (out.status !== "ok") return `Datanotes: ${refusalShort(out)}`;
	// The bases by their names (a file's title), not their paths.
	const kept = (out.answer.bases_kept ?? []).map((p) => noteTitle(p).replace(/\.base$/, ""));
	const written = Number(/\((\d+) written/.exec(out.answer.summary ?? "")?.[1] ?? NaN);
	const said = Number.isNaN(written) ? "the Bases files are up to date" : written === 0 ? "every Bases file was up to date" : written === 1 ? "1 Bases file written" : `${written} Bases files written`;
	const note = kept.length > 0 ? ` Kept as you edited ${kept.length === 1 ? "it" : "them"}: ${listWords(kept)}.` : "";
	return `Datanotes: ${said}.${note}`;
}

/** Opens a table's or view's base, writing the files first when it is missing. */
export async function openBase(app: App, door: EngineDoor, choice: BaseChoice): Promise<void> {
	if (!(app.vault.getAbstractFileByPath(choice.base) instanceof TFile)) {
		const said = await writeBases(door);
		if (!(app.vault.getAbstractFileByPath(choice.base) instanceof TFile)) {
			new Notice(said, 10000);
			return;
		}
	}
	const file = app.vault.getAbstractFileByPath(choice.base);
	if (file instanceof TFile) await app.workspace.getLeaf(false).openFile(file);
}

export class BaseSuggestModal extends SuggestModal<BaseChoice> {
	constructor(
		app: App,
		private readonly choices: BaseChoice[],
		private readonly chosen: (c: BaseChoice) => void,
	) {
		super(app);
		this.setPlaceholder("Table or view to open as a base…");
	}

	getSuggestions(query: string): BaseChoice[] {
		const q = query.trim().toLowerCase();
		return this.choices.filter((c) => q === "" || c.name.includes(q.replace(/ /g, "_")) || (c.description ?? "").toLowerCase().includes(q));
	}

	renderSuggestion(c: BaseChoice, el: HTMLElement): void {
		el.createDiv({ text: c.name });
		el.createEl("small", { text: `${c.kind}${c.description ? ` · ${c.description}` : ""}`, cls: "datanotes-muted" });
	}

	onChooseSuggestion(c: BaseChoice): void {
		this.chosen(c);
	}
}
