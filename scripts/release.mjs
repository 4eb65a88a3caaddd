// The files of a GitHub release of the Obsidian plugin, exactly those the
// community directory downloads: main.js, manifest.json and styles.css, in
// release/ (or the folder given). The version is manifest.json's; package.json
// must say the same, and versions.json must map it to manifest.json's
// minAppVersion. `make release` builds first (npm run build), then runs this.
//   node scripts/release.mjs [OUT]

import { copyFile, mkdir, readdir, readFile, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** What a release carries, from where (relative to the repository's root). */
export const FILES = [
	["plugin/dist/main.js", "main.js"],
	["manifest.json", "manifest.json"],
	["styles.css", "styles.css"],
];

/** Why these three files cannot make a release (an empty list: they can). */
export function versionProblems(manifest, pkg, versions) {
	const problems = [];
	const v = manifest?.version;
	if (typeof v !== "string" || !/^\d+\.\d+\.\d+$/.test(v)) {
		problems.push(`manifest.json's version ${JSON.stringify(v)} is not x.y.z (Obsidian compares releases by it; no "v" prefix)`);
	}
	if (pkg?.version !== v) {
		problems.push(`package.json's version ${JSON.stringify(pkg?.version)} is not manifest.json's ${JSON.stringify(v)}: set both to the release's`);
	}
	if (versions?.[v] === undefined) {
		problems.push(`versions.json has no entry for ${v}: add "${v}": "${manifest?.minAppVersion}"`);
	} else if (versions[v] !== manifest?.minAppVersion) {
		problems.push(
			`versions.json maps ${v} to Obsidian ${versions[v]}, but manifest.json's minAppVersion is ${manifest?.minAppVersion}: make them the same`,
		);
	}
	return problems;
}

/** Checks the versions, then copies the files into `out` (emptied first). */
export async function release(root, out) {
	const json = async (f) => JSON.parse(await readFile(join(root, f), "utf8"));
	const [manifest, pkg, versions] = await Promise.all([json("manifest.json"), json("package.json"), json("versions.json")]);
	const problems = versionProblems(manifest, pkg, versions);
	if (problems.length > 0) throw new Error(`no release:\n- ${problems.join("\n- ")}`);
	for (const [from] of FILES) {
		await stat(join(root, from)).catch(() => {
			throw new Error(`no release: ${from} is missing (npm run build makes it)`);
		});
	}
	await rm(out, { recursive: true, force: true });
	await mkdir(out, { recursive: true });
	for (const [from, to] of FILES) await copyFile(join(root, from), join(out, to));
	/** @type {Record<string, number>} */
	const sizes = {};
	for (const f of await readdir(out)) sizes[f] = (await stat(join(out, f))).size;
	return { version: manifest.version, minAppVersion: manifest.minAppVersion, out, files: sizes };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
	const root = join(fileURLToPath(import.meta.url), "../..");
	release(root, process.argv[2] ?? join(root, "release")).then(
		(r) => console.log(JSON.stringify(r, null, 2)),
		(e) => {
			console.error(e instanceof Error ? e.message : String(e));
			process.exit(1);
		},
	);
}
