// "Install the model to search by meaning" (issue 19): the datanotes program
// copies its model into the vault's store once the person has read what it does
// and chosen Install; elsewhere, a Notice says how. A fake execFile stands for
// the program; the modal and the Notices are obsidian-test-mocks'.

import type { App as AppOriginal } from "obsidian";
import { App, Notice } from "obsidian-test-mocks/obsidian";
import { afterEach, describe, expect, test, vi } from "vitest";
import { registerCommands } from "../src/commands";
import { DISCLOSURE, INSTALL_MODEL_COMMAND, InstallModelModal, installMeaningModel, type ModelInstallOptions } from "../src/model-install";
import { keepModalsOpen } from "./engine";

const VAULT = "/home/me/Notes";
const BIN = "/usr/local/bin/datanotes";

interface Ran {
	file: string;
	args: string[];
	options: { timeout?: number };
}

/** A fake child_process whose execFile records its call and answers `answer`. */
function fakeCp(answer: { error?: Error & { code?: number | string }; stdout?: string; stderr?: string }) {
	const calls: Ran[] = [];
	const cp = {
		execFile: (file: string, args: string[], options: { timeout?: number }, cb: (e: Error | null, stdout: string, stderr: string) => void) => {
			calls.push({ file, args, options });
			setTimeout(() => cb(answer.error ?? null, answer.stdout ?? "", answer.stderr ?? ""), 1);
		},
	};
	return { cp: cp as unknown as ModelInstallOptions["cp"], calls };
}

function options(o: Partial<ModelInstallOptions>): ModelInstallOptions {
	const app = App.createConfigured__({ files: {} });
	return { app: app.asOriginalType__() as AppOriginal, cp: null, binary: () => BIN, vault: VAULT, ...o };
}

/** What the Notices said, in order. */
function notices() {
	const said = vi.spyOn(Notice.prototype, "constructor__");
	return () => said.mock.calls.map((c) => String(c[0]));
}

/** Runs the command, answers its modal with `choice`, and waits for the end. */
async function install(o: ModelInstallOptions, choice: "Install" | "Cancel"): Promise<InstallModelModal> {
	keepModalsOpen();
	const opened = vi.spyOn(InstallModelModal.prototype, "onOpen");
	const done = installMeaningModel(o);
	await vi.waitFor(() => expect(opened).toHaveBeenCalledTimes(1));
	const modal = opened.mock.contexts[0] as InstallModelModal;
	const buttons = Array.from(modal.contentEl.querySelectorAll("button"));
	expect(buttons.map((b) => b.textContent)).toEqual(["Cancel", "Install"]);
	const text = modal.contentEl.textContent ?? "";
	expect(text).toContain(DISCLOSURE);
	expect(text).toContain(`${BIN} install-model --vault ${VAULT}`);
	buttons.find((b) => b.textContent === choice)?.click();
	await done;
	return modal;
}

afterEach(() => vi.restoreAllMocks());

describe("install the model to search by meaning", () => {
	test("the disclosure says what happens; Install runs exactly install-model --vault <vault>, then says the size", async () => {
		expect(DISCLOSURE).toContain("about 8 MB, MIT licence, potion-base-8M by Minish Lab");
		expect(DISCLOSURE).toContain(".datanotes/models/");
		expect(DISCLOSURE).toContain("Nothing is downloaded.");
		const said = notices();
		const { cp, calls } = fakeCp({
			stdout: `{"ok":true,"path":"${VAULT}/.datanotes/models/potion-base-8M.dnmodel","bytes":7563264,"model":"potion-base-8M","id":"x","already":false}\n`,
		});
		const modal = await install(options({ cp }), "Install");
		expect(modal.titleEl.textContent).toBe(INSTALL_MODEL_COMMAND);
		expect(calls).toHaveLength(1);
		expect(calls[0].file).toBe(BIN);
		expect(calls[0].args).toEqual(["install-model", "--vault", VAULT]);
		expect(calls[0].options.timeout).toBe(60_000);
		expect(said()).toEqual(["Datanotes: the model to search by meaning is installed (7.6 MB)."]);
	});

	test("Cancel runs nothing and says nothing", async () => {
		const said = notices();
		const { cp, calls } = fakeCp({ stdout: "{}" });
		await install(options({ cp }), "Cancel");
		expect(calls).toEqual([]);
		expect(said()).toEqual([]);
	});

	test("already there: said as such", async () => {
		const said = notices();
		const { cp } = fakeCp({ stdout: '{"ok":true,"bytes":7563264,"model":"potion-base-8M","id":"x","already":true}\n' });
		await install(options({ cp }), "Install");
		expect(said()).toEqual(["Datanotes: the model to search by meaning was already installed in this vault."]);
	});

	test("exit 1: the program's message from stderr; a program that cannot start: why", async () => {
		let said = notices();
		const refused = fakeCp({
			error: Object.assign(new Error("Command failed"), { code: 1 }),
			stderr: `datanotes: ${VAULT} holds no Datanotes database: run \`datanotes init --vault DIR\` first\n`,
		});
		await install(options({ cp: refused.cp }), "Install");
		expect(said()).toEqual([`Datanotes: the model was not installed: ${VAULT} holds no Datanotes database: run \`datanotes init --vault DIR\` first`]);
		vi.restoreAllMocks();
		said = notices();
		const gone = fakeCp({ error: Object.assign(new Error(`spawn ${BIN} EACCES`), { code: "EACCES" }) });
		await install(options({ cp: gone.cp }), "Install");
		expect(said()[0]).toContain(`spawn ${BIN} EACCES`);
		expect(said()[0]).toContain("setting Datanotes binary");
	});

	test("no program found, or a device without one: how to install it from a computer, nothing asked", async () => {
		const opened = vi.spyOn(InstallModelModal.prototype, "onOpen");
		const said = notices();
		const { cp, calls } = fakeCp({ stdout: "{}" });
		await installMeaningModel(options({ cp, binary: () => null }));
		await installMeaningModel(options({ cp: null, vault: null }));
		expect(opened).not.toHaveBeenCalled();
		expect(calls).toEqual([]);
		const [desktop, mobile] = said();
		expect(desktop).toContain("not found");
		expect(desktop).toContain(`datanotes install-model --vault ${VAULT}`);
		expect(mobile).toContain("from a computer");
		expect(mobile).toContain("datanotes install-model --vault <this vault's folder>");
	});

	test("the command runs it", () => {
		const commands = new Map<string, { name: string; callback: () => void }>();
		const plugin = { addCommand: (c: { id: string; name: string; callback: () => void }) => commands.set(c.id, c) };
		const installModel = vi.fn(async () => undefined);
		const app = App.createConfigured__({ files: {} }).asOriginalType__() as AppOriginal;
		const door = { call: vi.fn(), onChange: () => () => undefined };
		registerCommands(plugin as never, { app, door: door as never, operations: () => [], openHistory: async () => undefined, openProblems: async () => undefined, checkTables: async () => undefined, installModel });
		const command = commands.get("install-meaning-model");
		expect(command?.name).toBe(INSTALL_MODEL_COMMAND);
		command?.callback();
		expect(installModel).toHaveBeenCalledTimes(1);
	});
});
