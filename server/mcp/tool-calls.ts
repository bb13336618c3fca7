/**
 * What /mcp and /mcp/gateway answer to tools/list and tools/call, for every transport: sessions
 * (session.ts, over Streamable HTTP and HTTP+SSE) and the stateless revision (modern.ts). All call
 * tools through callTool() and shape results with toMcpResult(), so a gateway call returns exactly
 * what the direct call returns.
 */

import type { LogEntry } from '../protocol/methods.ts';
import { callTool, type CallContext, type CallDeps } from '../tools/call.ts';
import { mcpError, toMcpResult, type McpCallResult } from './results.ts';
import { LIST_TOOLS_INPUT_SCHEMA, listTools } from './gateway-list.ts';

/** What MCP sessions use: the call path's parts, and the sessions themselves for routing log lines. */
export type McpDeps = CallDeps & { readonly mcp: { logToSessions(entry: LogEntry, sessionId?: string): void } };

export type SessionKind = 'full' | 'gateway';

export type LoggingLevel = 'debug' | 'info' | 'notice' | 'warning' | 'error' | 'critical' | 'alert' | 'emergency';

/** What tool handlers need from their session. */
export interface SessionHooks {
  readonly id: () => string | undefined;
  /** Level set by logging/setLevel (undefined = everything). */
  logLevel?: LoggingLevel;
  /** Abort signal of the HTTP request that carried a JSON-RPC request (client went away). */
  httpSignal(requestId: string | number): AbortSignal | undefined;
  /** Tool calls running now: a session with a call in flight is not idle (never swept). */
  inFlight: number;
  /**
   * Last activity (performance.now(), a clock the system time's changes do not move: a clock set
   * forward would otherwise make every session look idle and the sweeper close them); a call's end
   * counts as activity.
   */
  lastSeen: number;
}

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
      'List the OpenTabs tools you can call with opentabs_call. Without arguments: every tool\'s name and description. ' +
      'With plugin, query or tools: those tools with their input schemas.',
    inputSchema: LIST_TOOLS_INPUT_SCHEMA,
  },
  {
    name: 'opentabs_call',
    description: 'Call an OpenTabs tool by name with its arguments (see opentabs_list_tools for names and input schemas).',
    inputSchema: {
      type: 'object' as const,
      properties: {
        tool: { type: 'string', description: 'Tool name, e.g. browser_list_tabs or <plugin>_<tool>' },
        arguments: { type: 'object', description: "Arguments matching the tool's input schema", additionalProperties: true },
      },
      required: ['tool'],
      additionalProperties: false,
    },
  },
];

export const GATEWAY_LIST = { tools: GATEWAY_TOOLS };
export const GATEWAY_LIST_JSON = JSON.stringify(GATEWAY_TOOLS);

/** The tools/list result for a session kind, already serialized (the `tools` array). */
export function toolsListJson(ctx: McpDeps, kind: SessionKind): string {
  return kind === 'full' ? ctx.catalog.current().mcpToolsListJson() : GATEWAY_LIST_JSON;
}

export interface ToolsCallIO {
  requestId: string | number;
  signal: AbortSignal;
  progressToken?: string | number;
  /** Send a notification on the request's own stream (absent when the answer is plain JSON). */
  sendNotification?: (n: { method: string; params: Record<string, unknown> }) => Promise<void>;
}

export async function handleToolsCall(
  ctx: McpDeps,
  kind: SessionKind,
  hooks: SessionHooks,
  name: string,
  rawArgs: unknown,
  io: ToolsCallIO,
): Promise<McpCallResult> {
  hooks.inFlight++;
  try {
    return await dispatchByKind(ctx, kind, hooks, name, rawArgs, io);
  } finally {
    hooks.inFlight--;
    hooks.lastSeen = performance.now();
  }
}

/** Not async: it only picks the call to run (a throw here still ends handleToolsCall's await). */
function dispatchByKind(
  ctx: McpDeps,
  kind: SessionKind,
  hooks: SessionHooks,
  name: string,
  rawArgs: unknown,
  io: ToolsCallIO,
): Promise<McpCallResult> | McpCallResult {
  if (kind === 'full') return runCall(ctx, hooks, 'mcp', name, rawArgs, io);
  const args = (rawArgs ?? {}) as Record<string, unknown>;
  if (name === 'opentabs_list_tools') return listTools(ctx.catalog.current(), rawArgs);
  if (name === 'opentabs_call') {
    if (typeof args.tool !== 'string' || args.tool === '') {
      return mcpError('invalid_arguments', 'Invalid arguments for opentabs_call at /tool: is required (a tool name from opentabs_list_tools).');
    }
    const inner = args.arguments;
    if (inner !== undefined && (typeof inner !== 'object' || inner === null || Array.isArray(inner))) {
      return mcpError('invalid_arguments', 'Invalid arguments for opentabs_call at /arguments: must be an object.');
    }
    return runCall(ctx, hooks, 'gateway', args.tool, inner, io);
  }
  // A client that kept a full-mode tool name: say how the gateway runs it.
  const known = ctx.catalog.current().get(name) ? ` Run it with opentabs_call {"tool":${JSON.stringify(name)},"arguments":{…}}.` : '';
  return mcpError('unknown_tool', `Unknown tool "${name}". The gateway has opentabs_list_tools and opentabs_call.${known}`);
}

async function runCall(
  ctx: McpDeps,
  hooks: SessionHooks,
  transport: CallContext['transport'],
  name: string,
  args: unknown,
  io: ToolsCallIO,
): Promise<McpCallResult> {
  const httpSignal = hooks.httpSignal(io.requestId);
  const signal = httpSignal && httpSignal !== io.signal ? AbortSignal.any([io.signal, httpSignal]) : io.signal;
  const call: CallContext = { transport, sessionId: hooks.id(), signal };
  const send = io.sendNotification;
  if (send) {
    const token = io.progressToken;
    if (token !== undefined) {
      call.onProgress = (p) => {
        const params: Record<string, unknown> = { progressToken: token, progress: p.progress };
        if (p.total !== undefined) params.total = p.total;
        if (p.message !== undefined) params.message = p.message;
        void send({ method: 'notifications/progress', params }).catch(() => {});
      };
    }
    call.onLog = (entry) => {
      if (!levelAllowed(hooks.logLevel, entry.level)) return;
      void send({ method: 'notifications/message', params: logParams(entry) }).catch(() => {});
    };
  }
  call.onApproval = (e) => {
    if (e.state !== 'waiting') return;
    // Tell the client why nothing happens: a log line always, progress when it asked for progress.
    const entry: LogEntry = { plugin: 'opentabs', level: 'info', message: e.message, ts: Date.now() };
    if (!send) return void (call.sessionId && ctx.mcp.logToSessions(entry, call.sessionId));
    if (io.progressToken !== undefined) {
      void send({ method: 'notifications/progress', params: { progressToken: io.progressToken, progress: 0, message: e.message } }).catch(() => {});
    }
    if (levelAllowed(hooks.logLevel, entry.level)) void send({ method: 'notifications/message', params: logParams(entry) }).catch(() => {});
  };
  // Without a request stream (JSON fast path), log lines still reach this session: the hub
  // routes them by dispatch to ctx.mcp.logToSessions(entry, sessionId).
  return toMcpResult(await callTool(ctx, name, args, call));
}
