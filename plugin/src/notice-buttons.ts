// A Notice with a way out (issue 53, point 4): the sentence of what happened,
// then buttons that do something about it ("Edit row…", "Put back"), under
// the message. A button hides the Notice and acts. A refused write (an undo
// that found its row changed since, or that would break a rule) offers Edit
// row… for the row it names.

import { Notice } from "obsidian";
import { isObject, type Outcome } from "./types";

export interface NoticeButton {
	text: string;
	act: () => void;
}

/** A Notice of `text` for `duration` ms, with `buttons` under its words. */
export function noticeWithButtons(text: string, buttons: NoticeButton[], duration: number): Notice {
	const notice = new Notice(text, duration);
	if (buttons.length === 0) return notice;
	const row = notice.messageEl.createDiv({ cls: "datanotes-notice-buttons" });
	for (const b of buttons) {
		const button = row.createEl("button", { text: b.text });
		button.addEventListener("click", (e) => {
			// The Notice hides on a click of its own; the button's act is not a click on the Notice.
			e.stopPropagation();
			notice.hide();
			b.act();
		});
	}
	return notice;
}

/** The one row a refused write is about, when it names exactly one: the note
 * an undo found changed since, or the row a write would leave breaking a rule. */
export function refusedRow(out: Outcome): string | null {
	const a = out.answer;
	const text = isObject(a) && typeof a.error === "string" ? a.error : "";
	const conflicts = [...text.matchAll(/^conflict (.+?\.md):/gm)].map((m) => m[1]);
	const broken = isObject(a) && Array.isArray(a.violations) ? a.violations.map((v) => (isObject(v) && typeof v.path === "string" ? v.path : "")) : [];
	const rows = [...new Set([...conflicts, ...broken])].filter((p) => p.endsWith(".md"));
	return rows.length === 1 ? rows[0] : null;
}

/** A refused write's Notice (`text`: its words), with Edit row… when it is about one row. */
export function refusalNotice(text: string, out: Outcome | null, editRow?: (path: string) => void): Notice {
	const row = out === null || out.status === "ok" ? null : refusedRow(out);
	const buttons = row !== null && editRow ? [{ text: "Edit row…", act: () => editRow(row) }] : [];
	return noticeWithButtons(text, buttons, buttons.length > 0 ? 15000 : 10000);
}
