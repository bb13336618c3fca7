/**
 * MCP server factory: one low-level SDK `Server` per session. The full server (/mcp) lists the
 * whole catalog (the cached tools/list payload of the current snapshot); the gateway server
 * (/mcp/gateway) lists exactly opentabs_list_tools and opentabs_call. Calls go through
 * handleToolsCall() (tool-calls.ts), shared with the session fast path.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import { CallToolRequestSchema, ListToolsRequestSchema, SetLevelRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { ServerContext } from '../context.ts';
import { VERSION } from '../version.ts';
import { FULL_INSTRUCTIONS, GATEWAY_INSTRUCTIONS } from './instructions.ts';
import { GATEWAY_LIST, handleToolsCall, type SessionHooks, type SessionKind } from './tool-calls.ts';

export { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
export { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';

/**
 * One JSON Schema validator for every session: the SDK otherwise builds a new Ajv instance (with
 * its meta-schemas) per Server, which was ~7% of server time when many sessions open.
 */
let sharedValidator: AjvJsonSchemaValidator | null = null;

export function createMcpServer(ctx: ServerContext, kind: SessionKind, hooks: SessionHooks): Server {
  sharedValidator ??= new AjvJsonSchemaValidator();
  const server = new Server(
    { name: kind === 'full' ? 'opentabs' : 'opentabs-gateway', version: VERSION },
    {
      capabilities: { tools: { listChanged: kind === 'full' }, logging: {} },
      instructions: kind === 'full' ? FULL_INSTRUCTIONS : GATEWAY_INSTRUCTIONS,
      jsonSchemaValidator: sharedValidator,
    },
  );

  // Our own level per session (the hub filters log lines before they reach the SDK).
  server.setRequestHandler(SetLevelRequestSchema, async (req) => {
    hooks.logLevel = req.params.level;
    return {};
  });

  server.setRequestHandler(ListToolsRequestSchema, async () => (kind === 'full' ? ctx.catalog.current().mcpToolsList() : GATEWAY_LIST) as never);
  server.setRequestHandler(
    CallToolRequestSchema,
    async (req, extra) =>
      (await handleToolsCall(ctx, kind, hooks, req.params.name, req.params.arguments, {
        requestId: extra.requestId,
        signal: extra.signal,
        progressToken: req.params._meta?.progressToken,
        sendNotification: (n) => extra.sendNotification(n as never),
      })) as never,
  );
  return server;
}
