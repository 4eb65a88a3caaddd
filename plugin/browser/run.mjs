// The plugin's views in a real browser: builds plugin/browser/page.ts with
// esbuild (obsidian aliased to obsidian-test-mocks, the real wasm engine, the
// film diary inlined), loads it in headless Chromium (Debian's, driven by
// playwright-core), and saves a PNG of each scene (the history panel's sections,
// the Problems view, the restore modal; light and dark) to target/screenshots/.
// Fails when a scene drew nothing, or the page logged an error.
//   node plugin/browser/run.mjs

import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import esbuild from "esbuild";
import { chromium } from "playwright-core";

const root = resolve(fileURLToPath(import.meta.url), "../../..");
const out = join(root, "target/browser");
const shots = join(root, "target/screenshots");
const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
/** The notes of the large vault main.js opens (BIG_NOTES=100000 for the size). */
const BIG_NOTES = Number(process.env.BIG_NOTES ?? 20000);

/** Every file under `dir`, by path relative to it. */
async function tree(dir, base = dir, acc = {}) {
	for (const e of await readdir(dir, { withFileTypes: true })) {
		const full = join(dir, e.name);
		if (e.isDirectory()) await tree(full, base, acc);
		else acc[relative(base, full).split("\\").join("/")] = await readFile(full, "utf8");
	}
	return acc;
}

/** The film diary as a module; node:fs and node:path (memfs.ts's readTree) as nothing. */
const pagePlugin = {
	name: "page",
	setup(build) {
		build.onResolve({ filter: /^virtual:(films|main)$/ }, (a) => ({ path: a.path.slice("virtual:".length), namespace: "virtual" }));
		build.onLoad({ filter: /^films$/, namespace: "virtual" }, async () => ({
			contents: JSON.stringify(await tree(join(root, "bridge/assets/films"))),
			loader: "json",
		}));
		build.onLoad({ filter: /^main$/, namespace: "virtual" }, async () => ({
			contents: await readFile(join(root, "plugin/dist/main.js"), "utf8"),
			loader: "text",
		}));
		build.onResolve({ filter: /^node:(fs|path)$/ }, (a) => ({ path: a.path, namespace: "empty" }));
		build.onLoad({ filter: /.*/, namespace: "empty" }, () => ({ contents: "export const readdirSync = () => []; export const readFileSync = () => ''; export const statSync = () => ({}); export const join = (...p) => p.join('/');", loader: "js" }));
	},
};

/** Obsidian's CSS variables the views use, in light and dark (its app.css is not ours to ship). */
const THEMES = `
.theme-light { --background-primary: #ffffff; --background-secondary: #f6f6f6; --background-modifier-border: #e0e0e0; --background-modifier-active-hover: rgba(138, 92, 245, 0.15); --background-modifier-border-focus: #8a5cf5; --text-normal: #222222; --text-muted: #5c5c5c; --text-faint: #ababab; --text-accent: #8a5cf5; --text-error: #e93147; --text-success: #08b94e; --text-warning: #ec7500; --interactive-accent: #8a5cf5; --interactive-normal: #f6f6f6; color-scheme: light; }
.theme-dark { --background-primary: #1e1e1e; --background-secondary: #262626; --background-modifier-border: #363636; --background-modifier-active-hover: rgba(168, 130, 255, 0.15); --background-modifier-border-focus: #a882ff; --text-normal: #dadada; --text-muted: #b3b3b3; --text-faint: #666666; --text-accent: #a882ff; --text-error: #fb464c; --text-success: #44cf6e; --text-warning: #e9973f; --interactive-accent: #a882ff; --interactive-normal: #363636; color-scheme: dark; }
body { margin: 0; font-family: system-ui, sans-serif; }
.scene { --font-ui-smaller: 12px; --font-monospace: monospace; --font-semibold: 600; --size-4-1: 4px; --size-4-2: 8px; --size-4-4: 16px; --cursor: pointer;
  width: 420px; padding: 12px; margin: 8px; background: var(--background-primary); color: var(--text-normal); font-size: 14px; }
.scene button { background: var(--interactive-normal); color: var(--text-normal); border: 1px solid var(--background-modifier-border); border-radius: 4px; padding: 2px 8px; }
.scene a { color: var(--text-accent); }
.scene select { background: var(--background-secondary); color: var(--text-normal); }
`;

async function main() {
	if (!existsSync(CHROMIUM)) {
		throw new Error(`no Chromium at ${CHROMIUM}: bash scripts/setup.sh --browser installs Debian's (apt-get install chromium, as root), or set CHROMIUM to one`);
	}
	await rm(out, { recursive: true, force: true });
	await mkdir(out, { recursive: true });
	await mkdir(shots, { recursive: true });
	const page = (name) => ({
		entryPoints: [join(root, `plugin/browser/${name}.ts`)],
		bundle: true,
		format: "iife",
		platform: "browser",
		target: "es2020",
		outfile: join(out, `${name}.js`),
		alias: { obsidian: "obsidian-test-mocks/obsidian" },
		loader: { ".wasm": "binary" },
		plugins: [pagePlugin],
		logLevel: "warning",
	});
	await esbuild.build(page("page"));
	const bundled = existsSync(join(root, "plugin/dist/main.js"));
	if (bundled) await esbuild.build(page("load"));
	const css = await readFile(join(root, "styles.css"), "utf8");
	await writeFile(join(out, "index.html"), `<!doctype html><html><head><meta charset="utf-8"><style>${THEMES}\n${css}</style></head><body><div id="stage"></div><script src="page.js"></script></body></html>`);
	await writeFile(join(out, "load.html"), `<!doctype html><html><head><meta charset="utf-8"></head><body><script src="load.js"></script></body></html>`);

	const browser = await chromium.launch({
		executablePath: CHROMIUM,
		args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
	});
	const errors = [];
	try {
		const page = await browser.newPage({ viewport: { width: 480, height: 900 } });
		page.on("console", (m) => {
			if (m.type() === "error") errors.push(`console: ${m.text()}`);
		});
		page.on("pageerror", (e) => errors.push(`page: ${e.message}`));
		await page.goto(pathToFileURL(join(out, "index.html")).href);
		await page.waitForFunction(() => window.__done === true, undefined, { timeout: 60_000 });
		const failed = await page.evaluate(() => window.__error);
		if (failed) errors.push(`script: ${failed}`);
		const scenes = (await page.evaluate(() => window.__scenes)) ?? [];
		const empty = scenes.filter((s) => s.items === 0);
		for (const s of scenes) {
			const el = page.locator(`[data-scene="${s.name}"]`);
			await el.screenshot({ path: join(shots, `${s.name}.png`) });
		}
		console.log(`browser: ${scenes.length} scenes drawn in Chromium, screenshots in ${relative(root, shots)}/`);
		for (const s of scenes) console.log(`  ${s.name}: ${s.items} items`);
		if (scenes.length !== 24) errors.push(`expected 24 scenes (12 views, 2 themes), got ${scenes.length}`);
		for (const s of empty) errors.push(`scene ${s.name} drew nothing: ${s.text}`);
		// main.js as released, in a fresh page: its load time in this browser (a figure).
		if (bundled) {
			const load = await browser.newPage();
			load.on("pageerror", (e) => errors.push(`load page: ${e.message}`));
			await load.goto(pathToFileURL(join(out, "load.html")).href);
			await load.waitForFunction(() => window.__load !== undefined, undefined, { timeout: 60_000 });
			const figures = await load.evaluate(() => window.__load);
			if ("error" in figures) errors.push(`main.js in the browser: ${figures.error}`);
			else if (figures.rows !== 7) errors.push(`main.js in the browser read ${figures.rows} films, not 7`);
			else console.log(`datanotes-bench ${JSON.stringify({ chromium_mock_app_ms: figures.mock_app_ms, chromium_main_js_evaluate_ms: figures.evaluate_ms, chromium_load_and_open_films_ms: figures.load_and_open_films_ms })}`);
			// A large vault: the engine opens in its worker, and Obsidian's thread is never held long.
			const big = await browser.newPage();
			big.on("pageerror", (e) => errors.push(`big page: ${e.message}`));
			big.on("console", (m) => { if (process.env.BIG_DEBUG) console.log(`big page ${m.type()}: ${m.text()}`); });
			await big.goto(`${pathToFileURL(join(out, "load.html")).href}?big=${BIG_NOTES}`);
			await big.waitForFunction(() => window.__big !== undefined, undefined, { timeout: 180_000 });
			const b = await big.evaluate(() => window.__big);
			if ("error" in b) errors.push(`main.js on ${BIG_NOTES} notes: ${b.error}`);
			else {
				console.log(`datanotes-bench ${JSON.stringify({ chromium_big_notes: b.notes, chromium_big_open_ms: b.open_ms, chromium_big_longest_main_thread_task_ms: b.longest_task_ms })}`);
				if (b.rows !== BIG_NOTES + 7) errors.push(`main.js on ${BIG_NOTES} notes read ${b.rows} films`);
				if (b.tasks_over_100_ms > 0) errors.push(`opening ${BIG_NOTES} notes held the main thread over 100 ms ${b.tasks_over_100_ms} time(s), the longest ${b.longest_task_ms} ms`);
			}
		}
	} finally {
		await browser.close();
	}
	if (errors.length > 0) throw new Error(errors.join("\n"));
}

main().catch((e) => {
	console.error(`browser: ${e instanceof Error ? e.message : String(e)}`);
	process.exit(1);
});
