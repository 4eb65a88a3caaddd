// Search by meaning's first run (issue 53, point 5): a button, not prose. On a
// computer, Install runs the datanotes program's install-model and shows its
// steps; on a phone or tablet the form says the model arrives with the vault
// and says when it has. What a person reads names no file and no command (the
// command is behind Details). A fake execFile stands for the program; it
// writes the model into obsidian-test-mocks' vault as the program would.

import type { App as AppOriginal } from "obsidian";
import { App, Notice } from "obsidian-test-mocks/obsidian";
import { afterEach, describe, expect, test, vi } from "vitest";
import { registerCommands } from "../src/commands";
import { ARRIVES, DISCLOSURE, drawModelSetup, INSTALL_MODEL_COMMAND, LOOK_EVERY_MS, MeaningModel, meaningModel, meaningModelOf, type ModelInstallOptions, ModelSetupModal } from "../src/model-install";
import { keepModalsOpen } from "./engine";

const VAULT = "/home/me/My Notes";
const BIN = "/usr/local/bin/datanotes";
const MODEL = ".datanotes/models/potion-base-8M.dnmodel";

interface Ran {
	file: string;
	args: string[];
	options: { timeout?: number };
}

type Answer = { error?: Error & { code?: number | string; killed?: boolean }; stdout?: string; stderr?: string };

/** A fake child_process whose execFile records its call, puts the model in
 * the vault when it succeeds (as the program does), and answers `answer`. */
function fakeCp(app: App, answer: Answer, writes = true) {
	const calls: Ran[] = [];
	const cp = {
		execFile: (file: string, args: string[], options: { timeout?: number }, cb: (e: Error | null, stdout: string, stderr: string) => void) => {
			calls.push({ file, args, options });
			void (async () => {
				if (!answer.error && writes) await app.vault.adapter.write(MODEL, "model");
				cb(answer.error ?? null, answer.stdout ?? "", answer.stderr ?? "");
			})();
		},
	};
	return { cp: cp as unknown as ModelInstallOptions["cp"], calls };
}

function newApp(): App {
	return App.createConfigured__({ files: {} });
}

function options(app: App, o: Partial<ModelInstallOptions>): ModelInstallOptions {
	return { app: app.asOriginalType__() as AppOriginal, cp: null, binary: () => BIN, vault: VAULT, ...o };
}

/** The text a person reads in `el`: all but what is folded in Details. */
function visible(el: HTMLElement): string {
	const copy = el.cloneNode(true) as HTMLElement;
	for (const d of Array.from(copy.querySelectorAll("details"))) d.remove();
	return copy.textContent ?? "";
}

/** File names, paths and shell commands: never where a person reads. */
function plumbing(text: string): string[] {
	const words = [/\.datanotes/, /\.dnmodel/, /install-model/, /--vault/, /\/usr\//, /My Notes/, /`/];
	return words.filter((w) => w.test(text)).map(String);
}

const SUCCESS = { stdout: `{"ok":true,"path":"${VAULT}/${MODEL}","bytes":7563264,"model":"potion-base-8M","id":"x","already":false}\n` };

afterEach(() => {
	vi.restoreAllMocks();
	vi.useRealTimers();
});

describe("search by meaning's first run", () => {
	test("on a computer: what Install does, the button; Install runs install-model --vault <vault> and shows each step", async () => {
		const app = newApp();
		const { cp, calls } = fakeCp(app, SUCCESS);
		const model = new MeaningModel(options(app, { cp }));
		const el = createDiv();
		document.body.appendChild(el);
		const ready = vi.fn();
		drawModelSetup(el, model, ready);
		expect(visible(el)).toContain("Search by meaning needs its model");
		expect(visible(el)).toContain(DISCLOSURE);
		expect(DISCLOSURE).toContain("about 8 MB, MIT licence, potion-base-8M by Minish Lab");
		expect(DISCLOSURE).toContain("Nothing is downloaded.");
		expect(plumbing(visible(el))).toEqual([]);
		// The command is one click away.
		expect(el.querySelector("details pre")?.textContent).toBe(`Runs: ${BIN} install-model --vault "${VAULT}"`);
		const button = el.querySelector<HTMLButtonElement>("button.datanotes-model-install") as HTMLButtonElement;
		expect(button.textContent).toBe("Install the model");
		const progress = el.querySelector("progress") as HTMLProgressElement;
		expect(progress.hidden).toBe(true);
		const steps: string[] = [];
		const status = el.querySelector(".datanotes-model-status") as HTMLElement;
		new MutationObserver(() => steps.push(`${status.textContent ?? ""} (${progress.value}/3)`)).observe(status, { childList: true, characterData: true, subtree: true });
		button.click();
		expect(button.disabled).toBe(true);
		expect(progress.hidden).toBe(false);
		await vi.waitFor(() => expect(ready).toHaveBeenCalledTimes(1));
		expect(calls).toEqual([{ file: BIN, args: ["install-model", "--vault", VAULT], options: expect.objectContaining({ timeout: 60_000 }) as never }]);
		expect(steps).toEqual([
			"Copying the model from the Datanotes program… (1/3)",
			"Checking that the vault holds it… (2/3)",
			"Installed. (3/3)",
			"The model is installed (7.6 MB): search by meaning is ready. (3/3)",
		]);
		expect(plumbing(visible(el))).toEqual([]);
		expect(await model.present()).toBe(true);
		el.remove();
	});

	test("a program that fails says so in words, its own text behind Details; Install again", async () => {
		const cases: [Answer, RegExp][] = [
			[{ error: Object.assign(new Error("Command failed"), { code: 1 }), stderr: `datanotes: ${VAULT} holds no Datanotes database: run \`datanotes init --vault DIR\` first\n` }, /this vault holds no Datanotes database yet/],
			[{ error: Object.assign(new Error(`spawn ${BIN} EACCES`), { code: "EACCES" }) }, /could not be started: check the setting Datanotes binary/],
			[{ error: Object.assign(new Error("Command failed"), { code: 1 }), stderr: `datanotes: ${VAULT}/${MODEL} cannot be written: disk full\n` }, /could not write it into this vault/],
			[{ error: Object.assign(new Error("timed out"), { killed: true }) }, /did not finish within 60 seconds/],
		];
		for (const [answer, said] of cases) {
			const app = newApp();
			const { cp } = fakeCp(app, answer);
			const el = createDiv();
			const ready = vi.fn();
			drawModelSetup(el, new MeaningModel(options(app, { cp })), ready);
			const button = el.querySelector<HTMLButtonElement>("button.datanotes-model-install") as HTMLButtonElement;
			button.click();
			await vi.waitFor(() => expect(button.disabled).toBe(false));
			expect(ready).not.toHaveBeenCalled();
			expect(button.textContent).toBe("Install again");
			const status = el.querySelector(".datanotes-model-status")?.textContent ?? "";
			expect(status).toMatch(said);
			expect(plumbing(visible(el)), status).toEqual([]);
			// The program's own words, for whoever wants them.
			const details = el.querySelector("details pre")?.textContent ?? "";
			expect(details).toContain(`${BIN} install-model --vault "${VAULT}"`);
			if (answer.stderr) expect(details).toContain(answer.stderr.trim());
			expect((el.querySelector("progress") as HTMLProgressElement).hidden).toBe(true);
		}
	});

	test("on a computer without the program: Install says where it looked, and runs nothing", async () => {
		const app = newApp();
		const { cp, calls } = fakeCp(app, SUCCESS);
		const el = createDiv();
		drawModelSetup(el, new MeaningModel(options(app, { cp, binary: () => null })), () => undefined);
		const button = el.querySelector<HTMLButtonElement>("button.datanotes-model-install") as HTMLButtonElement;
		button.click();
		await vi.waitFor(() => expect(button.textContent).toBe("Install again"));
		expect(calls).toEqual([]);
		expect(el.querySelector(".datanotes-model-status")?.textContent).toBe(
			"The Datanotes program was not found on this computer: install it, or give its place in the setting Datanotes binary, then press Install again.",
		);
		expect(plumbing(visible(el))).toEqual([]);
	});

	test("on a phone: no button; the model arrives with the vault, and the form says when it has", async () => {
		vi.useFakeTimers();
		const app = newApp();
		const el = createDiv();
		document.body.appendChild(el);
		const ready = vi.fn();
		const stop = drawModelSetup(el, new MeaningModel(options(app, { cp: null, vault: null })), ready);
		expect(el.querySelector("button")).toBeNull();
		expect(visible(el)).toContain(ARRIVES);
		expect(plumbing(visible(el))).toEqual([]);
		const status = () => el.querySelector(".datanotes-model-status")?.textContent;
		await vi.advanceTimersByTimeAsync(LOOK_EVERY_MS * 2);
		expect(status()).toBe("Waiting for the model…");
		expect(ready).not.toHaveBeenCalled();
		// A sync brings it.
		await app.vault.adapter.write(MODEL, "model");
		await vi.advanceTimersByTimeAsync(LOOK_EVERY_MS);
		expect(status()).toBe("The model has arrived: search by meaning is ready.");
		expect(ready).toHaveBeenCalledTimes(1);
		// It stops looking once it has.
		const exists = vi.spyOn(app.vault.adapter, "exists");
		await vi.advanceTimersByTimeAsync(LOOK_EVERY_MS * 3);
		expect(exists).not.toHaveBeenCalled();
		stop();
		el.remove();
	});

	test("a phone's form taken away stops looking", async () => {
		vi.useFakeTimers();
		const app = newApp();
		const el = createDiv();
		document.body.appendChild(el);
		drawModelSetup(el, new MeaningModel(options(app, { cp: null, vault: null })), () => undefined);
		el.remove();
		const exists = vi.spyOn(app.vault.adapter, "exists");
		await vi.advanceTimersByTimeAsync(LOOK_EVERY_MS * 3);
		expect(exists).not.toHaveBeenCalled();
	});

	test("the modal: Install, then what comes next; Cancel runs nothing", async () => {
		keepModalsOpen();
		const app = newApp();
		const { cp, calls } = fakeCp(app, SUCCESS);
		const model = new MeaningModel(options(app, { cp }));
		let modal = new ModelSetupModal(app.asOriginalType__() as AppOriginal, model);
		modal.open();
		const cancel = Array.from(modal.contentEl.querySelectorAll("button")).find((b) => b.textContent === "Cancel") as HTMLButtonElement;
		cancel.click();
		expect(calls).toEqual([]);
		const then = vi.fn();
		modal = new ModelSetupModal(app.asOriginalType__() as AppOriginal, model, then);
		const closed = vi.spyOn(modal, "close");
		modal.open();
		expect(modal.titleEl.textContent).toBe(INSTALL_MODEL_COMMAND);
		modal.contentEl.querySelector<HTMLButtonElement>("button.datanotes-model-install")?.click();
		await vi.waitFor(() => expect(then).toHaveBeenCalledTimes(1), { timeout: 3000 });
		expect(closed).toHaveBeenCalled();
		expect(calls).toHaveLength(1);
	});

	test("the command opens the first run, or says the vault has the model already", async () => {
		keepModalsOpen();
		const commands = new Map<string, { name: string; callback: () => void }>();
		const plugin = { addCommand: (c: { id: string; name: string; callback: () => void }) => commands.set(c.id, c) };
		const app = newApp();
		const model = meaningModel(options(app, { cp: fakeCp(app, SUCCESS).cp }));
		expect(meaningModelOf(app.asOriginalType__() as AppOriginal)).toBe(model);
		const door = { call: vi.fn(), onChange: () => () => undefined };
		registerCommands(plugin as never, { app: app.asOriginalType__() as AppOriginal, door: door as never, operations: () => [], openHistory: async () => undefined, openProblems: async () => undefined, checkTables: async () => undefined, model });
		const command = commands.get("install-meaning-model");
		expect(command?.name).toBe(INSTALL_MODEL_COMMAND);
		const opened = vi.spyOn(ModelSetupModal.prototype, "onOpen");
		command?.callback();
		await vi.waitFor(() => expect(opened).toHaveBeenCalledTimes(1));
		await app.vault.adapter.write(MODEL, "model");
		const said = vi.spyOn(Notice.prototype, "constructor__");
		command?.callback();
		await vi.waitFor(() => expect(said.mock.calls.map((c) => String(c[0]))).toEqual(["Datanotes: this vault has the model to search by meaning already."]));
		expect(opened).toHaveBeenCalledTimes(1);
	});
});
