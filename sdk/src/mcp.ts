// The engine's operations as MCP tools, for your own MCP server: engineTools()
// gives the definitions exactly as `datanotes mcp` lists them (name, title,
// description, input schema, annotations), and registerEngineTools() answers
// tools/list and tools/call of an official-SDK server through a DatanotesClient.

import { DatanotesError, type DatanotesClient, OPS } from "./index.js";

export interface EngineTool {
	name: string;
	title: string;
	description: string;
	inputSchema: Record<string, unknown>;
	annotations: { title: string; readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean };
}

/** Every operation as a tool (bridge/src/mcp.rs `tool`): reads are idempotent;
 * only create_webhook reaches outside the vault. */
export function engineTools(): EngineTool[] {
	return OPS.map((op) => ({
		name: op.name,
		title: op.title,
		description: op.description,
		inputSchema: op.inputSchema as unknown as Record<string, unknown>,
		annotations: {
			title: op.title,
			readOnlyHint: op.readOnly,
			destructiveHint: op.destructive,
			idempotentHint: op.readOnly,
			openWorldHint: op.openWorld,
		},
	}));
}

/** A tool call's result: the answer as JSON text and structured content, or the
 * refusal's text as an error result, as `datanotes mcp` gives them. */
export async function callTool(client: DatanotesClient, name: string, args: Record<string, unknown> | undefined) {
	try {
		const answer = await client.call(name, args ?? {});
		return { content: [{ type: "text" as const, text: JSON.stringify(answer) }], structuredContent: answer };
	} catch (e) {
		const text = e instanceof DatanotesError ? e.message : String(e);
		return { content: [{ type: "text" as const, text }], isError: true };
	}
}

/** The part of an official-SDK `Server` this needs (low-level server, or `mcpServer.server`). */
interface ToolServer {
	registerCapabilities(capabilities: { tools: Record<string, unknown> }): void;
	setRequestHandler(schema: unknown, handler: (request: { params: { name: string; arguments?: Record<string, unknown> } }) => unknown): void;
}

/** Adds the engine's tools to a server of @modelcontextprotocol/sdk. */
export async function registerEngineTools(server: ToolServer, client: DatanotesClient): Promise<void> {
	const { ListToolsRequestSchema, CallToolRequestSchema } = await import("@modelcontextprotocol/sdk/types.js");
	const tools = engineTools();
	server.registerCapabilities({ tools: {} });
	server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
	server.setRequestHandler(CallToolRequestSchema, (request) => callTool(client, request.params.name, request.params.arguments));
}
