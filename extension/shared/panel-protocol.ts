/** Messages between the side panel page and the service worker (a chrome.runtime Port). */
import type { ConfigState, PendingConfirmation, PluginInfo, TabState } from '../../server/protocol/methods.ts';

export type { PendingConfirmation };
import type { ConnectionState } from '../background/connection.ts';

export const PANEL_PORT_NAME = 'opentabs-sidepanel';

export interface PanelState {
  connection: ConnectionState;
  plugins: Array<PluginInfo & { tabState: TabState; tabs: { tabId: number; url: string; title: string; loadError?: string }[] }>;
  pending: PendingConfirmation[];
  /** config.getState from the server; null until fetched or while disconnected. */
  config: ConfigState | null;
  configError: string | null;
  /** Calls the extension runs now, and the last ones that finished (newest first). */
  running: ActivityCall[];
  history: ActivityDone[];
  /** Tabs whose traffic the side panel is recording for a plugin draft. */
  recording: { tabId: number; title: string; origin: string }[];
  /** Set when the last Record could not start (e.g. a page tools may not use). */
  recordError: string | null;
}

export interface ActivityCall {
  dispatchId: string;
  tool: string;
  plugin: string;
  startedAt: number;
  /** The call's arguments as JSON, secret-looking values masked, cut at a few hundred characters. */
  args: string;
  tabId?: number;
  tabTitle?: string;
  origin?: string;
  progress?: { progress: number; total?: number; message?: string };
}

export interface ActivityDone extends ActivityCall {
  endedAt: number;
  durationMs: number;
  status: 'ok' | 'error' | 'cancelled';
  error?: string;
}

export type PanelToWorker =
  | { type: 'request'; id: number; method: string; params: unknown }
  | { type: 'confirm'; id: string; decision: 'allow' | 'deny'; alwaysAllow?: boolean }
  | { type: 'refresh' }
  /** Stop a running call (its tool's signal is aborted; the caller gets `cancelled`). */
  | { type: 'stop'; dispatchId: string }
  /**
   * Record the API traffic of tab `tabId`, the tab the panel named on its button (the active tab of
   * its window as it last looked) while it still shows `origin`, to draft a plugin from; or stop
   * recording tab `tabId`.
   */
  | { type: 'record'; windowId: number; start: boolean; tabId?: number; origin?: string };

export type WorkerToPanel =
  | { type: 'state'; state: PanelState }
  | { type: 'response'; id: number; ok: true; result: unknown }
  | { type: 'response'; id: number; ok: false; error: string };

/**
 * How Record names a tab's page, the same in the panel (on its button) and in the worker (which
 * records the tab only while it shows that): an http(s) page's origin, else its scheme and host.
 */
export function recordOrigin(url: string | undefined): string {
  if (!url) return '';
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : `${u.protocol}//${u.host}`;
  } catch {
    return '';
  }
}
