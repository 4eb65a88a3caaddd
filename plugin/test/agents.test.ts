// Connecting an agent from Obsidian (issue 13, point 3): the MCP configuration,
// the owner's token (copy, regenerate) and named tokens (add, list, revoke) kept
// as `datanotes token` keeps them, and the loopback door accepting them.

import { execFileSync } from "node:child_process";
import * as crypto from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as mocks from "obsidian-test-mocks/obsidian";
import { afterEach, expect, test, vi } from "vitest";
import { addToken, credentialOf, namedTokens, nameProblem, revokeToken, stdioConfig, type TokenDeps } from "../src/agents";
import { TokenShownModal } from "../src/agent-settings";
import type { StoreWrite } from "../src/types";
import { keepModalsOpen } from "./engine";
import { loadFilms, post } from "./plugin-harness";
const nodeRequire = createRequire(import.meta.url);
const BIN = "target/debug/datanotes";
const sha256 = (t: string) => crypto.createHash("sha256").update(t).digest("hex");

/** Token operations on a store folder on disk, as the binary keeps it. */
function onDisk(store: string): TokenDeps {
	return {
		fs: {
			readStore: (rel: string) => Promise.resolve(existsSync(join(store, rel)) ? readFileSync(join(store, rel), "utf8") : null),
			writeStore: (w: StoreWrite) => Promise.resolve(writeFileSync(join(store, w.path), w.text)),
		},
		sha256,
		newToken: () => crypto.randomBytes(32).toString("hex"),
		ownerOnly: () => Promise.resolve(),
		now: () => Date.UTC(2026, 11, 4, 9),
	};
}

test("the MCP configuration and the token rules", () => {
	expect(JSON.parse(stdioConfig("/home/ann/Films"))).toEqual({ mcpServers: { datanotes: { command: "datanotes", args: ["mcp", "--vault", "/home/ann/Films"] } } });
	expect(nameProblem("claude-desktop")).toBeNull();
	expect(nameProblem("a b")).toMatch(/is not a token name/);
	expect(nameProblem("x".repeat(65))).toMatch(/is not a token name/);
	expect(nameProblem("Owner")).toMatch(/names the owner's token/);
	const named = [{ name: "ci", sha256: sha256("secret"), created_at: "" }];
	expect(credentialOf("owner-token", "owner-token", named, sha256)).toBe("owner");
	expect(credentialOf("secret", "owner-token", named, sha256)).toBe("ci");
	expect(credentialOf("wrong", "owner-token", named, sha256)).toBeNull();
	expect(credentialOf("", "", named, sha256)).toBeNull();
});

test.skipIf(!existsSync(BIN))("tokens made here are the binary's, and the binary's are read here", async () => {
	const vault = mkdtempSync(join(tmpdir(), "datanotes-tokens-"));
	try {
		execFileSync(BIN, ["init", "--vault", vault]);
		const store = join(vault, ".datanotes");
		const d = onDisk(store);
		const mine = await addToken(d, "from-obsidian");
		expect(mine).toMatch(/^[0-9a-f]{64}$/);
		const listed = JSON.parse(execFileSync(BIN, ["token", "list", "--vault", vault], { encoding: "utf8" })) as { tokens: { name: string }[] };
		expect(listed.tokens.map((t) => t.name)).toEqual(["from-obsidian"]);
		const theirs = execFileSync(BIN, ["token", "add", "--vault", vault, "from-cli"], { encoding: "utf8" }).trim();
		const token = /[0-9a-f]{64}/.exec(theirs)?.[0] ?? "";
		const named = await namedTokens(d);
		expect(named.map((t) => t.name)).toEqual(["from-obsidian", "from-cli"]);
		expect(credentialOf(token, "x", named, sha256)).toBe("from-cli");
		expect(credentialOf(mine, "x", named, sha256)).toBe("from-obsidian");
		await expect(addToken(d, "from-cli")).rejects.toThrow(/exists already/);
		await revokeToken(d, "from-cli");
		const after = JSON.parse(execFileSync(BIN, ["token", "list", "--vault", vault], { encoding: "utf8" })) as { tokens: { name: string }[] };
		expect(after.tokens.map((t) => t.name)).toEqual(["from-obsidian"]);
		// A tokens.json that cannot be read is an error, and is not overwritten.
		mkdirSync(store, { recursive: true });
		writeFileSync(join(store, "tokens.json"), "{not json");
		await expect(addToken(d, "another")).rejects.toThrow(/tokens\.json cannot be read/);
		expect(readFileSync(join(store, "tokens.json"), "utf8")).toBe("{not json");
	} finally {
		rmSync(vault, { recursive: true, force: true });
	}
});

let unload: (() => void) | null = null;
afterEach(() => {
	unload?.();
	unload = null;
	delete (window as Window & { require?: unknown }).require;
	vi.restoreAllMocks();
});

test("the settings add, list and revoke named tokens, regenerate the owner's, and the door takes them at once", async () => {
	keepModalsOpen();
	(window as Window & { require?: (id: string) => unknown }).require = (id: string) => {
		if (id === "fs") throw new Error("no fs in this test");
		return nodeRequire(id);
	};
	const { app, plugin, unload: done } = await loadFilms();
	unload = done;
	const adapter = app.vault.adapter;
	const lock = JSON.parse(await adapter.read(".datanotes/lock")) as { url: string };
	const route = `${lock.url}/datanotes/operations/update_row/`;

	const tab = mocks.Plugin.fromOriginalType2__(plugin).settingTabs__[0];
	tab.display();
	const el = tab.containerEl;
	const rowOf = (name: string) => {
		const found = Array.from(el.querySelectorAll<HTMLElement>("div")).find((d) => d.textContent === name)?.parentElement?.parentElement;
		if (!found) throw new Error(`no setting ${name}`);
		return found;
	};
	const buttons = (row: HTMLElement) => Array.from(row.querySelectorAll("button"));
	expect(rowOf("HTTP").textContent).toContain(`Now: ${lock.url}`);

	// Add a named token: shown once in a modal; the door takes it, and the write is journaled under its name.
	const named = rowOf("Named tokens");
	(named.querySelector("input") as HTMLInputElement).value = "claude-desktop";
	const shown = vi.spyOn(TokenShownModal.prototype, "onOpen");
	buttons(named).find((b) => b.textContent === "Add")?.click();
	await vi.waitFor(() => expect(shown).toHaveBeenCalled());
	const modal = shown.mock.contexts[0] as TokenShownModal;
	const token = modal.contentEl.querySelector(".datanotes-token")?.textContent ?? "";
	expect(token).toMatch(/^[0-9a-f]{64}$/);
	const stored = JSON.parse(await adapter.read(".datanotes/tokens.json")) as { format: number; tokens: { name: string; sha256: string }[] };
	expect(stored).toMatchObject({ format: 1, tokens: [{ name: "claude-desktop", sha256: sha256(token) }] });
	expect(JSON.stringify(stored)).not.toContain(token);
	await vi.waitFor(() => expect(named.textContent).toContain("claude-desktop · "));
	const charade = { table: "film", path: "datanotes/main/public/film/Charade.md", set: { rating: 4 } };
	const written = await post(route, token, charade);
	expect(written.status, written.text).toBe(200);
	const list = await plugin.door.call("list_migrations", { limit: 1 });
	expect((list.answer as { migrations: { by: string }[] }).migrations[0].by).toBe("claude-desktop");

	// Revoke asks for a second click, then the door refuses the token at once.
	const revoke = buttons(named).find((b) => b.textContent === "Revoke") as HTMLButtonElement;
	revoke.click();
	expect(revoke.textContent).toBe("Click again to revoke claude-desktop");
	revoke.click();
	await vi.waitFor(async () => expect((JSON.parse(await adapter.read(".datanotes/tokens.json")) as { tokens: unknown[] }).tokens).toEqual([]));
	expect((await post(route, token, charade)).status).toBe(401);

	// Regenerate the owner's token: the old one stops working, the new one works.
	const old = (await adapter.read(".datanotes/token")).trim();
	expect((await post(route, old, { ...charade, set: { rating: 3 } })).status).toBe(200);
	const regenerate = buttons(rowOf("Owner's token")).find((b) => b.textContent === "Regenerate") as HTMLButtonElement;
	regenerate.click();
	regenerate.click();
	await vi.waitFor(async () => expect((await adapter.read(".datanotes/token")).trim()).not.toBe(old));
	const fresh = (await adapter.read(".datanotes/token")).trim();
	await vi.waitFor(async () => expect((await post(route, old, charade)).status).toBe(401));
	expect((await post(route, fresh, charade)).status).toBe(200);
});
