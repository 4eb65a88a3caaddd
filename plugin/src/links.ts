// Symbolic links in the vault, on a desktop disk. Obsidian follows them, so a
// note or a table's folder that is a link can lead outside the vault (a file of
// the system, another person's folder); a vault shared by git or a sync tool can
// carry one planted by someone else. The engine never reads or writes through
// one, as the binary does not (bridge/src/read.rs, files.rs): links are left out at open,
// with a warning, and a write through one is refused.

/** What the file system says of links. */
export interface Links {
	/** Vault paths that are links (files or folders), outside dot folders. */
	scan(): Promise<Set<string>>;
	/** The first part of `path` (a folder, or the file itself) that is a link. */
	linkIn(path: string): Promise<string | null>;
}

/** Where files have no links (mobile, the tests' vault in memory). */
export const NO_LINKS: Links = {
	scan: () => Promise.resolve(new Set()),
	linkIn: () => Promise.resolve(null),
};

/** Why a path through a link is refused, and the way out (the binary's words). */
export function throughLink(path: string, link: string): string {
	const whose = link === path ? "" : ` (it is under ${link})`;
	return `${path} goes through a symbolic link${whose}: the engine never reads or writes through links, so that nothing outside the vault is touched; put the folder or file itself in the link's place`;
}

/** Whether `path` is a link of `links` or lies under one. */
export function underLink(path: string, links: Set<string>): string | null {
	for (const l of links) {
		if (path === l || path.startsWith(`${l}/`)) return l;
	}
	return null;
}

type NodeFs = typeof import("node:fs");

/** Folders found free of links stay so for this long: a batch of writes checks
 * each folder once, and a link put in place later is still seen. */
const FOLDER_TRUST_MS = 1000;

/** Links as Node's fs sees them under the vault's folder `base`. */
export function nodeLinks(fs: NodeFs, base: string): Links {
	const clean = new Map<string, number>();
	const isLink = async (rel: string): Promise<boolean | null> => {
		try {
			return (await fs.promises.lstat(`${base}/${rel}`)).isSymbolicLink();
		} catch {
			return null;
		}
	};
	return {
		async scan() {
			const found = new Set<string>();
			const folders = [""];
			while (folders.length > 0) {
				const dir = folders.pop() as string;
				let entries: import("node:fs").Dirent[];
				try {
					entries = await fs.promises.readdir(dir ? `${base}/${dir}` : base, { withFileTypes: true });
				} catch {
					continue;
				}
				for (const e of entries) {
					if (e.name.startsWith(".")) continue;
					const rel = dir ? `${dir}/${e.name}` : e.name;
					if (e.isSymbolicLink()) found.add(rel);
					else if (e.isDirectory()) folders.push(rel);
				}
			}
			return found;
		},
		async linkIn(path) {
			const parts = path.split("/");
			const now = Date.now();
			for (let i = 1; i <= parts.length; i++) {
				const rel = parts.slice(0, i).join("/");
				const folder = i < parts.length;
				if (folder && (clean.get(rel) ?? 0) > now) continue;
				const link = await isLink(rel);
				if (link === null) return null;
				if (link) return rel;
				if (folder) clean.set(rel, now + FOLDER_TRUST_MS);
			}
			return null;
		},
	};
}
