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
import { ERROR_CATEGORIES } from './errors.ts';
import type { LogLevel, ToolErrorData } from './methods.ts';
import {
  PAGE_MESSAGE_ID_MAX_CHARS,
  PLUGIN_ERROR_MESSAGE_MAX_CHARS,
  PLUGIN_LOG_DATA_MAX_CHARS,
  PLUGIN_LOG_MESSAGE_MAX_CHARS,
  PLUGIN_PROGRESS_MESSAGE_MAX_CHARS,
  PLUGIN_RESULT_MAX_BYTES,
} from './limits.ts';

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
  /** Set when the plugin's module threw while loading in this page: every call answers adapter_load_failed. */
  loadError?: string;
  /** Remove listeners; called when a newer adapter for the same plugin registers. */
  dispose(): void;
}

/**
 * Messages between the bridge and the service worker over the chrome.runtime Port have the same
 * shapes as the page's, so the service worker speaks BridgeToPage/PageToBridge too. The worker
 * sends a PortToBridge as its JSON text, which the bridge hands to the page unchanged (it also
 * accepts the object); the bridge posts BridgeToPort objects.
 */
export type PortToBridge = BridgeToPage;
export type BridgeToPort = PageToBridge;

/**
 * Adapters are built with this token where their hash goes; the server replaces it with the
 * adapter's content hash when it writes adapters/<name>-<hash>.js, so the `registered` message
 * and AdapterHandle.hash carry the same hash as PluginInfo.adapterHash.
 */
export const ADAPTER_HASH_PLACEHOLDER = '__OPENTABS_ADAPTER_HASH__';

// ------------------------------------------------------------------ page input caps

/** Starts every mark OpenTabs leaves where it cut page-supplied text. */
export const TRUNCATION_MARK = '[truncated by OpenTabs';

const NON_ASCII = /[^\x00-\x7f]/;

/** Bytes of a string as UTF-8 (what it weighs in a WebSocket frame). */
export function utf8Bytes(s: string): number {
  // Every UTF-16 unit is at most 3 UTF-8 bytes: short strings need no count.
  if (s.length * 3 <= 4096) {
    let n = 0;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x80) n += 1;
      else if (c < 0x800) n += 2;
      else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
        const d = s.charCodeAt(i + 1);
        if (d >= 0xdc00 && d <= 0xdfff) {
          n += 4;
          i++;
        } else n += 3;
      } else n += 3;
    }
    return n;
  }
  // ASCII is one byte a character: a regex scan costs far less than encoding megabytes to count them.
  if (!NON_ASCII.test(s)) return s.length;
  return new TextEncoder().encode(s).length;
}

/**
 * `s` cut (never between a surrogate pair) so that it, with a mark saying how long it was, is at
 * most `max` characters: cutting the result again changes nothing.
 */
export function truncateText(s: string, max: number): string {
  if (s.length <= max) return s;
  const mark = `… ${TRUNCATION_MARK}: ${s.length} characters, limit ${max}]`;
  let end = Math.max(0, max - mark.length);
  const last = s.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return s.slice(0, end) + mark;
}

const LOG_LEVELS: ReadonlySet<string> = new Set(['debug', 'info', 'warning', 'error']);
const KNOWN_CATEGORIES: ReadonlySet<string> = new Set(ERROR_CATEGORIES);
const ERROR_CODE = /^[a-z][a-z0-9_]{0,63}$/;

const shortString = (x: unknown): x is string => typeof x === 'string' && x.length > 0 && x.length <= PAGE_MESSAGE_ID_MAX_CHARS;
const finite = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

/** The JSON text of a value a page sent (it arrived as JSON, so it serialises; `undefined` is null). */
function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? 'null';
  } catch {
    return 'null';
  }
}

/** The error a result of `bytes` bytes of JSON, over PLUGIN_RESULT_MAX_BYTES, becomes for its call. */
export function resultTooLarge(id: string, plugin: string, bytes: number): PageToBridge {
  return {
    type: 'result',
    id,
    plugin,
    ok: false,
    error: {
      code: 'result_too_large',
      message: `The tool's result is ${bytes} bytes of JSON, over the ${PLUGIN_RESULT_MAX_BYTES}-byte limit for plugin results; ask for less (a page, a filter, fewer fields)`,
      category: 'validation',
      retryable: false,
    },
  };
}

/**
 * A page message as the extension may pass it on, or null to drop it. Pages are untrusted: they
 * can dispatch any event the bridge listens to. Sizes are capped (server/limits.ts) so nothing a
 * page sends can make a frame the server refuses (which would drop the extension's connection and
 * fail every call in flight): a too-large result becomes a `result_too_large` error for its call,
 * long texts are cut with TRUNCATION_MARK, malformed fields are dropped or defaulted. Idempotent:
 * the tab bridge and the service worker both apply it.
 */
export function sanitizePageMessage(raw: unknown): PageToBridge | null {
  if (!raw || typeof raw !== 'object') return null;
  const m = raw as Record<string, unknown>;
  if (!shortString(m.plugin)) return null;
  const plugin = m.plugin;
  switch (m.type) {
    case 'result': {
      if (!shortString(m.id)) return null;
      if (m.ok === true) {
        const bytes = utf8Bytes(jsonText(m.value));
        if (bytes <= PLUGIN_RESULT_MAX_BYTES) return { type: 'result', id: m.id, plugin, ok: true, value: m.value };
        return resultTooLarge(m.id, plugin, bytes);
      }
      const e = (m.error && typeof m.error === 'object' ? m.error : {}) as Record<string, unknown>;
      const error: { message: string } & ToolErrorData = {
        code: typeof e.code === 'string' && ERROR_CODE.test(e.code) ? e.code : 'tool_error',
        message: truncateText(typeof e.message === 'string' && e.message ? e.message : 'The tool failed', PLUGIN_ERROR_MESSAGE_MAX_CHARS),
      };
      if (typeof e.category === 'string' && KNOWN_CATEGORIES.has(e.category)) error.category = e.category as ToolErrorData['category'];
      if (typeof e.retryable === 'boolean') error.retryable = e.retryable;
      if (finite(e.retryAfterMs) && e.retryAfterMs >= 0) error.retryAfterMs = e.retryAfterMs;
      return { type: 'result', id: m.id, plugin, ok: false, error };
    }
    case 'progress': {
      if (!shortString(m.id) || !finite(m.progress)) return null;
      const out: Extract<PageToBridge, { type: 'progress' }> = { type: 'progress', id: m.id, plugin, progress: m.progress };
      if (finite(m.total)) out.total = m.total;
      if (typeof m.message === 'string') out.message = truncateText(m.message, PLUGIN_PROGRESS_MESSAGE_MAX_CHARS);
      return out;
    }
    case 'log': {
      if (m.id !== undefined && !shortString(m.id)) return null;
      const out: Extract<PageToBridge, { type: 'log' }> = {
        type: 'log',
        plugin,
        level: typeof m.level === 'string' && LOG_LEVELS.has(m.level) ? (m.level as LogLevel) : 'info',
        message: truncateText(typeof m.message === 'string' ? m.message : jsonText(m.message), PLUGIN_LOG_MESSAGE_MAX_CHARS),
        ts: finite(m.ts) ? m.ts : Date.now(),
      };
      if (m.id !== undefined) out.id = m.id as string;
      if (m.data !== undefined) {
        const text = jsonText(m.data);
        // Too big: its JSON text, cut. Half the budget, so the cut text still fits once it is
        // itself JSON-escaped (at most twice as long) and a second pass leaves it unchanged.
        out.data = text.length <= PLUGIN_LOG_DATA_MAX_CHARS ? m.data : truncateText(text, PLUGIN_LOG_DATA_MAX_CHARS / 2 - 100);
      }
      return out;
    }
    case 'registered':
      return shortString(m.hash) ? { type: 'registered', plugin, hash: m.hash } : null;
    default:
      return null;
  }
}

/**
 * What a call to a plugin whose module threw while loading in the page answers (code
 * adapter_load_failed): said by the page's adapter stub and by the extension, which learns the
 * error when it checks the adapter and answers without a round trip into the page.
 */
export function adapterLoadFailedMessage(plugin: string, tool: string, loadError: string): string {
  return `${plugin}_${tool} cannot run: the ${plugin} adapter failed to load in this page (${loadError}). Code at the top level of the plugin's module threw; move page access into handlers and isReady, then rebuild the plugin`;
}
