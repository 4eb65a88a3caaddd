// The settings rows of the bridge the plugin runs (desktop): on or off, the
// binary, the port, and its state as it changes (running at URL, stopped, or
// failed with the last lines of its stderr).

import { Notice, type Setting } from "obsidian";
import { httpConfig } from "./agents";
import { type Bridge, type BridgeState, stateText } from "./bridge";
import type { PluginSettings, Row } from "./settings";

/** What the rows need of the plugin. */
export interface BridgeContext {
	bridge: Bridge;
	settings: PluginSettings;
	save(): Promise<void>;
	/** The binary found on the PATH, for the placeholder. */
	found(): string | null;
	/** The owner's token (for the configuration copied), and the clipboard. */
	ownerToken(): Promise<string>;
	copy(text: string): Promise<void>;
}

/** Starts the bridge again with the settings as they are now, when it is on. */
async function apply(ctx: BridgeContext): Promise<void> {
	await ctx.save();
	if (ctx.settings.serveAgents) await ctx.bridge.start();
	else await ctx.bridge.stop();
}

/** Draws the state into `el`, now and at each change while `el` is on the page;
 * a failure's "trying again in N s" counts down. */
export function showState(el: HTMLElement, bridge: Bridge): void {
	let ticking: number | null = null;
	const draw = (s: BridgeState) => {
		el.empty();
		el.createDiv({ text: stateText(s, Date.now()), cls: `datanotes-bridge-${s.kind}` });
		if (s.kind === "failed" && s.lines.length > 0) el.createEl("pre", { text: s.lines.join("\n"), cls: "datanotes-bridge-lines" });
	};
	const follow = (s: BridgeState) => {
		if (ticking !== null) window.clearInterval(ticking);
		ticking = null;
		draw(s);
		if (s.kind !== "failed" || s.retryAt === null) return;
		ticking = window.setInterval(() => {
			if (el.isConnected && bridge.state() === s) return void (el.firstElementChild as HTMLElement | null)?.setText(stateText(s, Date.now()));
			if (ticking !== null) window.clearInterval(ticking);
			ticking = null;
		}, 1000);
	};
	follow(bridge.state());
	const stop = bridge.onState((s) => {
		if (!el.isConnected) {
			if (ticking !== null) window.clearInterval(ticking);
			return void stop();
		}
		follow(s);
	});
}

/** The status bar item: hidden while the bridge is off, its state in a word
 * otherwise (the whole state on hover). Returns the function that unsubscribes. */
export function bridgeStatus(item: HTMLElement, bridge: Bridge): () => void {
	item.addClass("datanotes-bridge-status");
	const draw = (s: BridgeState) => {
		if (s.kind === "off") return void item.hide();
		item.setText(s.kind === "running" ? "Agents: HTTP" : s.kind === "starting" ? "Agents: starting" : "Agents: failed");
		item.setAttribute("aria-label", stateText(s, Date.now()));
		item.show();
	};
	draw(bridge.state());
	return bridge.onState(draw);
}

export function bridgeRows(ctx: BridgeContext): Row[] {
	const { settings } = ctx;
	return [
		{
			name: "Serve agents over HTTP",
			desc: "Run datanotes serve beside Obsidian: the whole HTTP API, its OpenAPI document, the change feed's long poll and MCP over HTTP at /mcp, every call made by this engine. It listens on 127.0.0.1 only, with the tokens above, and stops with Obsidian.",
			render: (s: Setting) => {
				s.addToggle((t) =>
					t.setValue(settings.serveAgents).onChange((v) => {
						settings.serveAgents = v;
						void apply(ctx);
					}),
				);
			},
		},
		{
			name: "Datanotes binary",
			desc: "The datanotes command of the same version as this plugin. Empty: the one on the PATH.",
			render: (s: Setting) => {
				s.addText((t) => {
					t.setPlaceholder(ctx.found() ?? "Not found on the PATH").setValue(settings.agentBinary);
					t.inputEl.addEventListener("change", () => {
						settings.agentBinary = t.inputEl.value.trim();
						void apply(ctx);
					});
				});
			},
		},
		{
			name: "Port",
			desc: "Where agents reach it: http://127.0.0.1:<port>.",
			render: (s: Setting) => {
				s.addText((t) => {
					t.inputEl.type = "number";
					t.setValue(String(settings.agentPort));
					t.inputEl.addEventListener("change", () => {
						const port = Number.parseInt(t.inputEl.value, 10);
						if (!Number.isInteger(port) || port < 1 || port > 65535) {
							t.setValue(String(settings.agentPort));
							return void new Notice("Datanotes: the port is a whole number from 1 to 65535.");
						}
						settings.agentPort = port;
						void apply(ctx);
					});
				});
			},
		},
		{
			name: "State",
			desc: "",
			render: (s: Setting) => showState(s.descEl, ctx.bridge),
		},
		{
			name: "MCP over HTTP configuration",
			desc: "For an MCP client that speaks streamable HTTP: the bridge's /mcp and the owner's token in a header (a named token from the section above works too). The bridge must be on.",
			render: (s: Setting) => {
				const b = s.controlEl.createEl("button", { text: "Copy" });
				b.addEventListener("click", () => {
					const st = ctx.bridge.state();
					const url = st.kind === "running" ? st.url : `http://127.0.0.1:${settings.agentPort}`;
					ctx.ownerToken()
						.then((t) => ctx.copy(httpConfig(url, t)))
						.then(
							() => new Notice(st.kind === "running" ? "Datanotes: MCP configuration copied." : "Datanotes: MCP configuration copied; turn on Serve agents over HTTP for it to answer."),
							(e: unknown) => new Notice(`Datanotes: ${e instanceof Error ? e.message : String(e)}`, 10000),
						);
				});
			},
		},
	];
}
