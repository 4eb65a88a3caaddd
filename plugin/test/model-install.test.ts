// "Install the model to search by meaning": the datanotes program copies its
// model into the store once the person has read what it does; elsewhere, how.

import { describe, expect, test } from "vitest";
import { DISCLOSURE, type InstallDeps, installModel, type Ran } from "../src/model-install";

function deps(answer: Ran | Error | null, confirm = true) {
	const calls: string[][] = [];
	const notices: string[] = [];
	let asked = 0;
	const d: InstallDeps = {
		run:
			answer === null
				? { missing: "this device cannot run the datanotes program" }
				: async (args) => {
						calls.push(args);
						if (answer instanceof Error) throw answer;
						return answer;
					},
		vault: "/home/me/Notes",
		confirm: async () => {
			asked++;
			return confirm;
		},
		notice: (t) => notices.push(t),
	};
	return { d, calls, notices, asked: () => asked };
}

describe("install the model to search by meaning", () => {
	test("asked first, then the binary copies it, and the person is told its size", async () => {
		const { d, calls, notices, asked } = deps({ code: 0, stdout: '{"ok":true,"bytes":8048120,"already":false}', stderr: "" });
		await installModel(d);
		expect(asked()).toBe(1);
		expect(calls).toEqual([["install-model", "--vault", "/home/me/Notes"]]);
		expect(notices).toEqual(["Datanotes: the model to search by meaning is installed (8.0 MB)."]);
		expect(DISCLOSURE).toContain("Nothing is downloaded");
		expect(DISCLOSURE).toContain("8 MB");
	});

	test("cancelled: nothing runs", async () => {
		const { d, calls, notices } = deps({ code: 0, stdout: "{}", stderr: "" }, false);
		await installModel(d);
		expect(calls).toEqual([]);
		expect(notices).toEqual([]);
	});

	test("already there, refused, or failing: said as such", async () => {
		const already = deps({ code: 0, stdout: '{"ok":true,"bytes":8048120,"already":true}', stderr: "" });
		await installModel(already.d);
		expect(already.notices[0]).toContain("already installed");
		const refused = deps({ code: 1, stdout: "", stderr: "datanotes: /x holds no Datanotes database: run `datanotes init --vault DIR` first\n" });
		await installModel(refused.d);
		expect(refused.notices[0]).toBe("Datanotes: the model could not be installed: /x holds no Datanotes database: run `datanotes init --vault DIR` first");
		const broken = deps(new Error("spawn EACCES"));
		await installModel(broken.d);
		expect(broken.notices[0]).toContain("spawn EACCES");
	});

	test("no program on this device: how to do it from a computer, nothing asked", async () => {
		const { d, notices, asked } = deps(null);
		await installModel(d);
		expect(asked()).toBe(0);
		expect(notices[0]).toContain('datanotes install-model --vault "/home/me/Notes"');
	});
});
