// "Install the model to search by meaning" (issue 19): the plugin's engine
// carries no model (main.js stays small), so the datanotes program on this
// computer copies its own into the vault's store (`datanotes install-model
// --vault DIR`), once, after the person has read what it does. Nothing is
// downloaded; a sync tool then carries the file to the vault's other devices.
// On mobile, or with no program found, a Notice says how to do it from a
// computer. Node's child_process comes in as an argument (node-modules.ts
// nodeModule): this file imports none.

import { type App, Modal, Notice } from "obsidian";

type ChildProcesses = typeof import("node:child_process");

export interface ModelInstallOptions {
	app: App;
	/** Node's child_process; null where there is none (mobile). */
	cp: Pick<ChildProcesses, "execFile"> | null;
	/** The datanotes program: the setting Datanotes binary, else the one on the PATH; null when none. */
	binary(): string | null;
	/** The vault's folder on disk; null when it has none (mobile). */
	vault: string | null;
}

/** The command's name, as the search's hints name it. */
export const INSTALL_MODEL_COMMAND = "Install the model to search by meaning";

/** What the confirmation says, before anything runs. */
export const DISCLOSURE =
	"Copies the model to search by meaning (about 8 MB, MIT licence, potion-base-8M by Minish Lab) from the datanotes program on this computer into this vault's .datanotes/models/ folder. Nothing is downloaded. Your sync tool will carry it to your other devices.";

/** How long `datanotes install-model` may take (it copies 8 MB). */
const TIMEOUT_MS = 60_000;
/** How long the Notices stay (ms). */
const SHOWN_MS = 15_000;

/** Installs the model as the person agrees, and says how it went in a Notice. */
export async function installMeaningModel(o: ModelInstallOptions): Promise<void> {
	const bin = o.cp && o.vault !== null ? o.binary() : null;
	if (!o.cp || o.vault === null || bin === null) {
		new Notice(howTo(o.cp !== null && o.vault !== null, o.vault), SHOWN_MS);
		return;
	}
	if (!(await confirmInstall(o.app, bin, o.vault))) return;
	new Notice(await run(o.cp, bin, o.vault), SHOWN_MS);
}

/** How to install it where this device cannot: from a computer, with the program. */
function howTo(desktop: boolean, vault: string | null): string {
	const command = `datanotes install-model --vault ${vault === null ? "<this vault's folder>" : quoted(vault)}`;
	return desktop
		? `Datanotes: the datanotes program was not found (on the PATH, or in the setting Datanotes binary). Install it, then run this command again, or run in a terminal: ${command}`
		: `Datanotes: the model to search by meaning is installed from a computer. There, run: ${command}. Your sync tool then brings it to this device.`;
}

function quoted(path: string): string {
	return /^[\w./:\\-]+$/.test(path) ? path : `"${path}"`;
}

/** Runs `<bin> install-model --vault <vault>`; its outcome as the Notice says it. */
function run(cp: Pick<ChildProcesses, "execFile">, bin: string, vault: string): Promise<string> {
	return new Promise((resolve) => {
		cp.execFile(bin, ["install-model", "--vault", vault], { timeout: TIMEOUT_MS, windowsHide: true }, (e, stdout, stderr) => {
			if (!e) return resolve(installed(String(stdout)));
			if (typeof e.code === "string") return resolve(`Datanotes: ${bin} could not be started (${e.message}): check the setting Datanotes binary.`);
			if (e.killed || e.signal) return resolve(`Datanotes: the model was not installed: datanotes install-model did not finish within ${TIMEOUT_MS / 1000} s.`);
			// The program's message (exit 1: no database here, or the file cannot be written; exit 2: usage).
			const said = String(stderr).split("\n").find((l) => l.trim() !== "") ?? e.message;
			resolve(`Datanotes: the model was not installed: ${said.trim().replace(/^datanotes: /, "")}`);
		});
	});
}

/** The Notice for the program's answer: one JSON line (bridge/src/main.rs install_model). */
function installed(stdout: string): string {
	let answer: { already?: unknown; bytes?: unknown } = {};
	try {
		answer = JSON.parse(stdout.trim().split("\n").pop() ?? "") as typeof answer;
	} catch {
		// Exit 0 all the same: the file is there.
	}
	if (answer.already === true) return "Datanotes: the model to search by meaning was already installed in this vault.";
	const size = typeof answer.bytes === "number" ? ` (${(answer.bytes / 1e6).toFixed(1)} MB)` : "";
	return `Datanotes: the model to search by meaning is installed${size}.`;
}

/** The disclosure, with Install and Cancel; `done` gets the person's choice. */
export class InstallModelModal extends Modal {
	private chosen = false;

	constructor(
		app: App,
		private readonly command: string,
		private readonly done: (install: boolean) => void,
	) {
		super(app);
	}

	onOpen(): void {
		this.setTitle(INSTALL_MODEL_COMMAND);
		this.contentEl.createEl("p", { text: DISCLOSURE });
		this.contentEl.createEl("p", { text: `It runs: ${this.command}`, cls: "datanotes-muted" });
		// Plain buttons: their click is the DOM's, in Obsidian and in the tests alike.
		const buttons = this.contentEl.createDiv({ cls: "modal-button-container" });
		buttons.createEl("button", { text: "Cancel" }).addEventListener("click", () => this.close());
		buttons.createEl("button", { text: "Install", cls: "mod-cta" }).addEventListener("click", () => {
			this.chosen = true;
			this.close();
		});
	}

	onClose(): void {
		this.contentEl.empty();
		this.done(this.chosen);
	}
}

/** The person's answer to the disclosure: true for Install. */
function confirmInstall(app: App, bin: string, vault: string): Promise<boolean> {
	return new Promise((resolve) => new InstallModelModal(app, `${quoted(bin)} install-model --vault ${quoted(vault)}`, resolve).open());
}
