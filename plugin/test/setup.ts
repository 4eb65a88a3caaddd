// Obsidian's adapters read any file as bytes (readBinary); the mocks' in-memory
// adapter keeps files written as text apart from those written as bytes, and
// finds no bytes for a text. The plugin reads the notes' cache as bytes.
import { FileSystemAdapter } from "obsidian";

interface InMemory {
	textFiles: Map<string, string>;
	binaryFiles: Map<string, ArrayBuffer>;
	readBinary(path: string): Promise<ArrayBuffer>;
}

const base = Object.getPrototypeOf(FileSystemAdapter.prototype) as InMemory;
const readBinary = base.readBinary;
base.readBinary = async function (this: InMemory, path: string): Promise<ArrayBuffer> {
	const text = this.binaryFiles.has(path) ? undefined : this.textFiles.get(path);
	if (text === undefined) return readBinary.call(this, path);
	return new TextEncoder().encode(text).buffer;
};
