// "Install the model to search by meaning": the plugin's engine carries no
// model (main.js stays small), so the datanotes program on this computer copies
// its own into the vault's store (`datanotes install-model`), once, after the
// person has read what it does. Nothing is downloaded; a sync tool then carries
// the file to the vault's other devices, phones included.

import { type App, Modal, Setting } from "obsidian";

/** What the binary printed or why it failed. */
export interface Ran {
	code: number;
	stdout: string;
	stderr: string;
}

export interface InstallDeps {
	/** Runs the datanotes binary with these arguments; null when this device has
	 * none (mobile, or not found), with the reason. */
	run: ((args: string[]) => Promise<Ran>) | { missing: string };
	/** The vault's folder on disk. */
	vault: string;
	/** Shows the disclosure; true when the person chose to install. */
	confirm(): Promise<boolean>;
	notice(text: string): void;
}

export const DISCLOSURE =
	"Copies the model to search by meaning (potion-base-8M by Minish Lab, MIT licence, about 8 MB) from the datanotes program on this computer into this vault's .datanotes/models/ folder. Nothing is downloaded. Your sync tool carries it to your other devices.";

/** Installs the model, as the person agrees, and says how it went. */
export async function installModel(d: InstallDeps): Promise<void> {
	if ("missing" in d.run) {
		d.notice(`Datanotes: ${d.run.missing}. Install the model from a computer with the datanotes program: datanotes install-model --vault "${d.vault}"`);
		return;
	}
	if (!(await d.confirm())) return;
	let ran: Ran;
	try {
		ran = await d.run(["install-model", "--vault", d.vault]);
	} catch (e) {
		d.notice(`Datanotes: the model could not be installed: ${e instanceof Error ? e.message : String(e)}`);
		return;
	}
	if (ran.code !== 0) {
		const why = ran.stderr.trim().replace(/^datanotes: /, "") || `datanotes exited with ${ran.code}`;
		d.notice(`Datanotes: the model could not be installed: ${why}`);
		return;
	}
	let answer: { already?: boolean; bytes?: number } = {};
	try {
		answer = JSON.parse(ran.stdout) as typeof answer;
	} catch {
		// An answer that is not JSON: the file is there all the same (exit 0).
	}
	const size = answer.bytes ? ` (${(answer.bytes / 1e6).toFixed(1)} MB)` : "";
	d.notice(answer.already ? "Datanotes: the model to search by meaning was already installed." : `Datanotes: the model to search by meaning is installed${size}.`);
}

/** The disclosure, with Install and Cancel. */
export class InstallModelModal extends Modal {
	private chosen = false;

	constructor(
		app: App,
		private readonly done: (install: boolean) => void,
	) {
		super(app);
	}

	onOpen(): void {
		this.setTitle("Install the model to search by meaning");
		this.contentEl.createEl("p", { text: DISCLOSURE });
		new Setting(this.contentEl)
			.addButton((b) => b.setButtonText("Cancel").onClick(() => this.close()))
			.addButton((b) =>
				b
					.setButtonText("Install")
					.setCta()
					.onClick(() => {
						this.chosen = true;
						this.close();
					}),
			);
	}

	onClose(): void {
		this.contentEl.empty();
		this.done(this.chosen);
	}
}

/** The person's answer to the disclosure. */
export function confirmInstall(app: App): Promise<boolean> {
	return new Promise((resolve) => new InstallModelModal(app, resolve).open());
}
