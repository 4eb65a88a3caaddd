// esbuild (loader binary) and the tests' vite plugin turn a .wasm import into its bytes.
declare module "*.wasm" {
	const bytes: Uint8Array;
	export default bytes;
}
