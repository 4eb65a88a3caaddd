// The settings rows that connect an agent (desktop): the MCP configuration to
// paste into a client, the loopback HTTP address, the owner's token (copy,
// regenerate) and named tokens (add, list, revoke), as `datanotes token` keeps them.

import { type App, Modal, Notice, type Setting } from "obsidian";
import { addToken, namedTokens, ownerTokenOf, regenerateOwner, revokeToken, stdioConfig, type TokenDeps } from "./agents";
import type { Row } from "./settings";

/** What the rows need of the plugin. */
export interface AgentContext {
	app: App;
	/** The vault's folder on disk. */
	vaultPath(): string | null;
	/** The loopback door's URL while it is open. */
	doorUrl(): string | null;
	tokens: TokenDeps;
	/** After the owner's token changed: the door answers with the new one. */
	tokenChanged(): Promise<void>;
	copy(text: string): Promise<void>;
}

function fail(e: unknown): void {
	new Notice(`Datanotes: ${e instanceof Error ? e.message : String(e)}`, 10000);
}

/** A new token, shown this once, with a button to copy it. */
export class TokenShownModal extends Modal {
	constructor(
		app: App,
		private readonly name: string,
		private readonly token: string,
		private readonly copy: (t: string) => Promise<void>,
	) {
		super(app);
	}

	onOpen(): void {
		this.setTitle(`Token ${this.name}`);
		this.contentEl.createEl("p", { text: "Give it to the agent or program now: Datanotes keeps only its hash and cannot show it again." });
		this.contentEl.createEl("code", { text: this.token, cls: "datanotes-token" });
		const button = this.contentEl.createDiv({ cls: "modal-button-container" }).createEl("button", { text: "Copy", cls: "mod-cta" });
		button.addEventListener("click", () => void this.copy(this.token).then(() => new Notice("Datanotes: token copied."), fail));
	}

	onClose(): void {
		this.contentEl.empty();
	}
}

/** A plain button (its click is the DOM's, in Obsidian and in the tests alike). */
function button(parent: HTMLElement, text: string, act: () => void): HTMLButtonElement {
	const b = parent.createEl("button", { text });
	b.addEventListener("click", act);
	return b;
}

/** A button that asks for a second click before it acts. */
function confirmButton(parent: HTMLElement, text: string, again: string, act: () => Promise<void>): HTMLButtonElement {
	const b = parent.createEl("button", { text });
	let armed = false;
	b.addEventListener("click", () => {
		if (!armed) {
			armed = true;
			b.setText(again);
			b.addClass("mod-warning");
			return;
		}
		armed = false;
		b.setText(text);
		b.removeClass("mod-warning");
		act().catch(fail);
	});
	return b;
}

export function agentRows(ctx: AgentContext): Row[] {
	const copy = (what: string, text: string) =>
		ctx.copy(text).then(() => new Notice(`Datanotes: ${what} copied.`), fail);
	return [
		{
			name: "MCP client configuration",
			desc: "Paste it into your MCP client's settings (Claude Desktop: claude_desktop_config.json). The client starts datanotes mcp (the binary must be on the PATH), which sends its calls to this engine while Obsidian runs, and opens the vault itself when Obsidian is closed.",
			render: (s: Setting) => {
				button(s.controlEl, "Copy", () => {
					const vault = ctx.vaultPath();
					if (!vault) return fail(new Error("this vault has no folder on disk"));
					void copy("MCP configuration", stdioConfig(vault));
				});
			},
		},
		{
			name: "HTTP",
			desc: "While Obsidian runs, the engine answers POST <address>/datanotes/operations/<operation>/ on a loopback port (it changes at each start; .datanotes/lock names it), with the header Authorization: Bearer <token>.",
			render: (s: Setting) => {
				const url = ctx.doorUrl();
				s.descEl.createDiv({ text: url ? `Now: ${url}` : "Not open now (the setting above is off, or another engine holds the vault).", cls: "datanotes-muted" });
				button(s.controlEl, "Copy", () => {
					if (!url) return fail(new Error("the loopback door is not open"));
					void ownerTokenOf(ctx.tokens).then((t) => copy("address and header", `${url}\nAuthorization: Bearer ${t}`), fail);
				});
			},
		},
		{
			name: "Owner's token",
			desc: "Full access, kept in .datanotes/token (readable by you alone, never committed). Regenerate it when it may have leaked: every client holding the old one must be given the new one.",
			render: (s: Setting) => {
				button(s.controlEl, "Copy", () => void ownerTokenOf(ctx.tokens).then((t) => copy("owner's token", t), fail));
				confirmButton(s.controlEl, "Regenerate", "Click again to regenerate", async () => {
					await regenerateOwner(ctx.tokens);
					await ctx.tokenChanged();
					new Notice("Datanotes: the owner's token was regenerated.");
				});
			},
		},
		{
			name: "Named tokens",
			desc: "One per agent or program, so that each write is journaled with its name and one can be revoked alone. Kept as hashes in .datanotes/tokens.json; datanotes serve and this engine accept them.",
			render: (s: Setting) => {
				const list = s.descEl.createDiv({ cls: "datanotes-tokens" });
				const draw = async () => {
					list.empty();
					const tokens = await namedTokens(ctx.tokens);
					if (tokens.length === 0) list.createDiv({ text: "None yet.", cls: "datanotes-muted" });
					for (const t of tokens) {
						const row = list.createDiv({ cls: "datanotes-token-row" });
						row.createSpan({ text: `${t.name} · ${t.created_at.slice(0, 10)} ` });
						confirmButton(row, "Revoke", `Click again to revoke ${t.name}`, async () => {
							await revokeToken(ctx.tokens, t.name);
							new Notice(`Datanotes: token ${t.name} revoked.`);
							await draw();
						});
					}
				};
				draw().catch((e: unknown) => list.setText(e instanceof Error ? e.message : String(e)));
				const input = s.controlEl.createEl("input", { type: "text", attr: { placeholder: "Name, such as claude-desktop" } });
				button(s.controlEl, "Add", () => {
					const name = input.value.trim();
					addToken(ctx.tokens, name).then(async (token) => {
						input.value = "";
						new TokenShownModal(ctx.app, name, token, (t) => ctx.copy(t)).open();
						await draw();
					}, fail);
				});
			},
		},
	];
}
