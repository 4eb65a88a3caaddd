// The line diff a person reads when comparing two versions of a note's text
// (issue 53, point 4): kept, removed and added lines, context, side by side.

import { describe, expect, test } from "vitest";
import { lineDiff, linesOf, sideBySide, withContext } from "../src/line-diff";

const words = (lines: { kind: string; text?: string; count?: number }[]) => lines.map((l) => (l.kind === "skip" ? `… ${l.count}` : `${l.kind === "same" ? " " : l.kind === "added" ? "+" : "-"}${l.text}`));

describe("line diff", () => {
	test("lines kept, removed and added, the removed before those that replace them", () => {
		expect(words(lineDiff("a\nb\nc\n", "a\nB\nc\nd\n"))).toEqual([" a", "-b", "+B", " c", "+d"]);
		expect(words(lineDiff("", "x\n"))).toEqual(["+x"]);
		expect(words(lineDiff("x\ny\n", ""))).toEqual(["-x", "-y"]);
		expect(words(lineDiff("same\n", "same\n"))).toEqual([" same"]);
		// A line moved: the longest run kept, the other removed and added.
		expect(words(lineDiff("1\n2\n3\n4\n", "2\n3\n4\n1\n"))).toEqual(["-1", " 2", " 3", " 4", "+1"]);
	});

	test("line endings and the last line break do not count as changes", () => {
		expect(linesOf("a\r\nb\r\n")).toEqual(["a", "b"]);
		expect(words(lineDiff("a\r\nb\r\n", "a\nb"))).toEqual([" a", " b"]);
	});

	test("kept lines far from any change are cut to their context; nothing changed, nothing shown", () => {
		const before = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join("\n");
		const after = before.replace("line 10", "line ten");
		expect(words(withContext(lineDiff(before, after), 2))).toEqual(["… 7", " line 8", " line 9", "-line 10", "+line ten", " line 11", " line 12", "… 8"]);
		expect(withContext(lineDiff(before, before))).toEqual([]);
	});

	test("side by side: kept lines on both sides, a removed run beside the run added in its place", () => {
		const pairs = sideBySide(withContext(lineDiff("a\nb\nc\n", "a\nB\nB2\nc\n")));
		const shown = pairs.map((p) => ("kind" in p ? "skip" : `${p.left?.text ?? "·"} | ${p.right?.text ?? "·"}`));
		expect(shown).toEqual(["a | a", "b | B", "· | B2", "c | c"]);
	});

	test("texts too long to compare line against line are still said: the middle removed, then added", () => {
		const a = Array.from({ length: 3000 }, (_, i) => `a${i}`).join("\n");
		const b = Array.from({ length: 3000 }, (_, i) => `b${i}`).join("\n");
		const d = lineDiff(`top\n${a}\nend\n`, `top\n${b}\nend\n`);
		expect(d).toHaveLength(6002);
		expect(d[0]).toEqual({ kind: "same", text: "top" });
		expect(d[1].kind).toBe("removed");
		expect(d[3001].kind).toBe("added");
		expect(d[6001]).toEqual({ kind: "same", text: "end" });
	});
});
