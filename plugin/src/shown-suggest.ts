// A suggestion list of Obsidian's that says whether it is showing: a form's
// Enter picks a suggestion then rather than saving, and its Escape closes the
// list before the form.

import { AbstractInputSuggest } from "obsidian";

export abstract class ShownSuggest<T> extends AbstractInputSuggest<T> {
	/** The suggestions are showing. */
	shown = false;

	open(): void {
		super.open();
		this.shown = true;
	}

	close(): void {
		super.close();
		this.shown = false;
	}
}
