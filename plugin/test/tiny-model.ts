// A model file to search by meaning with, tiny: what the tests check is the
// way in, not the meaning (the real one is 8 MB).

/** A model file as core/src/semantic/mod.rs reads it: a one-hot vector for
 * each word of `words`, after BERT's five special tokens. */
export function tinyModel(words: string[]): Uint8Array {
	const vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ...words].join("\n");
	const rows = words.length + 5;
	const dims = 8;
	const enc = new TextEncoder();
	const v = enc.encode(vocab);
	const head = enc.encode("DNMODEL1\ntiny\n");
	const vectors = new Uint8Array(8 + 8 + rows * 4 + rows * dims);
	vectors.set(enc.encode("DNSEMB1\n"));
	const view = new DataView(vectors.buffer);
	view.setUint32(8, rows, true);
	view.setUint32(12, dims, true);
	for (let r = 0; r < rows; r++) {
		view.setFloat32(16 + r * 4, 0.01, true);
		vectors[16 + rows * 4 + r * dims + (r % dims)] = 100;
	}
	const out = new Uint8Array(head.length + 4 + v.length + vectors.length);
	out.set(head);
	new DataView(out.buffer).setUint32(head.length, v.length, true);
	out.set(v, head.length + 4);
	out.set(vectors, head.length + 4 + v.length);
	return out;
}
