// Bundles the Obsidian plugin (plugin/src/main.ts) as Obsidian's sample plugin
// does, with the wasm engine inlined (loader binary). Output: plugin/dist/, with
// manifest.json and styles.css beside main.js: the folder a user copies into
// <vault>/.obsidian/plugins/datanotes/.
//   node esbuild.config.mjs production   one minified build
//   node esbuild.config.mjs              watch, with inline source maps
import esbuild from "esbuild";
import { builtinModules } from "node:module";
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

const context = await esbuild.context({
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
	target: "es2018",
	loader: { ".wasm": "binary" },
	logLevel: "info",
	sourcemap: prod ? false : "inline",
	treeShaking: true,
	minify: prod,
	outfile: `${outdir}/main.js`,
	plugins: [copyStatics],
});

if (prod) {
	await context.rebuild();
	process.exit(0);
} else {
	await context.watch();
}
