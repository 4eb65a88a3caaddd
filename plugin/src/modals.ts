// Dialogs: pick an operation (its form: op-form.ts), read an answer.

import { type App, SuggestModal } from "obsidian";
import { refusalText } from "./host";
import type { OperationInfo, Outcome } from "./types";

/** What a person reads for an outcome: the answer as JSON, or the refusal text. */
export function describeOutcome(out: Outcome): string {
	return out.status === "ok" ? JSON.stringify(out.answer, null, 2) : refusalText(out);
}

function kindOf(op: OperationInfo): string {
	return op.readOnly ? "read" : op.destructive ? "destructive write" : "write";
}

export class OperationSuggestModal extends SuggestModal<OperationInfo> {
	constructor(
		app: App,
		private readonly ops: OperationInfo[],
		private readonly chosen: (op: OperationInfo) => void,
	) {
		super(app);
		this.setPlaceholder("Datanotes operation…");
	}

	getSuggestions(query: string): OperationInfo[] {
		const q = query.trim().toLowerCase();
		return this.ops.filter((o) => q === "" || o.name.includes(q.replace(/ /g, "_")) || o.title.toLowerCase().includes(q));
	}

	renderSuggestion(op: OperationInfo, el: HTMLElement): void {
		el.createDiv({ text: op.title });
		el.createEl("small", { text: `${op.name} · ${kindOf(op)}`, cls: "datanotes-muted" });
	}

	onChooseSuggestion(op: OperationInfo): void {
		this.chosen(op);
	}
}
