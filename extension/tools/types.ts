import type { DispatchResult } from '../../server/protocol/methods.ts';
import type { Connection } from '../background/connection.ts';
import type { PluginRuntime } from '../background/plugins.ts';

/** What a built-in tool implementation can reach. */
export interface ToolEnv {
  conn: Connection;
  plugins: PluginRuntime;
  version: string;
  /** Page tools (WebMCP): how many each tab offers now (browser_list_tabs shows it). */
  pageTools?: { countsByTab(): Map<number, { origin: string; tools: number }> };
}

/**
 * What a handler gets besides its input: the environment plus the call's own signal (aborted by
 * tool.cancel, the side panel's Stop or the server's timeout) and a progress reporter (it reaches
 * the MCP client as notifications/progress and extends the call's timeout).
 */
export interface ToolCtx extends ToolEnv {
  signal: AbortSignal;
  progress(p: { progress: number; total?: number; message?: string }): void;
}

export type BrowserToolHandler = (input: Record<string, unknown>, env: ToolCtx) => Promise<DispatchResult>;
