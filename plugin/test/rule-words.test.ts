// The engine's rules in words: every form of the filter language, the
// brackets that keep "or" and "not" apart, and messages whose filter is not one.

import { describe, expect, test } from "vitest";
import { filterWords, heldWords, messageWords, refusalWords, ruleColumn, ruleText, valueWords } from "../src/rule-words";

describe("filterWords", () => {
	test("each operator", () => {
		expect(filterWords({ status: "watched" })).toBe('status is "watched"');
		expect(filterWords({ rating: null })).toBe("rating is empty");
		expect(filterWords({ rating: { ne: null } })).toBe("rating is set");
		expect(filterWords({ status: { ne: "watched" } })).toBe('status is not "watched"');
		expect(filterWords({ year: { gt: 1950 } })).toBe("year is above 1950");
		expect(filterWords({ year: { lt: 1950 } })).toBe("year is below 1950");
		expect(filterWords({ on: { gte: "2026-10-01" } })).toBe('on is on or after "2026-10-01"');
		expect(filterWords({ on: { lt: "2026-10-01T20:00" } })).toBe('on is before "2026-10-01T20:00"');
		expect(filterWords({ status: { in: ["watched", "to watch"] } })).toBe('status is one of "watched", "to watch"');
		expect(filterWords({ tags: { contains: "film-night" } })).toBe('tags contains "film-night"');
		expect(filterWords({ "director.name": { starts_with: "Stan" } })).toBe('director.name starts with "Stan"');
		expect(filterWords({ parent: { exists: false } })).toBe("parent is empty");
		expect(filterWords({ parent: { exists: true } })).toBe("parent is set");
		expect(filterWords({ director: "[[Stanley Donen]]" })).toBe("director is [[Stanley Donen]]");
		expect(filterWords({ tags: ["a", "b"] })).toBe('tags is exactly ["a", "b"]');
		expect(filterWords({ seen: true })).toBe("seen is true");
		expect(filterWords({})).toBe("every row");
	});

	test("one column named once in a run of its comparisons", () => {
		expect(filterWords({ year: { gte: 1920, lt: 1930 } })).toBe("year is at least 1920 and below 1930");
		expect(filterWords({ and: [{ title: { starts_with: "The" } }, { title: { contains: "Night" } }] })).toBe(
			'title starts with "The" and contains "Night"',
		);
		expect(filterWords({ and: [{ year: { gte: 1920 } }, { status: "watched" }, { year: { lt: 1930 } }] })).toBe(
			'year is at least 1920 and status is "watched" and year is below 1930',
		);
	});

	test("and, or, not: brackets where they are needed", () => {
		// The film diary's rules.
		expect(filterWords({ or: [{ rating: { exists: false } }, { and: [{ rating: { gte: 1 } }, { rating: { lte: 5 } }] }] })).toBe(
			"rating is empty, or rating is at least 1 and at most 5",
		);
		expect(
			filterWords({
				or: [
					{ kind: "cinema", parent: { exists: false } },
					{ kind: "era", "parent.kind": "cinema" },
					{ kind: "genre", "parent.kind": "era" },
				],
			}),
		).toBe('kind is "cinema" and parent is empty, or kind is "era" and parent.kind is "cinema", or kind is "genre" and parent.kind is "era"');
		expect(filterWords({ status: "watched", or: [{ rating: 4 }, { rating: 5 }] })).toBe('status is "watched" and (rating is 4, or rating is 5)');
		expect(filterWords({ not: { status: "watched" } })).toBe('not (status is "watched")');
		expect(filterWords({ not: { or: [{ a: 1 }, { b: 2 }] } })).toBe("not (a is 1, or b is 2)");
		expect(filterWords({ not: { a: 1, b: 2 } })).toBe("not (a is 1 and b is 2)");
		expect(filterWords({ " or ": [{ a: 1 }, { b: 2 }] })).toBe("a is 1, or b is 2");
	});

	test("what is not a filter is left to be shown as written", () => {
		expect(filterWords(null)).toBeNull();
		expect(filterWords([1])).toBeNull();
		expect(filterWords({ or: [] })).toBeNull();
		expect(filterWords({ or: [{ a: 1 }, 3] })).toBeNull();
		expect(filterWords({ rating: {} })).toBeNull();
		expect(filterWords({ not: "x" })).toBeNull();
	});
});

describe("a violation in words", () => {
	const rule = '{"or":[{"rating":{"exists":false}},{"and":[{"rating":{"gte":1}},{"rating":{"lte":5}}]}]}';
	const check = { code: "check", constraint: "rating_range", message: `violates CHECK rating_range: ${rule}`, value: { rating: 9 } };

	test("a CHECK in words, with what the row holds, or without it in a form; never by its name", () => {
		expect(ruleText(check)).toBe("rating is empty, or rating is at least 1 and at most 5 (here rating is 9)");
		expect(ruleText(check, false)).toBe("rating is empty, or rating is at least 1 and at most 5");
		// After "breaks": quoted.
		expect(ruleText(check, true, true)).toBe("the rule “rating is empty, or rating is at least 1 and at most 5” (here rating is 9)");
		// An engine of before, whose CHECK violations hold no values.
		expect(ruleText({ ...check, value: undefined })).toBe("rating is empty, or rating is at least 1 and at most 5");
		// A message whose rule cannot be read: the rule by its name, never its JSON.
		expect(ruleText({ ...check, message: "violates CHECK rating_range: {broken" })).toBe("the rule “rating_range” (here rating is 9)");
	});

	test("a CHECK the schema describes: by its description, what follows the rule kept", () => {
		const described = { ...check, description: "Ratings run from 1 to 5 stars" };
		expect(ruleText(described)).toBe("Ratings run from 1 to 5 stars (here rating is 9)");
		expect(ruleText(described, false)).toBe("Ratings run from 1 to 5 stars");
		expect(ruleText(described, true, true)).toBe("the rule “Ratings run from 1 to 5 stars” (here rating is 9)");
		const linked = { ...described, message: `violates CHECK rating_range: ${rule} (after the edit of [[Silent film]], a row it links to)` };
		expect(ruleText(linked, false)).toBe("Ratings run from 1 to 5 stars (after the edit of [[Silent film]], a row it links to)");
		// Even where the rule itself cannot be read.
		expect(ruleText({ ...described, message: "violates CHECK rating_range: {broken" }, false)).toBe("Ratings run from 1 to 5 stars");
		// A blank description is none.
		expect(ruleText({ ...check, description: "  " }, false)).toBe("rating is empty, or rating is at least 1 and at most 5");
	});

	test("ref_by and ref_where name their filters in words; other messages are kept", () => {
		expect(
			ruleText({ code: "ref_by", column: "director", message: 'links to person, whose rows take links only from rows matching {"status":"watched"}' }),
		).toBe('director: links to person, whose rows take links only from rows where status is "watched"');
		expect(ruleText({ code: "ref_where", column: "parent", message: 'links to [[Cinema]], which does not match {"kind":"era"}' })).toBe(
			'parent: links to [[Cinema]], which does not match: kind is "era"',
		);
		expect(ruleText({ code: "required", column: "year", message: 'is required: set "year"' })).toBe('year: is required: set "year"');
		expect(messageWords("no filter here", " matching ", (w) => w)).toBe("no filter here");
	});

	test("a refusal's rule lines in words, every other line as written", () => {
		const sunrise = "datanotes/main/public/film/Sunrise.md";
		const where = { code: "ref_where", column: "parent", message: 'links to [[Cinema]], which does not match {"kind":"era"}' };
		const required = { code: "required", column: "year", message: 'is required: set "year"' };
		const text = [
			"update_rows refused — nothing was written:",
			`${sunrise}: violates CHECK rating_range: ${rule} (the row holds {"rating":9})`,
			`${sunrise}: year is required: set "year"`,
			`${sunrise}: parent links to [[Cinema]], which does not match {"kind":"era"}`,
			`${sunrise}: genres[1] links to [[Cinema]], which does not match {"kind":"era"}`,
			"another note is already named Sunrise",
			"… and 3 more",
			"Hint: Fix the values so every rule holds.",
		].join("\n");
		const answer = { violations: [{ path: sunrise, violations: [check, required, where, { ...where, column: "genres", index: 1 }] }] };
		expect(refusalWords(text, answer).split("\n")).toEqual([
			"update_rows refused — nothing was written:",
			`${sunrise}: rating is empty, or rating is at least 1 and at most 5 (here rating is 9)`,
			`${sunrise}: year is required: set "year"`,
			`${sunrise}: parent: links to [[Cinema]], which does not match: kind is "era"`,
			`${sunrise}: genres[1]: links to [[Cinema]], which does not match: kind is "era"`,
			"another note is already named Sunrise",
			"… and 3 more",
			"Hint: Fix the values so every rule holds.",
		]);
		// No violations, or lines the engine wrote otherwise: the text as it is.
		expect(refusalWords(text, {})).toBe(text);
		expect(refusalWords(text, { violations: [{ path: "other.md", violations: [check] }] })).toBe(text);
	});

	test("held values and the one column a CHECK reads", () => {
		expect(heldWords({ kind: "cinema", parent: "[[Cinema]]", "parent.kind": null })).toBe('kind is "cinema", parent is [[Cinema]], parent.kind is empty');
		expect(valueWords(["[[A]]", 2])).toBe("[[[A]], 2]");
		expect(ruleColumn({ rating: 9 })).toBe("rating");
		expect(ruleColumn({ kind: "era", "parent.kind": "era" })).toBeUndefined();
		expect(ruleColumn({ "parent.kind": "era" })).toBeUndefined();
		expect(ruleColumn(undefined)).toBeUndefined();
	});
});
