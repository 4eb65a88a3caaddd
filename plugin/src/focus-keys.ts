// A panel drawn again (each engine change redraws it) keeps the focus where
// the person left it: an element that can hold it carries a data-focus-key,
// and after the redraw the element with the same key takes it back, with
// the caret where it was in a text box.

/** Where the focus was under a root. */
export interface Focus {
	key: string;
	start: number | null;
	end: number | null;
}

/** The keyed element focused under `root`, if any. */
export function focusIn(root: HTMLElement): Focus | null {
	const active = root.ownerDocument.activeElement;
	if (!active || !root.contains(active) || !active.instanceOf(HTMLElement)) return null;
	const key = active.dataset.focusKey;
	if (key === undefined) return null;
	const text = active.instanceOf(HTMLInputElement) && active.type === "search" ? active : null;
	return { key, start: text?.selectionStart ?? null, end: text?.selectionEnd ?? null };
}

/** Focuses the element under `root` keyed as `focus` was, if there is one. */
export function restoreFocus(root: HTMLElement, focus: Focus | null): void {
	if (focus === null) return;
	const el = Array.from(root.querySelectorAll<HTMLElement>("[data-focus-key]")).find((e) => e.dataset.focusKey === focus.key);
	if (!el) return;
	el.focus();
	if (focus.start !== null && el.instanceOf(HTMLInputElement)) el.setSelectionRange(focus.start, focus.end ?? focus.start);
}
