// The store files a sync brings from another device while the plugin runs
// (store-watch.ts, issue 15): which are handed over, how a look finds them
// without reading the whole store, and what the engine makes of them.

import { describe, expect, test } from "vitest";
import wasmBytes from "../wasm/datanotes_core_bg.wasm";
import { loadEngine, openEngine } from "../src/engine";
import { Host } from "../src/host";
import { type StoreDirs, StoreWatch, syncedFile } from "../src/store-watch";
import { ans, CHARADE, Clock, filmDiary } from "./engine";
import { MemoryFs } from "./memfs";

describe("the files of another device", () => {
	test("are its commits, journal entries, feed, settings and webhooks (the cases of core's synced_file)", () => {
		const cases: [string, boolean][] = [
			["log/main.public.film/00000000000000000004.a.json", true],
			["log/main.public.film/00000000000000000004.b.json", false],
			["log/main.public.film/00000000000000000004.json", false],
			["log/main.public.film/00000000000000000004.checkpoint.json", false],
			["journal/20261204T133000-update_row-update-film.a.json", true],
			["journal/20261204T133000-update_row-update-film.a-2.json", true],
			["journal/20261204T133000-update_row-update-film.b-2.json", false],
			["journal/20261204T133000-update_row-update-film.json", false],
			["journal/20261204T133000-update_row-update-film.a.sync-conflict-20261204-1-X.json", false],
			["feed/00000000000000000001.a.jsonl", true],
			["feed/00000000000000000001.b.jsonl", false],
			["feed/00000000000000000001.jsonl", false],
			["settings.a.json", true],
			["settings.b.json", false],
			["settings.json", false],
			["webhooks.a.json", true],
			["webhooks.json", false],
			["known.a.jsonl", false],
			["blobs/ab/abcdef", false],
			["lock", false],
		];
		for (const [path, want] of cases) expect(syncedFile(path, "b"), path).toBe(want);
	});
});

/** A store on "disk": files with times; folders' times move as files come and go. */
class Dirs implements StoreDirs {
	readonly files = new Map<string, { text: string; mtime: number }>();
	readonly folderTimes = new Map<string, number>();
	readonly asked: string[] = [];
	constructor(public clock: Clock) {}

	/** A sync tool writes a temporary file and renames it into place: its folder
	 * changes, and a new folder changes the one above it. */
	put(path: string, text: string): void {
		this.files.set(path, { text, mtime: this.clock.now() });
		this.touch(path.slice(0, path.lastIndexOf("/")));
	}
	private touch(dir: string): void {
		const isNew = !this.folderTimes.has(dir);
		this.folderTimes.set(dir, this.clock.now());
		if (isNew && dir.includes("/")) this.touch(dir.slice(0, dir.lastIndexOf("/")));
	}
	async stat(path: string) {
		this.asked.push(`stat ${path}`);
		const f = this.files.get(path);
		if (f) return { mtime: f.mtime, size: f.text.length };
		const t = this.folderTimes.get(path);
		return t === undefined ? null : { mtime: t, size: 0 };
	}
	async list(path: string) {
		this.asked.push(`list ${path}`);
		const under = (p: string) => p.startsWith(`${path}/`) && !p.slice(path.length + 1).includes("/");
		return { files: [...this.files.keys()].filter(under), folders: [...this.folderTimes.keys()].filter(under) };
	}
	async read(path: string) {
		this.asked.push(`read ${path}`);
		const f = this.files.get(path);
		if (!f) throw new Error("ENOENT");
		return f.text;
	}
}

describe("a look at the store", () => {
	test("reads only what another device wrote since the last look, and lists only the folders that changed", async () => {
		const clock = new Clock();
		const dirs = new Dirs(clock);
		dirs.put(".datanotes/settings.json", "{}");
		dirs.put(".datanotes/journal/20261204T120000-x-y.phone.json", "mine");
		dirs.put(".datanotes/log/main.public.film/00000000000000000001.phone.json", "c1");
		dirs.put(".datanotes/feed/00000000000000000001.laptop.jsonl", "e1\n");
		const watch = new StoreWatch(dirs, "phone", ".datanotes", clock.now);
		await watch.start();
		expect(dirs.asked.filter((a) => a.startsWith("read")), "the engine read the store at open").toEqual([]);
		clock.advance(10_000);
		dirs.asked.length = 0;
		expect(await watch.poll()).toEqual([]);
		expect(dirs.asked.filter((a) => !a.startsWith("stat")), "a quiet store is not listed").toEqual([]);
		dirs.put(".datanotes/log/main.public.film/00000000000000000002.laptop.json", "c2");
		dirs.put(".datanotes/log/main.public.film/00000000000000000002.phone.json", "mine");
		dirs.put(".datanotes/journal/20261204T120001-x-y.laptop.json", "j2");
		dirs.put(".datanotes/feed/00000000000000000001.laptop.jsonl", "e1\ne2\n");
		dirs.put(".datanotes/log/main.public.person/00000000000000000000.laptop.json", "p0");
		dirs.put(".datanotes/blobs/ab/abcdef", "blob");
		clock.advance(10_000);
		const got = (await watch.poll()).sort();
		expect(got).toEqual([
			["feed/00000000000000000001.laptop.jsonl", "e1\ne2\n"],
			["journal/20261204T120001-x-y.laptop.json", "j2"],
			["log/main.public.film/00000000000000000002.laptop.json", "c2"],
			["log/main.public.person/00000000000000000000.laptop.json", "p0"],
		]);
		expect(dirs.asked.filter((a) => a.startsWith("read")).length, "only those are read").toBe(4);
		expect(await watch.poll(), "nothing twice").toEqual([]);
	});
});

describe("a running engine", () => {
	test("takes in another device's write as the sync brings it: its event, not a hand edit, and an undo here", async () => {
		await loadEngine(wasmBytes);
		const clock = new Clock();
		const warn: string[] = [];
		const open = async (fs: MemoryFs, device: string) => {
			const host = new Host(openEngine(fs.notes(), fs.storeListing(), clock.now(), new Uint8Array(32).fill(3), device), fs, {
				now: clock.now,
				warn: (l) => warn.push(l),
			});
			await host.open();
			return host;
		};
		const laptopFs = new MemoryFs(filmDiary);
		const laptop = await open(laptopFs, "laptop");
		expect((await laptop.call("update_row", { table: "film", path: CHARADE, set: { rating: 4 } })).status).toBe("ok");
		const phoneFs = new MemoryFs(new Map([...laptopFs.files].map(([p, f]) => [p, f.text])));
		for (const [p, t] of laptopFs.store) phoneFs.store.set(p, t);
		const phone = await open(phoneFs, "phone");
		const head = ans(await phone.call("list_changes", {})).head as number;
		clock.advance(1000);
		const before = new Map(laptopFs.store);
		const wrote = ans(await laptop.call("update_row", { table: "film", path: CHARADE, set: { rating: 2 } }));
		// The sync: the store files, then the note.
		const synced = [...laptopFs.store].filter(([p, t]) => before.get(p) !== t && syncedFile(p, "phone"));
		expect(synced.length).toBeGreaterThanOrEqual(3);
		for (const [p, t] of synced) phoneFs.store.set(p, t);
		await phone.storeSynced(synced);
		phoneFs.handWrite(CHARADE, laptopFs.text(CHARADE)!);
		await phone.observe({ kind: "modified", path: CHARADE });
		clock.advance(1000);
		await phone.tick();
		const events = ans(await phone.call("list_changes", { since: head })).events as { source: string; migration_id?: string }[];
		expect(events.map((e) => [e.source, e.migration_id])).toEqual([["engine", wrote.migration_id]]);
		const history = ans(await phone.call("describe_history", { table: "film", limit: 1 }));
		expect(history.history[0].device).toBe("laptop");
		const undone = await phone.call("undo_migration", { migration_id: wrote.migration_id });
		expect(undone.status, JSON.stringify(undone.answer)).toBe("ok");
		expect(phoneFs.text(CHARADE)).toContain("rating: 4");
		expect(warn).toEqual([]);
	});
});
