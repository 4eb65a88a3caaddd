// The settings tab: the engine's settings (kept by the engine in
// .datanotes/settings.json, read and changed through configure_database), and
// the plugin's own (kept by Obsidian in data.json).

import { type App, Notice, Platform, type Plugin, PluginSettingTab, Setting } from "obsidian";
import type { EngineDoor } from "./history-view";
import { refusalText } from "./host";

/** The plugin's own settings. */
export interface PluginSettings {
	/** Start the companion binary (`datanotes serve`) beside Obsidian on desktop. */
	startCompanion: boolean;
}

export const DEFAULT_SETTINGS: PluginSettings = { startCompanion: false };

/** The engine's settings as configure_database answers them. */
interface EngineSettings {
	autoRecompute: boolean;
	repairLinksOnHandMove: boolean;
	journalRetentionDays: number;
}

export interface SettingsContext {
	door: EngineDoor;
	settings: PluginSettings;
	save(): Promise<void>;
}

export class DatanotesSettingTab extends PluginSettingTab {
	constructor(
		app: App,
		plugin: Plugin,
		private readonly ctx: SettingsContext,
	) {
		super(app, plugin);
	}

	/** Changes one engine setting; a refusal shows in a Notice. */
	private async configure(args: Partial<EngineSettings>): Promise<void> {
		try {
			const out = await this.ctx.door.call("configure_database", args);
			if (out.status !== "done") new Notice(refusalText(out), 10000);
		} catch (e) {
			new Notice(`Datanotes: ${e instanceof Error ? e.message : String(e)}`, 10000);
		}
	}

	display(): void {
		const el = this.containerEl;
		el.empty();
		const engine = el.createDiv();
		engine.createEl("p", { text: "Reading the engine's settings…", cls: "datanotes-muted" });
		this.ctx.door.call("configure_database", {}).then(
			(out) => {
				engine.empty();
				if (out.status !== "done") {
					engine.createEl("pre", { text: refusalText(out), cls: "datanotes-error" });
					return;
				}
				this.engineSettings(engine, out.answer.settings as EngineSettings);
			},
			(e) => {
				engine.empty();
				engine.createEl("p", { text: `The engine is not running: ${e instanceof Error ? e.message : String(e)}`, cls: "datanotes-error" });
			},
		);
		this.pluginSettings(el.createDiv());
	}

	private engineSettings(el: HTMLElement, s: EngineSettings): void {
		new Setting(el)
			.setName("Recompute generated columns")
			.setDesc("After hand edits, bring generated columns up to date (about 3 s later).")
			.addToggle((t) => t.setValue(s.autoRecompute).onChange((v) => this.configure({ autoRecompute: v })));
		new Setting(el)
			.setName("Repair links after a hand move")
			.setDesc("When a note is renamed or moved outside Datanotes, rewrite the links to it (after 4 s of quiet, not while git works).")
			.addToggle((t) =>
				t.setValue(s.repairLinksOnHandMove).onChange((v) => this.configure({ repairLinksOnHandMove: v })),
			);
		new Setting(el)
			.setName("Journal retention (days)")
			.setDesc("How long undo_migration can reach back. Older entries are dropped when the engine starts.")
			.addText((t) => {
				t.inputEl.type = "number";
				t.inputEl.min = "1";
				t.setValue(String(s.journalRetentionDays));
				t.inputEl.addEventListener("change", () => {
					const days = Number.parseInt(t.getValue(), 10);
					if (Number.isInteger(days) && days > 0) void this.configure({ journalRetentionDays: days });
					else new Notice("Datanotes: the retention is a whole number of days, 1 or more.");
				});
			});
	}

	private pluginSettings(el: HTMLElement): void {
		if (!Platform.isDesktopApp) return;
		// `datanotes call` and `datanotes mcp` already reach this engine (door.ts).
		// TODO(plugin): spawn `datanotes serve` on desktop so that it serves the HTTP
		// API by forwarding to this engine; until then the option is shown, off and disabled.
		new Setting(el)
			.setName("Start the companion binary")
			.setDesc("Serve the HTTP API and MCP for agents from this vault while Obsidian runs (desktop only). Not available yet.")
			.addToggle((t) => {
				t.setValue(false).setDisabled(true);
				t.onChange(async (v) => {
					this.ctx.settings.startCompanion = v;
					await this.ctx.save();
				});
			});
	}
}
