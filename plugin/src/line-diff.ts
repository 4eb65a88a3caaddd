// Two texts compared line by line, for a person reading what changed in a
// note's body between two versions: the lines kept, removed and added (a
// longest common subsequence), long runs of kept lines cut to their context,
// and the same lines paired for a side-by-side view. The engine diffs a
// journal entry's bodies itself (show_migration); two versions picked in the
// panel are compared here, from the texts read_note gives.

export type LineKind = "same" | "removed" | "added";

export interface DiffLine {
	kind: LineKind;
	text: string;
}

/** Kept lines left out between two changes: "N lines unchanged". */
export interface Skip {
	kind: "skip";
	count: number;
}

/** Lines compared by their text alone: past this many pairs of lines the
 * middle is said as removed then added, rather than held up comparing. */
const MAX_PAIRS = 4_000_000;

/** A text's lines, without the empty one after its last line break. */
export function linesOf(text: string): string[] {
	if (text === "") return [];
	const lines = text.split(/\r?\n/);
	if (lines[lines.length - 1] === "") lines.pop();
	return lines;
}

/** The lines of `before` and `after` as kept, removed or added, in order;
 * removed lines come before the lines added in their place. */
export function lineDiff(before: string, after: string): DiffLine[] {
	const a = linesOf(before);
	const b = linesOf(after);
	let start = 0;
	while (start < a.length && start < b.length && a[start] === b[start]) start++;
	let endA = a.length;
	let endB = b.length;
	while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
		endA--;
		endB--;
	}
	const same = (text: string): DiffLine => ({ kind: "same", text });
	const middle = middleDiff(a.slice(start, endA), b.slice(start, endB));
	return [...a.slice(0, start).map(same), ...middle, ...a.slice(endA).map(same)];
}

/** The middle of two texts (their common start and end cut off) by a longest
 * common subsequence of their lines. */
function middleDiff(a: string[], b: string[]): DiffLine[] {
	const removed = (text: string): DiffLine => ({ kind: "removed", text });
	const added = (text: string): DiffLine => ({ kind: "added", text });
	if (a.length === 0 || b.length === 0 || a.length * b.length > MAX_PAIRS) return [...a.map(removed), ...b.map(added)];
	// lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
	const width = b.length + 1;
	const lcs = new Uint32Array((a.length + 1) * width);
	for (let i = a.length - 1; i >= 0; i--) {
		for (let j = b.length - 1; j >= 0; j--) {
			lcs[i * width + j] = a[i] === b[j] ? lcs[(i + 1) * width + j + 1] + 1 : Math.max(lcs[(i + 1) * width + j], lcs[i * width + j + 1]);
		}
	}
	const out: DiffLine[] = [];
	let i = 0;
	let j = 0;
	while (i < a.length && j < b.length) {
		if (a[i] === b[j]) {
			out.push({ kind: "same", text: a[i] });
			i++;
			j++;
		} else if (lcs[(i + 1) * width + j] >= lcs[i * width + j + 1]) out.push(removed(a[i++]));
		else out.push(added(b[j++]));
	}
	return [...out, ...a.slice(i).map(removed), ...b.slice(j).map(added)];
}

/** The changed lines with `context` kept lines around each change; longer
 * runs of kept lines become one Skip. No change: nothing. */
export function withContext(lines: DiffLine[], context = 3): (DiffLine | Skip)[] {
	const changed = lines.map((l) => l.kind !== "same");
	if (!changed.includes(true)) return [];
	const near = (i: number) => changed.slice(Math.max(0, i - context), i + context + 1).includes(true);
	const out: (DiffLine | Skip)[] = [];
	for (const [i, line] of lines.entries()) {
		if (near(i)) {
			out.push(line);
			continue;
		}
		const last = out[out.length - 1];
		if (last?.kind === "skip") last.count++;
		else out.push({ kind: "skip", count: 1 });
	}
	return out;
}

/** One row of a side-by-side view: the line before on the left, after on the right. */
export interface Pair {
	left?: DiffLine;
	right?: DiffLine;
}

/** The lines as rows of two columns: a kept line on both sides; a run of
 * removed lines beside the run of added lines that replaced it. */
export function sideBySide(lines: (DiffLine | Skip)[]): (Pair | Skip)[] {
	const out: (Pair | Skip)[] = [];
	let removed: DiffLine[] = [];
	let added: DiffLine[] = [];
	const flush = () => {
		for (let k = 0; k < Math.max(removed.length, added.length); k++) out.push({ left: removed[k], right: added[k] });
		removed = [];
		added = [];
	};
	for (const line of lines) {
		if (line.kind === "removed") {
			// A removal after additions starts a new run.
			if (added.length > 0) flush();
			removed.push(line);
		} else if (line.kind === "added") added.push(line);
		else {
			flush();
			out.push(line.kind === "skip" ? line : { left: line, right: line });
		}
	}
	flush();
	return out;
}
