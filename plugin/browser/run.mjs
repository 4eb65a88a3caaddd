// The plugin's views in a real browser: builds plugin/browser/page.ts with
// esbuild (obsidian aliased to obsidian-test-mocks, the real wasm engine, the
// film diary inlined), loads it in headless Chromium (Debian's, driven by
// playwright-core), and saves a PNG of each scene (the history panel's sections,
// the Problems view, the restore modal; light and dark) to target/screenshots/.
// The side panel's scenes (its sections, two versions of a note compared, the
// Problems view) and the restore and "as of" modals (a phone shows them as
// wide as a sidebar) are laid out
// at a sidebar's widths and a wide one (WIDTHS), and each is saved at 360 px
// (SHOT_WIDTHS) as <scene>-<width>.png.
// Fails when a scene drew nothing, when a scene shows an engine word outside
// Details (an operation's name, a qualified table name, an id, Hint, Docs,
// JSON; Run operation… and a .base file's listing excepted), when anything in a panel scene sticks out
// of it sideways at any of those widths (each element's right edge, and the
// scene's scrollWidth), when its tabs are not icons with an aria-label at a
// sidebar's width (or not whole names when wide), when a text cut short with
// an ellipsis has not its whole text as a title, or the page logged an error.
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
/** The side panel's scenes: laid out at each of WIDTHS, and checked for sideways overflow. */
const PANEL = /^(journal|journal-search|table|note|note-compare|database|changes|problems|restore|restore-row|as-of)-(light|dark)$/;
/** A sidebar's widths (Obsidian's default is about 300 px) and a wide pane's. */
const WIDTHS = [300, 360, 600];
/** Scenes whose text is the engine's by design: Run operation…'s JSON, a .base file. */
const ENGINE_WORDS_EXEMPT = /^(operation-check|operation-column|base)-/;
/** The widths a panel scene is saved at. */
const SHOT_WIDTHS = (process.env.SHOT_WIDTHS ?? "360").split(",").map(Number);

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
.theme-light { --background-modifier-hover: rgba(0, 0, 0, 0.075); }
.theme-dark { --background-modifier-hover: rgba(255, 255, 255, 0.075); }
.scene { --icon-xs: 14px; --icon-s: 16px; --icon-m: 18px; --icon-size: var(--icon-m); --radius-s: 4px; --font-ui-small: 13px; --size-2-1: 2px; --size-4-3: 12px;
  --font-ui-smaller: 12px; --font-monospace: monospace; --font-semibold: 600; --size-4-1: 4px; --size-4-2: 8px; --size-4-4: 16px; --cursor: pointer;
  width: 420px; padding: 12px; margin: 8px; background: var(--background-primary); color: var(--text-normal); font-size: 14px; }
.scene button { background: var(--interactive-normal); color: var(--text-normal); border: 1px solid var(--background-modifier-border); border-radius: 4px; padding: 2px 8px; }
.scene a { color: var(--text-accent); }
.scene .svg-icon { width: var(--icon-size); height: var(--icon-size); }
.scene select { background: var(--background-secondary); color: var(--text-normal); }
.scene .setting-item { display: flex; align-items: center; padding: 0.75em 0; border-top: 1px solid var(--background-modifier-border); }
.scene .setting-item-info { flex: 1 1 auto; margin-inline-end: 16px; }
.scene .setting-item-description { color: var(--text-muted); font-size: 12px; }
.scene .setting-item-control { flex: 1 1 auto; display: flex; align-items: center; justify-content: flex-end; gap: 8px; }
`;

/** In the page: lays the named scenes out `width` px wide (border box, as a
 * sidebar's leaf), and lists what sticks out of each on the right: any
 * element whose box ends past the scene's right edge, or a scene wider inside
 * than it is (scrollWidth). Each offender by tag, classes and text. */
const OVERFLOW = `
async function overflowAt(names, width) {
	const frames = names.map((n) => document.querySelector('[data-scene="' + n + '"]'));
	for (const f of frames) { f.style.boxSizing = "border-box"; f.style.width = width + "px"; }
	await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
	const out = [];
	const describe = (el) => {
		const cls = typeof el.className === "string" ? el.className : el.getAttribute("class") ?? "";
		const text = (el.textContent ?? "").replace(/\\s+/g, " ").trim().slice(0, 60);
		return "<" + el.tagName.toLowerCase() + (cls ? ' class="' + cls + '"' : "") + "> " + JSON.stringify(text);
	};
	for (const [i, f] of frames.entries()) {
		const edge = f.getBoundingClientRect().right;
		let shown = 0;
		for (const el of f.querySelectorAll("*")) {
			const r = el.getBoundingClientRect();
			if (r.width === 0 && r.height === 0) continue;
			if (r.right <= edge + 0.5) continue;
			if (shown++ < 5) out.push({ scene: names[i], what: describe(el) + " ends at " + Math.round(r.right - f.getBoundingClientRect().left) + " px" });
		}
		if (shown > 5) out.push({ scene: names[i], what: "and " + (shown - 5) + " more elements past its edge" });
		if (f.scrollWidth > f.clientWidth) out.push({ scene: names[i], what: "scrolls sideways: " + f.scrollWidth + " px wide inside, " + f.clientWidth + " px shown" });
		// Narrow, a tab is its icon, named by its aria-label; wide, its whole name shows.
		for (const tab of f.querySelectorAll(".datanotes-tab")) {
			const label = tab.querySelector(".datanotes-tab-label");
			const icon = tab.querySelector(".datanotes-tab-icon svg");
			if (!tab.getAttribute("aria-label")) out.push({ scene: names[i], what: describe(tab) + " has no aria-label" });
			if (!icon || icon.getBoundingClientRect().width === 0) out.push({ scene: names[i], what: describe(tab) + " shows no icon" });
			const labelShown = label && label.getBoundingClientRect().width > 0;
			if (width <= 360 && labelShown) out.push({ scene: names[i], what: describe(tab) + " shows its name in a sidebar" });
			if (width >= 600 && (!labelShown || label.scrollWidth > label.clientWidth)) out.push({ scene: names[i], what: describe(tab) + " does not show its whole name" });
		}
		// Two versions' texts: one column in a sidebar, side by side when wide (unless turned to one).
		for (const box of f.querySelectorAll(".datanotes-history .datanotes-compare")) {
			const seen = (sel) => { const el = box.querySelector(sel); return el !== null && el.getBoundingClientRect().width > 0; };
			if (!box.querySelector(".datanotes-compare-layout")) continue;
			const split = box.classList.contains("is-split") && width >= 600;
			if (seen(".datanotes-compare-split") !== split || seen(".datanotes-compare-unified") === split) out.push({ scene: names[i], what: "the compared texts are " + (split ? "not side by side" : "not one column") });
			if (seen(".datanotes-compare-layout") !== width >= 600) out.push({ scene: names[i], what: "the button for one column or two is " + (width >= 600 ? "hidden" : "shown") });
		}
		// What is cut short with an ellipsis keeps its whole text in a title.
		for (const el of f.querySelectorAll("*")) {
			if (el.scrollWidth <= el.clientWidth || getComputedStyle(el).textOverflow !== "ellipsis") continue;
			if (el.getAttribute("title") !== (el.textContent ?? "")) out.push({ scene: names[i], what: describe(el) + " is cut short without its whole text as a title" });
		}
	}
	return out;
}
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
	await writeFile(join(out, "index.html"), `<!doctype html><html><head><meta charset="utf-8"><style>${THEMES}\n${css}</style></head><body><div id="stage"></div><script src="page.js"></script><script>${OVERFLOW}</script></body></html>`);
	await writeFile(join(out, "load.html"), `<!doctype html><html><head><meta charset="utf-8"></head><body><script src="load.js"></script></body></html>`);

	const browser = await chromium.launch({
		executablePath: CHROMIUM,
		args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
	});
	const errors = [];
	try {
		const page = await browser.newPage({ viewport: { width: 640, height: 900 } });
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
			if (PANEL.test(s.name)) continue;
			const el = page.locator(`[data-scene="${s.name}"]`);
			await el.screenshot({ path: join(shots, `${s.name}.png`) });
		}
		// The panel at a sidebar's widths: nothing may stick out sideways.
		const panel = scenes.filter((s) => PANEL.test(s.name)).map((s) => s.name);
		for (const width of WIDTHS) {
			const over = await page.evaluate(([names, w]) => overflowAt(names, w), [panel, width]);
			for (const o of over) errors.push(`scene ${o.scene} at ${width} px: ${o.what}`);
			// Two versions compared, wide: side by side.
			if (width >= 600) for (const name of panel.filter((n) => n.startsWith("note-compare-"))) await page.locator(`[data-scene="${name}"]`).screenshot({ path: join(shots, `${name}-${width}.png`) });
			if (!SHOT_WIDTHS.includes(width)) continue;
			for (const name of panel) await page.locator(`[data-scene="${name}"]`).screenshot({ path: join(shots, `${name}-${width}.png`) });
		}
		console.log(`browser: the panel's ${panel.length} scenes at ${WIDTHS.join(", ")} px: ${errors.some((e) => / px: /.test(e)) ? "it does not fit (below)" : "nothing sticks out sideways, icon tabs in a sidebar"}`);
		console.log(`browser: ${scenes.length} scenes drawn in Chromium, screenshots in ${relative(root, shots)}/`);
		for (const s of scenes) console.log(`  ${s.name}: ${s.items} items`);
		if (scenes.length !== 38) errors.push(`expected 38 scenes (19 views, 2 themes), got ${scenes.length}`);
		for (const s of empty) errors.push(`scene ${s.name} drew nothing: ${s.text}`);
		// No engine word where a person reads, but in Run operation…'s JSON (its escape hatch) and a .base file's listing.
		const scanned = scenes.filter((s) => !ENGINE_WORDS_EXEMPT.test(s.name));
		for (const s of scanned) for (const w of s.words) errors.push(`scene ${s.name} shows an engine word outside Details: ${w}`);
		console.log(`browser: ${scanned.length} scenes scanned for engine words outside Details: ${scanned.some((s) => s.words.length > 0) ? "found (below)" : "none"}`);
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
