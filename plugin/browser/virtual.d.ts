// The film diary, inlined by plugin/browser/run.mjs: vault path to text.
declare module "virtual:films" {
	const files: Record<string, string>;
	export default files;
}

// plugin/dist/main.js's text, inlined by plugin/browser/run.mjs.
declare module "virtual:main" {
	const source: string;
	export default source;
}
