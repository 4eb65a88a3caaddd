// Search by meaning in the plugin's wasm engine (issue 19): the engine carries
// no model, so the host gives it the one `datanotes install-model` put in the
// store, the first time an operation needs it. A tiny model stands in for the
// real one (8 MB): what is tested is the way in, not the meaning.

import { describe, expect, test } from "vitest";
import { refusalText, SEMANTIC_MODEL_FILE } from "../src/host";
import { ans, openFilms } from "./engine";
import { MemoryFs } from "./memfs";
import { tinyModel } from "./tiny-model";
import { filmDiary } from "./engine";

describe("search by meaning in the plugin", () => {
	test("refused with the way out until the model is in the store, then found, and stored", async () => {
		const { host, fs, warnings } = await openFilms();
		const before = await host.call("semantic_search", { query: "vampire" });
		expect(before.status).toBe("refused");
		expect(refusalText(before)).toContain("datanotes install-model");

		// A damaged file: said once in the log, and still refused, never a crash.
		fs.storeBytes.set(SEMANTIC_MODEL_FILE, new TextEncoder().encode("DNMODEL1\nhalf"));
		const damaged = await host.call("semantic_search", { query: "vampire" });
		expect(damaged.status).toBe("refused");
		expect(warnings.join("\n")).toContain("potion-base-8M.dnmodel cannot be read");

		fs.storeBytes.set(SEMANTIC_MODEL_FILE, tinyModel(["dracula", "paris", "heist", "thriller"]));
		const found = await host.call("semantic_search", { query: "Dracula", limit: 3 });
		expect(found.status).toBe("ok");
		expect(ans(found).results[0].path).toContain("Nosferatu");
		const index = [...fs.store.keys()].find((p) => p.startsWith("semantic/index"));
		expect(index).toBeDefined();
		expect(JSON.parse(fs.store.get(index as string)?.split("\n")[0] ?? "{}")).toMatchObject({ format: 1, model: "tiny", dims: 8 });

		// Notes like Nosferatu: never Nosferatu itself.
		const like = await host.call("semantic_search", { like: ans(found).results[0].path, limit: 3 });
		expect(like.status).toBe("ok");
		expect(ans(like).results.map((r: { path: string }) => r.path)).not.toContain(ans(found).results[0].path);
	});

	test("an index the disk refuses fails no search and holds up no write", async () => {
		const { host, fs } = await openFilms();
		fs.storeBytes.set(SEMANTIC_MODEL_FILE, tinyModel(["dracula"]));
		await host.call("configure_database", { semanticIndex: true });
		// This engine has no device id: its index is semantic/index.jsonl.
		fs.held.add("semantic/index.jsonl");
		const found = await host.call("semantic_search", { query: "Dracula" });
		expect(found.status).toBe("ok");
		expect(ans(found).warning).toBeUndefined();
		for (const rating of [1, 2]) {
			const out = await host.call("update_row", { table: "film", path: "datanotes/main/public/film/Nosferatu.md", set: { rating } });
			expect(out.status).toBe("ok");
			expect(ans(out).not_recorded, JSON.stringify(ans(out))).toBeUndefined();
		}
		expect([...fs.store.keys()].some((k) => k.startsWith("semantic/"))).toBe(false);
	});

	test("an engine opened again reads the stored index back", async () => {
		const fs = new MemoryFs(filmDiary);
		fs.storeBytes.set(SEMANTIC_MODEL_FILE, tinyModel(["vampire", "paris"]));
		const first = await openFilms({ fs });
		const built = await first.host.call("sync_semantic_index", {});
		expect(ans(built)).toMatchObject({ model: "tiny", stored: 0 });
		expect(typeof ans(built).duration_ms).toBe("number");
		expect(ans(built).embedded).toBeGreaterThan(5);
		await first.host.close();
		const again = await openFilms({ fs });
		const read = await again.host.call("sync_semantic_index", {});
		expect(ans(read)).toMatchObject({ embedded: 0, stored: ans(built).embedded });
	});
});
