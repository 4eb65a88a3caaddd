// The footer of a form the engine checks as it is filled (the row form, New
// view… and New table…): why its button is disabled, the engine's own text
// behind Details, the button and Cancel.

import { Setting } from "obsidian";

export interface FormFooter {
	/** Why the button is disabled (or "Checking…"), read out as it changes. */
	reason: HTMLElement;
	details: HTMLDetailsElement;
	/** The engine's whole refusal, inside `details`. */
	detailsText: HTMLElement;
	button: HTMLButtonElement;
}

/** Draws the footer last in `el`; `idBase` names the reason for screen readers. */
export function formFooter(el: HTMLElement, idBase: string, buttonText: string, onSubmit: () => void, onCancel: () => void): FormFooter {
	const footer = new Setting(el);
	footer.settingEl.addClass("datanotes-form-footer");
	const reason = footer.infoEl.createDiv({ cls: "datanotes-save-reason", attr: { id: `${idBase}-reason`, "aria-live": "polite" } });
	const details = footer.infoEl.createEl("details", { cls: "datanotes-details" });
	details.createEl("summary", { text: "Details" });
	const detailsText = details.createEl("pre", { cls: "datanotes-details-text" });
	details.hidden = true;
	const button = footer.controlEl.createEl("button", { text: buttonText, cls: "mod-cta", attr: { "aria-describedby": `${idBase}-reason` } });
	button.addEventListener("click", onSubmit);
	footer.controlEl.createEl("button", { text: "Cancel", cls: "datanotes-form-cancel" }).addEventListener("click", onCancel);
	return { reason, details, detailsText, button };
}
