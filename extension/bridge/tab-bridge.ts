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
 * loop).
 */
import { BRIDGE_TO_PAGE_EVENT, PAGE_TO_BRIDGE_EVENT, TAB_PORT_NAME, type PortToBridge } from '../../server/protocol/page-channel.ts';
import { checkPageMessage } from '../shared/page-message.ts';

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
    const checked = checkPageMessage(raw);
    if (!checked.ok) return refuse(checked.error);
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
    document.dispatchEvent(new CustomEvent(BRIDGE_TO_PAGE_EVENT, { detail: typeof msg === 'string' ? msg : JSON.stringify(msg) }));
  });
  port.onDisconnect.addListener(() => {
    handle.alive = false;
    document.removeEventListener(PAGE_TO_BRIDGE_EVENT, onPage);
  });
  g[KEY] = handle;
})();
