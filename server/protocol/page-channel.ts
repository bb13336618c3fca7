/**
 * The per-tab channel between the extension's ISOLATED-world bridge (extension/tab-bridge)
 * and the plugin adapters running in the page's MAIN world (plugins/sdk runtime).
 *
 * Transport: DOM CustomEvents on `document`, with `detail` a JSON string (objects do not
 * cross the isolated/main world boundary reliably; strings do). One event each way per
 * message — a tool call is one event in and one event out.
 *
 *   bridge → page:  BRIDGE_TO_PAGE_EVENT  with BridgeToPage
 *   page → bridge:  PAGE_TO_BRIDGE_EVENT  with PageToBridge
 *
 * Adapters register in `globalThis[ADAPTER_REGISTRY_KEY][pluginName]` (see AdapterHandle) so the
 * extension can ask `isReady()` after injection and a re-injected adapter can dispose the old one.
 */
import type { LogLevel, ToolErrorData } from './methods.ts';

export const BRIDGE_TO_PAGE_EVENT = 'opentabs:bridge-to-page';
export const PAGE_TO_BRIDGE_EVENT = 'opentabs:page-to-bridge';
export const ADAPTER_REGISTRY_KEY = '__opentabs_adapters__';
/** Name of the chrome.runtime Port the bridge opens to the service worker. */
export const TAB_PORT_NAME = 'opentabs-tab';

export type BridgeToPage =
  | {
      type: 'call';
      id: string;
      plugin: string;
      tool: string;
      input: Record<string, unknown>;
      config: Record<string, unknown>;
    }
  | { type: 'cancel'; id: string; plugin: string; reason: string };

export type PageToBridge =
  | { type: 'result'; id: string; plugin: string; ok: true; value: unknown }
  | { type: 'result'; id: string; plugin: string; ok: false; error: { message: string } & ToolErrorData }
  | { type: 'progress'; id: string; plugin: string; progress: number; total?: number; message?: string }
  | { type: 'log'; plugin: string; id?: string; level: LogLevel; message: string; data?: unknown; ts: number }
  /** Sent by an adapter when it has registered (after injection or re-injection). */
  | { type: 'registered'; plugin: string; hash: string };

/** What an adapter puts in the MAIN-world registry. */
export interface AdapterHandle {
  plugin: string;
  hash: string;
  sdkVersion: string;
  isReady(): Promise<boolean>;
  /** Remove listeners; called when a newer adapter for the same plugin registers. */
  dispose(): void;
}

/**
 * Messages between the bridge and the service worker over the chrome.runtime Port are the
 * same objects (structured clone), so the service worker speaks BridgeToPage/PageToBridge too.
 */
export type PortToBridge = BridgeToPage;
export type BridgeToPort = PageToBridge;

/**
 * Adapters are built with this token where their hash goes; the server replaces it with the
 * adapter's content hash when it writes adapters/<name>-<hash>.js, so the `registered` message
 * and AdapterHandle.hash carry the same hash as PluginInfo.adapterHash.
 */
export const ADAPTER_HASH_PLACEHOLDER = '__OPENTABS_ADAPTER_HASH__';
