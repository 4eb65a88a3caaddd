// What the journal's search box and filters pick (issue 53): entries whose
// words match what was typed (the entry's sentence, its table, the titles of
// the notes it changed, who and where), written by whom (a person in
// Obsidian, an agent by its token's name, Datanotes by itself), on which
// device, and when. The engine filters by time from (list_migrations
// `since`); the rest is matched here, over the entries read.

import type { EngineDoor } from "./history-view";
import { type DeviceNames, deviceWords } from "./device-name";
import { noteTitle, shortTable } from "./display";
import { whoKey, whoWords } from "./who";
import type { Migration } from "./types";

/** The times the journal can be narrowed to. */
export type When = "any" | "today" | "yesterday" | "week" | "month" | "dates";

export interface JournalFilter {
	/** Words typed in the search box. */
	query: string;
	/** Who wrote it (whoKey), "" for anyone. */
	who: string;
	/** The device it was written on (its id), "" for any. */
	device: string;
	when: When;
	/** "dates": the first and last day (YYYY-MM-DD, this machine's days), "" for open. */
	from: string;
	to: string;
}

export const NO_FILTER: JournalFilter = { query: "", who: "", device: "", when: "any", from: "", to: "" };

/** Whether the filter narrows anything. */
export function isFiltered(f: JournalFilter): boolean {
	return f.query.trim() !== "" || f.who !== "" || f.device !== "" || (f.when !== "any" && (f.when !== "dates" || f.from !== "" || f.to !== ""));
}

/** The choices of When, in words. */
export const WHEN_WORDS: [When, string][] = [
	["any", "Any time"],
	["today", "Today"],
	["yesterday", "Yesterday"],
	["week", "Past 7 days"],
	["month", "Past 30 days"],
	["dates", "Between dates…"],
];

/** A day (YYYY-MM-DD) at this machine's midnight, in ms; null when not a day. */
function dayStart(day: string): number | null {
	const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
	return m ? new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3])).getTime() : null;
}

/** The midnight after the day of `ms` (a day is not always 24 hours long). */
function nextDay(ms: number): number {
	const d = new Date(ms);
	return new Date(d.getFullYear(), d.getMonth(), d.getDate() + 1).getTime();
}

/** The moments When picks as of `now`: from `since` (included) to `until`
 * (left out); either open. Days are this machine's. */
export function timeRange(f: JournalFilter, now: number): { since?: number; until?: number } {
	const d = new Date(now);
	const midnight = (back: number) => new Date(d.getFullYear(), d.getMonth(), d.getDate() - back).getTime();
	switch (f.when) {
		case "today":
			return { since: midnight(0) };
		case "yesterday":
			return { since: midnight(1), until: midnight(0) };
		case "week":
			return { since: midnight(6) };
		case "month":
			return { since: midnight(29) };
		case "dates": {
			// The days in either order; the last one whole.
			const [a, b] = [dayStart(f.from), dayStart(f.to)];
			const [first, last] = a !== null && b !== null && a > b ? [b, a] : [a, b];
			return { since: first ?? undefined, until: last === null ? undefined : nextDay(last) };
		}
		default:
			return {};
	}
}

/** The Device choices for these entries (and `chosen`): each device by its
 * name, this one first; two the history cannot name are told apart by number. */
export function deviceOptions(migrations: Migration[], devices: DeviceNames, chosen = ""): [string, string][] {
	const ids = new Set(migrations.map((m) => m.device ?? "").filter((d) => d !== ""));
	if (chosen !== "") ids.add(chosen);
	const sorted = [...ids].sort((a, b) => Number(b === devices.me) - Number(a === devices.me) || deviceWords(a, devices).localeCompare(deviceWords(b, devices)));
	const seen = new Map<string, number>();
	return sorted.map((id) => {
		const words = deviceWords(id, devices);
		const n = (seen.get(words) ?? 0) + 1;
		seen.set(words, n);
		return [id, n === 1 ? words : `${words} ${n}`];
	});
}

/** Text without case or accents, as the search compares it. */
export function folded(s: string): string {
	return s.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase();
}

/** What a person reads of an entry, for the search: its sentence, its table,
 * the titles of its notes, who and on which device. */
export function searchText(m: Migration, words: string, titles: string[], devices: DeviceNames): string {
	return [words, shortTable(m.table ?? undefined), ...titles, whoWords(m.by), deviceWords(m.device, devices)].join("\n");
}

/** Whether an entry passes the filter: every word typed is in its text (in
 * any case, with or without accents), and who, device and time agree. */
export function matches(m: Migration, f: JournalFilter, text: string, now: number): boolean {
	if (f.who !== "" && whoKey(m.by) !== f.who) return false;
	if (f.device !== "" && m.device !== f.device) return false;
	const { since, until } = timeRange(f, now);
	if (since !== undefined || until !== undefined) {
		const t = Date.parse(m.executed_at ?? "");
		if (Number.isNaN(t) || (since !== undefined && t < since) || (until !== undefined && t >= until)) return false;
	}
	const hay = folded(text);
	return folded(f.query)
		.split(/\s+/)
		.filter((w) => w !== "")
		.every((w) => hay.includes(w));
}

/** The titles of the notes each entry changed, read once per entry and door. */
const titlesRead = new WeakMap<EngineDoor, Map<string, string[]>>();
/** Entries kept per door before the oldest are let go. */
const TITLES_KEPT = 5000;

/** Reads the titles of the notes each of `migrations` changed (and where
 * they moved from), for the search: one show_migration each, the first time;
 * an entry not finished (whose notes may yet change) each time. An entry that
 * cannot be read has no titles. */
export async function readTitlesOf(door: EngineDoor, migrations: Migration[]): Promise<(migrationId: string) => string[]> {
	let read = titlesRead.get(door);
	if (!read) titlesRead.set(door, (read = new Map<string, string[]>()));
	const kept = read;
	const fresh = new Map<string, string[]>();
	const ids = migrations.filter((m) => !kept.has(m.migration_id) && (m.notes_changed ?? 0) + (m.files_changed ?? 0) > 0);
	await Promise.all(
		ids.map(async (m) => {
			try {
				const out = await door.call("show_migration", { migration_id: m.migration_id });
				if (out.status !== "ok") return;
				const titles = out.answer.notes.flatMap((n) => [noteTitle(n.path), ...(n.from ? [noteTitle(n.from)] : [])]);
				(m.status === undefined ? kept : fresh).set(m.migration_id, titles);
			} catch {
				// No titles: it is found by its other words.
			}
		}),
	);
	for (const id of kept.keys()) {
		if (kept.size <= TITLES_KEPT) break;
		kept.delete(id);
	}
	return (id) => fresh.get(id) ?? kept.get(id) ?? [];
}
