// The engine in a Web Worker (bundled apart by esbuild.config.mjs, started by
// engine-thread.ts through worker-engine.ts): Obsidian's main thread never
// waits for the engine's work, however large the vault.

import type { Reply, Request } from "./worker-protocol";
import { serveRequests } from "./worker-serve";

const scope = self as unknown as { onmessage: ((e: MessageEvent<Request>) => void) | null; postMessage(r: Reply): void };
const serve = serveRequests((r) => scope.postMessage(r));
scope.onmessage = (e) => serve(e.data);
