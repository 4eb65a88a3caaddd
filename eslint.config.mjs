// The plugin's lint: Obsidian's own review rules (eslint-plugin-obsidianmd's
// recommended config, which brings ESLint's and typescript-eslint's type-checked
// rules) on plugin/src, manifest.json, LICENSE and package.json. `npm run lint`
// (in `make lint` and `make test`) runs it with warnings counted as failures.
import * as espree from "espree";
import { defineConfig } from "eslint/config";
import obsidianmd from "eslint-plugin-obsidianmd";
import { PlainTextParser } from "eslint-plugin-obsidianmd/dist/lib/plainTextParser.js";
import tseslint from "typescript-eslint";

/** manifest.json as the program `(<its text>)`: validate-manifest reads the object
 * expression it expects there. Positions are moved back over the added "(". */
const manifestParser = {
	meta: { name: "datanotes-manifest-parser", version: "1.0.0" },
	parseForESLint(text) {
		const ast = espree.parse(`(${text})`, { ecmaVersion: 2022, range: true, loc: true, tokens: true, comment: true });
		const shift = (node) => {
			if (Array.isArray(node)) return node.forEach(shift);
			if (!node || typeof node !== "object") return;
			if (Array.isArray(node.range)) node.range = [Math.max(0, node.range[0] - 1), Math.min(text.length, node.range[1] - 1)];
			for (const end of [node.loc?.start, node.loc?.end]) if (end?.line === 1) end.column = Math.max(0, end.column - 1);
			for (const [k, v] of Object.entries(node)) if (k !== "loc" && k !== "range" && typeof v === "object") shift(v);
		};
		shift(ast);
		ast.range = [0, text.length];
		ast.tokens = ast.tokens.filter((t) => t.range[1] > t.range[0]);
		return { ast };
	},
};

const brandsAndAcronyms = {
	brands: ["Datanotes", "Obsidian", "Bases"],
	acronyms: ["MCP", "HTTP", "URL", "JSON", "CLI", "ID", "OK"],
};

export default defineConfig([
	{ ignores: ["plugin/dist/**", "plugin/wasm/**", "plugin/test/**", "plugin/browser/**", "node_modules/**", "target/**", "docs/**", "bridge/**", "tests/**", "scripts/**", "sdk/**", "*.config.*", "*.mjs", "vault/**"] },
	...obsidianmd.configs.recommended,
	{
		files: ["plugin/src/**/*.ts"],
		languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
		rules: { "obsidianmd/ui/sentence-case": ["warn", brandsAndAcronyms] },
	},
	{
		files: ["manifest.json"],
		extends: [tseslint.configs.disableTypeChecked],
		languageOptions: { parser: manifestParser },
		rules: { "obsidianmd/validate-manifest": "error" },
	},
	{
		files: ["LICENSE"],
		extends: [tseslint.configs.disableTypeChecked],
		languageOptions: { parser: PlainTextParser },
		// The year is not checked: a notice stays true in later years, and CI must not
		// start failing on the first of January.
		rules: { "obsidianmd/validate-license": ["error", { disableUnchangedYear: true }] },
	},
]);
