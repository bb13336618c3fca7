/**
 * Page tools (WebMCP), ISOLATED world, registered at document_start on http(s) pages next to
 * page-tools-main.ts. It opens its Port to the service worker only once the page offers a tool
 * (a page without tools costs nothing), relays the page's messages — capped and checked by
 * sanitizePageToolsMessage before they cross — and passes the worker's calls, cancellations and
 * warnings back as DOM events. Its Port has its own name: the worker never treats what comes over
 * it as a plugin adapter's message.
 *
 * The page can dispatch this channel's events itself, as often as it likes: a result goes on only
 * for a call the worker sent and that has no answer yet (once), and tool lists go on at most
 * PAGE_TOOLS_UPDATES_BURST at once then PAGE_TOOLS_UPDATES_PER_SECOND, and at most
 * PAGE_TOOLS_LIST_BYTES_BURST / PAGE_TOOLS_LIST_BYTES_PER_SECOND bytes of JSON; a list over that
 * waits and goes with the ones after it (latest only).
 */
import {
  BRIDGE_TO_PAGE_TOOLS_EVENT,
  PAGE_TOOLS_PORT_NAME,
  PAGE_TOOLS_TO_BRIDGE_EVENT,
  sanitizePageToolsMessage,
  type BridgeToPageTools,
  type PageToolsToBridge,
} from '../../server/protocol/page-tools.ts';
import { PAGE_TOOLS_LIST_BYTES_BURST, PAGE_TOOLS_LIST_BYTES_PER_SECOND, PAGE_TOOLS_UPDATES_BURST, PAGE_TOOLS_UPDATES_PER_SECOND } from '../../server/protocol/limits.ts';
import { TokenBucket } from '../../server/protocol/token-bucket.ts';

/** Ports the worker refused (it does for pages it never takes tools from) before the bridge gives up. */
const MAX_REFUSED_CONNECTS = 3;

(() => {
  const KEY = '__opentabs_page_tools_bridge__';
  const g = globalThis as unknown as Record<string, { alive(): boolean } | undefined>;
  // Injected again into a tab already open (extension reloaded or updated): a live bridge stays;
  // one whose extension context is gone is replaced (its connect() would only throw).
  if (g[KEY]?.alive()) return;

  let port: chrome.runtime.Port | null = null;
  let accepted = false;
  let refused = 0;
  let dead = false;
  /** The last tool list the page sent (re-sent when the worker restarts). */
  let lastTools: PageToolsToBridge | null = null;
  /** Calls the worker sent that have no result yet (only these get one). */
  const open = new Set<string>();
  /** A list waiting for the budget, and its timer. */
  let held: PageToolsToBridge | null = null;
  let heldTimer: ReturnType<typeof setTimeout> | null = null;
  const budget = { lists: new TokenBucket(PAGE_TOOLS_UPDATES_BURST, PAGE_TOOLS_UPDATES_PER_SECOND), bytes: new TokenBucket(PAGE_TOOLS_LIST_BYTES_BURST, PAGE_TOOLS_LIST_BYTES_PER_SECOND) };

  g[KEY] = { alive: () => !dead && chrome.runtime?.id !== undefined };

  const toPage = (msg: BridgeToPageTools) => document.dispatchEvent(new CustomEvent(BRIDGE_TO_PAGE_TOOLS_EVENT, { detail: JSON.stringify(msg) }));

  function connect(): chrome.runtime.Port | null {
    if (dead) return null;
    let p: chrome.runtime.Port;
    try {
      p = chrome.runtime.connect({ name: PAGE_TOOLS_PORT_NAME });
    } catch {
      // The extension was reloaded or removed: this bridge can never reach it again.
      dead = true;
      return null;
    }
    accepted = false;
    p.onMessage.addListener((msg: BridgeToPageTools) => {
      accepted = true;
      refused = 0;
      if (msg?.type === 'call' && typeof msg.id === 'string') open.add(msg.id);
      else if (msg?.type === 'cancel') open.delete(msg.id);
      toPage(msg);
    });
    p.onDisconnect.addListener(() => {
      if (port !== p) return;
      port = null;
      // The worker failed the calls that went over this Port.
      open.clear();
      if (!accepted && ++refused >= MAX_REFUSED_CONNECTS) dead = true;
      // The worker stopped (Chrome restarts it at will): come back with the current list.
      if (accepted && lastTools && lastTools.type === 'tools' && lastTools.tools.length > 0) {
        const again = connect();
        if (again) {
          port = again;
          again.postMessage(lastTools);
        }
      }
    });
    return p;
  }

  document.addEventListener(PAGE_TOOLS_TO_BRIDGE_EVENT, (ev: Event) => {
    const detail = (ev as CustomEvent).detail;
    if (typeof detail !== 'string') return;
    let msg: PageToolsToBridge | null;
    try {
      msg = sanitizePageToolsMessage(JSON.parse(detail));
    } catch {
      return;
    }
    if (!msg) return;
    if (msg.type === 'result') {
      if (!open.delete(msg.id)) return; // no such call, or answered already
      return send(msg);
    }
    // A running call's page asks for the user's input: only for a call the worker sent and that
    // has no answer yet (the worker takes one such request at a time per call).
    if (msg.type === 'interaction') return open.has(msg.id) ? send(msg) : undefined;
    const hadTools = lastTools !== null && lastTools.type === 'tools' && lastTools.tools.length > 0;
    lastTools = msg;
    // Nothing to say until the page offers a tool (or takes its last one back).
    if (!port && !held && msg.tools.length === 0 && !hadTools) return;
    held = msg;
    flush();
  });

  /** The held list goes now if the budget allows, else once it does. */
  function flush(): void {
    if (!held || heldTimer) return;
    const now = Date.now();
    const cost = Math.min(JSON.stringify(held).length, PAGE_TOOLS_LIST_BYTES_BURST);
    const waitMs = Math.max(budget.lists.waitMs(1, now), budget.bytes.waitMs(cost, now));
    if (waitMs === 0) {
      budget.lists.take();
      budget.bytes.take(cost);
      const msg = held;
      held = null;
      return send(msg);
    }
    heldTimer = setTimeout(() => {
      heldTimer = null;
      flush();
    }, waitMs + 1);
  }

  function send(msg: PageToolsToBridge): void {
    port ??= connect();
    if (!port) return;
    try {
      port.postMessage(msg);
    } catch {
      port = null;
    }
  }
})();
