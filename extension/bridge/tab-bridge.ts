/**
 * The per-tab bridge, injected into the ISOLATED world before any adapter. It holds one
 * chrome.runtime Port to the service worker and relays messages to and from the MAIN-world
 * adapters as DOM CustomEvents with a JSON string detail (server/protocol/page-channel.ts).
 * Injecting it again is harmless: a live bridge stays, a dead one (worker restarted, extension
 * reloaded) is replaced.
 *
 * The page is untrusted (any script in it can dispatch the event): every message is checked
 * against its valibot schema and capped here (parsePageMessage, with the fast path for results of
 * shared/page-message.ts) before it crosses the Port, and again in the worker. A malformed one is
 * refused with a warning in the page's console (the first few only: a page could send them in a
 * loop). A result goes on only for a call the worker sent over this bridge and that has no
 * answer yet (a page forging results for calls that do not exist, megabytes each, reaches nothing
 * past the bridge). A result whose text cannot be over the cap once serialised again (as the Port
 * does: textWithinResultCap) goes on unmeasured; any other is measured here, so what crosses the
 * Port is at most the cap and the message around it. Log lines past
 * PLUGIN_LOG_LINES_* / PLUGIN_LOG_CHARS_* are dropped here already (the
 * worker holds each tab to the same budget and says how many it dropped).
 */
import { BRIDGE_TO_PAGE_EVENT, PAGE_TO_BRIDGE_EVENT, TAB_PORT_NAME, type PortToBridge } from '../../server/protocol/page-channel.ts';
import { checkPageMessage, textWithinResultCap } from '../shared/page-message.ts';
import { PLUGIN_LOG_CHARS_BURST, PLUGIN_LOG_CHARS_PER_SECOND, PLUGIN_LOG_LINES_BURST, PLUGIN_LOG_LINES_PER_SECOND } from '../../server/protocol/limits.ts';
import { TokenBucket } from '../../server/protocol/token-bucket.ts';

/** Malformed messages reported in the console per bridge. */
const MAX_WARNINGS = 10;

interface BridgeHandle {
  alive: boolean;
  teardown(): void;
}
const KEY = '__opentabs_bridge__';
const g = globalThis as unknown as Record<string, BridgeHandle | undefined>;

(() => {
  const prev = g[KEY];
  if (prev?.alive) return;
  prev?.teardown();

  const port = chrome.runtime.connect({ name: TAB_PORT_NAME });
  const handle: BridgeHandle = { alive: true, teardown };

  let warnings = 0;
  /** Calls the worker sent over this bridge with no result yet (id → plugin). */
  const open = new Map<string, string>();
  const logBudget = { lines: new TokenBucket(PLUGIN_LOG_LINES_BURST, PLUGIN_LOG_LINES_PER_SECOND), chars: new TokenBucket(PLUGIN_LOG_CHARS_BURST, PLUGIN_LOG_CHARS_PER_SECOND) };
  let logDropped = 0;
  /** A log line over the budget: dropped and counted; the next line that goes is preceded by the count. */
  const overLogBudget = (chars: number): boolean => {
    const now = Date.now();
    if (logBudget.lines.level(now) < 2 || logBudget.chars.level(now) < chars + 200) {
      logDropped++;
      return true;
    }
    logBudget.lines.take();
    logBudget.chars.take(chars);
    return false;
  };
  const refuse = (why: string) => {
    if (warnings++ < MAX_WARNINGS) console.warn(`[OpenTabs] ${why}; refused`);
  };

  function onPage(ev: Event): void {
    const detail = (ev as CustomEvent).detail;
    if (typeof detail !== 'string') return refuse('Malformed page message: the event detail must be a JSON string');
    let raw: unknown;
    try {
      raw = JSON.parse(detail);
    } catch {
      return refuse('Malformed page message: the event detail is not JSON');
    }
    // A result that cannot be over the cap once serialised again is not serialised here to measure
    // it: the worker measures it exactly (it serialises it anyway, for its frame to the server).
    const within = (raw as { type?: unknown } | null)?.type === 'result' && textWithinResultCap(detail);
    const checked = checkPageMessage(raw, within);
    if (!checked.ok) return refuse(checked.error);
    const m = checked.msg;
    if (m.type === 'result') {
      if (open.get(m.id) !== m.plugin) return;
      open.delete(m.id);
    }
    if (m.type === 'log') {
      if (overLogBudget(m.message.length + (m.data === undefined ? 0 : (JSON.stringify(m.data)?.length ?? 0)))) return;
      if (logDropped > 0) {
        const message = `${logDropped} log lines of this page were dropped: a page may send ${PLUGIN_LOG_LINES_PER_SECOND} lines and ${PLUGIN_LOG_CHARS_PER_SECOND / 1024} KB of log a second`;
        logDropped = 0;
        try {
          port.postMessage({ type: 'log', plugin: m.plugin, level: 'warning', message, ts: Date.now() });
        } catch {}
      }
    }
    try {
      port.postMessage(checked.msg);
    } catch {
      teardown();
    }
  }

  function teardown(): void {
    handle.alive = false;
    document.removeEventListener(PAGE_TO_BRIDGE_EVENT, onPage);
    try {
      port.disconnect();
    } catch {}
  }

  document.addEventListener(PAGE_TO_BRIDGE_EVENT, onPage);
  // The worker sends each message as its JSON text (plugin-ports.ts), the page's event detail as is.
  port.onMessage.addListener((msg: string | PortToBridge) => {
    const text = typeof msg === 'string' ? msg : JSON.stringify(msg);
    try {
      const m = JSON.parse(text) as PortToBridge;
      if (m.type === 'call') open.set(m.id, m.plugin);
      else if (m.type === 'cancel') open.delete(m.id);
    } catch {}
    document.dispatchEvent(new CustomEvent(BRIDGE_TO_PAGE_EVENT, { detail: text }));
  });
  port.onDisconnect.addListener(() => {
    handle.alive = false;
    document.removeEventListener(PAGE_TO_BRIDGE_EVENT, onPage);
  });
  g[KEY] = handle;
})();
