// "Who set each property" in the history panel's This note (issue 53, point
// 4): for each property of the row, its value and the change that last set
// it, in words: the journal's sentence and who wrote it for an engine write
// ("Changed rating of Charade · by claude-code (your token)"), "Edited by
// hand", or the row as its history began; with the device and when. From the
// engine's blame_row. Folded until opened, and asked for only then.

import { setIcon } from "obsidian";
import type { EngineDoor } from "./history-view";
import { drawRefusal, type NotesOf, operationWords, shown, versionWords } from "./display";
import { type DeviceNames, deviceWords } from "./device-name";
import { drawMeta, type MetaPart } from "./times";
import { whoWords } from "./who";
import type { Migration } from "./types";

/** One property's blame, as blame_row answers it. */
export interface PropertyBlame {
	column: string;
	value: unknown;
	version?: number;
	timestamp?: string;
	operation?: string;
	migration_id?: string;
	device?: string;
	source: "write" | "hand_edit" | "history_began" | "before_history";
	by?: string;
}

/** What the section knows that names a change in words. */
export interface BlameContext {
	/** The table's journal entries. */
	migrations: Migration[];
	notesOf: NotesOf;
	devices: DeviceNames;
	now: number;
}

/** The change that set a property, in words: its version, what it was, who, the device, when. */
export function blameWords(b: PropertyBlame, ctx: BlameContext): MetaPart[] {
	if (b.source === "before_history") return ["Set before its table kept a history"];
	const entry = ctx.migrations.find((m) => m.migration_id === b.migration_id);
	const what = b.source === "write" ? versionWords(b.operation ?? "", entry && operationWords(entry, ctx.migrations, ctx.notesOf)) : versionWords(b.operation ?? "");
	const on = b.device ? `on ${deviceWords(b.device, ctx.devices)}` : "";
	return [`v${b.version ?? 0}`, what, whoWords(b.by), on, { time: b.timestamp }];
}

/** The folded list of who set each property of the row; it stays open across redraws. */
export class WhoSet {
	open = false;

	constructor(private readonly door: EngineDoor) {}

	/** Draws the head into `el`, and, open, the row's properties under it. */
	async draw(el: HTMLElement, path: string, ctx: () => BlameContext): Promise<void> {
		el.empty();
		el.addClass("datanotes-blame");
		const head = el.createDiv({ cls: "datanotes-similar-head datanotes-blame-head" });
		head.tabIndex = 0;
		head.setAttribute("role", "button");
		head.setAttribute("aria-expanded", String(this.open));
		setIcon(head.createSpan({ cls: "datanotes-similar-icon" }), this.open ? "chevron-down" : "chevron-right");
		head.createSpan({ text: "Who set each property" });
		const toggle = () => {
			this.open = !this.open;
			void this.draw(el, path, ctx);
		};
		head.addEventListener("click", toggle);
		head.addEventListener("keydown", (e) => {
			if (e.key !== "Enter" && e.key !== " ") return;
			e.preventDefault();
			toggle();
		});
		if (!this.open) return;
		const out = await this.door.call("blame_row", { path });
		if (out.status !== "ok") {
			drawRefusal(el, out);
			return;
		}
		const list = el.createEl("ul", { cls: "datanotes-blame-list" });
		const known = ctx();
		for (const b of (out.answer as { columns: PropertyBlame[] }).columns) {
			const li = list.createEl("li", { cls: `datanotes-blame-property is-${b.source.replace("_", "-")}` });
			const line = li.createDiv();
			line.createSpan({ text: `${b.column}: `, cls: "datanotes-diff-column" });
			line.createSpan({ text: shown(b.value) });
			drawMeta(li, blameWords(b, known), known.now);
		}
	}
}
