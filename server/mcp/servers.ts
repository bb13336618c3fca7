/**
 * MCP server factories: one low-level SDK `Server` per session. The full server (/mcp) lists the
 * whole catalog (the cached tools/list payload of the current snapshot); the gateway server
 * (/mcp/gateway) lists exactly opentabs_list_tools and opentabs_call. Both call tools through
 * callTool() and shape results with toMcpResult(), so the two answer a call identically.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  SetLevelRequestSchema,
  type LoggingLevel,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerContext } from '../context.ts';
import type { LogEntry } from '../protocol/methods.ts';
import { callTool, type CallContext } from '../tools/call.ts';
import { VERSION } from '../version.ts';
import { FULL_INSTRUCTIONS, GATEWAY_INSTRUCTIONS } from './instructions.ts';
import { mcpError, toMcpResult, type McpCallResult } from './results.ts';

export type SessionKind = 'full' | 'gateway';

/** What a server factory needs from its session. */
export interface SessionHooks {
  readonly id: () => string | undefined;
  /** Level set by logging/setLevel (undefined = everything). */
  logLevel?: LoggingLevel;
  /** Abort signal of the HTTP request that carried a JSON-RPC request (client went away). */
  httpSignal(requestId: string | number): AbortSignal | undefined;
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

const LEVELS: LoggingLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

export function levelAllowed(min: LoggingLevel | undefined, level: LoggingLevel): boolean {
  return min === undefined || LEVELS.indexOf(level) >= LEVELS.indexOf(min);
}

export function logParams(entry: LogEntry): { level: LoggingLevel; logger: string; data: unknown } {
  return {
    level: entry.level,
    logger: entry.plugin,
    data: entry.data === undefined ? entry.message : { message: entry.message, data: entry.data },
  };
}

export const GATEWAY_TOOLS = [
  {
    name: 'opentabs_list_tools',
    description:
      'List the OpenTabs tools you can call with opentabs_call: name, description, plugin, permission and input schema. ' +
      'Pass {"plugin": "<name>"} to list one plugin\'s tools ("browser" for built-in browser tools).',
    inputSchema: {
      type: 'object',
      properties: { plugin: { type: 'string', description: 'Only tools of this plugin' } },
      additionalProperties: false,
    },
  },
  {
    name: 'opentabs_call',
    description: 'Call an OpenTabs tool by name with its arguments (see opentabs_list_tools for names and input schemas).',
    inputSchema: {
      type: 'object',
      properties: {
        tool: { type: 'string', description: 'Tool name, e.g. browser_list_tabs or <plugin>_<tool>' },
        arguments: { type: 'object', description: 'Arguments matching the tool\'s input schema', additionalProperties: true },
      },
      required: ['tool'],
      additionalProperties: false,
    },
  },
] as const;

const GATEWAY_LIST = { tools: GATEWAY_TOOLS as unknown as { name: string; inputSchema: { type: 'object' } }[] };

export function createMcpServer(ctx: ServerContext, kind: SessionKind, hooks: SessionHooks): Server {
  const server = new Server(
    { name: kind === 'full' ? 'opentabs' : 'opentabs-gateway', version: VERSION },
    {
      capabilities: { tools: { listChanged: kind === 'full' }, logging: {} },
      instructions: kind === 'full' ? FULL_INSTRUCTIONS : GATEWAY_INSTRUCTIONS,
    },
  );

  server.setRequestHandler(SetLevelRequestSchema, async (req) => {
    hooks.logLevel = req.params.level;
    return {};
  });

  if (kind === 'full') {
    server.setRequestHandler(ListToolsRequestSchema, async () => ctx.catalog.current().mcpToolsList() as never);
    server.setRequestHandler(CallToolRequestSchema, async (req, extra) =>
      (await runCall(ctx, hooks, 'mcp', req.params.name, req.params.arguments, req.params._meta?.progressToken, extra)) as never,
    );
  } else {
    server.setRequestHandler(ListToolsRequestSchema, async () => GATEWAY_LIST as never);
    server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
      const args = (req.params.arguments ?? {}) as Record<string, unknown>;
      if (req.params.name === 'opentabs_list_tools') {
        const plugin = args.plugin;
        if (plugin !== undefined && typeof plugin !== 'string') return mcpError('invalid_arguments', 'Invalid arguments for opentabs_list_tools at /plugin: must be a string.') as never;
        const catalog = ctx.catalog.current();
        if (typeof plugin === 'string' && !catalog.byPlugin.has(plugin)) {
          return mcpError('unknown_plugin', `Unknown plugin "${plugin}". Call opentabs_list_tools without a plugin to see every tool.`) as never;
        }
        const tools = catalog.listings(plugin);
        return { content: [{ type: 'text', text: JSON.stringify(tools) }], structuredContent: { tools } } as never;
      }
      if (req.params.name === 'opentabs_call') {
        if (typeof args.tool !== 'string' || args.tool === '') {
          return mcpError('invalid_arguments', 'Invalid arguments for opentabs_call at /tool: is required (a tool name from opentabs_list_tools).') as never;
        }
        const inner = args.arguments;
        if (inner !== undefined && (typeof inner !== 'object' || inner === null || Array.isArray(inner))) {
          return mcpError('invalid_arguments', 'Invalid arguments for opentabs_call at /arguments: must be an object.') as never;
        }
        return (await runCall(ctx, hooks, 'gateway', args.tool, inner, req.params._meta?.progressToken, extra)) as never;
      }
      return mcpError('unknown_tool', `Unknown tool "${req.params.name}". The gateway has opentabs_list_tools and opentabs_call.`) as never;
    });
  }
  return server;
}

async function runCall(
  ctx: ServerContext,
  hooks: SessionHooks,
  transport: CallContext['transport'],
  name: string,
  args: unknown,
  progressToken: string | number | undefined,
  extra: Extra,
): Promise<McpCallResult> {
  const httpSignal = hooks.httpSignal(extra.requestId);
  const signal = httpSignal ? AbortSignal.any([extra.signal, httpSignal]) : extra.signal;
  const call: CallContext = { transport, sessionId: hooks.id(), signal };
  if (progressToken !== undefined) {
    call.onProgress = (p) => {
      const params: { progressToken: string | number; progress: number; total?: number; message?: string } = { progressToken, progress: p.progress };
      if (p.total !== undefined) params.total = p.total;
      if (p.message !== undefined) params.message = p.message;
      void extra.sendNotification({ method: 'notifications/progress', params }).catch(() => {});
    };
  }
  call.onLog = (entry) => {
    if (!levelAllowed(hooks.logLevel, entry.level)) return;
    void extra.sendNotification({ method: 'notifications/message', params: logParams(entry) }).catch(() => {});
  };
  return toMcpResult(await callTool(ctx, name, args, call));
}
