// Search by meaning's first run (issues 19 and 53): the plugin's engine
// carries no model (main.js stays small), so the first search meets a button,
// not a paragraph. On a computer, Install has the datanotes program there copy
// its own model into the vault's store (`datanotes install-model --vault DIR`,
// nothing downloaded), with its steps shown as they go; a sync tool then
// carries the file to the vault's other devices. On a phone or tablet there is
// no program: the model arrives with the vault from a computer that installed
// it, and the form says so, then says when it has arrived. What a person reads
// names no file and no command: those are behind Details. Node's child_process
// comes in as an argument (node-modules.ts nodeModule): this file imports none.

import { type App, Modal, Notice } from "obsidian";
import { SEMANTIC_MODEL_FILE, STORE_DIR } from "./host";

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

/** The command's name. */
export const INSTALL_MODEL_COMMAND = "Install the model to search by meaning";

/** What Install does, before anything runs. */
export const DISCLOSURE =
	"Install copies the model to search by meaning (about 8 MB, MIT licence, potion-base-8M by Minish Lab) from the Datanotes program on this computer into this vault. Nothing is downloaded. Your sync tool carries it to your other devices.";

/** Where the model comes from on a phone or tablet. */
export const ARRIVES =
	"On a phone or tablet the model arrives with the vault: install it once from Obsidian on a computer where the Datanotes program is installed, and your sync tool brings it here. This waits for it.";

/** How long `datanotes install-model` may take (it copies 8 MB). */
const TIMEOUT_MS = 60_000;
/** How often a device without the program looks for the model a sync brings (ms). */
export const LOOK_EVERY_MS = 5000;

/** How an install ended: said in words, the program's own text for Details. */
export interface Installed {
	ok: boolean;
	said: string;
	details: string;
}

/** A step of the install, as its progress shows it. */
export type Step = "copying" | "checking" | "done";

/** Apps whose meaning setup main.ts made: the views that Obsidian builds from a
 * leaf get the app, and find it here. */
const setups = new WeakMap<App, MeaningModel>();

/** Search by meaning's model on this device: whether the vault has it, and how it gets there. */
export class MeaningModel {
	constructor(readonly o: ModelInstallOptions) {}

	/** Whether this vault's store holds the model. */
	async present(): Promise<boolean> {
		try {
			return await this.o.app.vault.adapter.exists(`${STORE_DIR}/${SEMANTIC_MODEL_FILE}`);
		} catch {
			return false;
		}
	}

	/** Where Install can run: a computer with the vault on disk. */
	canRun(): boolean {
		return this.o.cp !== null && this.o.vault !== null;
	}

	/** The program Install runs, or null when none is found. */
	program(): string | null {
		return this.canRun() ? this.o.binary() : null;
	}

	/** What Install runs, for Details. */
	command(bin: string | null): string {
		const vault = this.o.vault === null ? "<this vault's folder>" : quoted(this.o.vault);
		return `${bin === null ? "datanotes" : quoted(bin)} install-model --vault ${vault}`;
	}

	/** Runs the program, telling each step; how it ended. */
	async install(step: (s: Step) => void = () => undefined): Promise<Installed> {
		const bin = this.program();
		if (!this.o.cp || this.o.vault === null || bin === null) {
			return { ok: false, said: "The Datanotes program was not found on this computer: install it, or give its place in the setting Datanotes binary, then press Install again.", details: `Looked for: ${this.command(bin)}` };
		}
		step("copying");
		const ran = await run(this.o.cp, bin, this.o.vault);
		if (!ran.ok) return ran;
		step("checking");
		if (!(await this.present())) return { ok: false, said: "The program said it installed the model, but this vault does not hold it: press Install again.", details: ran.details };
		step("done");
		return ran;
	}
}

/** The meaning setup of `app`'s plugin: main.ts's, else one that runs nothing (a view built elsewhere, a test). */
export function meaningModelOf(app: App): MeaningModel {
	return setups.get(app) ?? new MeaningModel({ app, cp: null, binary: () => null, vault: null });
}

/** Makes the plugin's meaning setup (main.ts), for its commands and views. */
export function meaningModel(o: ModelInstallOptions): MeaningModel {
	const m = new MeaningModel(o);
	setups.set(o.app, m);
	return m;
}

function quoted(path: string): string {
	return /^[\w./:\\-]+$/.test(path) ? path : `"${path}"`;
}

/** Runs `<bin> install-model --vault <vault>`; its outcome in words. */
function run(cp: Pick<ChildProcesses, "execFile">, bin: string, vault: string): Promise<Installed> {
	const details = (more: string) => `${quoted(bin)} install-model --vault ${quoted(vault)}\n${more}`.trim();
	return new Promise((resolve) => {
		cp.execFile(bin, ["install-model", "--vault", vault], { timeout: TIMEOUT_MS, windowsHide: true }, (e, stdout, stderr) => {
			if (!e) return resolve({ ok: true, said: installed(String(stdout)), details: details(String(stdout)) });
			const said = (s: string) => resolve({ ok: false, said: s, details: details(`${e.message}\n${String(stderr)}`) });
			if (typeof e.code === "string") return said("The Datanotes program could not be started: check the setting Datanotes binary (Details says why).");
			if (e.killed || e.signal) return said(`The model was not installed: the Datanotes program did not finish within ${TIMEOUT_MS / 1000} seconds. Press Install again.`);
			// Exit 1: no database here, or the file cannot be written; exit 2: usage. Its words are the program's, for Details.
			if (/holds no Datanotes database/.test(String(stderr))) return said("The model was not installed: this vault holds no Datanotes database yet.");
			return said("The model was not installed: the Datanotes program could not write it into this vault (Details says why).");
		});
	});
}

/** What the program's answer says (one JSON line: bridge/src/main.rs install_model). */
function installed(stdout: string): string {
	let answer: { already?: unknown; bytes?: unknown } = {};
	try {
		answer = JSON.parse(stdout.trim().split("\n").pop() ?? "") as typeof answer;
	} catch {
		// Exit 0 all the same: the file is there.
	}
	if (answer.already === true) return "The model was already installed in this vault: search by meaning is ready.";
	const size = typeof answer.bytes === "number" ? ` (${(answer.bytes / 1e6).toFixed(1)} MB)` : "";
	return `The model is installed${size}: search by meaning is ready.`;
}

/** The words of each step, and how far along it is (of 3). */
const STEPS: Record<Step, [string, number]> = {
	copying: ["Copying the model from the Datanotes program…", 1],
	checking: ["Checking that the vault holds it…", 2],
	done: ["Installed.", 3],
};

/** Draws the first run of search by meaning in `el`: on a computer, what
 * Install does and the button, then its progress; elsewhere, that the model
 * arrives with the vault, and when it has. `ready` runs once the model is
 * there. Returns a function that stops looking (a device without the program
 * looks every LOOK_EVERY_MS until `el` leaves the document, or this is called). */
export function drawModelSetup(el: HTMLElement, model: MeaningModel, ready: () => void): () => void {
	el.empty();
	el.addClass("datanotes-model-setup");
	el.createEl("p", { text: "Search by meaning needs its model, installed once for the vault.", cls: "datanotes-model-need" });
	if (!model.canRun()) return waitForModel(el, model, ready);
	el.createEl("p", { text: DISCLOSURE, cls: "datanotes-muted" });
	const button = el.createEl("button", { text: "Install the model", cls: "mod-cta datanotes-model-install" });
	const progress = el.createEl("progress", { cls: "datanotes-model-progress", attr: { max: "3", "aria-label": "Installing the model" } });
	progress.hidden = true;
	const status = el.createDiv({ cls: "datanotes-model-status", attr: { "aria-live": "polite" } });
	const details = el.createEl("details", { cls: "datanotes-details" });
	details.createEl("summary", { text: "Details" });
	const detailsText = details.createEl("pre", { text: `Runs: ${model.command(model.program())}`, cls: "datanotes-details-text" });
	button.addEventListener("click", () => {
		button.disabled = true;
		progress.hidden = false;
		progress.value = 0;
		void model
			.install((s) => {
				const [said, n] = STEPS[s];
				status.setText(said);
				progress.value = n;
			})
			.then((done) => {
				status.setText(done.said);
				detailsText.setText(done.details);
				if (done.ok) return ready();
				progress.hidden = true;
				button.disabled = false;
				button.setText("Install again");
			});
	});
	return () => undefined;
}

/** On a device without the program: says where the model comes from, and looks for it until it arrives. */
function waitForModel(el: HTMLElement, model: MeaningModel, ready: () => void): () => void {
	el.createEl("p", { text: ARRIVES, cls: "datanotes-muted" });
	const status = el.createDiv({ text: "Waiting for the model…", cls: "datanotes-model-status", attr: { "aria-live": "polite" } });
	let timer: number | null = null;
	const stop = () => {
		if (timer !== null) window.clearInterval(timer);
		timer = null;
	};
	// Drawn into the document, then taken out of it (the panel drawn again): done looking.
	let shown = false;
	const look = async () => {
		if (el.isConnected) shown = true;
		else if (shown) return stop();
		if (!(await model.present())) return;
		stop();
		status.setText("The model has arrived: search by meaning is ready.");
		ready();
	};
	timer = window.setInterval(() => void look(), LOOK_EVERY_MS);
	void look();
	return stop;
}

/** The first run in a modal ("Install the model to search by meaning", or
 * "Search by meaning…" before the model is there); `then` once it is there. */
export class ModelSetupModal extends Modal {
	private stop: () => void = () => undefined;
	private installed = false;

	constructor(
		app: App,
		private readonly model: MeaningModel,
		private readonly then: () => void = () => undefined,
	) {
		super(app);
	}

	onOpen(): void {
		// Where nothing can be installed (a phone), the model is waited for, not installed.
		this.setTitle(this.model.canRun() ? INSTALL_MODEL_COMMAND : "The model to search by meaning");
		this.contentEl.addClass("datanotes-modal");
		const body = this.contentEl.createDiv();
		this.stop = drawModelSetup(body, this.model, () => {
			this.installed = true;
			// Read the words of the last step before the next thing opens.
			window.setTimeout(() => {
				this.close();
				this.then();
			}, 1200);
		});
		const buttons = this.contentEl.createDiv({ cls: "modal-button-container" });
		buttons.createEl("button", { text: this.installed ? "Close" : "Cancel" }).addEventListener("click", () => this.close());
	}

	onClose(): void {
		this.stop();
		this.contentEl.empty();
	}
}

/** "Install the model to search by meaning": says so when the vault has it already. */
export async function installMeaningModel(app: App, model: MeaningModel): Promise<void> {
	if (await model.present()) return void new Notice("Datanotes: this vault has the model to search by meaning already.");
	new ModelSetupModal(app, model).open();
}
