// Issue 16, point 5, in the plugin: symbolic links are never read or written
// through. nodeLinks on a real folder with real links; ObsidianFileSystem on the
// obsidian-test-mocks vault with the links it is told of, then the engine's
// write refused through it.

import * as nodeFs from "node:fs";
import { mkdtempSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { App as AppOriginal } from "obsidian";
import { App } from "obsidian-test-mocks/obsidian";
import { describe, expect, test } from "vitest";
import { loadEngine, openEngine } from "../src/engine";
import { ObsidianFileSystem } from "../src/fs";
import { Host } from "../src/host";
import { type Links, nodeLinks } from "../src/links";
import wasmBytes from "../wasm/datanotes_core_bg.wasm";
import { CHARADE, filmDiary } from "./engine";

const SECRET = "datanotes/main/public/film/Secret.md";

/** Links as a fixed set of vault paths. */
function fixedLinks(paths: string[]): Links {
	const set = new Set(paths);
	return {
		scan: () => Promise.resolve(new Set(set)),
		linkIn: (path) => {
			const parts = path.split("/");
			for (let i = 1; i <= parts.length; i++) {
				const rel = parts.slice(0, i).join("/");
				if (set.has(rel)) return Promise.resolve(rel);
			}
			return Promise.resolve(null);
		},
	};
}

describe("symbolic links", () => {
	test("nodeLinks finds file and folder links on a real disk, and no link where there is none", async () => {
		const root = mkdtempSync(join(tmpdir(), "datanotes-links-"));
		const vault = join(root, "vault");
		const outside = join(root, "outside");
		mkdirSync(join(vault, "Notes"), { recursive: true });
		mkdirSync(join(vault, ".datanotes"), { recursive: true });
		mkdirSync(outside);
		writeFileSync(join(outside, "secret.md"), "---\ntitle: Secret\n---\n");
		writeFileSync(join(vault, "Notes/a.md"), "a");
		symlinkSync(join(outside, "secret.md"), join(vault, "Notes/secret.md"));
		symlinkSync(outside, join(vault, "Outside"));
		symlinkSync(outside, join(vault, ".obsidian-link"));
		const links = nodeLinks(nodeFs, vault);
		expect([...(await links.scan())].sort()).toEqual(["Notes/secret.md", "Outside"]);
		expect(await links.linkIn("Outside/Leak.md")).toBe("Outside");
		expect(await links.linkIn("Notes/secret.md")).toBe("Notes/secret.md");
		expect(await links.linkIn("Notes/a.md")).toBeNull();
		expect(await links.linkIn("New/folder/b.md")).toBeNull();
		expect(await links.linkIn(".datanotes/journal/x.json")).toBeNull();
		nodeFs.rmSync(root, { recursive: true });
	});

	test("a linked note is left out at open, reads as absent, and nothing is written through a link", async () => {
		const files = Object.fromEntries(filmDiary);
		files[SECRET] = "---\ntable: main.public.film\ntitle: Secret\nyear: 1999\n---\nthe host's secret\n";
		files["Outside/Leak.md"] = "---\ntitle: Leak\n---\n";
		const app = App.createConfigured__({ files });
		const fs = new ObsidianFileSystem(app.asOriginalType__() as AppOriginal, undefined, fixedLinks([SECRET, "Outside"]));
		const notes = await fs.readVault();
		const paths = notes.map((n) => n.path);
		expect(paths).toContain(CHARADE);
		expect(paths).not.toContain(SECRET);
		expect(paths).not.toContain("Outside/Leak.md");
		expect(fs.warnings).toEqual([
			"Outside is a symbolic link: left out; the engine reads and writes only the vault's own files and folders, never through links",
			`${SECRET} is a symbolic link: left out; the engine reads and writes only the vault's own files and folders, never through links`,
		]);
		expect(await fs.read(SECRET)).toBeNull();
		await expect(fs.write("Outside/New.md", "x")).rejects.toThrow("Outside/New.md goes through a symbolic link (it is under Outside)");
		await expect(fs.rename(CHARADE, "Outside/Charade.md")).rejects.toThrow("goes through a symbolic link");

		// Through the engine: a table whose folder is a link gets no row.
		await loadEngine(wasmBytes);
		const host = new Host(openEngine(notes, await fs.listStore(), Date.UTC(2026, 11, 4)), fs, { actor: "obsidian" });
		await host.open();
		const created = await host.call("create_table", { table: "clip", folder: "Outside", columns: { name: { type: "text" } } });
		expect(created.status, JSON.stringify(created.answer)).toBe("ok");
		const inserted = await host.call("insert_row", { table: "clip", values: { name: "Leak two" } });
		expect(inserted.status).not.toBe("ok");
		expect(JSON.stringify(inserted.answer)).toContain("goes through a symbolic link (it is under Outside)");
		expect(app.vault.getAbstractFileByPath("Outside/Leak two.md")).toBeNull();
	});

	test("a store that is a link is refused before anything is written there", async () => {
		const app = App.createConfigured__({ files: Object.fromEntries(filmDiary) });
		const fs = new ObsidianFileSystem(app.asOriginalType__() as AppOriginal, undefined, fixedLinks([".datanotes"]));
		await expect(fs.listStore()).rejects.toThrow(".datanotes goes through a symbolic link");
		await expect(fs.writeStore({ path: "journal/x.json", text: "{}", append: false, delete: false })).rejects.toThrow(
			"symbolic link",
		);
	});
});
