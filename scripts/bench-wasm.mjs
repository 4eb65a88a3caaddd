// The plugin's engine (wasm, under node) opening a synthetic vault of films that
// link to people, as Obsidian's start does: every note crosses into wasm as one
// JSON text (core/src/wasm.rs); then the native engine on the same notes
// (`datanotes bench --notes`, the release binary). Prints {"open": {rows: {wasm:
// {first_open_ms, second_open_ms, first_open_listed_ms (as the plugin opens:
// listed, then every note read and handed over packed, 2 MB at a time), json_mb, memory_mb,
// memory_x_notes, plugin_memory {first_open_mb, first_open_x_notes, reopen_mb,
// reopen_x_notes, reopen_lookups_built_mb, reopen_rows_read_mb (what the
// plugin holds once idle) and their _x_notes: the plugin's engine, each
// in a wasm instance of its own},
// reopen (with cache_after_changed_1000: the notes' cache taken after the
// reopen with 1,000 changed, a segment to append), reopen_mixed (a tenth of
// the notes rows)}, native:
// {…}, first_open_wasm_over_native, first_open_listed_wasm_over_native}}} on
// stdout. Needs plugin/wasm/
// (scripts/build-wasm.sh). Memory: wasm's whole linear memory (the engine grows
// it by six times the notes handed to it at open, for speed: core/src/wasm.rs
// `reserve`; memory_mb is the process's instance after all its opens);
// natively, what the resident set grew by while the notes were parsed and opened
// and the notes' cache taken (as every host does after an open: the rows then
// keep their values as JSON), the allocator's free pages given back first.
//   node scripts/bench-wasm.mjs [ROWS…]      default 10000 100000

import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import init, { WasmEngine } from "../plugin/wasm/datanotes_core.js";

const SCHEMA = `version: 1
tables:
  main.public.person:
    name_from: name
    columns:
      name: {type: text, required: true, unique: true}
      born: {type: integer}
  main.public.film:
    name_from: title
    columns:
      title: {type: text, required: true, unique: true}
      year: {type: integer}
      minutes: {type: integer}
      status: {type: enum, values: [watched, to watch]}
      director: {type: link, table: person}
      tags: {type: list, items: text}
`;

/** 200 people and `n` films of about 400 bytes, each film linking to two people. */
function vault(n) {
	const files = [{ path: "datanotes/metastore.yaml", text: SCHEMA, mtime: 0 }];
	const id = (k) => `01a0c049-0000-7000-9000-${String(k).padStart(12, "0")}`;
	for (let p = 0; p < 200; p++) {
		files.push({ path: `datanotes/main/public/person/Person ${p}.md`, text: `---\ntable: main.public.person\nid: ${id(p)}\nname: Person ${p}\nborn: ${1900 + (p % 100)}\n---\nA person.\n`, mtime: 0 });
	}
	for (let f = 0; f < n; f++) {
		const text = `---\ntable: main.public.film\nid: ${id(1000 + f)}\ntitle: Film ${f}\nyear: ${1920 + (f % 100)}\nminutes: ${60 + (f % 120)}\nstatus: ${f % 4 ? "watched" : "to watch"}\ndirector: "[[Person ${f % 200}]]"\ntags:\n  - t${f % 50}\n---\nNotes on film ${f}, seen with [[Person ${(f * 7) % 200}]]. Some more words, so that the note is about four hundred bytes long as notes are; and a few more.\n`;
		files.push({ path: `datanotes/main/public/film/Film ${f}.md`, text, mtime: 0 });
	}
	return files;
}

/** A vault of `n` notes, a tenth of them rows (`vault`), the rest notes outside
 * the tables of about 400 bytes, each linking to a film. */
function mixed(n) {
	const files = vault(Math.round(n / 10));
	for (let d = 0; files.length < n; d++) {
		const text = `# Day ${d}\n\nWatched [[Film ${d % Math.round(n / 10)}]] in the evening. Some more words about the day, so that the note is about four hundred bytes long as notes are; and more of them, the weather, the walk, what was for dinner, who called, and a few more words.\n`;
		files.push({ path: `Journal/Day ${d}.md`, text, mtime: 0 });
	}
	return files;
}

/** Texts cross into wasm as UTF-8 bytes, as the plugin hands them (plugin/src/engine.ts). */
const utf8 = (s) => new TextEncoder().encode(s);

const BIN = process.env.DATANOTES_BIN ?? new URL("../target/release/datanotes", import.meta.url).pathname;

function nativeOpen(json) {
	if (!existsSync(BIN)) return null;
	const dir = mkdtempSync(join(tmpdir(), "datanotes-bench-"));
	try {
		writeFileSync(join(dir, "notes.json"), json);
		return JSON.parse(execFileSync(BIN, ["bench", "--notes", join(dir, "notes.json")], { encoding: "utf8", maxBuffer: 1 << 20 }));
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

/** The vendored model as the store holds it (core/src/semantic/mod.rs `file`). */
function modelFile() {
	const dir = new URL("../core/assets/semantic/", import.meta.url);
	const vocab = readFileSync(new URL("vocab.txt", dir));
	const vectors = readFileSync(new URL("potion-base-8M.i8", dir));
	const head = Buffer.from("DNMODEL1\npotion-base-8M\n");
	const len = Buffer.alloc(4);
	len.writeUInt32LE(vocab.length);
	return new Uint8Array(Buffer.concat([head, len, vocab, vectors]));
}

/** Search by meaning in the plugin's engine: the model given, every note
 * embedded (sync_semantic_index), a search, and one after a note changed. */
function semantic(n) {
	const engine = new WasmEngine(utf8(JSON.stringify(vault(n))), "[]", Date.now());
	const run = (op, args) => {
		const t = performance.now();
		const step = JSON.parse(engine.call(op, JSON.stringify(args), "bench", Date.now()));
		if (step.status !== "done") throw new Error(`${op}: ${JSON.stringify(step).slice(0, 300)}`);
		return performance.now() - t;
	};
	let t = performance.now();
	engine.setSemanticModel(modelFile());
	const model_load_ms = performance.now() - t;
	const index_ms = run("sync_semantic_index", {});
	const times = ["car needs servicing", "a film seen with friends", "what to cook tonight", "plan a trip abroad", "fix the bike"].flatMap((q) => [run("semantic_search", { query: q }), run("semantic_search", { query: q })]);
	times.sort((a, b) => a - b);
	const path = "datanotes/main/public/film/Film 7.md";
	const now = Date.now();
	const text = vault(8)[208].text.replace("Some more words", "The projector broke halfway");
	engine.observe(JSON.stringify({ kind: "modified", path, text, mtime: now }), now);
	engine.tick(now + 10_000);
	const after_one_change_ms = run("semantic_search", { query: "the projector broke" });
	engine.free();
	const r = (x) => Math.round(x * 10) / 10;
	return { notes: n, model_load_ms: r(model_load_ms), index_ms: r(index_ms), search_ms_median: r(times[times.length >> 1]), search_after_one_change_ms: r(after_one_change_ms) };
}

/** The vault as the plugin lists it and hands it over (plugin/src/engine.ts
 * `openListed`): metastore.yaml read, every other note's path, size and mtime
 * packed. */
function listing(notes) {
	const meta = (f) => f.path === "datanotes/metastore.yaml";
	const rest = notes.filter((f) => !meta(f));
	return {
		read: utf8(JSON.stringify(notes.filter(meta))),
		paths: utf8(JSON.stringify(rest.map((f) => f.path))),
		sizes: new Float64Array(rest.map((f) => Buffer.byteLength(f.text))),
		mtimes: new Float64Array(rest.map((f) => f.mtime)),
	};
}

/** An engine (`Engine`: a wasm instance's class) opened on a `listing`, through the notes' cache if given. */
const openListed = (Engine, l, cache) => new Engine(l.read, "[]", Date.now(), cache, l.paths, l.sizes, l.mtimes);

/** Hands the named notes to an engine packed, as the plugin does
 * (plugin/src/engine.ts readNotes): `listed`, read right after the listing. */
function handing(notes) {
	const byPath = new Map(notes.map((f) => [f.path, f]));
	return (e, paths, listed) => {
		const read = paths.map((p) => byPath.get(p));
		const mtimes = new Float64Array(read.map((f) => f.mtime));
		const lengths = new Uint32Array(read.map((f) => f.text.length));
		e.readNotes(utf8(JSON.stringify(paths)), mtimes, utf8(read.map((f) => f.text).join("")), lengths, "[]", listed);
	};
}

/** What the engine names at a first open (`toRead`), handed over as the
 * plugin does (plugin/src/opening.ts, host.ts `batches`): at most 2 MB and 5,000
 * notes at a time, the last batches at most half of what is left (not under
 * 64 KB), in the engine's order. */
function handListed(e, notes, hand) {
	const size = new Map(notes.map((f) => [f.path, Buffer.byteLength(f.text)]));
	const wanted = JSON.parse(e.toRead());
	let part = [];
	let bytes = 0;
	let left = wanted.reduce((n, p) => n + size.get(p), 0);
	for (const p of wanted) {
		const most = Math.min(2 << 20, Math.max(64 << 10, left / 2));
		left -= size.get(p);
		if (part.length > 0 && (bytes + size.get(p) > most || part.length >= 5000)) {
			hand(e, part, true);
			part = [];
			bytes = 0;
		}
		part.push(p);
		bytes += size.get(p);
	}
	if (part.length > 0) hand(e, part, true);
	return wanted.length;
}

/** The rows the engine left unread (`unreadRows`), read as the plugin does in
 * the background: 1,000 a turn (plugin/src/host.ts `ROWS_PER_TURN`). */
function handRows(e, hand) {
	const rows = JSON.parse(e.unreadRows());
	for (let at = 0; at < rows.length; at += 1000) hand(e, rows.slice(at, at + 1000), false);
}

/** A first open as the plugin's (plugin/src/opening.ts): the vault listed, no
 * cache, so the engine names every note (`toRead`), read and handed over. */
function firstListed(notes) {
	const hand = handing(notes);
	const listed = listing(notes);
	const t = performance.now();
	const e = openListed(WasmEngine, listed);
	handListed(e, notes, hand);
	const ms = performance.now() - t;
	e.free();
	return Math.round(ms);
}

/** Reopens through the notes' cache (core/src/notecache.rs), as the plugin
 * does: the notes an hour old, the cache written by a first open; then a
 * reopen with nothing changed and one with 1,000 notes changed (another mtime).
 * Each reopen as the plugin's (plugin/src/opening.ts): the vault listed with
 * sizes and mtimes, metastore.yaml read, then the notes the engine names
 * (`toRead`: what the cache does not vouch for) read and handed over: the
 * engine answers from then on. Then, as the plugin does in the background, the
 * rows it did not read (`unreadRows`), 1,000 a turn (plugin/src/host.ts
 * `readRows`): `rows_read_after_ms`. */
function reopenCached(notes) {
	const hourAgo = Date.now() - 3600e3;
	const files = notes.map((f) => ({ ...f, mtime: hourAgo }));
	let engine = new WasmEngine(utf8(JSON.stringify(files)), "[]", Date.now());
	// Bytes, as the plugin writes the cache and reads it back (plugin/src/opening.ts).
	const cacheBytes = engine.takeCache();
	engine.free();
	const open = (notes) => {
		const hand = handing(notes);
		let t = performance.now();
		const e = openListed(WasmEngine, listing(notes), cacheBytes);
		const wanted = handListed(e, notes, hand);
		const ms = performance.now() - t;
		t = performance.now();
		handRows(e, hand);
		const after = performance.now() - t;
		if (JSON.parse(e.unreadRows()).length > 0) throw new Error("rows left unread");
		// The cache as the plugin then writes it (host.ts keepCache): a segment
		// appended when few notes changed.
		t = performance.now();
		const cache = e.takeCache();
		const took = { ms: Math.round(performance.now() - t), bytes: cache?.length ?? 0, appends: e.cacheAppends() };
		e.free();
		return [Math.round(ms), wanted, Math.round(after), took];
	};
	const [unchanged_ms, unchanged_read, rows_read_after_ms] = open(files);
	let k = 0;
	const changed = files.map((f) => (f.path.includes("/film/") && k++ < 1000 ? { ...f, text: f.text.replace("Notes on", "Notes about"), mtime: hourAgo + 1000 } : f));
	const [changed_1000_ms, , , cache_after] = open(changed);
	return { notes: files.length, cache_mb: Math.round(cacheBytes.length / 1e5) / 10, unchanged_ms, notes_read: unchanged_read, rows_read_after_ms, changed_1000_ms, cache_after_changed_1000: cache_after };
}

const wasmBytes = readFileSync(new URL("../plugin/wasm/datanotes_core_bg.wasm", import.meta.url));
const exports = await init({ module_or_path: wasmBytes });

/** The engine in a wasm instance of its own, as the plugin's worker holds one:
 * its linear memory is this engine's alone (memory only grows, and this
 * process's main instance has opened every other vault). */
async function freshInstance() {
	const dir = mkdtempSync(join(tmpdir(), "datanotes-bench-glue-"));
	const glue = join(dir, "datanotes_core.mjs");
	writeFileSync(glue, readFileSync(new URL("../plugin/wasm/datanotes_core.js", import.meta.url)));
	try {
		const m = await import(glue);
		const e = m.initSync({ module: wasmBytes });
		return { Engine: m.WasmEngine, bytes: () => e.memory.buffer.byteLength };
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

/** The memory of the plugin's engine (issue 17 point 5), each in a fresh
 * instance: after a first open as the plugin's (listed, every note read and
 * handed over, the notes' cache taken), after a reopen through that cache,
 * once the lookups are built, and once the rows are read in the background. */
async function pluginMemory(notes, jsonBytes) {
	const hourAgo = Date.now() - 3600e3;
	const files = notes.map((f) => ({ ...f, mtime: hourAgo }));
	const hand = handing(files);
	const listed = listing(files);
	const x = (b) => Math.round((b / jsonBytes) * 10) / 10;
	let { Engine, bytes } = await freshInstance();
	let e = openListed(Engine, listed);
	handListed(e, files, hand);
	const cache = e.takeCache();
	const first = bytes();
	e.free();
	({ Engine, bytes } = await freshInstance());
	e = openListed(Engine, listed, cache);
	handListed(e, files, hand);
	const reopen = bytes();
	// As the plugin then does once idle (host.ts readRows): the lookups
	// built, then the rows read.
	e.warmLookups();
	const lookups = bytes();
	handRows(e, hand);
	const idle = bytes();
	e.free();
	return {
		first_open_mb: Math.round(first / 1e6),
		first_open_x_notes: x(first),
		reopen_mb: Math.round(reopen / 1e6),
		reopen_x_notes: x(reopen),
		reopen_lookups_built_mb: Math.round(lookups / 1e6),
		reopen_lookups_built_x_notes: x(lookups),
		reopen_rows_read_mb: Math.round(idle / 1e6),
		reopen_rows_read_x_notes: x(idle),
	};
}
const sizes = process.argv.slice(2).map(Number);
const out = {};
for (const n of sizes.length > 0 ? sizes : [10000, 100000]) {
	const json = JSON.stringify(vault(n));
	let t = performance.now();
	let engine = new WasmEngine(utf8(json), "[]", Date.now());
	const first = performance.now() - t;
	engine.free();
	t = performance.now();
	engine = new WasmEngine(utf8(json), "[]", Date.now());
	const second = performance.now() - t;
	engine.free();
	const wasm = {
		first_open_ms: Math.round(first),
		second_open_ms: Math.round(second),
		first_open_listed_ms: firstListed(vault(n)),
		json_mb: Math.round(json.length / 1e5) / 10,
		memory_mb: Math.round(exports.memory.buffer.byteLength / 1e6),
		memory_x_notes: Math.round((exports.memory.buffer.byteLength / json.length) * 10) / 10,
	};
	wasm.plugin_memory = await pluginMemory(vault(n), json.length);
	wasm.reopen = reopenCached(vault(n));
	// A tenth of the notes rows: the reopen reads those and no other note.
	wasm.reopen_mixed = reopenCached(mixed(n));
	// The native engine on the same notes, in this run (`datanotes bench --notes`).
	const native = nativeOpen(json);
	out[n] = native
		? {
				wasm,
				native,
				first_open_wasm_over_native: Math.round((wasm.first_open_ms / native.first_open_ms) * 100) / 100,
				first_open_listed_wasm_over_native: Math.round((wasm.first_open_listed_ms / native.first_open_ms) * 100) / 100,
			}
		: { wasm, native: "no release binary: cargo build --release -p datanotes (or set DATANOTES_BIN)" };
}
out.semantic = semantic(sizes[0] ?? 10000);
console.log(JSON.stringify({ open: out }));
