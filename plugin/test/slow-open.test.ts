// Issue 17, point 4 (in part): an open that takes more than a second says so,
// and a command given meanwhile waits with a Notice instead of seeming to hang.

import { Notice } from "obsidian-test-mocks/obsidian";
import { afterEach, expect, test, vi } from "vitest";
import { ObsidianFileSystem } from "../src/fs";
import { startFilms } from "./plugin-harness";

let unload: (() => void) | null = null;
afterEach(() => {
	unload?.();
	unload = null;
	vi.restoreAllMocks();
});

test("a slow open shows a Notice, and a call made meanwhile says it waits, both hidden once the vault is open", async () => {
	const list = ObsidianFileSystem.prototype.listVault;
	vi.spyOn(ObsidianFileSystem.prototype, "listVault").mockImplementation(async function (this: ObsidianFileSystem) {
		await new Promise((r) => setTimeout(r, 1300));
		return list.call(this);
	});
	const said = vi.spyOn(Notice.prototype, "constructor__");
	const hidden = vi.spyOn(Notice.prototype, "hide");
	const { plugin } = startFilms();
	unload = () => plugin.unload();
	const out = await plugin.door.call("describe_database", {});
	expect(out.status).toBe("ok");
	const texts = said.mock.calls.map((c) => String(c[0]));
	expect(texts).toContain("Datanotes: opening the vault…");
	// What waits, in words (not the operation it is).
	expect(texts).toContain("Datanotes: waiting until the vault is open…");
	expect(hidden.mock.instances.length).toBeGreaterThanOrEqual(2);

	// Once open, a call says nothing.
	said.mockClear();
	await plugin.door.call("describe_database", {});
	expect(said).not.toHaveBeenCalled();
});
