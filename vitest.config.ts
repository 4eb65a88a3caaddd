// The plugin's tests (plugin/test/): happy-dom, the obsidian module replaced by
// obsidian-test-mocks, and *.wasm imports loaded as their bytes (Uint8Array), as
// esbuild's binary loader gives them to the bundle.
import { readFileSync } from "node:fs";
import type { Plugin } from "vite";
import { defineConfig } from "vitest/config";

const wasmBytes: Plugin = {
	name: "wasm-bytes",
	enforce: "pre",
	load(id) {
		const file = id.split("?")[0];
		if (!file.endsWith(".wasm")) return null;
		const b64 = readFileSync(file).toString("base64");
		return `export default Uint8Array.from(Buffer.from(${JSON.stringify(b64)}, "base64"));`;
	},
};

export default defineConfig({
	plugins: [wasmBytes],
	resolve: { alias: { obsidian: "obsidian-test-mocks/obsidian" } },
	test: {
		include: ["plugin/test/**/*.test.ts"],
		environment: "happy-dom",
		setupFiles: ["obsidian-test-mocks/vitest-setup", "plugin/test/setup.ts"],
		testTimeout: 20000,
	},
});
