/** Shapes the hub's parts share: the socket, a request waiting for its answer, a running dispatch. */
import type { ServerWebSocket } from 'bun';
import type { OpenTabsError } from '../errors.ts';
import type { RpcResponse } from '../protocol/jsonrpc.ts';
import type { LogEntry } from '../protocol/methods.ts';

export interface WsData {
  connId: number;
}

export type Ws = ServerWebSocket<WsData>;

/** How long a plain request to the extension (plugin.uninstall, …) may take. */
export const EXTENSION_REQUEST_TIMEOUT_MS = 15_000;
export interface DispatchProgress {
  progress: number;
  total?: number;
  message?: string;
}

export interface DispatchRequest {
  plugin: string;
  /** The name tool.dispatch carries: a plugin tool's own short name, a built-in's full name. */
  wireName: string;
  /** The name clients call it by (e.g. slack_send_message), for messages and the side panel. */
  fullName: string;
  input: Record<string, unknown>;
  tabId?: number;
  settings?: Record<string, unknown>;
  signal?: AbortSignal;
  onProgress?: (p: DispatchProgress) => void;
  /** Log lines the plugin emits during this dispatch. */
  onLog?: (entry: LogEntry) => void;
  /** MCP session that made the call. */
  sessionId?: string;
}


export interface Pending {
  conn: Ws;
  method: string;
  /** For tool.dispatch: the tool, so a failure can name it. */
  toolName?: string;
  resolve(value: unknown): void;
  reject(err: OpenTabsError): void;
  onResponse(msg: RpcResponse): void;
}

export interface RunningDispatch {
  dispatchId: string;
  /** The plugin the call went to: only its log lines may name this dispatch. */
  plugin: string;
  rpcId: number;
  conn: Ws;
  sessionId?: string;
  onProgress?: (p: DispatchProgress) => void;
  onLog?: (entry: LogEntry) => void;
  /** Restart the inactivity timer (progress arrived). */
  touch(): void;
}
