// The engine's rules in words a person reads. A CHECK is a filter in JSON
// (docs/reference/filters.md); the views showed it as written, so a person
// whose edit broke `rating_range` read {"or":[{"rating":{"exists":false}},…]}.
// Here it reads "rating is empty, or rating is at least 1 and at most 5", with
// what the row holds where the rule looks ("here rating is 9").

import { type ColumnInfo, isObject, type RowViolations } from "./types";

type Violation = RowViolations["violations"][number];

/** The column a violation names, a list's item by its place: genres[1]. */
function columnAt(v: Violation): string | undefined {
	return v.column !== undefined && v.index !== undefined ? `${v.column}[${v.index}]` : v.column;
}

/** A filter read into its parts: comparisons, and, or, not. */
type Part = { kind: "cmp"; path: string; op: string; arg: unknown } | { kind: "and" | "or"; parts: Part[] } | { kind: "not"; part: Part };

/** A filter's parts; null when it is not a filter (then the JSON is shown). */
function parse(f: unknown): Part | null {
	if (!isObject(f)) return null;
	const parts: Part[] = [];
	for (const [key, v] of Object.entries(f)) {
		const name = key.trim();
		if (name === "and" || name === "or") {
			if (!Array.isArray(v) || v.length === 0) return null;
			const subs = v.map(parse);
			if (subs.some((s) => s === null)) return null;
			parts.push({ kind: name, parts: subs as Part[] });
		} else if (name === "not") {
			const sub = parse(v);
			if (!sub) return null;
			parts.push({ kind: "not", part: sub });
		} else if (isObject(v)) {
			// Several operators on one column must all hold.
			if (Object.keys(v).length === 0) return null;
			for (const [op, arg] of Object.entries(v)) parts.push({ kind: "cmp", path: name, op, arg });
		} else {
			parts.push({ kind: "cmp", path: name, op: "eq", arg: v });
		}
	}
	return parts.length === 1 ? parts[0] : { kind: "and", parts };
}

/** A value as a rule names it: text in quotes, a link as written, null as empty. */
export function valueWords(v: unknown): string {
	if (v === null || v === undefined) return "empty";
	if (typeof v === "string") return /^\[\[.*\]\]$/.test(v) ? v : `"${v}"`;
	if (Array.isArray(v)) return `[${v.map(valueWords).join(", ")}]`;
	if (typeof v === "number" || typeof v === "boolean") return String(v);
	return JSON.stringify(v) ?? "";
}

const DATE = /^\d{4}-\d{2}-\d{2}/;

/** The order operators, for numbers and for dates. */
const ORDER: Record<string, [string, string]> = {
	gt: ["above", "after"],
	gte: ["at least", "on or after"],
	lt: ["below", "before"],
	lte: ["at most", "on or before"],
};

/** A comparison as a verb and what follows it: ["is", "at least 1"]. */
function predicate(op: string, arg: unknown): [string, string] {
	const order = ORDER[op];
	if (order) return ["is", `${typeof arg === "string" && DATE.test(arg) ? order[1] : order[0]} ${valueWords(arg)}`];
	switch (op) {
		case "eq":
			if (arg === null) return ["is", "empty"];
			return ["is", Array.isArray(arg) ? `exactly ${valueWords(arg)}` : valueWords(arg)];
		case "ne":
			return arg === null ? ["is", "set"] : ["is", `not ${valueWords(arg)}`];
		case "in":
			return Array.isArray(arg) && arg.length > 0 ? ["is", `one of ${arg.map(valueWords).join(", ")}`] : ["is", `one of ${valueWords(arg)}`];
		case "contains":
			return ["contains", valueWords(arg)];
		case "starts_with":
			return ["starts with", valueWords(arg)];
		case "exists":
			return ["is", arg === false ? "empty" : "set"];
		default:
			return [op, valueWords(arg)];
	}
}

/** Parts joined by "and": comparisons of one column in a row name it once
 * ("rating is at least 1 and at most 5"). */
function andWords(parts: Part[]): string {
	const out: string[] = [];
	let last = null as { path: string; verb: string } | null;
	for (const p of parts) {
		if (p.kind !== "cmp") {
			out.push(words(p, "and"));
			last = null;
			continue;
		}
		const [verb, rest] = predicate(p.op, p.arg);
		if (last?.path === p.path) out.push(last.verb === verb ? rest : `${verb} ${rest}`);
		else out.push(`${p.path} ${verb} ${rest}`);
		last = { path: p.path, verb };
	}
	return out.join(" and ");
}

/** A part in words; `within` is what holds it, for the brackets an "or"
 * needs inside an "and" and anything inside a "not". */
function words(p: Part, within: "top" | "and" | "or" | "not"): string {
	switch (p.kind) {
		case "cmp": {
			const [verb, rest] = predicate(p.op, p.arg);
			return `${p.path} ${verb} ${rest}`;
		}
		case "and": {
			const text = andWords(p.parts);
			return within === "not" ? `(${text})` : text;
		}
		case "or": {
			const text = p.parts.map((s) => words(s, "or")).join(", or ");
			return within === "and" || within === "not" ? `(${text})` : text;
		}
		case "not":
			return `not ${p.part.kind === "cmp" ? `(${words(p.part, "not")})` : words(p.part, "not")}`;
	}
}

/** A filter in words; null when it is not one (the caller shows the JSON). */
export function filterWords(filter: unknown): string | null {
	if (isObject(filter) && Object.keys(filter).length === 0) return "every row";
	const p = parse(filter);
	return p ? words(p, "top") : null;
}

/** What a row holds where a rule looks: "rating is 9, year is empty". */
export function heldWords(held: Record<string, unknown>): string {
	return Object.entries(held)
		.map(([path, v]) => `${path} is ${valueWords(v)}`)
		.join(", ");
}

/** The rule's JSON in an engine message (after `lead`), in words: what
 * follows the JSON (" (after the edit of [[Silent film]], a row it links
 * to)") is kept; the message as it is when there is none, or it is not a
 * filter. */
export function messageWords(message: string, lead: string, say: (words: string) => string): string {
	const at = message.indexOf(lead);
	if (at < 0) return message;
	const rest = message.slice(at + lead.length);
	// The JSON is the longest start of the rest that reads as an object.
	for (let end = rest.lastIndexOf("}"); end > 0; end = rest.lastIndexOf("}", end - 1)) {
		let filter: unknown;
		try {
			filter = JSON.parse(rest.slice(0, end + 1));
		} catch {
			continue;
		}
		const text = filterWords(filter);
		return text === null ? message : message.slice(0, at) + say(text) + rest.slice(end + 1);
	}
	return message;
}

/** The one column a CHECK reads, from what its violation says the row holds
 * there; undefined when it reads several, or through a link. */
export function ruleColumn(held: unknown): string | undefined {
	if (!isObject(held)) return undefined;
	const paths = Object.keys(held);
	return paths.length === 1 && !paths[0].includes(".") ? paths[0] : undefined;
}

/** What a problem says in one line. A CHECK by its description when the
 * schema gives it one, else the rule in words (never its name, which is the
 * schema's id for it); for a CHECK, what the row holds where it looks (unless
 * `held` is false: a form shows the values beside it). Other rules: the
 * column, then what the engine says. `quoted`: a CHECK as "the rule “…”",
 * to follow "breaks". */
export function ruleText(v: Violation, held = true, quoted = false): string {
	if (v.code === "check" && v.constraint) {
		const lead = `violates CHECK ${v.constraint}: `;
		const here = held && isObject(v.value) && Object.keys(v.value).length > 0 ? ` (here ${heldWords(v.value)})` : "";
		const described = v.description?.trim() || null;
		const say = (w: string) => (quoted ? `the rule “${w}”` : w);
		// What follows the rule's JSON (" (after the edit of [[Silent film]], …)") is kept.
		const rule = messageWords(v.message, lead, (w) => say(described ?? w) + here);
		if (rule !== v.message) return rule;
		return described ? say(described) + here : `the rule “${v.constraint}”${here}`;
	}
	const message = messageWords(
		messageWords(v.message, " matching ", (w) => ` where ${w}`),
		"which does not match ",
		(w) => `which does not match: ${w}`,
	);
	const name = v.constraint ?? columnAt(v);
	return name ? `${name}: ${message}` : message;
}

/** A refusal for a person: each line of the engine's text that gives a rule
 * as a filter (a CHECK, ref_by, ref_where) says it in words (as ruleText);
 * the other lines (a name clash, "… and 20 more", the hint) stay as written. */
export function refusalWords(text: string, answer: unknown): string {
	const rows = typeof answer === "object" && answer !== null ? (answer as { violations?: unknown }).violations : undefined;
	if (!Array.isArray(rows)) return text;
	const words = new Map<string, string>();
	for (const r of rows as RowViolations[]) {
		for (const v of r.violations) {
			if (v.code !== "check" && v.code !== "ref_by" && v.code !== "ref_where") continue;
			// The engine's line for it (validate.rs Violation::line).
			const held = isObject(v.value) ? ` (the row holds ${JSON.stringify(v.value)})` : "";
			const line = v.column === undefined ? `${r.path}: ${v.message}${v.constraint === undefined ? "" : held}` : `${r.path}: ${columnAt(v)} ${v.message}`;
			words.set(line, `${r.path}: ${ruleText(v)}`);
		}
	}
	return text
		.split("\n")
		.map((l) => words.get(l) ?? l)
		.join("\n");
}

/** A column's definition in words: "integer, required: 1 to 5 stars",
 * "list of links to genre", "enum: watched, to watch". */
export function columnWords(c: ColumnInfo): string {
	// The table by its name, as it may be written qualified (main.public.person).
	const target = c.table?.split(".").pop() ?? "?";
	const of = (type: string | undefined): string => (type === "link" ? `link to ${target}` : type === "enum" ? "enum" : (type ?? "?"));
	let kind = c.type === "list" ? `list of ${c.items === "link" ? `links to ${target}` : (c.items ?? "text")}` : of(c.type);
	if ((c.type === "enum" || c.items === "enum") && c.values) kind += ` (${c.values.join(", ")})`;
	const flags = [c.required ? "required" : "", c.unique ? "unique" : "", c.generated ? `computed: ${c.generated}` : ""].filter((f) => f !== "");
	return [kind, ...flags].join(", ") + (c.description ? `: ${c.description}` : "");
}
