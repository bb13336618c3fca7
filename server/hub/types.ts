/** Shapes the hub's parts share: the socket and its RPC peer, what the parts need of the hub, a dispatch. */
import type { ServerWebSocket } from 'bun';
import type { ExtensionToServer, LogEntry, ServerParams, ServerToExtension } from '../protocol/methods.ts';
import type { NotificationMethod, RpcPeer } from '../protocol/rpc-peer.ts';
import type { PluginTabs } from './tab-state.ts';
import type { CoreDeps } from '../deps.ts';

/** The server's end of the JSON-RPC peer (server/protocol/rpc-peer.ts). */
export type ExtensionPeer = RpcPeer<typeof ServerToExtension, typeof ExtensionToServer>;
/** The server → extension notifications (hub.notify). */
export type ServerNotification = NotificationMethod<typeof ServerToExtension>;

export interface WsData {
  connId: number;
  /** The connection's peer, set when it opens. */
  peer?: ExtensionPeer;
  /** Where the socket's frames go (the peer's transport listener). */
  deliver?: (text: string) => void;
  /** When a frame or a pong last came from the extension (performance.now(), monotonic). */
  heardAt?: number;
  /** A ping awaiting its answer: fires when none came within LIVENESS_TIMEOUT_MS (hub.ts). */
  probe?: ReturnType<typeof setTimeout>;
  /** When the last tool call went out on this socket (performance.now()). */
  callSentAt?: number;
}

export type Ws = ServerWebSocket<WsData>;

/** What confirmations and tab lookups need of the hub (no import of hub.ts: no cycle). */
export interface HubView {
  readonly connected: boolean;
  notify<M extends ServerNotification>(method: M, params: ServerParams<M>): boolean;
  tabsFor(plugin: string): PluginTabs;
  allTabStates(): Map<string, PluginTabs>;
}

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
  /** The page URL the user approved this call for (tool.dispatch approvedUrl). */
  approvedUrl?: string;
  /** The plugin tabs the approval card listed (tool.dispatch approvedTabs). */
  approvedTabs?: { tabId: number; url: string }[];
  signal?: AbortSignal;
  onProgress?: (p: DispatchProgress) => void;
  /** Log lines the plugin emits during this dispatch. */
  onLog?: (entry: LogEntry) => void;
  /** MCP session that made the call. */
  sessionId?: string;
}

export interface RunningDispatch {
  dispatchId: string;
  /** The plugin the call went to: only its log lines may name this dispatch. */
  plugin: string;
  sessionId?: string;
  onProgress?: (p: DispatchProgress) => void;
  onLog?: (entry: LogEntry) => void;
}

/** What the hub uses besides itself: the core parts, and how many MCP clients are connected (config.getState). */
export type HubDeps = CoreDeps & {
  readonly mcp: { readonly count: number; activity(): { active: number; idle: number; activeWindowSeconds: number; idleCloseSeconds: number } };
};
