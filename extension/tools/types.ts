import type { DispatchResult } from '../../server/protocol/methods.ts';
import type { ExtensionTool, HandlerTable, InputOf as DeclInputOf } from '../../server/protocol/browser-tools/index.ts';
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
  /**
   * The tab `tabId` names: the one the URL guard looked up and allowed for this call (no second
   * chrome.tabs.get), else looked up now; a tab that does not exist is a tab_closed error.
   */
  tab(tabId: unknown): Promise<chrome.tabs.Tab>;
  /**
   * The MCP session the call was made in, by the id tool.dispatch gave (session-owned.ts); absent
   * for a call of no session (REST, the side panel).
   */
  session?: string;
}


/**
 * The extension's handler table, typed from the declarations (server/protocol/browser-tools/):
 * each group file is `{ … } satisfies Partial<Handlers>` (an extra name or a wrong input type fails
 * tsc) and index.ts assembles a full `Handlers` (a missing one fails tsc).
 */
export type Handlers = HandlerTable<ExtensionTool, ToolCtx, DispatchResult>;

/** The arguments of one tool, as its handler receives them. */
export type InputOf<N extends ExtensionTool['name']> = DeclInputOf<Extract<ExtensionTool, { name: N }>>;
