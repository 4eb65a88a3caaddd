// A table's name typed in a form, with the tables (and views) suggested.

import type { App } from "obsidian";
import { ShownSuggest } from "./shown-suggest";

/** A table or a view to pick for a `table` argument. */
export interface Named {
	name: string;
	qualified: string;
	/** What it holds, as its schema says. */
	description?: string;
}

/** Suggests the tables and views whose name holds what is typed. */
export class TableSuggest extends ShownSuggest<Named> {
	constructor(
		app: App,
		private readonly input: HTMLInputElement,
		private readonly tables: Named[],
		/** Whether the field names a table now (one field may hold other things). */
		private readonly naming: () => boolean = () => true,
	) {
		super(app, input);
	}

	getSuggestions(query: string): Named[] {
		if (!this.naming()) return [];
		const q = query.trim().toLowerCase();
		return this.tables.filter((t) => t.qualified.toLowerCase().includes(q));
	}

	/** A table by its name, with its description; by its qualified name only
	 * where two schemas share the name (nothing else tells them apart). */
	renderSuggestion(t: Named, el: HTMLElement): void {
		const shared = this.tables.filter((o) => o.name === t.name).length > 1;
		el.setText(shared ? t.qualified : t.name);
		if (t.description) el.createEl("small", { text: ` ${t.description}`, cls: "datanotes-muted" });
	}

	selectSuggestion(t: Named): void {
		// The short name, unless two schemas share it.
		this.input.value = this.tables.filter((o) => o.name === t.name).length === 1 ? t.name : t.qualified;
		this.input.dispatchEvent(new Event("input"));
		this.input.dispatchEvent(new Event("change"));
		this.close();
	}
}
