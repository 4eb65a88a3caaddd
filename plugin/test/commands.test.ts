// The dialogs behind "Run operation…", on the real engine.

import type { App as AppOriginal } from "obsidian";
import { App } from "obsidian-test-mocks/obsidian";
import { expect, test } from "vitest";
import { operations } from "../src/engine";
import { ArgumentsModal, OperationSuggestModal, skeleton } from "../src/modals";
import type { OperationInfo } from "../src/types";
import { CHARADE, openFilms } from "./engine";

function op(name: string): OperationInfo {
	const found = operations().find((o) => o.name === name);
	if (!found) throw new Error(`no operation ${name}`);
	return found;
}

async function run(modal: ArgumentsModal, args: string): Promise<HTMLElement> {
	modal.onOpen();
	const area = modal.contentEl.querySelector("textarea") as HTMLTextAreaElement;
	area.value = args;
	const result = modal.contentEl.querySelector(".datanotes-result") as HTMLElement;
	(modal.contentEl.querySelector(".modal-button-container button") as HTMLButtonElement).click();
	for (let i = 0; i < 100 && result.textContent === ""; i++) await new Promise((r) => setTimeout(r, 5));
	return result;
}

test("the operation picker lists the registry and filters it", async () => {
	await openFilms();
	const app = App.createConfigured__().asOriginalType__() as AppOriginal;
	const picker = new OperationSuggestModal(app, operations(), () => undefined);
	expect(picker.getSuggestions("").length).toBe(operations().length);
	expect(picker.getSuggestions("undo").map((o) => o.name)).toEqual(["undo_migration"]);
	expect(picker.getSuggestions("select rows").map((o) => o.name)).toEqual(["select_rows"]);
	expect(skeleton(op("update_row"))).toEqual({ table: "", path: "" });
});

test("the arguments dialog runs the operation and shows the answer, or the refusal", async () => {
	const { host } = await openFilms();
	const app = App.createConfigured__().asOriginalType__() as AppOriginal;
	const call = (name: string) => (args: unknown) => host.call(name, args);

	let result = await run(new ArgumentsModal(app, op("select_rows"), call("select_rows")), '{"table": "film", "where": {"title": "Charade"}}');
	expect(JSON.parse(result.textContent as string).rows[0].path).toBe(CHARADE);

	result = await run(new ArgumentsModal(app, op("insert_row"), call("insert_row")), '{"table": "film", "values": {"title": "Charade", "year": 1963}}');
	expect(result.textContent).toMatch(/^insert_row refused — nothing was written:/);
	expect(result.classList.contains("datanotes-error")).toBe(true);

	result = await run(new ArgumentsModal(app, op("select_rows"), call("select_rows")), "{not json");
	expect(result.textContent).toMatch(/^The arguments are not JSON/);
});
