// Two versions of a row side by side, as a person reads them (issue 53, point
// 4): its properties as "rating: 3 → 4" lines (display.ts's columnLine, as
// every diff of the panel), then its text as a line diff (line-diff.ts). In a
// sidebar the text is one column, "+ " added and "- " removed; in a wide pane
// it is two (before and after), which "One column" turns back. The note's
// own text is the person's: it may hold anything, brackets included, and is
// marked so (datanotes-own-text) for the scans of engine words.

import { columnLine, ownColumns, shown } from "./display";
import { drawFolded, LINES } from "./fold";
import { type DiffLine, lineDiff, type Pair, sideBySide, type Skip, withContext } from "./line-diff";

/** A row at one version, as read_note answers it (the fields read here). */
export interface RowRead {
	values?: Record<string, unknown>;
	text?: string;
	body?: string;
}

/** A row as a person compares it: its own properties and its body. */
export interface RowState {
	values: Record<string, unknown>;
	body: string;
}

/** The body of a note's text: what follows its front matter. */
export function bodyOf(text: string): string {
	const m = /^---\r?\n[\s\S]*?\r?\n---[ \t]*(\r?\n|$)/.exec(text);
	return m ? text.slice(m[0].length) : text;
}

/** A read row's properties (not its table and id, the engine's) and body. */
export function rowState(r: RowRead): RowState {
	const all = r.values ?? {};
	const values = Object.fromEntries(ownColumns(all).map((k) => [k, all[k]]));
	return { values, body: r.body ?? bodyOf(r.text ?? "") };
}

/** One property's change. */
export interface PropertyChange {
	name: string;
	before?: unknown;
	after?: unknown;
}

/** The properties that differ, in the order the earlier version holds them
 * and then those added. */
export function propertyChanges(before: Record<string, unknown>, after: Record<string, unknown>): PropertyChange[] {
	const names = [...new Set([...Object.keys(before), ...Object.keys(after)])];
	return names.filter((n) => JSON.stringify(before[n]) !== JSON.stringify(after[n])).map((name) => ({ name, before: before[name], after: after[name] }));
}

/** A property's change in words, for a list or a Notice: "rating: 3 → 4". */
export function changeWords(c: PropertyChange): string {
	return `${c.name}: ${shown(c.before)} → ${shown(c.after)}`;
}

/** How the texts are laid out, kept by the section across redraws. */
export interface Layout {
	/** Two columns when the pane is wide enough (styles.css); one in a sidebar. */
	split: boolean;
}

/** Draws what changed from `before` to `after` into `el`: the properties,
 * then the text. `labels` name the two sides of the side-by-side view. */
export function drawComparison(el: HTMLElement, before: RowState, after: RowState, labels: [string, string], layout: Layout): HTMLElement {
	const box = el.createDiv({ cls: "datanotes-compare" });
	box.toggleClass("is-split", layout.split);
	box.createDiv({ text: "Properties", cls: "datanotes-compare-part" });
	const changes = propertyChanges(before.values, after.values);
	if (changes.length === 0) box.createEl("p", { text: "No property differs.", cls: "datanotes-muted" });
	const list = box.createEl("ul", { cls: "datanotes-diff-columns datanotes-compare-properties" });
	for (const c of changes) columnLine(list, c.name, c);
	const head = box.createDiv({ cls: "datanotes-compare-part" });
	head.createSpan({ text: "Text" });
	const lines = withContext(lineDiff(before.body, after.body));
	if (lines.length === 0) {
		box.createEl("p", { text: "The text is the same.", cls: "datanotes-muted" });
		return box;
	}
	// Shown by styles.css only where two columns fit.
	const toggle = head.createEl("button", { cls: "datanotes-compare-layout" });
	const say = () => {
		toggle.setText(layout.split ? "One column" : "Side by side");
		toggle.setAttribute("aria-pressed", String(layout.split));
	};
	say();
	toggle.addEventListener("click", () => {
		layout.split = !layout.split;
		box.toggleClass("is-split", layout.split);
		say();
	});
	const unified = box.createDiv({ cls: "datanotes-compare-unified" });
	const pre = unified.createEl("pre", { cls: "datanotes-body-diff datanotes-own-text" });
	drawFolded(unified, pre, lines, drawLine, LINES);
	const split = box.createDiv({ cls: "datanotes-compare-split" });
	const grid = split.createDiv({ cls: "datanotes-compare-grid datanotes-own-text" });
	grid.createDiv({ text: labels[0], cls: "datanotes-compare-side" });
	grid.createDiv({ text: labels[1], cls: "datanotes-compare-side" });
	drawFolded(split, grid, sideBySide(lines), drawPair, LINES);
	return box;
}

/** "… 12 lines unchanged". */
function skipWords(s: Skip): string {
	return `… ${s.count === 1 ? "1 line" : `${s.count} lines`} unchanged`;
}

const LINE_CLASS: Record<DiffLine["kind"], string> = { same: "datanotes-diff-same", removed: "datanotes-diff-before", added: "datanotes-diff-after" };
const SIGN: Record<DiffLine["kind"], string> = { same: "  ", removed: "- ", added: "+ " };

/** One line of the one-column view: "- " removed, "+ " added, kept as it is. */
function drawLine(pre: HTMLElement, line: DiffLine | Skip): void {
	if (line.kind === "skip") pre.createDiv({ text: skipWords(line), cls: "datanotes-muted datanotes-diff-skip" });
	else pre.createDiv({ text: `${SIGN[line.kind]}${line.text}`, cls: LINE_CLASS[line.kind] });
}

/** One row of the two-column view: the line before, the line after. */
function drawPair(grid: HTMLElement, row: Pair | Skip): void {
	if ("kind" in row) {
		grid.createDiv({ text: skipWords(row), cls: "datanotes-muted datanotes-diff-skip datanotes-compare-wide" });
		return;
	}
	for (const side of [row.left, row.right]) {
		const cell = grid.createDiv({ cls: `datanotes-compare-cell ${side ? LINE_CLASS[side.kind] : "is-empty"}` });
		if (side) cell.setText(side.text);
	}
}
