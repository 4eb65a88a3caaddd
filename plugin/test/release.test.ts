// Issue 14, point 5: `make release` (npm run release) gives exactly the files of
// a GitHub release of an Obsidian plugin, with the version manifest.json names,
// checked against package.json and versions.json.

import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, test } from "vitest";
import { release, versionProblems } from "../../scripts/release.mjs";

const root = resolve(__dirname, "../..");
const json = (f: string): Record<string, unknown> => JSON.parse(readFileSync(join(root, f), "utf8")) as Record<string, unknown>;

describe("release", () => {
	test("the repository's versions agree: manifest.json, package.json, versions.json", () => {
		const manifest = json("manifest.json");
		expect(versionProblems(manifest, json("package.json"), json("versions.json"))).toEqual([]);
		expect(json("versions.json")[manifest.version as string]).toBe(manifest.minAppVersion);
	});

	test("each disagreement is refused with what to change", () => {
		const manifest = { version: "0.2.0", minAppVersion: "1.7.2" };
		expect(versionProblems(manifest, { version: "0.2.0" }, { "0.2.0": "1.7.2" })).toEqual([]);
		expect(versionProblems({ ...manifest, version: "v0.2.0" }, { version: "v0.2.0" }, { "v0.2.0": "1.7.2" })[0]).toMatch(
			/is not x\.y\.z/,
		);
		expect(versionProblems(manifest, { version: "0.1.0" }, { "0.2.0": "1.7.2" })).toEqual([
			'package.json\'s version "0.1.0" is not manifest.json\'s "0.2.0": set both to the release\'s',
		]);
		expect(versionProblems(manifest, { version: "0.2.0" }, { "0.1.0": "1.5.0" })).toEqual([
			'versions.json has no entry for 0.2.0: add "0.2.0": "1.7.2"',
		]);
		expect(versionProblems(manifest, { version: "0.2.0" }, { "0.2.0": "1.5.0" })[0]).toMatch(/maps 0\.2\.0 to Obsidian 1\.5\.0/);
	});

	test.skipIf(!existsSync(join(root, "plugin/dist/main.js")))("makes exactly main.js, manifest.json and styles.css, byte for byte", async () => {
		const out = mkdtempSync(join(tmpdir(), "datanotes-release-"));
		try {
			const r = (await release(root, out)) as { version: string; files: Record<string, number> };
			expect(readdirSync(out).sort()).toEqual(["main.js", "manifest.json", "styles.css"]);
			expect(r.version).toBe(json("manifest.json").version);
			expect(readFileSync(join(out, "main.js"))).toEqual(readFileSync(join(root, "plugin/dist/main.js")));
			expect(readFileSync(join(out, "manifest.json"), "utf8")).toBe(readFileSync(join(root, "manifest.json"), "utf8"));
			expect(readFileSync(join(out, "styles.css"), "utf8")).toBe(readFileSync(join(root, "styles.css"), "utf8"));
			expect(r.files["main.js"]).toBeGreaterThan(0);
		} finally {
			rmSync(out, { recursive: true, force: true });
		}
	});
});
