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

export type BrowserToolHandler = (input: Record<string, unknown>, env: ToolEnv) => Promise<DispatchResult>;
