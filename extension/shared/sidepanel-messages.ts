/** Messages between the side panel page and the service worker (a chrome.runtime Port). */
import type { ViewState } from '../background/state.ts';

export const SIDEPANEL_PORT_NAME = 'opentabs-sidepanel';

/** Methods the side panel may relay to the server (extension → server requests). */
export const RELAYED_METHODS = [
  'config.getState',
  'config.setToolPermission',
  'config.setPluginPermission',
  'config.setSkipPermissions',
  'config.setPluginSettings',
  'plugin.search',
  'plugin.install',
  'plugin.updateFromRegistry',
  'plugin.remove',
  'plugin.checkUpdates',
  'plugin.removeBySpecifier',
  'folder.open',
] as const;

export type PanelToWorker =
  | { type: 'request'; id: number; method: (typeof RELAYED_METHODS)[number]; params: unknown }
  | { type: 'confirm'; id: string; decision: 'allow' | 'deny'; alwaysAllow?: boolean }
  | { type: 'reconnect' };

export type WorkerToPanel =
  | { type: 'state'; state: ViewState }
  | { type: 'response'; id: number; ok: true; result: unknown }
  | { type: 'response'; id: number; ok: false; error: string };
