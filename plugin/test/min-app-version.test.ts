// Issue 53, point 6: manifest.json's minAppVersion is the newest Obsidian API
// the plugin calls, found from the @since tags of the obsidian package's types
// (every reference of plugin/src that resolves to them, by the TypeScript
// checker); what needs a newer Obsidian is asked for before it runs. Bases
// (1.9) is such a thing: below it, "Open table as a base…" is hidden.

import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import ts from "typescript";
import { requireApiVersion } from "obsidian";
import { afterEach, describe, expect, test, vi } from "vitest";
import { BASES_API } from "../src/bases";
import { registerCommands } from "../src/commands";

vi.mock("obsidian", async (original) => ({ ...(await original<object>()), requireApiVersion: vi.fn(() => true) }));

afterEach(() => vi.mocked(requireApiVersion).mockReset().mockReturnValue(true));

const manifest = JSON.parse(readFileSync("manifest.json", "utf8")) as { version: string; minAppVersion: string };
const versions = JSON.parse(readFileSync("versions.json", "utf8")) as Record<string, string>;

function compare(a: string, b: string): number {
	const x = a.split(".").map(Number);
	const y = b.split(".").map(Number);
	for (let i = 0; i < 3; i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
	return 0;
}

/** Each Obsidian API plugin/src refers to as a value (a call, a property, a
 * class), with the version its @since tag gives. Types alone are left out:
 * they are gone at run time (a method Obsidian calls only when it has it, such
 * as getSettingDefinitions, is typed with a newer type). */
function apisUsed(): { name: string; since: string; where: string }[] {
	const config = ts.readConfigFile("tsconfig.json", (p) => ts.sys.readFile(p));
	const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, resolve("."));
	const program = ts.createProgram(
		parsed.fileNames.filter((f) => f.includes("/plugin/src/")),
		parsed.options,
	);
	const checker = program.getTypeChecker();
	const found: { name: string; since: string; where: string }[] = [];
	for (const sf of program.getSourceFiles()) {
		if (!sf.fileName.includes("/plugin/src/")) continue;
		const visit = (node: ts.Node): void => {
			if (ts.isTypeNode(node) || ts.isImportDeclaration(node)) return;
			if (ts.isIdentifier(node)) {
				let symbol = checker.getSymbolAtLocation(node);
				if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
				for (const d of symbol?.declarations ?? []) {
					if (!d.getSourceFile().fileName.endsWith("obsidian/obsidian.d.ts")) continue;
					const tag = ts.getJSDocTags(d).find((t) => t.tagName.text === "since");
					const since = typeof tag?.comment === "string" ? tag.comment.trim() : null;
					if (since) found.push({ name: symbol?.name ?? "", since, where: `${sf.fileName.split("/").pop() ?? ""}:${sf.getLineAndCharacterOfPosition(node.getStart()).line + 1}` });
				}
			}
			ts.forEachChild(node, visit);
		};
		visit(sf);
	}
	return found;
}

describe("the Obsidian the plugin needs", () => {
	test("minAppVersion is the newest API plugin/src calls, and versions.json says so for this version", () => {
		const used = apisUsed();
		expect(used.length).toBeGreaterThan(0);
		const newest = used.reduce((a, b) => (compare(b.since, a.since) > 0 ? b : a));
		if (process.env.SHOW_APIS) console.log(used.filter((u) => compare(u.since, "1.7.0") >= 0));
		expect(manifest.minAppVersion, `the newest API called: ${newest.name} (${newest.where}), since ${newest.since}`).toBe(newest.since);
		expect(versions[manifest.version]).toBe(manifest.minAppVersion);
		// Bases is newer: asked for before use.
		expect(compare(BASES_API, manifest.minAppVersion)).toBeGreaterThan(0);
		expect(BASES_API).toBe("1.9.0");
	});

	test('below Bases, "Open table as a base…" is hidden; with it, offered', () => {
		const commands = new Map<string, { checkCallback?: (checking: boolean) => boolean | void }>();
		const plugin = { addCommand: (c: { id: string; checkCallback?: (checking: boolean) => boolean | void }) => commands.set(c.id, c) };
		const ctx = { app: {}, door: { call: vi.fn(), onChange: () => () => undefined }, operations: () => [], openHistory: async () => undefined, openProblems: async () => undefined, checkTables: async () => undefined, model: {} };
		registerCommands(plugin as never, ctx as never);
		const open = commands.get("open-base");
		vi.mocked(requireApiVersion).mockReturnValue(false);
		expect(open?.checkCallback?.(true)).toBe(false);
		expect(vi.mocked(requireApiVersion)).toHaveBeenCalledWith("1.9.0");
		expect(ctx.door.call).not.toHaveBeenCalled();
		vi.mocked(requireApiVersion).mockReturnValue(true);
		expect(open?.checkCallback?.(true)).toBe(true);
		expect(ctx.door.call).not.toHaveBeenCalled();
	});
});
