// The history panel's Table section: a table's versions (describe_history,
// paged), the rows changed between two of them or since one (table_changes, as
// inserted, updated and deleted rows with their column diffs), and "Restore
// table to version N" through a modal that shows the dry run and applies only
// on confirm (restore_table). Lists move with the arrow keys; Enter selects.

import { type App, Modal, Notice, Setting } from "obsidian";
import type { EngineDoor } from "./history-view";
import { changeHead, columnLine, drawRefusal, type NotesOf, operationWords, readNotesOf, versionWords } from "./display";
import { columnWords, filterWords } from "./rule-words";
import { type DeviceNames, deviceWords, readDeviceNames } from "./device-name";
import { whoWords } from "./who";
import { drawMeta } from "./times";
import { drawRestoredNote, type RowRestore, rowsRestored } from "./restore-preview";
import type { AnswerOf, Commit, Migration, Outcome, RowChange, TableInfo } from "./types";

/** Versions asked for at a time. */
export const PAGE = 50;

/** Columns of table_changes that are not the row's own. */
const META = new Set(["_change_type", "_commit_version", "_commit_timestamp", "_operation", "path", "id"]);

/** One row's change between two versions, as the panel shows it. */
export interface RowDiff {
	kind: "inserted" | "updated" | "deleted";
	path: string;
	/** Inserted and deleted: the values; updated: the columns that differ. */
	columns: { name: string; before?: unknown; after?: unknown }[];
}

function own(row: RowChange): [string, unknown][] {
	return Object.entries(row).filter(([k]) => !META.has(k));
}

/** The net change of each row over the changes given (oldest first): a row
 * inserted then updated is inserted with its last values; one updated twice
 * compares its first preimage with its last postimage; updates that end where
 * they began are left out. */
export function rowDiffs(changes: RowChange[]): RowDiff[] {
	type Net = { first: RowChange | null; last: RowChange | null; path: string };
	const rows = new Map<string, Net>();
	for (const c of changes) {
		if (c._change_type === "metadata") continue;
		const key = c.id ?? c.path;
		const net = rows.get(key) ?? { first: null, last: null, path: c.path };
		const before = c._change_type === "update_preimage" || c._change_type === "delete";
		if (before && net.first === null && net.last === null) net.first = c;
		if (c._change_type === "update_postimage" || c._change_type === "insert") net.last = c;
		if (c._change_type === "delete") net.last = null;
		// A delete after an insert within the range: as if it never was.
		if (c._change_type === "delete" && net.first === null) {
			rows.delete(key);
			continue;
		}
		net.path = c.path;
		rows.set(key, net);
	}
	const out: RowDiff[] = [];
	for (const net of rows.values()) {
		if (net.first === null && net.last !== null) {
			out.push({ kind: "inserted", path: net.path, columns: own(net.last).map(([name, after]) => ({ name, after })) });
		} else if (net.first !== null && net.last === null) {
			out.push({ kind: "deleted", path: net.first.path, columns: own(net.first).map(([name, before]) => ({ name, before })) });
		} else if (net.first !== null && net.last !== null) {
			const before = new Map(own(net.first));
			const after = new Map(own(net.last));
			const names = [...new Set([...before.keys(), ...after.keys()])];
			const columns = names
				.filter((n) => JSON.stringify(before.get(n)) !== JSON.stringify(after.get(n)))
				.map((name) => ({ name, before: before.get(name), after: after.get(name) }));
			const moved = net.first.path !== net.last.path;
			if (moved) columns.unshift({ name: "path", before: net.first.path, after: net.last.path });
			if (columns.length > 0) out.push({ kind: "updated", path: net.last.path, columns });
		}
	}
	return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** What a version did, in words: "1 updated", "7 rows", "hand edit". */
export function metrics(c: Commit): string {
	const m = c.operation_metrics ?? {};
	const parts: string[] = [];
	if (m.rows_inserted) parts.push(`${m.rows_inserted} inserted`);
	if (m.rows_updated) parts.push(`${m.rows_updated} updated`);
	if (m.rows_deleted) parts.push(`${m.rows_deleted} deleted`);
	if (parts.length === 0 && m.rows !== undefined) parts.push(`${m.rows} rows`);
	if (m.violations) parts.push(`${m.violations} breaking a rule`);
	return parts.join(", ");
}

/** A section of the history panel: it draws into the element last given, and
 * an engine that went away (or closed) is said there instead of thrown. */
export abstract class PanelSection {
	protected el: HTMLElement | null = null;
	/** Counts draws: an answer that comes back after a newer draw began is dropped. */
	protected generation = 0;
	/** The clock relative times are told by (the panel's). */
	now: () => number = () => Date.now();

	async draw(into?: HTMLElement): Promise<void> {
		if (into) this.el = into;
		const el = this.el;
		if (!el) return;
		try {
			await this.drawInto(el, ++this.generation);
		} catch (e) {
			showError(el, e);
		}
	}

	/** Draws into `el`; `mine` is this draw's generation. */
	protected abstract drawInto(el: HTMLElement, mine: number): Promise<void>;
}

/** The Table section; `openNote` opens a note of the vault. */
/** A table's columns and rules, folded under its picker: what each column
 * holds and the CHECKs in words (the engine refuses a write that breaks one). */
export function drawSchema(el: HTMLElement, t: TableInfo, open = false): HTMLDetailsElement {
	const box = el.createEl("details", { cls: "datanotes-table-schema" });
	box.open = open;
	box.createEl("summary", { text: `Columns and rules of ${t.name}` });
	if (t.description) box.createEl("p", { text: t.description, cls: "datanotes-muted" });
	const columns = box.createEl("ul", { cls: "datanotes-schema-columns" });
	for (const [name, c] of Object.entries(t.columns ?? {})) columns.createEl("li", { text: `${name}: ${columnWords(c)}` });
	const checks = Object.entries(t.checks ?? {});
	if (checks.length > 0) {
		box.createDiv({ text: "Every row must keep:", cls: "datanotes-history-meta" });
		const rules = box.createEl("ul", { cls: "datanotes-schema-rules" });
		// By its description, else in words; its name is the schema's id for it.
		for (const [name, f] of checks) rules.createEl("li", { text: t.check_descriptions?.[name] ?? filterWords(f) ?? `the rule “${name}”` });
	}
	if (t.name_from) box.createDiv({ text: `New notes are named from ${t.name_from}.`, cls: "datanotes-history-meta" });
	return box;
}

export class TableSection extends PanelSection {
	private table: string | null = null;
	private limit = PAGE;
	private commits: Commit[] = [];
	/** The versions picked, in the order picked (two at most). */
	private picked: number[] = [];
	private changesDrawn = 0;
	/** The table's journal entries (each version's actor and summary). */
	private journal: Migration[] = [];
	/** The columns and rules unfolded. */
	private schemaOpen = false;
	/** What the journal's entries did to their notes (their words name the row). */
	private notesOf: NotesOf = () => undefined;
	/** The devices' names, for each version's device. */
	private devices: DeviceNames = { names: {} };

	constructor(
		private readonly app: App,
		private readonly door: EngineDoor,
		private readonly openNote: (path: string) => void,
	) {
		super();
	}

	/** The table picker, then the chosen table's versions. What was picked stays picked. */
	protected async drawInto(el: HTMLElement, mine: number): Promise<void> {
		const db = await this.door.call("describe_database", {});
		if (mine !== this.generation) return;
		el.empty();
		if (db.status !== "ok") {
			drawRefusal(el, db);
			return;
		}
		const tables = db.answer.tables.filter((t) => t.history);
		if (tables.length === 0) {
			el.createEl("p", { text: "No table keeps a history yet.", cls: "datanotes-muted" });
			return;
		}
		if (this.table === null || !tables.some((t) => t.name === this.table)) this.table = tables[0].name;
		new Setting(el).setName("Table").addDropdown((d) => {
			for (const t of tables) d.addOption(t.name, `${t.name} (${t.row_count} rows)`);
			d.setValue(this.table ?? "");
			d.onChange((v) => {
				this.table = v;
				this.limit = PAGE;
				this.picked = [];
				void this.draw();
			});
		});
		const table = tables.find((t) => t.name === this.table);
		// Unfolded, it stays so when the section is drawn again (every engine change).
		if (table) drawSchema(el, table, this.schemaOpen).addEventListener("toggle", (e) => (this.schemaOpen = (e.target as HTMLDetailsElement).open));
		const versions = el.createDiv({ cls: "datanotes-table-versions" });
		const changes = el.createDiv({ cls: "datanotes-table-changes" });
		await this.drawVersions(versions, changes, mine);
	}

	private async drawVersions(list: HTMLElement, changes: HTMLElement, mine: number): Promise<void> {
		// The versions, and who made each (its operation's actor, from the journal).
		const [out, journal, devices] = await Promise.all([
			this.door.call("describe_history", { table: this.table, limit: this.limit + 1 }),
			this.door.call("list_migrations", { table: this.table ?? "", limit: this.limit }),
			readDeviceNames(this.door),
		]);
		this.devices = devices;
		if (mine !== this.generation) return;
		if (out.status !== "ok") {
			drawRefusal(list, out);
			return;
		}
		const more = out.answer.history.length > this.limit;
		this.commits = out.answer.history.slice(0, this.limit);
		this.journal = journal.status === "ok" ? journal.answer.migrations : [];
		const notesOf = await readNotesOf(this.door, this.journal);
		if (mine !== this.generation) return;
		this.notesOf = notesOf;
		if (this.commits.length === 0) {
			// History on, but no change since: the log begins with the next one.
			list.createEl("p", { text: `No version of ${this.table ?? ""} yet: its history begins with its next change, by a write or by hand.`, cls: "datanotes-muted" });
			return;
		}
		const rows: HTMLElement[] = [];
		for (const c of this.commits) rows.push(this.drawCommit(list, c, changes));
		moveWithArrows(rows);
		if (more) {
			const button = list.createEl("button", { text: `Show ${PAGE} more`, cls: "datanotes-more" });
			button.addEventListener("click", () => {
				this.limit += PAGE;
				void this.draw();
			});
		}
		await this.drawChanges(changes, mine);
	}

	private drawCommit(list: HTMLElement, c: Commit, changes: HTMLElement): HTMLElement {
		const row = list.createDiv({ cls: "datanotes-version" });
		row.tabIndex = 0;
		row.dataset.version = String(c.version);
		if (this.picked.includes(c.version)) row.addClass("is-selected");
		row.toggleClass("is-hand-edit", c.operation === "EXTERNAL_EDIT");
		const text = row.createDiv({ cls: "datanotes-history-text" });
		text.createSpan({ text: `v${c.version} `, cls: "datanotes-history-op" });
		const entry = this.journal.find((m) => m.migration_id === c.migration_id);
		text.createSpan({ text: versionWords(c.operation, entry && operationWords(entry, this.journal, this.notesOf)) });
		// Devices by their names, never their ids.
		const on = c.device ? `on ${deviceWords(c.device, this.devices)}` : "";
		drawMeta(text, [whoWords(entry?.by), on, { time: c.timestamp }, metrics(c)], this.now());
		const restore = row.createEl("button", { text: "Restore…", cls: "datanotes-restore" });
		restore.setAttribute("aria-label", `Restore ${this.table ?? ""} to version ${c.version}`);
		restore.addEventListener("click", (e) => {
			e.stopPropagation();
			this.restore(c.version);
		});
		const pick = () => {
			this.pick(c.version);
			for (const r of Array.from(list.querySelectorAll<HTMLElement>(".datanotes-version"))) {
				r.toggleClass("is-selected", this.picked.includes(Number(r.dataset.version)));
			}
			this.drawChanges(changes, this.generation).catch((e: unknown) => showError(changes, e));
		};
		row.addEventListener("click", pick);
		row.addEventListener("keydown", (e) => {
			if (e.key === "Enter") pick();
		});
		return row;
	}

	/** Picks a version; a third pick replaces the first. Picking it again unpicks it. */
	pick(version: number): void {
		if (this.picked.includes(version)) this.picked = this.picked.filter((v) => v !== version);
		else this.picked = [...this.picked, version].slice(-2);
	}

	/** The rows changed from the older picked version to the newer (or to now).
	 * Only the latest pick draws: an answer to an earlier one is dropped. */
	private async drawChanges(el: HTMLElement, section: number): Promise<void> {
		const mine = ++this.changesDrawn;
		const latest = this.commits[0]?.version ?? 0;
		const from = Math.min(...this.picked);
		const to = this.picked.length === 2 ? Math.max(...this.picked) : latest;
		let out: Outcome<AnswerOf<"table_changes">> | null = null;
		if (this.picked.length > 0 && from < to) {
			out = await this.door.call("table_changes", { table: this.table, start_version: from + 1, end_version: to });
		}
		if (mine !== this.changesDrawn || section !== this.generation) return;
		el.empty();
		if (this.picked.length === 0) {
			el.createEl("p", { text: "Pick a version to see what changed since; pick two to compare them.", cls: "datanotes-muted" });
			return;
		}
		el.createEl("h6", { text: this.picked.length === 2 ? `From version ${from} to version ${to}` : `From version ${from} to now` });
		if (out === null) {
			el.createEl("p", { text: "Nothing changed since: it is the latest version.", cls: "datanotes-muted" });
			return;
		}
		if (out.status !== "ok") {
			drawRefusal(el, out);
			return;
		}
		const diffs = rowDiffs(out.answer.changes);
		if (diffs.length === 0) {
			el.createEl("p", { text: "No row differs.", cls: "datanotes-muted" });
			return;
		}
		const counts = (k: RowDiff["kind"]) => diffs.filter((d) => d.kind === k).length;
		el.createEl("p", {
			text: `${counts("inserted")} inserted, ${counts("updated")} updated, ${counts("deleted")} deleted`,
			cls: "datanotes-history-meta",
		});
		drawDiffs(el, diffs, this.openNote);
	}

	/** The restore modal for one version; the section redraws after a restore. */
	restore(version: number): DryRunModal {
		const table = this.table ?? "";
		const modal = new DryRunModal(this.app, this.door, `Restore ${table} to version ${version}`, "restore_table", { table, version }, () => void this.draw());
		modal.open();
		return modal;
	}
}

/** Says in `el` why something could not be drawn or done (an engine gone, say). */
export function showError(el: HTMLElement, e: unknown): void {
	el.createEl("pre", { text: e instanceof Error ? e.message : String(e), cls: "datanotes-error" });
}

/** Rows with their column diffs; a click on a path opens the note. */
export function drawDiffs(el: HTMLElement, diffs: RowDiff[], openNote: (path: string) => void, label?: string): void {
	const list = el.createDiv({ cls: "datanotes-diffs" });
	for (const d of diffs) {
		const item = list.createDiv({ cls: `datanotes-diff is-${d.kind}` });
		changeHead(item, label ?? d.kind, d.path, openNote);
		const cols = item.createEl("ul", { cls: "datanotes-diff-columns" });
		for (const c of d.columns) columnLine(cols, c.name, c, d.kind);
	}
}

/** Up and down move the focus along `rows`, Home and End to their ends. */
export function moveWithArrows(rows: HTMLElement[]): void {
	rows.forEach((row, i) => {
		row.addEventListener("keydown", (e) => {
			const moves: Record<string, number> = { ArrowDown: i + 1, ArrowUp: i - 1, Home: 0, End: rows.length - 1 };
			const to = moves[e.key];
			const next = to === undefined || to === i ? undefined : rows[to];
			if (!next) return;
			e.preventDefault();
			next.focus();
		});
	});
}

/** What a restore's dry run says it would do: rows created, changed, deleted
 * (restore_database answers per table: summed). */
export function restoreCounts(a: AnswerOf<"restore_table"> & { tables?: unknown }): { created: number; changed: number; deleted: number } {
	const per = a.tables && typeof a.tables === "object" && !Array.isArray(a.tables) ? Object.values(a.tables as Record<string, RestoreCounts>) : [a];
	const sum = (k: keyof RestoreCounts) => per.reduce((n, t) => n + (typeof t[k] === "number" ? t[k] : 0), 0);
	return { created: sum("creates"), changed: sum("texts"), deleted: sum("deletes") };
}

type RestoreCounts = { creates?: number; texts?: number; deletes?: number };

/** A restore (of a table or the database): the dry run first, drawn in the
 * modal; only Restore applies it. */
export class DryRunModal extends Modal {
	/** Settles once the dry run is drawn (for the tests). */
	ready: Promise<void> = Promise.resolve();

	constructor(
		app: App,
		private readonly door: EngineDoor,
		private readonly title: string,
		private readonly op: "restore_table" | "restore_database",
		private readonly args: Record<string, unknown>,
		private readonly restored: () => void,
	) {
		super(app);
	}

	onOpen(): void {
		this.setTitle(this.title);
		this.contentEl.addClass("datanotes-modal");
		const body = this.contentEl.createDiv();
		body.createEl("p", { text: "Working out what the restore would change…", cls: "datanotes-muted" });
		this.ready = this.dryRun(body).catch((e: unknown) => showError(body, e));
	}

	private async dryRun(body: HTMLElement): Promise<void> {
		const out = await this.door.call(this.op, { ...this.args, dry_run: true });
		body.empty();
		if (out.status !== "ok") {
			drawRefusal(body, out);
			return;
		}
		const a = out.answer as AnswerOf<"restore_table">;
		const { created, changed, deleted } = restoreCounts(a);
		body.createEl("p", { text: `${created} rows created, ${changed} changed, ${deleted} deleted.`, cls: "datanotes-restore-counts" });
		const edits = a.planned_edits ?? [];
		if (created + changed + deleted === 0 && edits.length === 0) {
			body.createEl("p", { text: "Nothing differs: there is nothing to restore.", cls: "datanotes-muted" });
			return;
		}
		// Each note by its title, and a row by what would change in it, property by property.
		const rows = await rowsRestored(this.door, this.args).catch(() => new Map<string, RowRestore>());
		const list = body.createEl("ul", { cls: "datanotes-restore-paths" });
		for (const e of edits.slice(0, 50)) drawRestoredNote(list, e.path, rows.get(e.path) ?? (e.move_to === undefined ? undefined : rows.get(e.move_to)));
		if (edits.length > 50) body.createEl("p", { text: `and ${edits.length - 50} more`, cls: "datanotes-muted" });
		body.createEl("p", { text: "The restore is journaled: undo reverts it.", cls: "datanotes-muted" });
		const buttons = body.createDiv({ cls: "modal-button-container" });
		const cancel = buttons.createEl("button", { text: "Cancel" });
		cancel.addEventListener("click", () => this.close());
		const go = buttons.createEl("button", { text: "Restore", cls: "mod-warning datanotes-restore-confirm" });
		go.addEventListener("click", () => void this.apply(go, body).catch((e: unknown) => showError(body, e)));
	}

	private async apply(go: HTMLButtonElement, body: HTMLElement): Promise<void> {
		go.disabled = true;
		const out = await this.door.call(this.op, this.args);
		if (out.status !== "ok") {
			drawRefusal(body, out);
			go.disabled = false;
			return;
		}
		// In words ("Restored film to version 3"), not the engine's summary, which names a rewind by its id.
		const summary = (out.answer as AnswerOf<"restore_table">).summary;
		const table = typeof this.args.table === "string" ? this.args.table : null;
		new Notice(`Datanotes: ${operationWords({ migration_id: "", op: this.op, summary, table })}. Undo it from the journal.`);
		this.close();
		this.restored();
	}

	onClose(): void {
		this.contentEl.empty();
	}
}
