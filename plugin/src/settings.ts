// The settings tab: the engine's settings (kept by the engine in
// .datanotes/settings.json, read and changed through configure_database), and
// the plugin's own (kept by Obsidian in data.json). One list of sections feeds
// both Obsidian 1.13's declarative settings (searchable) and display() for the
// versions before it.

import { type App, Notice, Platform, type Plugin, PluginSettingTab, Setting, type SettingDefinitionItem } from "obsidian";
import { type AgentContext, agentRows } from "./agent-settings";
import { type BridgeContext, bridgeRows } from "./bridge-settings";
import type { EngineDoor } from "./history-view";
import { refusalShort } from "./display";
import { defaultDeviceName, deviceName, keepDeviceName, MAX_NAME, thisMachine } from "./device-name";
import type { EngineSettings } from "./types";

/** The plugin's own settings. */
export interface PluginSettings {
	/** Let `datanotes call` and `datanotes mcp` reach this engine on a loopback port
	 * (desktop). Off, the port answers only the challenge by which they learn
	 * that this engine holds the vault, and refuses their calls (door.ts `shut`). */
	loopbackDoor: boolean;
	/** A Notice when a hand edit breaks a rule (problems.ts). */
	handEditNotices: boolean;
	/** Run `datanotes serve --bridge` beside the engine (desktop; bridge.ts). */
	serveAgents: boolean;
	/** The binary's path; empty: found on the PATH. */
	agentBinary: string;
	/** The bridge's port on 127.0.0.1. */
	agentPort: number;
	/** This device's name in the history (device-name.ts); empty: the platform and the computer's name. */
	deviceName: string;
}

export const DEFAULT_SETTINGS: PluginSettings = { loopbackDoor: true, handEditNotices: true, serveAgents: false, agentBinary: "", agentPort: 8765, deviceName: "" };

export interface SettingsContext {
	door: EngineDoor;
	settings: PluginSettings;
	save(): Promise<void>;
	/** On desktop: what connecting an agent needs (agent-settings.ts). */
	agents?: AgentContext;
	/** On desktop: the bridge the plugin runs (bridge-settings.ts). */
	bridge?: BridgeContext;
}

/** One row: its name and description, and the control it draws. */
export interface Row {
	name: string;
	desc: string;
	render(setting: Setting): void;
}

/** A heading and its rows. */
interface Section {
	heading: string;
	rows: Row[];
}

export class DatanotesSettingTab extends PluginSettingTab {
	/** The engine's settings, read once each time the tab is shown. */
	private reading: Promise<EngineSettings | string> | null = null;

	constructor(
		app: App,
		plugin: Plugin,
		private readonly ctx: SettingsContext,
	) {
		super(app, plugin);
	}

	/** The engine's settings, or why they cannot be read. */
	private engineSettings(): Promise<EngineSettings | string> {
		this.reading ??= this.ctx.door.call("configure_database", {}).then(
			(out) => (out.status === "ok" ? out.answer.settings : refusalShort(out)),
			(e: unknown) => `The engine is not running: ${e instanceof Error ? e.message : String(e)}`,
		);
		return this.reading;
	}

	/** Changes one engine setting; a refusal shows in a Notice. */
	private async configure(args: Partial<EngineSettings>): Promise<void> {
		try {
			const out = await this.ctx.door.call("configure_database", args);
			if (out.status !== "ok") new Notice(`Datanotes: ${refusalShort(out)}`, 10000);
		} catch (e) {
			new Notice(`Datanotes: ${e instanceof Error ? e.message : String(e)}`, 10000);
		}
	}

	/** A toggle for one of the engine's boolean settings, set once they are read. */
	private engineToggle(key: "autoRecompute" | "repairLinksOnHandMove" | "bases"): (setting: Setting) => void {
		return (setting) => {
			setting.addToggle((t) => {
				t.setDisabled(true);
				void this.engineSettings().then((s) => {
					if (typeof s === "string") return void setting.setDesc(s);
					t.setValue(s[key]).setDisabled(false);
					t.onChange((v) => void this.configure({ [key]: v }));
				});
			});
		};
	}

	/** A toggle for one of the plugin's own settings, saved in data.json. */
	private pluginToggle(key: "loopbackDoor" | "handEditNotices"): (setting: Setting) => void {
		return (setting) => {
			setting.addToggle((t) =>
				t.setValue(this.ctx.settings[key]).onChange((v) => {
					this.ctx.settings[key] = v;
					void this.ctx.save();
				}),
			);
		};
	}

	/** "Device name": saved, and written into the store for the other devices to show. */
	private deviceNameRow(): Row {
		const fallback = defaultDeviceName(thisMachine());
		return {
			name: "Device name",
			desc: `How this device is named in the history, here and on your other devices. Empty: ${fallback}.`,
			render: (setting) => {
				setting.addText((t) => {
					t.setPlaceholder(fallback).setValue(this.ctx.settings.deviceName);
					t.inputEl.maxLength = MAX_NAME;
					t.inputEl.setAttribute("aria-label", "Device name");
					t.inputEl.addEventListener("change", () => {
						this.ctx.settings.deviceName = t.inputEl.value.trim();
						void this.ctx.save();
						void keepDeviceName(this.ctx.door, deviceName(this.ctx.settings.deviceName)).then((why) => why && new Notice(`Datanotes: ${why}`, 10000));
					});
				});
				// The id the store's files carry, for whoever looks into them.
				const id = this.ctx.door.thisDevice?.();
				if (id === undefined) return;
				const details = setting.descEl.createEl("details", { cls: "datanotes-details" });
				details.createEl("summary", { text: "Details" });
				details.createDiv({ text: `Its id in the store's file names: ${id}` });
			},
		};
	}

	sections(): Section[] {
		const engine: Section = {
			heading: "Engine",
			rows: [
				{
					name: "Recompute generated columns",
					desc: "After hand edits, bring generated columns up to date (about 3 s later).",
					render: this.engineToggle("autoRecompute"),
				},
				{
					name: "Repair links after a hand move",
					desc: "When a note is renamed or moved outside Datanotes, rewrite the links to it (after 4 s of quiet, not while git works).",
					render: this.engineToggle("repairLinksOnHandMove"),
				},
				{
					name: "Keep Bases files",
					desc: "Keep an Obsidian Bases file (datanotes/bases/) for each table and view, rewritten with the schema until you edit it.",
					render: this.engineToggle("bases"),
				},
				{
					name: "Journal retention (days)",
					desc: "How long undo can reach back. Older entries are dropped when the engine starts.",
					render: (setting) => {
						setting.addText((t) => {
							t.inputEl.type = "number";
							t.inputEl.min = "1";
							t.setDisabled(true);
							void this.engineSettings().then((s) => {
								if (typeof s === "string") return void setting.setDesc(s);
								t.setValue(String(s.journalRetentionDays)).setDisabled(false);
							});
							t.inputEl.addEventListener("change", () => {
								const days = Number.parseInt(t.getValue(), 10);
								if (Number.isInteger(days) && days > 0) void this.configure({ journalRetentionDays: days });
								else new Notice("Datanotes: the retention is a whole number of days, 1 or more.");
							});
						});
					},
				},
			],
		};
		const notices: Section = {
			heading: "Notices",
			rows: [
				{
					name: "Tell me when a hand edit breaks a rule",
					desc: "A notice names the note and the rule, once per note; the status bar and the problems view show every row that breaks a rule either way.",
					render: this.pluginToggle("handEditNotices"),
				},
			],
		};
		const device: Section = { heading: "This device", rows: [this.deviceNameRow()] };
		if (!Platform.isDesktopApp) return [engine, device, notices];
		const agents: Section = {
			heading: "Agents on this computer",
			rows: [
				{
					name: "Let tools on this computer use the vault while Obsidian runs",
					desc: "The datanotes command and the agents it starts (datanotes call, datanotes mcp) read and write the vault through Obsidian, on this computer only, with the owner's token. Off: they refuse while Obsidian runs.",
					render: this.pluginToggle("loopbackDoor"),
				},
				...(this.ctx.agents ? agentRows(this.ctx.agents) : []),
			],
		};
		if (!this.ctx.bridge) return [engine, device, notices, agents];
		return [engine, device, notices, agents, { heading: "Agents over HTTP", rows: bridgeRows(this.ctx.bridge) }];
	}

	getSettingDefinitions(): SettingDefinitionItem[] {
		return this.sections().map((s) => ({
			type: "group",
			heading: s.heading,
			items: s.rows.map((r) => ({ name: r.name, desc: r.desc, render: (setting: Setting) => r.render(setting) })),
		}));
	}

	display(): void {
		const el = this.containerEl;
		el.empty();
		this.reading = null;
		for (const s of this.sections()) {
			new Setting(el).setName(s.heading).setHeading();
			for (const r of s.rows) r.render(new Setting(el).setName(r.name).setDesc(r.desc));
		}
	}

	hide(): void {
		this.reading = null;
		super.hide();
	}
}
