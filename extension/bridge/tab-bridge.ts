/**
 * The ISOLATED-world half of the per-tab channel. Injected once per page before any adapter: it
 * holds one chrome.runtime Port to the service worker and relays messages to and from the
 * MAIN-world adapters as DOM CustomEvents with a JSON string detail (page-channel.ts).
 *
 * A call is one port message in and one CustomEvent out, and the same back. When the port drops
 * (service worker restarted, extension reloaded) the bridge removes itself so the service worker
 * can inject a fresh one on the next call.
 */
import {
  BRIDGE_TO_PAGE_EVENT,
  PAGE_TO_BRIDGE_EVENT,
  TAB_PORT_NAME,
  type BridgeToPort,
  type PortToBridge,
} from '../../server/protocol/page-channel.ts';

const FLAG = '__opentabs_bridge__';
const g = globalThis as Record<string, unknown>;

if (!g[FLAG]) {
  const port = chrome.runtime.connect({ name: TAB_PORT_NAME });
  g[FLAG] = true;

  const fromPage = (event: Event) => {
    const detail = (event as CustomEvent).detail;
    if (typeof detail !== 'string') return;
    let msg: BridgeToPort;
    try {
      msg = JSON.parse(detail) as BridgeToPort;
    } catch {
      return;
    }
    if (!msg || typeof msg !== 'object' || typeof msg.type !== 'string') return;
    try {
      port.postMessage(msg);
    } catch {
      teardown();
    }
  };

  const fromWorker = (msg: PortToBridge) => {
    document.dispatchEvent(new CustomEvent(BRIDGE_TO_PAGE_EVENT, { detail: JSON.stringify(msg) }));
  };

  function teardown() {
    document.removeEventListener(PAGE_TO_BRIDGE_EVENT, fromPage);
    port.onMessage.removeListener(fromWorker);
    g[FLAG] = false;
  }

  document.addEventListener(PAGE_TO_BRIDGE_EVENT, fromPage);
  port.onMessage.addListener(fromWorker);
  port.onDisconnect.addListener(teardown);
}
