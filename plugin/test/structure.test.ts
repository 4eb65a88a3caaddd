// Issue 54: no function in the plugin's source is longer than 80 lines, as
// core/tests/structure.rs and bridge/tests/structure.rs say of the Rust. A
// function's length runs from its first line to its last; a function inside
// another counts for itself, and its lines count for the outer one too.
import { describe, expect, it } from "vitest";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";

const LIMIT = 80;

function functionsOver(file: string, text: string, limit: number): string[] {
	const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
	const out: string[] = [];
	const visit = (node: ts.Node): void => {
		if (ts.isFunctionLike(node) && "body" in node && node.body) {
			const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
			const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
			const lines = end - start + 1;
			if (lines > limit) out.push(`${file}: ${name(node)} (${lines} lines)`);
		}
		ts.forEachChild(node, visit);
	};
	visit(source);
	return out;
}

function name(node: ts.SignatureDeclaration): string {
	if (node.name) return node.name.getText();
	const parent = node.parent;
	if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) return parent.name.getText();
	return "(anonymous)";
}

function sources(dir: string): string[] {
	return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
		const path = join(dir, e.name);
		if (e.isDirectory()) return sources(path);
		return e.name.endsWith(".ts") ? [path] : [];
	});
}

describe("the plugin's source", () => {
	it("has no function longer than 80 lines", () => {
		const files = sources(join(__dirname, "..", "src"));
		expect(files.length).toBeGreaterThan(20);
		const long = files.flatMap((f) => functionsOver(f.slice(f.indexOf("plugin/src")), readFileSync(f, "utf8"), LIMIT));
		expect(long, "split them where they do two things").toEqual([]);
	});

	it("measures a function's lines, an arrow's and a method's", () => {
		const body = "\tx();\n".repeat(LIMIT);
		const text = `function long() {\n${body}}\nconst arrow = () => {\n${body}};\nclass A { m() {\n${body}} short() { return 1; } }\n`;
		expect(functionsOver("t.ts", text, LIMIT)).toEqual(["t.ts: long (82 lines)", "t.ts: arrow (82 lines)", "t.ts: m (82 lines)"]);
	});
});
