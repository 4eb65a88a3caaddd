// Dialogs: pick an operation, give its arguments as JSON, read an answer.

import { type App, Modal, SuggestModal } from "obsidian";
import { refusalText } from "./host";
import type { OperationInfo, Outcome } from "./types";

/** Arguments to start from: each required argument with an empty value of its type. */
export function skeleton(op: OperationInfo): Record<string, unknown> {
	const args: Record<string, unknown> = {};
	for (const name of op.inputSchema.required ?? []) {
		const t = op.inputSchema.properties?.[name]?.type;
		const type = Array.isArray(t) ? t[0] : t;
		args[name] =
			type === "integer" || type === "number" ? 0 : type === "boolean" ? false : type === "object" ? {} : type === "array" ? [] : "";
	}
	return args;
}

/** What a person reads for an outcome: the answer as JSON, or the refusal text. */
export function describeOutcome(out: Outcome): string {
	return out.status === "done" ? JSON.stringify(out.answer, null, 2) : refusalText(out);
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

/** The arguments of one operation as JSON, a Run button, and the answer below. */
export class ArgumentsModal extends Modal {
	constructor(
		app: App,
		private readonly op: OperationInfo,
		private readonly run: (args: unknown) => Promise<Outcome>,
	) {
		super(app);
	}

	onOpen(): void {
		const { contentEl, op } = this;
		this.setTitle(`${op.title} (${op.name})`);
		contentEl.addClass("datanotes-modal");
		contentEl.createEl("p", { text: op.description, cls: "datanotes-muted" });
		const params = Object.entries(op.inputSchema.properties ?? {});
		if (params.length > 0) {
			const list = contentEl.createEl("ul", { cls: "datanotes-params" });
			const required = new Set(op.inputSchema.required ?? []);
			for (const [name, p] of params) {
				const li = list.createEl("li");
				li.createEl("code", { text: name });
				li.appendText(`${required.has(name) ? " (required)" : ""}: ${p.description ?? ""}`);
			}
		}
		const area = contentEl.createEl("textarea", { cls: "datanotes-args" });
		area.rows = 8;
		area.value = JSON.stringify(skeleton(op), null, 2);
		const buttons = contentEl.createDiv({ cls: "modal-button-container" });
		const go = buttons.createEl("button", { text: "Run", cls: op.destructive ? "mod-warning" : "mod-cta" });
		const result = contentEl.createEl("pre", { cls: "datanotes-result" });
		const run = async (): Promise<void> => {
			let args: unknown;
			try {
				args = area.value.trim() === "" ? {} : JSON.parse(area.value);
			} catch (e) {
				result.setText(`The arguments are not JSON: ${e instanceof Error ? e.message : String(e)}`);
				result.addClass("datanotes-error");
				return;
			}
			go.disabled = true;
			try {
				const out = await this.run(args);
				result.setText(describeOutcome(out));
				result.toggleClass("datanotes-error", out.status !== "done");
			} catch (e) {
				result.setText(e instanceof Error ? e.message : String(e));
				result.addClass("datanotes-error");
			} finally {
				go.disabled = false;
			}
		};
		go.addEventListener("click", () => void run());
	}

	onClose(): void {
		this.contentEl.empty();
	}
}
