// What the plugin and its engine worker say to each other (worker-engine.ts,
// engine-worker.ts), and the notes handed over in bulk: three arrays and one
// string, so that a large vault crosses as a few values rather than one object
// per note (the copy on the main thread stays short).

import type { EngineApi, NoteFile, NoteListed } from "./types";

export type Method = keyof EngineApi | "init";

export interface Request {
	id: number;
	method: Method;
	args: unknown[];
}

export type Reply =
	| { id: number; ok: true; result: unknown; deadline: number | undefined; head: number }
	| { id: number; ok: false; error: string };

export interface Notes {
	paths: string[];
	mtimes: number[];
	/** Every text, one after another; `lengths` cuts them apart. */
	texts: string;
	lengths: number[];
}

export function packNotes(files: NoteFile[]): Notes {
	return {
		paths: files.map((f) => f.path),
		mtimes: files.map((f) => f.mtime),
		texts: files.map((f) => f.text).join(""),
		lengths: files.map((f) => f.text.length),
	};
}

/** Notes listed without their texts, in three arrays. */
export interface Listed {
	paths: string[];
	sizes: number[];
	mtimes: number[];
}

/** The notes read, packed; those listed only, apart. */
export function packListing(files: (NoteFile | NoteListed)[]): { notes: Notes; listed: Listed } {
	const { read, listed } = splitListing(files);
	return { notes: packNotes(read), listed };
}

/** The notes read, and those listed only, in three arrays. */
export function splitListing(files: (NoteFile | NoteListed)[]): { read: NoteFile[]; listed: Listed } {
	const read: NoteFile[] = [];
	const listed: Listed = { paths: [], sizes: [], mtimes: [] };
	for (const f of files) {
		if ("text" in f) {
			read.push(f);
		} else {
			listed.paths.push(f.path);
			listed.sizes.push(f.size);
			listed.mtimes.push(f.mtime);
		}
	}
	return { read, listed };
}

export function unpackNotes(n: Notes): NoteFile[] {
	const out: NoteFile[] = new Array<NoteFile>(n.paths.length);
	let at = 0;
	for (let i = 0; i < n.paths.length; i++) {
		out[i] = { path: n.paths[i], mtime: n.mtimes[i], text: n.texts.slice(at, at + n.lengths[i]) };
		at += n.lengths[i];
	}
	return out;
}
