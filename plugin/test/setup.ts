// Obsidian's adapters keep one file under a path, read as text or as bytes
// alike; the mocks' in-memory adapter keeps files written as text apart from
// files written as bytes, and reads each only its own way. The plugin writes
// the notes' cache as bytes and reads it back so, where tests read and edit it
// as text.
import { FileSystemAdapter } from "obsidian";

interface InMemory {
	textFiles: Map<string, string>;
	binaryFiles: Map<string, ArrayBuffer>;
	read(path: string): Promise<string>;
	readBinary(path: string): Promise<ArrayBuffer>;
	write(path: string, data: string, options?: unknown): Promise<void>;
	writeBinary(path: string, data: ArrayBuffer, options?: unknown): Promise<void>;
}

const base = Object.getPrototypeOf(FileSystemAdapter.prototype) as InMemory;
const { read, readBinary, write, writeBinary } = base;
base.read = async function (this: InMemory, path: string): Promise<string> {
	const bytes = this.binaryFiles.get(path);
	return bytes === undefined ? read.call(this, path) : new TextDecoder().decode(bytes);
};
base.readBinary = async function (this: InMemory, path: string): Promise<ArrayBuffer> {
	const text = this.textFiles.get(path);
	return text === undefined ? readBinary.call(this, path) : new TextEncoder().encode(text).buffer;
};
base.write = async function (this: InMemory, path: string, data: string, options?: unknown): Promise<void> {
	this.binaryFiles.delete(path);
	return write.call(this, path, data, options);
};
base.writeBinary = async function (this: InMemory, path: string, data: ArrayBuffer, options?: unknown): Promise<void> {
	this.textFiles.delete(path);
	return writeBinary.call(this, path, data, options);
};
