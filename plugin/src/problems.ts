// Broken rules where people work: every row that breaks a rule (check_table),
// kept current from the change feed (list_changes) as hand edits break rules
// and later writes mend them; a Problems view grouped by table; a count for the
// status bar; a Notice for each note a hand edit breaks. The feed is read only
// when the engine says something changed.

import { ItemView, Notice, type WorkspaceLeaf } from "obsidian";
import type { EngineDoor } from "./history-view";
import { noteLink, noteTitle, pathsAsTitles, refusalShort, shortTable, shown } from "./display";
import { fullTextTitles } from "./full-text";
import { refusalText } from "./host";
import { type NoticeButton, noticeWithButtons } from "./notice-buttons";
import { ruleText } from "./rule-words";
import type { ConflictValue, FeedEvent, RowViolations } from "./types";

export const VIEW_TYPE_PROBLEMS = "datanotes-problems";

/** Events read from the feed at a time. */
const FEED_PAGE = 1000;

/** One row's broken rules. */
export interface Problem {
	table: string;
	path: string;
	violations: RowViolations["violations"];
	/** For a note that cannot be read: its values when it last could, if the feed has them. */
	lastValues?: Record<string, unknown>;
}

/** The rows that break a rule, kept from check_table and the feed. */
export class Problems {
	private rows = new Map<string, Problem>();
	/** The feed's last event read. */
	private seq = 0;
	/** The values each path last had in the feed (for notes that became unreadable). */
	private values = new Map<string, Record<string, unknown>>();
	private listeners = new Set<() => void>();
	private reading: Promise<void> | null = null;
	private again = false;
	/** Set when the last check or feed read failed: what went wrong, in words. */
	error: string | null = null;
	/** The engine's whole text of a refusal in `error`: for Details. */
	errorDetails: string | null = null;
	/** Store files the engine did not take in (damaged, or forged and brought
	 * by a sync), as the engine says them: for Details. */
	storeProblems: string[] = [];

	constructor(
		private readonly door: EngineDoor,
		/** Says a hand edit broke a rule (a Notice, unless the person turned them off). */
		private readonly tell: (path: string, problem: Problem) => void = () => undefined,
	) {}

	/** Every row that breaks a rule, by table then path. */
	list(): Problem[] {
		return [...this.rows.values()].sort((a, b) => (a.table + a.path < b.table + b.path ? -1 : a.table + a.path > b.table + b.path ? 1 : 0));
	}

	count(): number {
		return this.rows.size;
	}

	onChange(fn: () => void): () => void {
		this.listeners.add(fn);
		return () => this.listeners.delete(fn);
	}

	private changed(): void {
		for (const fn of this.listeners) fn();
	}

	/** Runs check_table over every table, and starts following the feed from its
	 * head. Never rejects: an engine that cannot answer (closed, gone) is told in
	 * `error`. */
	async check(): Promise<void> {
		try {
			await this.checkNow();
		} catch (e) {
			this.failed(e);
		}
	}

	private failed(e: unknown): void {
		this.error = e instanceof Error ? e.message : String(e);
		this.errorDetails = null;
		this.changed();
	}

	private async checkNow(): Promise<void> {
		const head = await this.door.call("list_changes", { since: 0, limit: 1 });
		const out = await this.door.call("check_table", {});
		if (out.status !== "ok" || head.status !== "ok") {
			const bad = out.status !== "ok" ? out : head;
			this.error = refusalShort(bad);
			this.errorDetails = refusalText(bad);
			this.changed();
			return;
		}
		this.error = null;
		this.errorDetails = null;
		this.seq = Math.max(this.seq, head.answer.head);
		this.rows.clear();
		this.storeProblems = out.answer.store_problems ?? [];
		for (const r of out.answer.violations) this.rows.set(r.path, this.problem(r.table ?? "", r));
		this.changed();
	}

	/** Keeps one side of a conflict (resolve_conflict), then checks again; the
	 * refusal's text when it is refused. */
	async resolve(path: string, keep: string): Promise<string | null> {
		const out = await this.door.call("resolve_conflict", { path, keep });
		if (out.status !== "ok") return refusalShort(out);
		await this.check();
		return null;
	}

	private problem(table: string, r: RowViolations): Problem {
		const p: Problem = { table: shortTable(table), path: r.path, violations: r.violations };
		if (r.violations.some((v) => v.code === "unreadable") && this.values.has(r.path)) p.lastValues = this.values.get(r.path);
		return p;
	}

	/** Reads the feed past the last event seen and applies it; one read at a
	 * time, and one more if asked meanwhile. */
	follow(): Promise<void> {
		if (this.reading) {
			this.again = true;
			return this.reading;
		}
		this.reading = (async () => {
			do {
				this.again = false;
				await this.readFeed();
			} while (this.again);
		})()
			.catch((e: unknown) => this.failed(e))
			.finally(() => {
				this.reading = null;
			});
		return this.reading;
	}

	private async readFeed(): Promise<void> {
		// The last check could not run (metastore.yaml unreadable, an engine
		// gone): only a check says whether it can now.
		if (this.error !== null) return this.check();
		for (;;) {
			const out = await this.door.call("list_changes", { since: this.seq, limit: FEED_PAGE });
			if (out.status !== "ok") {
				this.error = refusalShort(out);
				this.errorDetails = refusalText(out);
				this.changed();
				return;
			}
			const told = new Set<string>();
			let moved = false;
			let schema = false;
			for (const e of out.answer.events) {
				this.seq = Math.max(this.seq, e.seq);
				if (e.kind === "metastore") {
					this.tellUnreadable(e);
					schema = true;
				} else moved = this.apply(e, told) || moved;
			}
			if (out.answer.gap || schema) {
				// Older changes were dropped, or the rules changed: only a full check is true.
				await this.check();
				return;
			}
			if (moved) this.changed();
			if (out.answer.events.length < FEED_PAGE) return;
		}
	}

	/** metastore.yaml edited by hand so that it cannot be read: told at once,
	 * as the engine refuses writes until it is fixed. (Any metastore event is
	 * followed by a full check: the rules may have changed for every row.) */
	private tellUnreadable(e: FeedEvent): void {
		const unread = (e.violations ?? []).find((v) => v.path === e.path && v.violations.some((x) => x.code === "unreadable"));
		if (unread && e.path && e.source === "external") this.tell(e.path, { table: "", path: e.path, violations: unread.violations });
	}

	/** One event: a hand edit that breaks rules sets the row's problems (and is
	 * told once per note per read); any other change to a row clears them: the
	 * engine refuses writes that break rules, and a hand edit without
	 * violations mended it. */
	private apply(e: FeedEvent, told: Set<string>): boolean {
		if (!e.path || e.kind === "tool_call") return false;
		if (e.values) this.values.set(e.path, e.values);
		const mine = (e.violations ?? []).filter((v) => v.path === e.path);
		const had = this.rows.delete(e.path) || (e.old_path !== undefined && this.rows.delete(e.old_path));
		if (e.kind === "delete") return had;
		if (mine.length === 0) return had;
		const problem = this.problem(e.table ?? "", { path: e.path, violations: mine.flatMap((m) => m.violations) });
		this.rows.set(e.path, problem);
		if (e.source === "external" && !told.has(e.path)) {
			told.add(e.path);
			this.tell(e.path, problem);
		}
		return true;
	}
}

/** The ways out a hand edit's Notice offers, where the plugin has them. */
export interface WaysOut {
	/** Opens the row's form, each rule it breaks under its field. */
	editRow?: (path: string, broken: Problem["violations"]) => void;
	/** Puts the row back as it was before the edit (a preview, then a journaled write). */
	putBack?: (path: string) => void;
}

/** The Notice for a hand edit that broke a rule, with its ways out: Edit
 * row… and Put back. */
export function tellNotice(path: string, p: Problem, ways: WaysOut = {}): void {
	const first = p.violations[0];
	// A file that cannot be read says so itself ("… cannot be read: …").
	if (first?.code === "unreadable" && p.violations.length === 1) return void new Notice(`Datanotes: ${first.message}`, 15000);
	const more = p.violations.length > 1 ? ` (and ${p.violations.length - 1} more)` : "";
	const buttons: NoticeButton[] = [];
	const { editRow, putBack } = ways;
	if (editRow) buttons.push({ text: "Edit row…", act: () => editRow(path, p.violations) });
	if (putBack) buttons.push({ text: "Put back", act: () => putBack(path) });
	noticeWithButtons(`Datanotes: your edit of ${noteTitle(path)} breaks ${first ? pathsAsTitles(ruleText(first, true, true)) : "a rule"}${more}`, buttons, 10000);
}

/** The status bar's words when the rules could not be checked. */
export const NOT_CHECKED = "Rules not checked";

/** The status bar's words for a count. */
export function statusText(count: number): string {
	if (count === 0) return "";
	return count === 1 ? "1 row breaks a rule" : `${count} rows break a rule`;
}

/** Every row that breaks a rule, grouped by table, with a link to each note. */
export class ProblemsView extends ItemView {
	private unsubscribe: (() => void) | null = null;

	constructor(
		leaf: WorkspaceLeaf,
		private readonly problems: Problems,
		private readonly openNote: (path: string) => void,
		/** Opens the row's form, where each rule it breaks shows under its field. */
		private readonly editRow?: (path: string, broken: Problem["violations"]) => void,
	) {
		super(leaf);
		this.register(fullTextTitles(this.contentEl));
	}

	getViewType(): string {
		return VIEW_TYPE_PROBLEMS;
	}

	getDisplayText(): string {
		return "Datanotes problems";
	}

	getIcon(): string {
		return "alert-triangle";
	}

	async onOpen(): Promise<void> {
		this.unsubscribe = this.problems.onChange(() => this.draw());
		this.draw();
	}

	async onClose(): Promise<void> {
		this.unsubscribe?.();
		this.unsubscribe = null;
	}

	draw(): void {
		const el = this.contentEl;
		el.empty();
		el.addClass("datanotes-problems");
		const head = el.createDiv({ cls: "datanotes-history-head" });
		const list = this.problems.list();
		// Not checked is not "no problems": the error says why and what to do.
		const error = this.problems.error;
		head.createEl("h4", { text: error !== null ? NOT_CHECKED : list.length === 0 ? "No problems" : statusText(list.length) });
		const again = head.createEl("button", { text: "Check again", cls: "datanotes-check-again" });
		again.addEventListener("click", () => {
			again.disabled = true;
			void this.problems.check().finally(() => (again.disabled = false));
		});
		if (error !== null) {
			const box = el.createDiv({ cls: "datanotes-error datanotes-refusal" });
			box.createEl("p", { text: error });
			if (this.problems.errorDetails !== null) {
				const details = box.createEl("details");
				details.createEl("summary", { text: "Details" });
				details.createEl("pre", { text: this.problems.errorDetails, cls: "datanotes-details" });
			}
		}
		this.drawStoreProblems(el);
		if (list.length === 0) {
			if (error !== null) return;
			el.createEl("p", { text: "Every row keeps the rules of its table.", cls: "datanotes-muted" });
			return;
		}
		let table: string | null = null;
		let group: HTMLElement = el;
		for (const p of list) {
			if (p.table !== table) {
				table = p.table;
				group = el.createDiv({ cls: "datanotes-problem-table" });
				group.createEl("h6", { text: table });
			}
			const item = group.createDiv({ cls: "datanotes-problem" });
			item.dataset.path = p.path;
			noteLink(item, p.path, this.openNote);
			const rules = item.createEl("ul", { cls: "datanotes-problem-rules" });
			// Notes the rule names (a unique value's other holder, say) by their titles.
			for (const v of p.violations) rules.createEl("li", { text: pathsAsTitles(ruleText(v)) });
			// A row that reads can be mended in its form; a conflict or an
			// unreadable note is mended otherwise (below, or in the note).
			const editRow = this.editRow;
			if (editRow && p.violations.some((v) => v.code !== "conflict" && v.code !== "unreadable")) {
				const edit = item.createEl("button", { text: "Edit row…", cls: "datanotes-problem-edit" });
				edit.addEventListener("click", () => editRow(p.path, p.violations));
			}
			const conflict = p.violations.find((v) => v.code === "conflict")?.value as ConflictValue | undefined;
			if (conflict) this.drawConflict(item, p.path, conflict);
			if (p.lastValues) {
				item.createDiv({ text: "Last readable values:", cls: "datanotes-history-meta" });
				const values = item.createEl("ul", { cls: "datanotes-diff-columns" });
				for (const [k, v] of Object.entries(p.lastValues)) values.createEl("li", { text: `${k}: ${shown(v)}` });
			}
		}
	}

	/** Records in the store that were not taken in: told in words, the
	 * engine's lines (which name files) behind Details. */
	private drawStoreProblems(el: HTMLElement): void {
		const lines = this.problems.storeProblems;
		if (lines.length === 0) return;
		const box = el.createDiv({ cls: "datanotes-problem datanotes-store-problems" });
		const n = lines.length;
		box.createEl("p", {
			text: `${n === 1 ? "One record" : `${n} records`} of Datanotes' history came from another device or program and ${n === 1 ? "was" : "were"} not taken in: ${n === 1 ? "it names" : "they name"} files Datanotes never writes or ${n === 1 ? "does" : "do"} not match the tables' history, so ${n === 1 ? "it" : "they"} may be damaged or forged. Nothing was written from ${n === 1 ? "it" : "them"}.`,
		});
		box.createEl("p", { text: "If you do not know where they came from, check what syncs this vault.", cls: "datanotes-muted" });
		const details = box.createEl("details");
		details.createEl("summary", { text: "Details" });
		details.createEl("pre", { text: lines.join("\n"), cls: "datanotes-details" });
	}

	/** Both sides of a conflict, the columns where they differ, and a button to
	 * keep each side (resolve_conflict, journaled: undo takes it back). */
	private drawConflict(item: HTMLElement, path: string, c: ConflictValue): void {
		const git = c.ours !== undefined;
		const [first, second] = git ? ["ours", "theirs"] : ["original", "copy"];
		const diffs = item.createEl("ul", { cls: "datanotes-diff-columns" });
		for (const [col, d] of Object.entries(c.differences)) {
			diffs.createEl("li", { text: `${col}: ${first} ${shown(d.before)}, ${second} ${shown(d.after)}` });
		}
		if (Object.keys(c.differences).length === 0) diffs.createEl("li", { text: "The front matter is the same on both sides: the bodies may differ." });
		const buttons = item.createDiv({ cls: "datanotes-conflict-keep" });
		for (const keep of [first, second]) {
			const b = buttons.createEl("button", { text: keep === "copy" && c.tool ? `Keep ${c.tool}'s copy` : `Keep ${keep}` });
			b.dataset.keep = keep;
			b.addEventListener("click", () => {
				b.disabled = true;
				void this.problems.resolve(path, keep).then((refused) => {
					b.disabled = false;
					if (refused) new Notice(`Datanotes: ${refused}`, 10000);
				});
			});
		}
	}
}
