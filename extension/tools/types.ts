import type { DispatchResult } from '../../server/protocol/methods.ts';
import type { Connection } from '../background/connection.ts';
import type { PluginRuntime } from '../background/plugins.ts';

/** What a built-in tool implementation can reach. */
export interface ToolEnv {
  conn: Connection;
  plugins: PluginRuntime;
  version: string;
}

export type BrowserToolHandler = (input: Record<string, unknown>, env: ToolEnv) => Promise<DispatchResult>;
