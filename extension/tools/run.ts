/**
 * Running one built-in tool for a tool.dispatch (or for the side panel's Record): the URL policy
 * guard first, then the handler with the call's signal and a progress reporter. The signal is
 * aborted by tool.cancel, the side panel's Stop, or the server's timeout; handlers that wait (in
 * the worker or in the page) stop when it fires.
 */
import type { DispatchResult } from '../../server/protocol/methods.ts';
import { WS_MAX_PAYLOAD_BYTES } from '../../server/protocol/limits.ts';
import { utf8Bytes } from '../../server/protocol/page-channel.ts';
import { ToolError } from '../shared/tool-error.ts';
import { withJson } from '../background/result-json.ts';
import { TOOL_HANDLERS } from './index.ts';
import type { ToolCtx, ToolEnv } from './types.ts';
import { guardBuiltinCall, pinApprovedSite, resolveFileUrls, scrubRefusedUrls, setFileResolver, shownUrl, urlPolicy } from './url-policy.ts';
import { dialogBlocksError, openDialog } from './dialogs.ts';
import { getTab } from './tabs.ts';
import { replacedText, replacementOf, watchReplacedTabs } from './tab-lookup.ts';

/** Tools that work on a discarded tab (they reload or describe the tab, or read what was recorded). */
const RUNS_ON_DISCARDED: ReadonlySet<string> = new Set([
  'browser_reload_tab', 'browser_focus_tab', 'browser_get_tab_info', 'browser_get_network_requests', 'browser_get_network_request',
  'browser_get_websocket_frames', 'browser_export_har', 'browser_disable_network_capture',
]);

/** Tools that work while a dialog blocks the tab's page (they answer it, close or describe the tab, or read what was recorded). */
const RUNS_WITH_DIALOG: ReadonlySet<string> = new Set([
  'browser_handle_dialog', 'browser_close_tab', 'browser_focus_tab', 'browser_get_tab_info', 'browser_get_network_requests',
  'browser_get_network_request', 'browser_get_websocket_frames', 'browser_export_har',
]);

/** Tools that leave the tab's page: they dismiss a dialog it shows. */
const LEAVES_PAGE: ReadonlySet<string> = new Set(['browser_navigate_tab', 'browser_reload_tab', 'browser_go_back', 'browser_go_forward']);

function tabIdsOf(call: { input: Record<string, unknown>; tabId?: number }): Set<number> {
  const ids = new Set<number>();
  if (typeof call.input.tabId === 'number') ids.add(call.input.tabId);
  if (typeof call.tabId === 'number') ids.add(call.tabId);
  return ids;
}

/** Abort controllers of the built-in calls running now, by dispatch id. */
const running = new Map<string, AbortController>();

export function isBuiltinTool(name: string): boolean {
  return Object.hasOwn(TOOL_HANDLERS, name);
}

export async function runBuiltin(
  call: { dispatchId: string; tool: string; input: Record<string, unknown>; tabId?: number; approvedUrl?: string; session?: string },
  env: ToolEnv,
): Promise<DispatchResult> {
  if (!isBuiltinTool(call.tool)) {
    throw new ToolError(`This extension version does not implement ${call.tool}; update the extension`, { code: 'unknown_tool', category: 'not_found' });
  }
  watchReplacedTabs();
  const handler = TOOL_HANDLERS[call.tool as keyof typeof TOOL_HANDLERS] as (input: Record<string, unknown>, ctx: ToolCtx) => Promise<DispatchResult>;
  // file:// URLs the call may meet are judged by the file they lead to (links followed), which
  // only the server can tell: asked first, so the checks below and in the handler know it.
  if (urlPolicy().allowFileUrls) await learnFileUrls(call, env);
  // Every built-in call: its url argument and the page of its tab must be allowed (url-policy.ts).
  // An approved call also runs only while its tab shows the site the user approved it for.
  const checked = await guardBuiltinCall(call.tool, call.input, call.tabId, call.approvedUrl);
  // A discarded tab has no page: scripts fail with "Cannot access contents of the page" and
  // DevTools commands never answer. Only tools that do not need its page run on one.
  for (const [id, tab] of checked) if (tab.discarded && !RUNS_ON_DISCARDED.has(call.tool)) throw discardedError(id);
  if (!RUNS_WITH_DIALOG.has(call.tool)) {
    for (const id of tabIdsOf(call)) {
      const d = openDialog(id);
      // A dialog the tools cannot answer (it opened before they watched the tab) is dismissed by leaving the page.
      if (d && !(d.unseen && LEAVES_PAGE.has(call.tool))) throw dialogBlocksError(id, d);
    }
  }
  // Until the call ends, its page actions go only to documents of the approved site (url-policy.ts).
  const unpin = call.approvedUrl === undefined ? [] : [...checked.keys()].map((id) => pinApprovedSite(id, call.approvedUrl!));
  const controller = new AbortController();
  running.set(call.dispatchId, controller);
  const ctx: ToolCtx = {
    ...env,
    signal: controller.signal,
    ...(call.session !== undefined ? { session: call.session } : {}),
    progress: (p) => {
      if (!controller.signal.aborted) env.conn.notify('tool.progress', { dispatchId: call.dispatchId, ...p });
    },
    tab: (tabId) => {
      const tab = typeof tabId === 'number' ? checked.get(tabId) : undefined;
      return tab ? Promise.resolve(tab) : getTab(tabId);
    },
  };
  try {
    // The call ends when cancelled (tool.cancel, the side panel's Stop, the server's timeout) even
    // when the handler cannot: a script or a DevTools command in a page whose main thread is
    // blocked never answers, and the side panel would list the call as running until the tab closed.
    const work = handler(call.input, ctx);
    // Pinned until the handler itself ends: a cancelled one may still be working in the page.
    void work.finally(() => {
      for (const f of unpin) f();
    }).catch(() => {});
    const result = await untilAborted(work, controller.signal);
    return fitsOneFrame(call.tool, result);
  } catch (err) {
    throw await explainFailure(err, call);
  } finally {
    running.delete(call.dispatchId);
  }
}

/**
 * Where the file:// URLs a call may meet lead (url-policy.ts resolveFileUrls): its url argument,
 * every tab's page (list tools show them; a tab is used by its URL) and the frames of the tabs it
 * names. One request to the server; a URL it could not resolve stays refused.
 */
async function learnFileUrls(call: { input: Record<string, unknown>; tabId?: number }, env: ToolEnv): Promise<void> {
  setFileResolver((paths) => env.conn.request('file.realPaths', { paths }));
  const urls: (string | undefined)[] = [typeof call.input.url === 'string' ? call.input.url : undefined];
  const tabs = await chrome.tabs.query({}).catch(() => [] as chrome.tabs.Tab[]);
  for (const t of tabs) urls.push(t.url, t.pendingUrl);
  for (const id of tabIdsOf(call)) {
    const frames = (await chrome.webNavigation.getAllFrames({ tabId: id }).catch(() => null)) ?? [];
    for (const f of frames) urls.push(f.url);
  }
  await resolveFileUrls(urls).catch(() => {});
}

/**
 * Bytes a built-in result may take: it goes to the server in one WebSocket frame, and the server
 * closes the extension's socket above WS_MAX_PAYLOAD_BYTES, failing every call in flight (e.g. a
 * script returning a 12 MB string cut every agent off until the extension reconnected). Some room
 * is left for the JSON-RPC envelope.
 */
const RESULT_MAX_BYTES = WS_MAX_PAYLOAD_BYTES - 64 * 1024;

/**
 * The result as sent, within one frame's size. The JSON text made to measure it is the one the
 * frame carries (result-json.ts): a result of megabytes is serialised once.
 */
function fitsOneFrame(tool: string, result: DispatchResult): DispatchResult {
  const json = JSON.stringify(result) ?? '';
  const sent = () => (json ? withJson(result, json) : result);
  // UTF-8 takes at most 3 bytes per UTF-16 unit: only a long text needs counting.
  if (json.length * 3 <= RESULT_MAX_BYTES) return sent();
  const bytes = utf8Bytes(json);
  if (bytes <= RESULT_MAX_BYTES) return sent();
  const mb = (n: number) => `${(n / (1024 * 1024)).toFixed(1)} MB`;
  throw new ToolError(`The result of ${tool} is ${mb(bytes)}, over the ${mb(RESULT_MAX_BYTES)} one result may carry; ${HOW_TO_ASK_LESS[tool] ?? 'ask for less'}`, { code: 'result_too_large', category: 'validation' });
}

const HOW_TO_ASK_LESS: Record<string, string> = {
  browser_screenshot_tab: 'shoot the viewport or one element (selector), or use format jpeg with a lower quality',
  browser_execute_script: 'return less from the script (a slice, a count, the fields needed)',
  browser_get_page_html: 'pass a selector or a smaller maxLength',
  browser_get_tab_content: 'pass a selector or a smaller maxLength',
  browser_snapshot: 'pass a selector, a smaller maxDepth or interactiveOnly',
};

function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  work.catch(() => {}); // may settle after the race is decided
  let onAbort!: () => void;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  return Promise.race([work, aborted]).finally(() => signal.removeEventListener('abort', onAbort));
}

/**
 * A handler that failed because its tab closed or was discarded meanwhile gets Chrome's own words
 * ("Frame with ID 0 was removed", "Detached while handling command", "Printing failed" …): say
 * what happened to the tab instead (tab_closed), whichever step of which tool noticed it.
 */
async function explainFailure(err: unknown, call: { tool: string; input: Record<string, unknown>; tabId?: number }): Promise<unknown> {
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'cancelled' || code === 'tab_closed' || code === 'invalid_arguments' || code === 'page_not_allowed') return err;
  for (const id of tabIdsOf(call)) {
    const tab = await chrome.tabs.get(id).catch(() => null);
    if (!tab) {
      // Discarded (or its page swapped for a prerendered one) under a new id: not closed.
      const now = await replacementOf(id);
      if (now) return new ToolError(`${replacedText(id, now)} (${call.tool} was running on it and did not finish)`, { code: 'tab_closed', category: 'not_found' });
      return new ToolError(`Tab ${id} was closed while ${call.tool} ran on it. Call browser_list_tabs for current ids.`, { code: 'tab_closed', category: 'not_found' });
    }
    if (tab.discarded) return discardedError(id);
    // Not discarded yet unloaded: its renderer stopped (a crash, e.g. on a page nested too deep
    // for Chrome to lay out); every call on it fails until it is reloaded.
    if (tab.status === 'unloaded') return new ToolError(`The page in tab ${id} is not loaded (its renderer stopped: the page crashed or Chrome unloaded it), so ${call.tool} could not run; reload it with browser_reload_tab, then retry`, { code: 'not_available', category: 'validation', retryable: true });
    const message = String((err as Error | null)?.message ?? '');
    // The document the call worked in went away under it.
    // (A script pinned to a document, or a DevTools call bound to one, finds it gone.)
    if (/Frame with ID 0 was removed|Inspected target navigated or closed|Execution context was destroyed|Cannot find context with specified id|Could not find object with given id|No document with id/i.test(message)) {
      return new ToolError(`The page in tab ${id} navigated or reloaded while ${call.tool} ran on it, so it did not finish; retry on the new page`, { code: 'not_available', category: 'validation', retryable: true });
    }
    // A tab loading its first page has only the initial empty document, which scripts may not reach.
    if (tab.status === 'loading' && /Cannot access contents/i.test(message)) {
      // A page the tools refuse is named by scheme + host only, as browser_list_tabs shows it.
      const loading = tab.pendingUrl ?? tab.url;
      const shown = loading ? shownUrl(loading) : 'its page';
      return new ToolError(`Tab ${id} is still loading ${shown}; wait for it (browser_wait_for with text or urlPattern), then retry`, { code: 'not_available', category: 'validation', retryable: true });
    }
    // chrome.scripting cannot reach the page Chrome shows for a failed load.
    if (/showing error page/i.test(message)) {
      return new ToolError(`Tab ${id} shows Chrome's error page (its last load failed, e.g. the site did not answer): navigate it to a page that loads, then retry`, { code: 'not_available', category: 'validation' });
    }
  }
  // Chrome's own error texts may name the page they failed on: a refused one by scheme + host only.
  if (err instanceof Error && !(err instanceof ToolError)) err.message = scrubRefusedUrls(err.message);
  return err;
}

export function discardedError(tabId: number): ToolError {
  return new ToolError(`Tab ${tabId} is discarded (Chrome unloaded its page to save memory): reload it with browser_reload_tab, then retry`, { code: 'not_available', category: 'validation', retryable: true });
}

/** Abort a running built-in call; false when none runs under that id. */
export function cancelBuiltin(dispatchId: string, reason: string): boolean {
  const c = running.get(dispatchId);
  if (!c) return false;
  c.abort(new ToolError(`Cancelled: ${reason}`, { code: 'cancelled' }));
  return true;
}
