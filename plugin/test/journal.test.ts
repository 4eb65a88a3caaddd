// Issue 53, point 4: the journal a person can review. Long entries fold (a
// Bases file's text behind Details, a body diff over 20 lines, many notes),
// a search box and filters by who, device and time narrow it, times are
// relative with the date on hover, and the keyboard moves along the entries
// and unfolds them. On the real engine and the film diary, with a fake clock.

import { App, WorkspaceLeaf } from "obsidian-test-mocks/obsidian";
import { afterEach, describe, expect, test, vi } from "vitest";
import wasmBytes from "../wasm/datanotes_core_bg.wasm";
import { formatTime } from "../src/display";
import { loadEngine, openEngine } from "../src/engine";
import { type EngineDoor, HistoryView } from "../src/history-view";
import { Host } from "../src/host";
import { TYPING_MS, WINDOW } from "../src/journal";
import { deviceOptions, isFiltered, NO_FILTER, timeRange } from "../src/journal-filter";
import { relativeTime } from "../src/times";
import { whoOptions, whoWords } from "../src/who";
import { syncedFile } from "../src/store-watch";
import { ans, CHARADE, Clock, door, filmDiary, openFilms } from "./engine";
import { MemoryFs } from "./memfs";

const METROPOLIS = "datanotes/main/public/film/Metropolis.md";
/** Noon of 2 December 2026, this machine's time: "today" and "yesterday" are its days. */
const NOON = new Date(2026, 11, 2, 12, 0, 0).getTime();
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

afterEach(() => {
	vi.restoreAllMocks();
	vi.useRealTimers();
	document.body.empty();
});

/** The panel on `d`, in the page (for the focus), telling times by `clock`. */
async function openView(d: EngineDoor, clock: Clock): Promise<HistoryView> {
	const app = App.createConfigured__();
	const view = new HistoryView(WorkspaceLeaf.create2__(app).asOriginalType3__(), d);
	view.now = clock.now;
	document.body.appendChild(view.containerEl);
	await view.onOpen();
	return view;
}

const $$ = (view: HistoryView, selector: string): HTMLElement[] => Array.from(view.contentEl.querySelectorAll<HTMLElement>(selector));
const $ = <E extends HTMLElement = HTMLElement>(view: HistoryView, selector: string): E => {
	const el = view.contentEl.querySelector<E>(selector);
	if (!el) throw new Error(`nothing matches ${selector}`);
	return el;
};
const summaries = (view: HistoryView): string[] => $$(view, ".datanotes-history-summary").map((s) => s.textContent ?? "");

/** Waits until `ready` holds. */
async function until(ready: () => boolean): Promise<void> {
	await vi.waitFor(() => expect(ready()).toBe(true), { timeout: 3000, interval: 5 });
}

/** What a person reads in `el`: all but Details. */
function visible(el: HTMLElement): string {
	const copy = el.cloneNode(true) as HTMLElement;
	for (const d of Array.from(copy.querySelectorAll("details"))) d.remove();
	return copy.textContent ?? "";
}

/** Types in the search box as a person does, and waits for the list to follow. */
async function search(view: HistoryView, text: string, expected: string[]): Promise<void> {
	const box = $<HTMLInputElement>(view, ".datanotes-journal-search input");
	box.value = text;
	box.dispatchEvent(new Event("input"));
	// Searched (the count says how many match), then the entries.
	const count = () => view.contentEl.querySelector(".datanotes-journal-count")?.textContent ?? "";
	await vi.waitFor(() => expect(count()).toMatch(text.trim() === "" ? /^$|newest/ : /match/), { timeout: 3000, interval: 5 });
	await vi.waitFor(() => expect(summaries(view)).toEqual(expected), { timeout: 3000, interval: 5 });
}

/** Chooses in one of the journal's filters, as a person does. */
function choose(view: HistoryView, key: string, value: string): void {
	const el = $<HTMLSelectElement | HTMLInputElement>(view, `[data-focus-key="${key}"]`);
	el.value = value;
	el.dispatchEvent(new Event("change"));
}

const key = (k: string, shift = false): void => {
	(document.activeElement as HTMLElement).dispatchEvent(new KeyboardEvent("keydown", { key: k, shiftKey: shift, bubbles: true, cancelable: true }));
};

describe("long entries fold", () => {
	test("unfolding a write of Bases files shows no file's text: each is behind Details, its lines folded there too", async () => {
		const clock = new Clock(NOON);
		const { host } = await openFilms({ clock });
		expect((await host.call("write_bases", {})).status).toBe("ok");
		const view = await openView(door(host), clock);
		$(view, ".datanotes-expand").click();
		await until(() => $$(view, ".datanotes-note-change").length === 5);
		const shown = visible(view.contentEl);
		// The files are named; none of their lines (YAML, the engine's comments) is read outside Details.
		expect(shown).toContain("film.base");
		expect(shown).not.toMatch(/filters:|main\.public|sha256|Datanotes keeps this file/);
		expect(shown).toContain("A file Datanotes keeps, not a note (36 lines, under Details).");
		const film = $$(view, ".datanotes-note-change").find((c) => c.textContent?.includes("film.base")) as HTMLElement;
		const details = film.querySelector("details") as HTMLDetailsElement;
		expect(details.querySelector("summary")?.textContent).toBe("Details");
		// Opened, the file's first 10 lines and a button for all 36.
		expect(details.querySelectorAll(".datanotes-body-diff div")).toHaveLength(10);
		expect(details.querySelector(".datanotes-fold")?.textContent).toBe("Show all 36 lines");
		await view.onClose();
	});

	test("a body diff over 20 lines shows its first 10 and Show all; Show fewer folds it again; 20 lines show whole", async () => {
		const clock = new Clock(NOON);
		const { host } = await openFilms({ clock });
		const body = Array.from({ length: 40 }, (_, i) => `Line ${i + 1}.`).join("\n");
		await host.call("update_row", { table: "film", path: CHARADE, body: `${body}\n` });
		clock.advance(1000);
		await host.call("update_row", { table: "film", path: METROPOLIS, body: "One.\nTwo.\n" });
		const view = await openView(door(host), clock);
		const [short, long] = $$(view, ".datanotes-expand");
		long.click();
		short.click();
		await until(() => $$(view, ".datanotes-body-diff").length === 2);
		const [shortDetails, longDetails] = $$(view, ".datanotes-history-details");
		const lines = (el: HTMLElement) => Array.from(el.querySelectorAll(".datanotes-body-diff div")).map((d) => d.textContent);
		// Charade: its old body removed, 40 lines added: 41 lines, 10 shown.
		expect(lines(longDetails)).toHaveLength(10);
		expect(lines(longDetails)[1]).toBe("+ Line 1.");
		const fold = longDetails.querySelector<HTMLButtonElement>(".datanotes-fold") as HTMLButtonElement;
		expect(fold.textContent).toBe("Show all 41 lines");
		expect(fold.getAttribute("aria-expanded")).toBe("false");
		fold.click();
		expect(lines(longDetails)).toHaveLength(41);
		expect(lines(longDetails).at(-1)).toBe("+ Line 40.");
		expect(fold.textContent).toBe("Show fewer");
		expect(fold.getAttribute("aria-expanded")).toBe("true");
		fold.click();
		expect(lines(longDetails)).toHaveLength(10);
		// Metropolis: a short diff, whole, no button.
		expect(lines(shortDetails).length).toBeLessThanOrEqual(20);
		expect(lines(shortDetails)).toContain("+ Two.");
		expect(shortDetails.querySelector(".datanotes-fold")).toBeNull();
		await view.onClose();
	});

	test("an entry that changed many notes shows the first 5 and Show all", async () => {
		const clock = new Clock(NOON);
		const { host } = await openFilms({ clock });
		const people = Array.from({ length: 12 }, (_, i) => ({ name: `Person ${i + 1}` }));
		expect((await host.call("insert_rows", { table: "person", rows: people })).status).toBe("ok");
		const view = await openView(door(host), clock);
		$(view, ".datanotes-expand").click();
		await until(() => $$(view, ".datanotes-note-change").length === 5);
		const fold = $<HTMLButtonElement>(view, ".datanotes-history-changes > .datanotes-fold");
		expect(fold.textContent).toBe("Show all 12 notes");
		fold.click();
		expect($$(view, ".datanotes-note-change")).toHaveLength(12);
		await view.onClose();
	});
});

describe("the search box", () => {
	test("matches an entry's words, its table, the titles of the notes it changed, in any case and without accents; Clear shows all again", async () => {
		const clock = new Clock(NOON);
		const { host } = await openFilms({ clock });
		await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 4 } });
		clock.advance(60_000);
		await host.call("insert_row", { table: "person", values: { name: "Amélie Poulain" } });
		clock.advance(60_000);
		// Several films at once: its words name none, the search finds it by their titles.
		await host.call("update_rows", { table: "film", where: { year: { lt: 1930 } }, set: { status: "watched" } });
		clock.advance(60_000);
		const d = door(host);
		const view = await openView(d, clock);
		const all = ["Changed 2 rows of film", "Added Amélie Poulain to person", "Changed rating of Charade"];
		expect(summaries(view)).toEqual(all);
		const calls = vi.spyOn(d, "call");
		await search(view, "charade", ["Changed rating of Charade"]);
		// A search looks through a window of entries, not a page.
		expect(calls).toHaveBeenCalledWith("list_migrations", { limit: WINDOW });
		expect($(view, ".datanotes-journal-count").textContent).toBe("1 entry matches.");
		await search(view, "POTEMKIN", ["Changed 2 rows of film"]);
		await search(view, "amelie", ["Added Amélie Poulain to person"]);
		// Every word must be there: the table and a title.
		await search(view, "film  nosferatu", ["Changed 2 rows of film"]);
		await search(view, "person", ["Added Amélie Poulain to person"]);
		// Who and where are words a person reads too.
		await search(view, "Obsidian rating", ["Changed rating of Charade"]);
		await search(view, "Casablanca", []);
		expect($(view, ".datanotes-journal-count").textContent).toBe("No entry matches.");
		$<HTMLButtonElement>(view, '[data-focus-key="clear"]').click();
		await until(() => summaries(view).length === 3);
		expect($<HTMLInputElement>(view, ".datanotes-journal-search input").value).toBe("");
		// The clear button in the box, then Escape in it, empty it too.
		await search(view, "charade", ["Changed rating of Charade"]);
		$(view, ".search-input-clear-button").click();
		await until(() => summaries(view).length === 3);
		await search(view, "person", ["Added Amélie Poulain to person"]);
		$(view, ".datanotes-journal-search input").focus();
		key("Escape");
		await until(() => summaries(view).length === 3);
		await view.onClose();
	});

	test("the search box keeps its text, its caret and the focus when the engine changes something meanwhile", async () => {
		const clock = new Clock(NOON);
		const { host } = await openFilms({ clock });
		await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 4 } });
		const view = await openView(door(host), clock);
		await search(view, "rat", ["Changed rating of Charade"]);
		const box = $<HTMLInputElement>(view, ".datanotes-journal-search input");
		box.focus();
		box.setSelectionRange(1, 1);
		clock.advance(1000);
		await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 3 } });
		// Drawn anew (the new entry matches), the box is another element with the same text, focused, the caret kept.
		await until(() => summaries(view).length === 2);
		const again = $<HTMLInputElement>(view, ".datanotes-journal-search input");
		expect(again).not.toBe(box);
		expect(again.value).toBe("rat");
		expect(document.activeElement).toBe(again);
		expect(again.selectionStart).toBe(1);
		await view.onClose();
	});

	test("looks further back when the entries it looked through are not all there are", async () => {
		const clock = new Clock(NOON);
		const { host } = await openFilms({ clock });
		await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 4 } });
		for (let i = 0; i < WINDOW; i++) {
			clock.advance(1000);
			await host.call("update_row", { table: "film", path: METROPOLIS, set: { minutes: 100 + (i % 2) } });
		}
		const view = await openView(door(host), clock);
		await search(view, "charade", []);
		expect($(view, ".datanotes-journal-count").textContent).toBe(`No entry matches among the newest ${WINDOW} of ${WINDOW + 1} entries.`);
		$<HTMLButtonElement>(view, '[data-focus-key="further"]').click();
		await until(() => summaries(view).length === 1);
		expect(summaries(view)).toEqual(["Changed rating of Charade"]);
		await view.onClose();
	}, 30_000);
});

describe("filters", () => {
	test("by who: people in Obsidian, agents by their token's name, Datanotes by itself; each entry says who in words", async () => {
		const clock = new Clock(NOON);
		const { host } = await openFilms({ clock });
		await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 4 } });
		clock.advance(60_000);
		await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 3 } }, "reader/claude-code");
		clock.advance(60_000);
		await host.call("update_row", { table: "film", path: METROPOLIS, set: { rating: 4 } }, "owner");
		clock.advance(60_000);
		const view = await openView(door(host), clock);
		const metas = () => $$(view, ".datanotes-history-row .datanotes-history-meta").map((m) => m.textContent ?? "");
		expect(metas().map((m) => m.split(" · ")[0])).toEqual(["by an agent (your token)", "by claude-code (token reader)", "in Obsidian"]);
		const who = $<HTMLSelectElement>(view, '[data-focus-key="who"]');
		expect(Array.from(who.options).map((o) => o.text)).toEqual(["Anyone", "People in Obsidian", "Agents with your token", "Agents with the token “reader”"]);
		choose(view, "who", "reader");
		await until(() => summaries(view).length === 1);
		expect(metas()[0]).toMatch(/^by claude-code \(token reader\) · /);
		choose(view, "who", "obsidian");
		await until(() => summaries(view).length === 1 && metas()[0].startsWith("in Obsidian"));
		// The choice stays chosen, and combines with the search.
		expect($<HTMLSelectElement>(view, '[data-focus-key="who"]').value).toBe("obsidian");
		await search(view, "metropolis", []);
		choose(view, "who", "");
		await until(() => summaries(view).length === 1);
		expect(summaries(view)).toEqual(["Changed rating of Metropolis"]);
		await view.onClose();
	});

	test("by when: today, yesterday, the past 7 and 30 days, between two dates; the engine reads from the first moment", async () => {
		const clock = new Clock(NOON - 40 * DAY);
		const { host } = await openFilms({ clock });
		// 40, 10, 3 and 1 days ago, and today.
		for (const [ago, rating] of [[40, 1], [10, 2], [3, 3], [1, 4], [0, 5]]) {
			clock.ms = NOON - ago * DAY;
			await host.call("update_row", { table: "film", path: CHARADE, set: { rating } });
		}
		clock.ms = NOON + HOUR;
		const d = door(host);
		const view = await openView(d, clock);
		const ratings = () => summaries(view).length;
		expect(ratings()).toBe(5);
		const calls = vi.spyOn(d, "call");
		choose(view, "when", "today");
		await until(() => ratings() === 1);
		expect(calls).toHaveBeenCalledWith("list_migrations", { limit: WINDOW, since: new Date(2026, 11, 2).toISOString() });
		expect($$(view, ".datanotes-time")[0].textContent).toBe("1 hour ago");
		choose(view, "when", "yesterday");
		await until(() => ratings() === 1 && $$(view, ".datanotes-time")[0].textContent === "yesterday");
		choose(view, "when", "week");
		await until(() => ratings() === 3);
		choose(view, "when", "month");
		await until(() => ratings() === 4);
		// Between dates: the days appear, both days whole, in either order.
		expect($(view, ".datanotes-journal-dates").classList.contains("datanotes-hidden")).toBe(true);
		choose(view, "when", "dates");
		await until(() => !$(view, ".datanotes-journal-dates").classList.contains("datanotes-hidden"));
		const day = (ago: number) => {
			const t = new Date(NOON - ago * DAY);
			return `${t.getFullYear()}-${String(t.getMonth() + 1).padStart(2, "0")}-${String(t.getDate()).padStart(2, "0")}`;
		};
		choose(view, "from", day(10));
		await until(() => ratings() === 4);
		choose(view, "to", day(3));
		await until(() => ratings() === 2);
		choose(view, "from", day(1));
		// From after To: the same days, the other way round.
		await vi.waitFor(() => expect($$(view, ".datanotes-time").map((t) => t.textContent)).toEqual(["yesterday", "3 days ago"]));
		choose(view, "when", "any");
		await until(() => ratings() === 5);
		await view.onClose();
	});

	test("by device: each device by its name, this one first; only its writes", async () => {
		await loadEngine(wasmBytes);
		const clock = new Clock(NOON);
		const open = async (fs: MemoryFs, device: string) => {
			const host = new Host(openEngine(fs.notes(), fs.storeListing(), clock.now(), new Uint8Array(32).fill(5), device), fs, { now: clock.now, warn: () => undefined });
			await host.open();
			const d: EngineDoor = { ...door(host), thisDevice: () => device };
			return { host, door: d };
		};
		const laptopFs = new MemoryFs(filmDiary);
		const laptop = await open(laptopFs, "tpmqmlnez4");
		await laptop.host.call("configure_database", { deviceName: "Linux laptop" });
		const phoneFs = new MemoryFs(new Map([...laptopFs.files].map(([p, f]) => [p, f.text])));
		for (const [p, t] of laptopFs.store) phoneFs.store.set(p, t);
		const phone = await open(phoneFs, "q7x2kd0a1b");
		await phone.host.call("configure_database", { deviceName: "Anna's phone" });
		clock.advance(1000);
		const before = new Map(laptopFs.store);
		await laptop.host.call("update_row", { table: "film", path: CHARADE, set: { rating: 2 } });
		const changed = [...laptopFs.store].filter(([p, t]) => before.get(p) !== t);
		for (const [p, t] of changed) phoneFs.store.set(p, t);
		await phone.host.storeSynced(changed.filter(([p]) => syncedFile(p, "q7x2kd0a1b")));
		phoneFs.handWrite(CHARADE, laptopFs.text(CHARADE) as string);
		await phone.host.observe({ kind: "modified", path: CHARADE });
		clock.advance(1000);
		await phone.host.tick();
		await phone.host.call("update_row", { table: "film", path: METROPOLIS, set: { rating: 4 } });
		const view = await openView(phone.door, clock);
		const device = $<HTMLSelectElement>(view, '[data-focus-key="device"]');
		expect(device.classList.contains("datanotes-hidden")).toBe(false);
		expect(Array.from(device.options).map((o) => o.text)).toEqual(["Any device", "Anna's phone", "Linux laptop"]);
		choose(view, "device", "tpmqmlnez4");
		await until(() => summaries(view).length === 1);
		expect(summaries(view)).toEqual(["Changed rating of Charade"]);
		choose(view, "device", "q7x2kd0a1b");
		await until(() => summaries(view)[0] === "Changed rating of Metropolis");
		expect(visible(view.contentEl)).not.toMatch(/tpmqmlnez4|q7x2kd0a1b/);
		await view.onClose();
	});

	test("a filter chosen from elsewhere (a command, a test) shows in the controls", async () => {
		const clock = new Clock(NOON);
		const { host } = await openFilms({ clock });
		await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 4 } });
		const view = await openView(door(host), clock);
		await view.journal.choose({ query: "charade", who: "obsidian", when: "dates", from: "2026-12-01", to: "2026-12-02" });
		expect($<HTMLInputElement>(view, ".datanotes-journal-search input").value).toBe("charade");
		expect($(view, ".search-input-clear-button").classList.contains("datanotes-hidden")).toBe(false);
		expect($<HTMLSelectElement>(view, '[data-focus-key="who"]').value).toBe("obsidian");
		expect($<HTMLSelectElement>(view, '[data-focus-key="when"]').value).toBe("dates");
		expect($(view, ".datanotes-journal-dates").classList.contains("datanotes-hidden")).toBe(false);
		expect([$<HTMLInputElement>(view, '[data-focus-key="from"]').value, $<HTMLInputElement>(view, '[data-focus-key="to"]').value]).toEqual(["2026-12-01", "2026-12-02"]);
		expect(summaries(view)).toEqual(["Changed rating of Charade"]);
		await view.onClose();
	});

	test("one device: no device filter", async () => {
		const clock = new Clock(NOON);
		const { host } = await openFilms({ clock });
		await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 4 } });
		const view = await openView(door(host), clock);
		expect($(view, '[data-focus-key="device"]').classList.contains("datanotes-hidden")).toBe(true);
		await view.onClose();
	});
});

describe("relative times", () => {
	test("just now, minutes, hours, yesterday, days, then the date; the full date on hover; said again as time passes", async () => {
		vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
		const clock = new Clock(NOON);
		const { host } = await openFilms({ clock });
		await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 4 } });
		const view = await openView(door(host), clock);
		const time = () => $(view, ".datanotes-history-row .datanotes-time");
		expect(time().textContent).toBe("just now");
		const at = ans(await host.call("list_migrations", {})).migrations[0].executed_at as string;
		expect(time().getAttribute("title")).toBe(formatTime(at));
		// The panel says its times again each minute, by its clock.
		const steps: [number, string][] = [
			[5 * 60_000, "5 minutes ago"],
			[HOUR - 5 * 60_000, "1 hour ago"],
			[2 * HOUR, "3 hours ago"],
			[DAY, "yesterday"],
			[2 * DAY, "3 days ago"],
		];
		for (const [by, words] of steps) {
			clock.advance(by);
			vi.advanceTimersByTime(HistoryView.TIMES_MS);
			expect(time().textContent).toBe(words);
		}
		clock.advance(10 * DAY);
		vi.advanceTimersByTime(HistoryView.TIMES_MS);
		expect(time().textContent).toBe(new Date(NOON).toLocaleDateString(undefined, { day: "numeric", month: "short" }));
		expect(time().getAttribute("title")).toBe(formatTime(at));
		await view.onClose();
	});

	test("the other sections tell their times so too", async () => {
		const clock = new Clock(NOON);
		const { host } = await openFilms({ clock });
		await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 4 } });
		clock.advance(2 * HOUR);
		const app = App.createConfigured__();
		vi.spyOn(app.workspace, "getActiveFile").mockReturnValue({ path: CHARADE } as never);
		const view = new HistoryView(WorkspaceLeaf.create2__(app).asOriginalType3__(), door(host));
		view.now = clock.now;
		await view.onOpen();
		for (const section of ["table", "note", "database", "changes"] as const) {
			await view.show(section);
			await until(() => $$(view, ".datanotes-time").length > 0);
			const times = $$(view, ".datanotes-time");
			expect(times.map((t) => t.textContent), section).toContain("2 hours ago");
			for (const t of times) expect(t.getAttribute("title"), section).toBe(formatTime(t.dataset.time));
		}
		await view.onClose();
	});
});

describe("in words", () => {
	test("a time: none and the epoch say nothing, a text that is no time is itself, a time ahead of the clock is its date", () => {
		expect(relativeTime(undefined, NOON)).toBe("");
		expect(relativeTime(new Date(0).toISOString(), NOON)).toBe("");
		expect(relativeTime("soon", NOON)).toBe("soon");
		expect(relativeTime(new Date(NOON + 30_000).toISOString(), NOON)).toBe("just now");
		const ahead = new Date(NOON + 2 * HOUR).toISOString();
		expect(relativeTime(ahead, NOON)).toBe(formatTime(ahead));
		expect(relativeTime(new Date(NOON - 60_000).toISOString(), NOON)).toBe("1 minute ago");
		// Another year's date says its year.
		expect(relativeTime(new Date(2025, 5, 1).toISOString(), NOON)).toBe(new Date(2025, 5, 1).toLocaleDateString(undefined, { day: "numeric", month: "short", year: "numeric" }));
	});

	test("who: each actor in words, and the Who choices grouped by credential, people first", () => {
		expect(whoWords("obsidian")).toBe("in Obsidian");
		expect(whoWords("engine")).toBe("by Datanotes");
		expect(whoWords("cli")).toBe("from the command line");
		expect(whoWords("owner")).toBe("by an agent (your token)");
		expect(whoWords("owner/claude-code")).toBe("by claude-code (your token)");
		expect(whoWords("reader")).toBe("by an agent (token reader)");
		expect(whoWords(undefined)).toBe("");
		const m = (by: string) => ({ migration_id: by, op: "update_row", by });
		expect(whoOptions([m("reader/cursor"), m("reader"), m("owner/x"), m("engine"), m("obsidian"), m("alpha")])).toEqual([
			["obsidian", "People in Obsidian"],
			["engine", "Datanotes by itself"],
			["owner", "Agents with your token"],
			["alpha", "Agents with the token “alpha”"],
			["reader", "Agents with the token “reader”"],
		]);
	});

	test("devices: by their names, this one first; two without a name told apart", () => {
		const m = (device: string) => ({ migration_id: device, op: "update_row", device });
		const known = { names: { aaaa: "Linux laptop" }, me: "aaaa" };
		expect(deviceOptions([m("cccc"), m("bbbb"), m("aaaa")], known)).toEqual([
			["aaaa", "Linux laptop"],
			["cccc", "another device"],
			["bbbb", "another device 2"],
		]);
	});

	test("when: the days are this machine's; no filter narrows nothing", () => {
		expect(isFiltered(NO_FILTER)).toBe(false);
		expect(isFiltered({ ...NO_FILTER, when: "dates" })).toBe(false);
		expect(isFiltered({ ...NO_FILTER, when: "dates", to: "2026-12-01" })).toBe(true);
		expect(timeRange({ ...NO_FILTER, when: "today" }, NOON)).toEqual({ since: new Date(2026, 11, 2).getTime() });
		expect(timeRange({ ...NO_FILTER, when: "week" }, NOON)).toEqual({ since: new Date(2026, 10, 26).getTime() });
		expect(timeRange({ ...NO_FILTER, when: "dates", from: "2026-11-30", to: "2026-12-01" }, NOON)).toEqual({ since: new Date(2026, 10, 30).getTime(), until: new Date(2026, 11, 2).getTime() });
		expect(timeRange({ ...NO_FILTER, when: "dates", from: "not a day" }, NOON)).toEqual({ since: undefined, until: undefined });
	});
});

describe("the keyboard", () => {
	test("Down from the search box to the entries; Up, Down, Home and End along them; Enter and Space unfold, Escape folds; Up from the first goes back", async () => {
		const clock = new Clock(NOON);
		const { host } = await openFilms({ clock });
		for (const rating of [1, 2, 3, 4]) {
			clock.advance(60_000);
			await host.call("update_row", { table: "film", path: CHARADE, set: { rating } });
		}
		const view = await openView(door(host), clock);
		const entries = () => $$(view, ".datanotes-expand");
		expect(entries()).toHaveLength(4);
		// One role and state for screen readers.
		for (const e of entries()) {
			expect(e.getAttribute("role")).toBe("button");
			expect(e.getAttribute("aria-expanded")).toBe("false");
		}
		$(view, ".datanotes-journal-search input").focus();
		key("ArrowDown");
		expect(document.activeElement).toBe(entries()[0]);
		key("ArrowDown");
		key("ArrowDown");
		expect(document.activeElement).toBe(entries()[2]);
		key("End");
		expect(document.activeElement).toBe(entries()[3]);
		key("ArrowUp");
		expect(document.activeElement).toBe(entries()[2]);
		key("Enter");
		await until(() => entries()[2].getAttribute("aria-expanded") === "true" && $$(view, ".datanotes-note-change").length === 1);
		expect($$(view, ".datanotes-history-details")[2].textContent).toContain("rating: 1 → 2");
		key("Escape");
		expect(entries()[2].getAttribute("aria-expanded")).toBe("false");
		expect($$(view, ".datanotes-note-change")).toHaveLength(0);
		key(" ");
		await until(() => $$(view, ".datanotes-note-change").length === 1);
		key("Home");
		expect(document.activeElement).toBe(entries()[0]);
		key("ArrowUp");
		expect(document.activeElement).toBe($(view, ".datanotes-journal-search input"));
		await view.onClose();
	});

	test("drawn again after a change, the entry focused keeps the focus and the unfolded stay unfolded", async () => {
		const clock = new Clock(NOON);
		const { host } = await openFilms({ clock });
		await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 4 } });
		clock.advance(60_000);
		await host.call("update_row", { table: "film", path: METROPOLIS, set: { rating: 4 } });
		const view = await openView(door(host), clock);
		const charade = () => $$(view, ".datanotes-expand").find((e) => e.textContent?.includes("Charade")) as HTMLElement;
		charade().focus();
		key("Enter");
		await until(() => $$(view, ".datanotes-note-change").length === 1);
		const before = charade();
		clock.advance(60_000);
		await host.call("update_row", { table: "film", path: METROPOLIS, set: { rating: 3 } });
		await until(() => summaries(view).length === 3 && $$(view, ".datanotes-note-change").length === 1);
		expect(charade()).not.toBe(before);
		expect(document.activeElement).toBe(charade());
		expect(charade().getAttribute("aria-expanded")).toBe("true");
		await view.onClose();
	});

	test("Show more puts the focus on the first entry it added", async () => {
		const clock = new Clock(NOON);
		const { host } = await openFilms({ clock });
		for (let i = 0; i < 52; i++) {
			clock.advance(1000);
			await host.call("update_row", { table: "film", path: CHARADE, set: { minutes: 100 + (i % 2) } });
		}
		const view = await openView(door(host), clock);
		expect($$(view, ".datanotes-expand")).toHaveLength(50);
		expect($(view, ".datanotes-journal-count").textContent).toBe("The newest 50 of 52.");
		const more = $<HTMLButtonElement>(view, '[data-focus-key="more"]');
		more.focus();
		more.click();
		await until(() => $$(view, ".datanotes-expand").length === 52);
		expect(document.activeElement).toBe($$(view, ".datanotes-expand")[50]);
		await view.onClose();
	});
});

describe("waiting for the typing", () => {
	test("the search looks once the typing pauses, not at each key", async () => {
		const clock = new Clock(NOON);
		const { host } = await openFilms({ clock });
		await host.call("update_row", { table: "film", path: CHARADE, set: { rating: 4 } });
		const d = door(host);
		const view = await openView(d, clock);
		const calls = vi.spyOn(d, "call");
		const box = $<HTMLInputElement>(view, ".datanotes-journal-search input");
		for (const text of ["c", "ch", "cha"]) {
			box.value = text;
			box.dispatchEvent(new Event("input"));
		}
		await new Promise((r) => setTimeout(r, TYPING_MS * 3));
		expect(calls.mock.calls.filter((c) => c[0] === "list_migrations")).toHaveLength(1);
		expect(summaries(view)).toEqual(["Changed rating of Charade"]);
		await view.onClose();
	});
});
