// The history panel's Database section (every table's commits, newest first,
// and "Rewind the database to before this operation" through restore_database's
// dry run) and Changes section (the live change feed, newest first: engine
// writes and hand edits told apart, the rules a hand edit broke, filters by
// table and source). Both are drawn again when the engine says something changed.

import { type App, Setting } from "obsidian";
import type { EngineDoor } from "./history-view";
import { changeHead, columnLine, drawRefusal, pathsAsTitles, movedFrom, noteTitle, operationWords, ownColumns, readNotesOf, shortTable, versionWords } from "./display";
import { drawFolded, LINES } from "./fold";
import { whoWords } from "./who";
import { ruleText } from "./rule-words";
import { drawMeta } from "./times";
import { DryRunModal, metrics, moveWithArrows, PAGE, PanelSection } from "./table-history";
import type { Commit, FeedEvent, NoteChange } from "./types";

/** One moment of the database: an operation's commits across tables, or a
 * commit without an operation (a hand edit, the first version). */
export interface Moment {
	migration_id: string | null;
	timestamp: string;
	operation: string;
	tables: string[];
	metrics: string;
}

/** Commits (newest first) as moments: one per operation. */
export function moments(commits: Commit[]): Moment[] {
	const out: Moment[] = [];
	const byId = new Map<string, Moment>();
	for (const c of commits) {
		const known = c.migration_id ? byId.get(c.migration_id) : undefined;
		if (known) {
			known.tables.push(shortTable(c.table));
			continue;
		}
		const m: Moment = { migration_id: c.migration_id, timestamp: c.timestamp, operation: c.operation, tables: [shortTable(c.table)], metrics: metrics(c) };
		if (c.migration_id) byId.set(c.migration_id, m);
		out.push(m);
	}
	return out;
}

export class DatabaseSection extends PanelSection {
	private limit = PAGE;

	constructor(
		private readonly app: App,
		private readonly door: EngineDoor,
	) {
		super();
	}

	protected async drawInto(el: HTMLElement, mine: number): Promise<void> {
		const [out, journal] = await Promise.all([
			this.door.call("describe_history", { limit: this.limit + 1 }),
			this.door.call("list_migrations", { limit: this.limit }),
		]);
		const migrations = journal.status === "ok" ? journal.answer.migrations : [];
		const notesOf = await readNotesOf(this.door, migrations);
		if (mine !== this.generation) return;
		el.empty();
		if (out.status !== "ok") {
			drawRefusal(el, out);
			return;
		}
		el.createEl("p", {
			text: "Every table's versions, newest first. Rewind puts every table back as it was before an operation, as one write that undo reverts.",
			cls: "datanotes-muted",
		});
		const more = out.answer.history.length > this.limit;
		const rows: HTMLElement[] = [];
		for (const m of moments(out.answer.history.slice(0, this.limit))) {
			const entry = migrations.find((e) => e.migration_id === m.migration_id);
			rows.push(this.drawMoment(el, m, entry && operationWords(entry, migrations, notesOf)));
		}
		moveWithArrows(rows);
		if (more) {
			const button = el.createEl("button", { text: `Show ${PAGE} more`, cls: "datanotes-more" });
			button.addEventListener("click", () => {
				this.limit += PAGE;
				void this.draw();
			});
		}
	}

	private drawMoment(el: HTMLElement, m: Moment, summary: string | undefined): HTMLElement {
		const row = el.createDiv({ cls: "datanotes-version datanotes-moment" });
		row.tabIndex = 0;
		if (m.migration_id) row.dataset.migrationId = m.migration_id;
		row.toggleClass("is-hand-edit", m.operation === "EXTERNAL_EDIT");
		const text = row.createDiv({ cls: "datanotes-history-text" });
		const tables = m.tables.join(", ");
		if (summary !== undefined) {
			// The journal's words name an operation's one table ("Added Sunrise to film").
			text.createSpan({ text: m.tables.length === 1 ? summary : `${summary} (${tables})` });
		} else if (m.operation === "CONVERT") {
			text.createSpan({ text: `${tables}, ${versionWords(m.operation).toLowerCase()}` });
		} else {
			text.createSpan({ text: versionWords(m.operation), cls: "datanotes-history-op" });
			text.createSpan({ text: ` (${tables})` });
		}
		drawMeta(text, [{ time: m.timestamp }, m.metrics], this.now());
		if (m.migration_id) {
			const id = m.migration_id;
			const rewind = row.createEl("button", { text: "Rewind to before…", cls: "datanotes-rewind" });
			const what = summary ?? versionWords(m.operation);
			rewind.setAttribute("aria-label", `Rewind the database to before: ${what.charAt(0).toLowerCase()}${what.slice(1)}`);
			rewind.addEventListener("click", () => void this.rewind(id, what));
			row.addEventListener("keydown", (e) => {
				if (e.key === "Enter") this.rewind(id, what);
			});
		}
		return row;
	}

	/** "Rewind the database to before this operation": the dry run, then confirm. */
	rewind(migrationId: string, words = "this operation"): DryRunModal {
		const modal = new DryRunModal(
			this.app,
			this.door,
			`Rewind the database to before: ${words.charAt(0).toLowerCase()}${words.slice(1)}`,
			"restore_database",
			{ before_migration: migrationId },
			() => void this.draw(),
		);
		modal.open();
		return modal;
	}
}

/** Where an event came from, as the Changes section filters it. */
export type Source = "all" | "engine" | "external";

export class ChangesSection extends PanelSection {
	private table = "";
	private source: Source = "all";
	private span = PAGE;

	constructor(
		private readonly door: EngineDoor,
		private readonly openNote: (path: string) => void,
	) {
		super();
	}

	/** Narrows the list to one table ("" for all) and one source. */
	filter(table: string, source: Source): Promise<void> {
		this.table = table;
		this.source = source;
		return this.draw();
	}

	protected async drawInto(el: HTMLElement, mine: number): Promise<void> {
		const [db, head] = await Promise.all([this.door.call("describe_database", {}), this.door.call("list_changes", { since: 0, limit: 1 })]);
		if (mine !== this.generation) return;
		if (db.status !== "ok" || head.status !== "ok") {
			el.empty();
			drawRefusal(el, db.status !== "ok" ? db : head);
			return;
		}
		const since = Math.max(0, head.answer.head - this.span);
		const args: Record<string, unknown> = { since, limit: this.span };
		if (this.table) args.tables = [this.table];
		const out = await this.door.call("list_changes", args);
		if (mine !== this.generation) return;
		el.empty();
		const filters = el.createDiv({ cls: "datanotes-filters" });
		new Setting(filters).setName("Table").addDropdown((d) => {
			d.addOption("", "All tables");
			for (const t of db.answer.tables) d.addOption(t.name, t.name);
			d.setValue(this.table);
			d.onChange((v) => void this.filter(v, this.source));
		});
		new Setting(filters).setName("Source").addDropdown((d) => {
			d.addOption("all", "Engine writes and hand edits");
			d.addOption("engine", "Engine writes");
			d.addOption("external", "Hand edits");
			d.setValue(this.source);
			d.onChange((v) => void this.filter(this.table, v as Source));
		});
		if (out.status !== "ok") {
			drawRefusal(el, out);
			return;
		}
		const events = out.answer.events
			.filter((e) => e.kind !== "tool_call" && (this.source === "all" || e.source === this.source))
			.reverse();
		if (events.length === 0) {
			el.createEl("p", { text: "No changes here yet.", cls: "datanotes-muted" });
		}
		const now = this.now();
		const rows = events.map((e) => drawEvent(el, e, this.openNote, now));
		moveWithArrows(rows);
		if (since > 0) {
			const older = el.createEl("button", { text: "Show older changes", cls: "datanotes-more" });
			older.addEventListener("click", () => {
				this.span += PAGE;
				void this.draw();
			});
		}
	}
}

/** A feed event's kind, in words. */
const EVENT_WORDS: Record<string, string> = {
	insert: "added",
	update: "changed",
	delete: "removed",
	move: "moved",
	metastore: "tables changed",
	unreadable: "unreadable",
	proposal_created: "changes proposed",
	proposal_accepted: "proposed changes accepted",
	proposal_rejected: "proposed changes turned down",
};

/** One feed event: its kind, the note (a click opens it), who and when, the
 * column diffs and the rules it broke. */
export function drawEvent(el: HTMLElement, e: FeedEvent, openNote: (path: string) => void, now = Date.now()): HTMLElement {
	const hand = e.source === "external";
	const row = el.createDiv({ cls: `datanotes-diff datanotes-event is-${e.kind}` });
	row.tabIndex = 0;
	row.dataset.seq = String(e.seq);
	if (hand) row.addClass("is-hand-edit");
	changeHead(row, EVENT_WORDS[e.kind] ?? e.kind, e.path, openNote);
	if (e.path) {
		const path = e.path;
		row.addEventListener("keydown", (ev) => {
			if (ev.key === "Enter") openNote(path);
		});
	}
	const who = hand ? "edited by hand" : whoWords(e.actor);
	drawMeta(row, [shortTable(e.table), who, { time: e.at }], now);
	const cols = row.createEl("ul", { cls: "datanotes-diff-columns" });
	if (e.old_path) cols.createEl("li", { text: movedFrom(e.old_path, e.path) }).setAttribute("title", e.old_path);
	// An update that changed no column changed the note's body (the feed keeps
	// no texts: the journal entry has them).
	if (e.kind === "update" && Object.keys(e.changes ?? {}).length === 0) cols.createEl("li", { text: "The body changed", cls: "datanotes-muted" });
	for (const [name, c] of Object.entries(e.changes ?? {})) {
		columnLine(cols, name, c);
	}
	// The rules it broke: the edited row's, then those of rows linking to it, named.
	const broken = (e.violations ?? []).flatMap((r) => r.violations.map((v) => `${r.path === e.path ? "" : `${noteTitle(r.path)} `}breaks ${pathsAsTitles(ruleText(v, true, true))}`));
	if (broken.length > 0) {
		const rules = row.createEl("ul", { cls: "datanotes-problem-rules" });
		for (const b of broken) rules.createEl("li", { text: b });
	}
	return row;
}

/** What a journal entry did to one note: its kind, the note (a click opens it),
 * the columns before and after, and the body's changed lines, folded when
 * long (fold.ts). A file that is not a note (a Bases file the engine keeps)
 * is the engine's text: its lines are behind Details. */
export function drawNoteChange(el: HTMLElement, n: NoteChange, openNote: (path: string) => void): HTMLElement {
	const row = el.createDiv({ cls: `datanotes-diff datanotes-note-change is-${n.kind}` });
	changeHead(row, n.kind, n.path, openNote);
	const cols = row.createEl("ul", { cls: "datanotes-diff-columns" });
	if (n.from) cols.createEl("li", { text: movedFrom(n.from, n.path) }).setAttribute("title", n.from);
	// Its own columns: a new note's table and id are the engine's.
	for (const name of ownColumns(n.changes)) {
		columnLine(cols, name, n.changes[name], n.kind === "created" ? "inserted" : n.kind === "removed" || n.kind === "trashed" ? "deleted" : "updated");
	}
	const lines = n.body_diff ?? [];
	if (lines.length === 0) return row;
	let into: HTMLElement = row;
	if (!/\.md$/i.test(n.path)) {
		row.createDiv({ text: `A file Datanotes keeps, not a note (${lines.length === 1 ? "1 line" : `${lines.length} lines`}, under Details).`, cls: "datanotes-muted" });
		const details = row.createEl("details", { cls: "datanotes-file-text" });
		details.createEl("summary", { text: "Details" });
		into = details;
	}
	const pre = into.createEl("pre", { cls: "datanotes-body-diff" });
	drawFolded(into, pre, lines, drawDiffLine, LINES);
	return row;
}

/** One line of a body diff: added, removed or kept. */
function drawDiffLine(pre: HTMLElement, line: string): void {
	const cls = line.startsWith("+ ") ? "datanotes-diff-after" : line.startsWith("- ") ? "datanotes-diff-before" : "datanotes-muted";
	pre.createDiv({ text: line, cls });
}
