// A form that makes a named thing (a view, a table): the engine checks it as
// it changes (a dry run of its operation, the refusal above the form), and
// Create writes only what the engine accepts.

import { Modal, Setting } from "obsidian";
import type { EngineDoor } from "./history-view";
import { errorOf, type Outcome } from "./types";

export abstract class CheckedForm extends Modal {
	protected nameEl!: HTMLInputElement;
	protected errorEl!: HTMLElement;
	protected createButton!: HTMLButtonElement;
	private timer: number | null = null;

	/** The operation that writes it, and what it makes ("view", "table"). */
	protected abstract readonly op: string;
	protected abstract readonly thing: string;
	protected abstract readonly door: EngineDoor;

	/** The operation's arguments for what the form holds. */
	abstract args(dryRun: boolean): Record<string, unknown>;

	/** Once written (the form closed): what follows, with its name and the write's answer. */
	protected abstract written(name: string, answer: unknown): Promise<void> | void;

	/** What a dry run the engine accepted answered, for a form that shows more of it. */
	protected checked(_answer: unknown): void {}

	/** The refusal's place and the name's field, first in the form. */
	protected drawHead(el: HTMLElement): void {
		this.errorEl = el.createDiv({ cls: "datanotes-error datanotes-form-error" });
		this.nameEl = new Setting(el).setName("Name").setDesc("Lower case letters, digits and _.").controlEl.createEl("input", { type: "text" });
		this.nameEl.addEventListener("input", () => this.schedule());
	}

	/** The Create button, last in the form. */
	protected drawCreate(el: HTMLElement): void {
		this.createButton = new Setting(el).controlEl.createEl("button", { text: `Create ${this.thing}`, cls: "mod-cta" });
		this.createButton.addEventListener("click", () => void this.submit());
	}

	onClose(): void {
		if (this.timer !== null) window.clearTimeout(this.timer);
		this.contentEl.empty();
	}

	/** A check soon: typing waits 300 ms. */
	protected schedule(): void {
		if (this.timer !== null) window.clearTimeout(this.timer);
		this.timer = window.setTimeout(() => {
			this.timer = null;
			void this.check();
		}, 300);
	}

	/** A dry run now: the engine's refusal above the form, or nothing. */
	async check(): Promise<boolean> {
		if (this.nameEl.value.trim() === "") {
			this.errorEl.setText(`Name the ${this.thing}.`);
			return false;
		}
		const out = await this.door.call(this.op, this.args(true));
		if (out.status === "done") this.checked(out.answer);
		return this.show(out);
	}

	private show(out: Outcome): boolean {
		this.errorEl.setText(out.status === "done" ? "" : (errorOf(out.answer) ?? `The engine refused the ${this.thing}.`));
		return out.status === "done";
	}

	/** Checked, then written; false when the engine refused. */
	async submit(): Promise<boolean> {
		if (this.timer !== null) window.clearTimeout(this.timer);
		this.createButton.disabled = true;
		try {
			if (!(await this.check())) return false;
			const name = this.nameEl.value.trim();
			const out = await this.door.call(this.op, this.args(false));
			if (!this.show(out)) return false;
			this.close();
			await this.written(name, out.answer);
			return true;
		} finally {
			this.createButton.disabled = false;
		}
	}
}
