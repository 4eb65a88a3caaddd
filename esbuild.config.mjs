// Bundles the Obsidian plugin (plugin/src/main.ts) as Obsidian's sample plugin
// does, with the wasm engine inlined: gzipped, then base64 (loader binary), and
// inflated at load by DecompressionStream (plugin/src/engine.ts). Output: plugin/dist/, with
// manifest.json and styles.css beside main.js: the folder a user copies into
// <vault>/.obsidian/plugins/datanotes/.
//   node esbuild.config.mjs production   one minified build
//   node esbuild.config.mjs              watch, with inline source maps
import { gzipAsync } from "@gfx/zopfli";
import esbuild from "esbuild";
import { builtinModules } from "node:module";
import { readFile } from "node:fs/promises";
import { constants, gzipSync } from "node:zlib";
import { copyFile, mkdir } from "node:fs/promises";

const banner = `/*
Datanotes: typed database tables from folders of notes. Built with esbuild;
the source is in the Datanotes repository (plugin/src/, core/ for the engine).
*/
`;

const prod = process.argv[2] === "production";
const outdir = "plugin/dist";

/** Copies manifest.json and styles.css next to main.js after each build. */
const copyStatics = {
	name: "copy-statics",
	setup(build) {
		build.onEnd(async (result) => {
			if (result.errors.length > 0) return;
			await mkdir(outdir, { recursive: true });
			await Promise.all(["manifest.json", "styles.css"].map((f) => copyFile(f, `${outdir}/${f}`)));
		});
	},
};

/** The engine's wasm, gzipped: main.js carries a third of its bytes. A release
 * build spends about 6 s in Zopfli (a gzip 5% smaller than zlib's best, read by
 * the same inflater); a watch build uses zlib. */
const gzipWasm = {
	name: "gzip-wasm",
	setup(build) {
		build.onLoad({ filter: /\.wasm$/ }, async (args) => {
			const wasm = await readFile(args.path);
			const gz = prod
				? await gzipAsync(wasm, { numiterations: 15 })
				: gzipSync(wasm, { level: constants.Z_BEST_COMPRESSION, memLevel: 9 });
			return { contents: gz, loader: "binary" };
		});
	},
};

/** The engine's Web Worker (plugin/src/engine-worker.ts), bundled apart and
 * carried in main.js as a string (ENGINE_WORKER), started from a blob URL. Built
 * once per run: a watch build does not follow its changes. */
const workerBuild = await esbuild.build({
	entryPoints: ["plugin/src/engine-worker.ts"],
	bundle: true,
	format: "iife",
	target: "es2020",
	minify: prod,
	write: false,
	logLevel: "warning",
});

const context = await esbuild.context({
	define: { ENGINE_WORKER: JSON.stringify(workerBuild.outputFiles[0].text) },
	banner: { js: banner },
	entryPoints: ["plugin/src/main.ts"],
	bundle: true,
	external: [
		"obsidian",
		"electron",
		"@codemirror/autocomplete",
		"@codemirror/collab",
		"@codemirror/commands",
		"@codemirror/language",
		"@codemirror/lint",
		"@codemirror/search",
		"@codemirror/state",
		"@codemirror/view",
		"@lezer/common",
		"@lezer/highlight",
		"@lezer/lr",
		...builtinModules,
		...builtinModules.map((m) => `node:${m}`),
	],
	format: "cjs",
	target: "es2020",
	loader: { ".wasm": "binary" },
	logLevel: "info",
	sourcemap: prod ? false : "inline",
	treeShaking: true,
	minify: prod,
	outfile: `${outdir}/main.js`,
	plugins: [gzipWasm, copyStatics],
});

if (prod) {
	await context.rebuild();
	process.exit(0);
} else {
	await context.watch();
}
