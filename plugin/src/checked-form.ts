// A form that makes a named thing (a view, a table): the engine checks it as
// it changes (a dry run of its operation), and Create writes only what the
// engine accepts. While the engine refuses, Create is disabled with the
// reason beside it, the refusal is said in words above the form and the
// engine's own text waits behind Details. Enter creates, Escape cancels (a
// list of suggestions first), the name's field has the focus, and every
// field is named for screen readers.

import { Modal, Setting } from "obsidian";
import { refusalWords } from "./display";
import { formFooter } from "./form-footer";
import type { EngineDoor } from "./history-view";
import type { Outcome } from "./types";

/** Names a control for screen readers (a placeholder is no name). */
export function labelled<T extends HTMLElement>(el: T, label: string): T {
	el.setAttribute("aria-label", label);
	return el;
}

/** A suggestion list the form may hold open (a link's table, say). */
interface Suggest {
	shown: boolean;
	close(): void;
}

export abstract class CheckedForm extends Modal {
	protected nameEl!: HTMLInputElement;
	protected errorEl!: HTMLElement;
	protected createButton!: HTMLButtonElement;
	private reasonEl!: HTMLElement;
	private detailsEl!: HTMLDetailsElement;
	private detailsText!: HTMLElement;
	private timer: number | null = null;
	/** The last check's outcome, while it stands (null: none yet, or a change since). */
	private outcome: Outcome | null = null;
	/** A check or a write under way. */
	private busy = false;
	private closed = false;
	/** Suggestion lists open in the form: Escape closes them before the form. */
	protected readonly suggests = new Set<Suggest>();
	private static forms = 0;
	private readonly idBase = `datanotes-checked-form-${++CheckedForm.forms}`;

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
		this.errorEl = el.createDiv({ cls: "datanotes-error datanotes-form-error", attr: { role: "alert" } });
		const name = new Setting(el).setName("Name").setDesc("Lower case letters, digits and _.");
		this.nameEl = labelled(name.controlEl.createEl("input", { type: "text" }), "Name");
		this.nameEl.addEventListener("input", () => this.schedule());
		this.modalEl.addEventListener("keydown", (evt) => this.onKey(evt));
		// Opened from the palette or a menu, whose closing may take the focus back: focused again once it has.
		this.nameEl.focus();
		window.setTimeout(() => {
			if (!this.closed && !this.modalEl.contains(this.modalEl.ownerDocument.activeElement)) this.nameEl.focus();
		}, 0);
	}

	/** Create, Cancel, and why Create is disabled (the engine's text behind Details), last in the form. */
	protected drawCreate(el: HTMLElement): void {
		const footer = formFooter(el, this.idBase, `Create ${this.thing}`, () => void this.submit(), () => this.close());
		({ reason: this.reasonEl, details: this.detailsEl, detailsText: this.detailsText, button: this.createButton } = footer);
		this.render();
	}

	close(): void {
		if (this.closed) return;
		this.closed = true;
		super.close();
	}

	onClose(): void {
		if (this.timer !== null) window.clearTimeout(this.timer);
		for (const s of this.suggests) s.close();
		this.contentEl.empty();
	}

	/** Enter creates (not on a button, a text area or Details, nor while a
	 * suggestion list is open); Escape closes an open list, else cancels. */
	private onKey(evt: KeyboardEvent): void {
		if (evt.defaultPrevented || evt.isComposing) return;
		const open = [...this.suggests].filter((s) => s.shown);
		if (evt.key === "Escape") {
			evt.preventDefault();
			evt.stopPropagation();
			if (open.length > 0) for (const s of open) s.close();
			else this.close();
			return;
		}
		if (evt.key !== "Enter" || evt.shiftKey || evt.altKey || evt.ctrlKey || evt.metaKey) return;
		const t = evt.target;
		if (t instanceof HTMLButtonElement || t instanceof HTMLTextAreaElement || (t instanceof HTMLElement && t.tagName === "SUMMARY")) return;
		if (open.length > 0) return;
		evt.preventDefault();
		void this.submit();
	}

	/** A check soon: typing waits 300 ms. Create waits for it. */
	protected schedule(): void {
		if (this.timer !== null) window.clearTimeout(this.timer);
		this.outcome = null;
		this.render();
		this.timer = window.setTimeout(() => {
			this.timer = null;
			void this.check();
		}, 300);
	}

	/** A dry run now: what the engine says shows in the form. True when it would be written. */
	async check(): Promise<boolean> {
		if (this.timer !== null) window.clearTimeout(this.timer);
		this.timer = null;
		if (this.nameEl.value.trim() === "") {
			this.outcome = null;
			this.render();
			return false;
		}
		const out = await this.call(true);
		if (out.status === "ok") this.checked(out.answer);
		return this.show(out);
	}

	/** The operation, dry or not; an engine that went away answers as an internal failure. */
	private async call(dryRun: boolean): Promise<Outcome> {
		try {
			return await this.door.call(this.op, this.args(dryRun));
		} catch (e) {
			const error = `The engine could not check the ${this.thing}: ${e instanceof Error ? e.message : String(e)}`;
			return { status: "internal", http: 500, answer: { error }, store: [], log: [], deliveries: [] };
		}
	}

	/** Shows an outcome; true when it was done. */
	protected show(out: Outcome): boolean {
		this.outcome = out;
		this.render();
		return out.status === "ok";
	}

	/** The form as the last check left it: the refusal in words above, Create and its reason below. */
	private render(): void {
		if (this.closed || !this.reasonEl) return;
		const out = this.outcome;
		const unnamed = this.nameEl.value.trim() === "";
		const refused = out !== null && out.status !== "ok";
		const words = refused ? refusalWords(out) : null;
		// A check writes nothing anyway: what is wrong, as a sentence (a name it starts with kept as written).
		const wrong = words ? words.said.replace(/^Nothing was written: /, "") : "";
		this.errorEl.setText(/^(the|a|an|no|every|column|table)\b/.test(wrong) ? wrong.charAt(0).toUpperCase() + wrong.slice(1) : wrong);
		this.errorEl.toggleClass("datanotes-hidden", words === null);
		this.reasonEl.setText(unnamed ? `Name the ${this.thing} to create it.` : words ? words.todo : out === null ? "Checking…" : "");
		this.detailsText.setText(words?.details ?? "");
		this.detailsEl.hidden = words === null;
		this.createButton.disabled = unnamed || refused || out === null || this.busy;
	}

	/** Checked, then written; false when the engine refused (the form stays, saying why). */
	async submit(): Promise<boolean> {
		if (this.busy || this.closed) return false;
		this.busy = true;
		this.render();
		try {
			if (!(await this.check())) return false;
			const name = this.nameEl.value.trim();
			const out = await this.call(false);
			if (!this.show(out)) return false;
			this.close();
			await this.written(name, out.answer);
			return true;
		} finally {
			this.busy = false;
			this.render();
		}
	}
}
