/**
 * The per-tab bridge, injected into the ISOLATED world before any adapter. It holds one
 * chrome.runtime Port to the service worker and relays messages to and from the MAIN-world
 * adapters as DOM CustomEvents with a JSON string detail (server/protocol/page-channel.ts).
 * Injecting it again is harmless: a live bridge stays, a dead one (worker restarted, extension
 * reloaded) is replaced.
 *
 * The page is untrusted (any script in it can dispatch the event): every message is capped and
 * checked here (sanitizePageMessage) before it crosses the Port, and again in the worker.
 */
import { BRIDGE_TO_PAGE_EVENT, PAGE_TO_BRIDGE_EVENT, TAB_PORT_NAME, sanitizePageMessage, type PageToBridge, type PortToBridge } from '../../server/protocol/page-channel.ts';

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

  function onPage(ev: Event): void {
    const detail = (ev as CustomEvent).detail;
    if (typeof detail !== 'string') return;
    let msg: PageToBridge | null;
    try {
      msg = sanitizePageMessage(JSON.parse(detail));
    } catch {
      return;
    }
    if (!msg) return;
    try {
      port.postMessage(msg);
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
  port.onMessage.addListener((msg: PortToBridge) => {
    document.dispatchEvent(new CustomEvent(BRIDGE_TO_PAGE_EVENT, { detail: JSON.stringify(msg) }));
  });
  port.onDisconnect.addListener(() => {
    handle.alive = false;
    document.removeEventListener(PAGE_TO_BRIDGE_EVENT, onPage);
  });
  g[KEY] = handle;
})();
