// Long lists fold (issue 53): unfolding a journal entry that wrote five Bases
// files drew every line of each, 2,600 px in a sidebar. A list longer than
// its limit shows its first items and a button "Show all N …", which draws
// the rest (drawn only then: a diff can hold hundreds of lines) and turns
// into "Show fewer".

/** When a list folds, and what it says of itself. */
export interface Fold {
	/** Folds when it holds more than this many items. */
	over: number;
	/** How many it shows folded. */
	first: number;
	/** The items, one and many: ["line", "lines"]. */
	noun: [string, string];
}

/** A body's or a file's lines: over 20, the first 10. */
export const LINES: Fold = { over: 20, first: 10, noun: ["line", "lines"] };
/** The notes an entry changed: over 10, the first 5. */
export const NOTES: Fold = { over: 10, first: 5, noun: ["note", "notes"] };

/** Draws `items` into `list` with `draw`, folded by `fold`; the button (when
 * folded) goes after `list` in `el`. Returns the button, or null when the
 * list is short enough to show whole. */
export function drawFolded<T>(el: HTMLElement, list: HTMLElement, items: T[], draw: (into: HTMLElement, item: T) => void, fold: Fold): HTMLButtonElement | null {
	if (items.length <= fold.over) {
		for (const item of items) draw(list, item);
		return null;
	}
	for (const item of items.slice(0, fold.first)) draw(list, item);
	const all = `Show all ${items.length} ${fold.noun[1]}`;
	const button = el.createEl("button", { text: all, cls: "datanotes-fold" });
	button.setAttribute("aria-expanded", "false");
	// The rest, drawn after the first items; removed again by "Show fewer".
	let rest: Node[] = [];
	button.addEventListener("click", () => {
		const open = rest.length === 0;
		if (open) {
			const before = list.childNodes.length;
			for (const item of items.slice(fold.first)) draw(list, item);
			rest = Array.from(list.childNodes).slice(before);
		} else {
			for (const n of rest) n.parentNode?.removeChild(n);
			rest = [];
		}
		button.setText(open ? "Show fewer" : all);
		button.setAttribute("aria-expanded", String(open));
	});
	return button;
}
