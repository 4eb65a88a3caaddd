// The film diary, inlined by plugin/browser/run.mjs: vault path to text.
declare module "virtual:films" {
	const files: Record<string, string>;
	export default files;
}
