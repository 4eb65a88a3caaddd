// The companion bridge as a child of Obsidian (desktop): `datanotes serve
// --bridge` attached to the engine that holds the vault (this plugin's, through
// its loopback door), so that agents get the whole HTTP API, OpenAPI, the long
// poll and MCP over HTTP at /mcp while Obsidian runs. The plugin starts it,
// watches it, restarts it with back-off when it dies, and stops it when it
// unloads; `--exit-with-stdin` ends it with Obsidian even when Obsidian is killed
// (the pipe closes). A binary of another version than the plugin is refused.
// Node's modules come in as arguments (node-modules.ts nodeModule): this file imports none.

type ChildProcesses = typeof import("node:child_process");
type ChildProcess = import("node:child_process").ChildProcess;

export type BridgeState =
	| { kind: "off" }
	| { kind: "starting"; binary: string }
	| { kind: "running"; url: string; binary: string }
	/** `retryAt`: when it is started again (ms since the epoch), or null when
	 * starting again would not help (no binary, another version). */
	| { kind: "failed"; error: string; lines: string[]; retryAt: number | null };

export interface BridgeOptions {
	cp: Pick<ChildProcesses, "spawn" | "execFile">;
	/** The binary to run, or why there is none. */
	binary(): { path: string } | { error: string };
	/** The vault's folder. */
	vault: string;
	/** The port on 127.0.0.1 (0: any free one). */
	port(): number;
	/** The plugin's version: the binary must be the same. */
	version: string;
	/** The environment for the child (Node's process.env). */
	env: Record<string, string | undefined>;
	setTimer(fn: () => void, ms: number): number;
	clearTimer(id: number): void;
	now(): number;
}

/** How many of stderr's last lines a failure shows. */
const LINES = 12;
/** Waits before the starts that follow a death: 1 s, 2 s, 4 s … up to a minute. */
const BACKOFF_MS = [1000, 2000, 4000, 8000, 16000, 32000, 60000];
/** A child that ran this long before it died starts again after the first wait. */
const STABLE_MS = 60_000;
/** How long a stop waits for the child to end before it kills it. */
const STOP_MS = 3000;

export class Bridge {
	private current: BridgeState = { kind: "off" };
	private child: ChildProcess | null = null;
	private wanted = false;
	private failures = 0;
	private startedAt = 0;
	private retry: number | null = null;
	private lines: string[] = [];
	private readonly listeners = new Set<(s: BridgeState) => void>();
	/** Bumped at each start and stop: events of an older child are ignored. */
	private generation = 0;

	constructor(private readonly o: BridgeOptions) {}

	state(): BridgeState {
		return this.current;
	}

	/** Calls `fn` at each change of state; returns the function that unsubscribes. */
	onState(fn: (s: BridgeState) => void): () => void {
		this.listeners.add(fn);
		return () => this.listeners.delete(fn);
	}

	/** The pid of the running child, if any (for the tests and the status text). */
	pid(): number | null {
		return this.child?.pid ?? null;
	}

	/** Starts the bridge (again, when it runs: a new port or binary takes effect). */
	async start(): Promise<void> {
		await this.stop();
		this.wanted = true;
		this.failures = 0;
		await this.launch();
	}

	/** Stops the child and any restart: the state is off once it has ended. */
	async stop(): Promise<void> {
		this.wanted = false;
		this.generation++;
		if (this.retry !== null) this.o.clearTimer(this.retry);
		this.retry = null;
		const child = this.child;
		this.child = null;
		if (child && child.exitCode === null && child.signalCode === null) {
			const ended = new Promise<void>((resolve) => child.once("exit", () => resolve()));
			child.stdin?.end();
			child.kill("SIGTERM");
			let timer: number | null = null;
			const late = new Promise<void>((resolve) => {
				timer = this.o.setTimer(() => {
					child.kill("SIGKILL");
					resolve();
				}, STOP_MS);
			});
			await Promise.race([ended, late]);
			if (timer !== null) this.o.clearTimer(timer);
		}
		this.set({ kind: "off" });
	}

	private set(s: BridgeState): void {
		this.current = s;
		for (const fn of this.listeners) fn(s);
	}

	private fail(error: string, retry: boolean): void {
		let retryAt: number | null = null;
		if (retry && this.wanted) {
			const wait = BACKOFF_MS[Math.min(this.failures, BACKOFF_MS.length - 1)];
			this.failures++;
			retryAt = this.o.now() + wait;
			const generation = this.generation;
			this.retry = this.o.setTimer(() => {
				this.retry = null;
				if (generation === this.generation && this.wanted) void this.launch();
			}, wait);
		}
		this.set({ kind: "failed", error, lines: [...this.lines], retryAt });
	}

	private async launch(): Promise<void> {
		const generation = ++this.generation;
		this.lines = [];
		const bin = this.o.binary();
		if ("error" in bin) return this.fail(bin.error, false);
		this.set({ kind: "starting", binary: bin.path });
		const refused = await versionProblem(this.o.cp, bin.path, this.o.version);
		if (generation !== this.generation) return;
		if (refused) return this.fail(refused, false);
		const env = { ...this.o.env };
		// The bridge proves the engine with the vault's own token, never another one.
		delete env.DATANOTES_TOKEN;
		const args = ["serve", "--vault", this.o.vault, "--listen", `127.0.0.1:${this.o.port()}`, "--bridge", "--exit-with-stdin"];
		let child: ChildProcess;
		try {
			child = this.o.cp.spawn(bin.path, args, { stdio: ["pipe", "pipe", "pipe"], env, windowsHide: true });
		} catch (e) {
			return this.fail(`${bin.path} could not be started: ${message(e)}`, false);
		}
		this.child = child;
		this.startedAt = this.o.now();
		const mine = () => generation === this.generation;
		lines(child.stdout, (line) => {
			const url = /serving .*? at (http:\/\/[^\s,]+)/.exec(line)?.[1];
			if (url && mine()) this.set({ kind: "running", url, binary: bin.path });
		});
		lines(child.stderr, (line) => {
			if (!mine()) return;
			this.lines.push(line);
			if (this.lines.length > LINES) this.lines.shift();
		});
		child.on("error", (e) => {
			if (!mine()) return;
			this.child = null;
			this.fail(`${bin.path} could not be started: ${message(e)}`, false);
		});
		// "close" rather than "exit": stderr's last lines are in by then.
		child.on("close", (code, signal) => {
			if (!mine() || this.child !== child) return;
			this.child = null;
			if (this.o.now() - this.startedAt >= STABLE_MS) this.failures = 0;
			this.fail(`datanotes serve ended (${signal ? `signal ${signal}` : `exit code ${String(code)}`})`, true);
		});
	}
}

/** Why `binary` is not the one to run: it cannot run, or is another version. */
async function versionProblem(cp: Pick<ChildProcesses, "execFile">, binary: string, version: string): Promise<string | null> {
	const out = await new Promise<{ stdout: string; error: string | null }>((resolve) => {
		cp.execFile(binary, ["--version"], { timeout: 10_000, windowsHide: true }, (e, stdout) =>
			resolve({ stdout: String(stdout), error: e ? message(e) : null }),
		);
	});
	if (out.error !== null) {
		return `${binary} does not run (${out.error}): check the path in the setting, or install datanotes ${version}`;
	}
	const theirs = /^datanotes (\S+)/.exec(out.stdout.trim())?.[1];
	if (theirs === undefined) return `${binary} is not the datanotes command (--version printed "${out.stdout.trim().slice(0, 80)}")`;
	if (theirs !== version) {
		return `${binary} is datanotes ${theirs}, and this plugin is ${version}: install datanotes ${version}, or choose a binary of that version`;
	}
	return null;
}

/** Calls `fn` with each line a stream gives. */
function lines(stream: import("node:stream").Readable | null, fn: (line: string) => void): void {
	if (!stream) return;
	let rest = "";
	stream.setEncoding("utf8");
	stream.on("data", (chunk: string) => {
		const parts = (rest + chunk).split("\n");
		rest = parts.pop() ?? "";
		for (const p of parts) fn(p.replace(/\r$/, ""));
	});
}

function message(e: unknown): string {
	return e instanceof Error ? e.message : String(e);
}

/** Where the binary is: the first `datanotes` on the PATH, then the places
 * installers put it (Obsidian started from a dock may not have the shell's PATH). */
export function findBinary(path: string | undefined, home: string | undefined, windows: boolean, runnable: (p: string) => boolean): string | null {
	const sep = windows ? ";" : ":";
	const name = windows ? "datanotes.exe" : "datanotes";
	const dirs = (path ?? "").split(sep).filter((d) => d !== "");
	if (home) dirs.push(`${home}/.cargo/bin`, `${home}/.local/bin`);
	if (!windows) dirs.push("/usr/local/bin", "/opt/homebrew/bin");
	for (const d of dirs) {
		const p = `${d.replace(/[\\/]+$/, "")}/${name}`;
		if (runnable(p)) return p;
	}
	return null;
}

/** The state in words, for the settings and the status bar. */
export function stateText(s: BridgeState, now: number): string {
	switch (s.kind) {
		case "off":
			return "Stopped.";
		case "starting":
			return `Starting ${s.binary}…`;
		case "running":
			return `Running at ${s.url} (MCP at ${s.url}/mcp).`;
		case "failed": {
			const again = s.retryAt === null ? "" : ` Trying again in ${Math.max(1, Math.round((s.retryAt - now) / 1000))} s.`;
			return `Failed: ${s.error}.${again}`;
		}
	}
}
