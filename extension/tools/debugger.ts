/**
 * chrome.debugger (CDP) sessions for tools that need the DevTools protocol. Attachments are
 * reference-counted per tab so concurrent calls share one session, and kept for
 * DEBUGGER_IDLE_DETACH_MS after the last call: Chrome shows its "started debugging this browser"
 * bar while attached, and the bar appearing and going after every click would resize the page
 * each time (resize events, cropped screenshots). An agent at work keeps one attachment; an idle
 * tab is detached, and the bar goes.
 *
 * The debugger only attaches to a tab whose page tools may use (url-policy.ts), checked again once
 * attached; a session whose tab starts loading a refused page is detached at once, so a
 * navigation cannot carry a running session (e.g. network capture) into an extension page.
 */
import { ToolError } from '../shared/tool-error.ts';
import { assertApprovedSite, assertTabAllowed, redactedUrl, refusalReason, tabRefusedError, urlPolicy } from './url-policy.ts';

/** How long a tab stays attached after its last debugger-driven call. */
export const DEBUGGER_IDLE_DETACH_MS = 5_000;

const sessions = new Map<number, { count: number; ready: Promise<void>; idle?: ReturnType<typeof setTimeout> }>();

export type CdpSend = <T = unknown>(method: string, params?: Record<string, unknown>) => Promise<T>;

type EndedListener = (tabId: number, reason: string) => void;
const endedListeners = new Set<EndedListener>();

/**
 * Called when a tab's session ends without its callers releasing it: Chrome or the user detached
 * it, or it was cut here because the tab went to a refused page (chrome.debugger.onDetach does
 * not fire for a detach the extension makes itself, so this is the one place to learn of both).
 */
export function onSessionEnded(l: EndedListener): () => void {
  endedListeners.add(l);
  return () => endedListeners.delete(l);
}

function ended(tabId: number, reason: string): void {
  const s = sessions.get(tabId);
  if (s?.idle) clearTimeout(s.idle);
  sessions.delete(tabId);
  for (const l of [...endedListeners]) l(tabId, reason);
}

async function cut(tabId: number): Promise<void> {
  if (!sessions.has(tabId)) return;
  await chrome.debugger.detach({ tabId }).catch(() => {});
  ended(tabId, 'refused_page');
}

let watching = false;
function watchNavigations(): void {
  if (watching) return;
  watching = true;
  chrome.tabs.onUpdated.addListener((tabId, info) => {
    if (info.url !== undefined && sessions.has(tabId) && refusalReason(info.url)) void cut(tabId);
  });
  chrome.webNavigation.onBeforeNavigate.addListener((d) => {
    if (d.frameId === 0 && sessions.has(d.tabId) && refusalReason(d.url)) void cut(d.tabId);
  });
  // Detached by Chrome or the user: the next call attaches afresh.
  chrome.debugger.onDetach.addListener((source, reason) => {
    if (source.tabId !== undefined && sessions.has(source.tabId)) ended(source.tabId, String(reason));
  });
}

/**
 * Chrome keeps the extension's debugger sessions when it stops the service worker: the new
 * worker starts with none in `sessions`, while tabs still carry what the old one set (emulation,
 * request interception, forced pseudo states, network capture), and every attach to such a tab
 * failed with "Another debugger is already attached" until the browser restarted. Whatever the
 * old worker held is detached when the worker starts: Chrome then clears that session's overrides,
 * as when the extension loses the server (no agent is left to undo them). chrome.debugger.detach
 * only ever detaches this extension's own session, so DevTools or another extension keep theirs.
 * Attaching waits for this.
 */
let leftovers: Promise<void> | null = null;

export function endLeftoverSessions(): Promise<void> {
  leftovers ??= (async () => {
    const targets = await chrome.debugger.getTargets().catch(() => [] as chrome.debugger.TargetInfo[]);
    await Promise.all(
      targets
        .filter((t) => t.attached && t.type === 'page' && typeof t.tabId === 'number')
        .map((t) => chrome.debugger.detach({ tabId: t.tabId }).catch(() => {})),
    );
  })();
  return leftovers;
}

export async function withDebugger<T>(tabId: number, fn: (send: CdpSend) => Promise<T>): Promise<T> {
  watchNavigations();
  await endLeftoverSessions();
  await assertTabAllowed(tabId);
  const target = { tabId };
  let s = sessions.get(tabId);
  if (!s) {
    s = {
      count: 0,
      ready: chrome.debugger.attach(target, '1.3').catch((err: Error) => {
        sessions.delete(tabId);
        throw new ToolError(`Cannot use the debugger on tab ${tabId}: ${err.message} (is DevTools open on it?)`, { code: 'not_available', category: 'internal', retryable: true });
      }),
    };
    sessions.set(tabId, s);
  }
  s.count++;
  if (s.idle) clearTimeout(s.idle);
  s.idle = undefined;
  try {
    await s.ready;
    // The page may have changed while attaching (for an approved call: still the approved site).
    const tab = await assertTabAllowed(tabId);
    for (const u of [tab.url, tab.pendingUrl]) if (u) assertApprovedSite(tabId, u);
    const send: CdpSend = (method, params) => chrome.debugger.sendCommand(target, method, params) as Promise<never>;
    if (tab.url?.startsWith('about:') || tab.pendingUrl?.startsWith('about:')) await assertBlankOrigin(tabId, send);
    return await fn(send);
  } finally {
    s.count--;
    if (s.count === 0 && sessions.get(tabId) === s) {
      const session = s;
      session.idle = setTimeout(() => {
        if (session.count !== 0 || sessions.get(tabId) !== session) return;
        void chrome.debugger.detach(target).catch(() => {});
        // The session's listeners learn it ended (onDetach does not fire for our own detach): the
        // dialog watcher must enable the Page domain again on the next session, or a click that
        // opens a dialog would hang once the tab had been idle.
        ended(tabId, 'idle');
      }, DEBUGGER_IDLE_DETACH_MS);
    }
  }
}

/**
 * Why an about:blank document of origin `origin` (as DevTools reports it) may not be used, or null.
 * about:blank has the origin of the page that opened or made it: one an extension's page opened
 * (window.open() from its popup or options page) runs with that extension's rights — its page
 * (opener), its files (our auth.json) and its chrome.* APIs — while its URL reads about:blank.
 * Chrome keeps chrome.scripting out of such a document, not the debugger. Allowed: an opaque
 * origin, an origin of pages the tools may use (http(s)), a file:// one while file:// pages are on.
 */
export function blankOriginRefusal(origin: string): string | null {
  let u: URL;
  try {
    u = new URL(origin);
  } catch {
    return null; // opaque ('null', '://'): a document of nobody's origin
  }
  if (u.protocol === 'file:') return urlPolicy().allowFileUrls ? null : refusalReason('file:///');
  const why = refusalReason(`${u.origin === 'null' ? origin : u.origin}/`);
  return why ? `its about:blank page was opened by ${redactedUrl(origin)} and has that page's rights (${why})` : null;
}

/** How long an about:blank page's origin is waited for (a busy page answers late). */
const BLANK_ORIGIN_WAIT_MS = 5_000;

/**
 * Throws page_not_allowed when the tab's top document is about:blank of an origin tools may not
 * use. The origin is read in an isolated world of ours (DevTools' securityOrigin says "://" for
 * every about:blank, whoever made it; the page's own scripts cannot answer for the isolated world).
 */
async function assertBlankOrigin(tabId: number, send: CdpSend): Promise<void> {
  const { frameTree } = await send<{ frameTree: { frame: { id: string; url: string } } }>('Page.getFrameTree');
  if (!frameTree.frame.url.startsWith('about:')) return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const origin = await Promise.race([
    (async () => {
      const w = await send<{ executionContextId: number }>('Page.createIsolatedWorld', { frameId: frameTree.frame.id, worldName: 'opentabs-utility', grantUniveralAccess: false });
      const r = await send<{ result: { value?: unknown } }>('Runtime.evaluate', { expression: 'self.origin', contextId: w.executionContextId, returnByValue: true });
      return typeof r.result.value === 'string' ? r.result.value : null;
    })().catch(() => null),
    new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), BLANK_ORIGIN_WAIT_MS))),
  ]).finally(() => clearTimeout(timer));
  if (origin === null) throw new ToolError(`Could not tell whose about:blank page tab ${tabId} shows (its page did not answer); try again`, { code: 'not_available', category: 'validation', retryable: true });
  const why = blankOriginRefusal(origin);
  if (why) throw tabRefusedError(tabId, why);
}

/** Tabs the debugger is attached to now (e2e tests and extension_get_state). */
export function attachedTabs(): number[] {
  return [...sessions.keys()];
}

/**
 * The tab's top document as a DevTools object, checked: its own URL (DOM.describeNode, not
 * anything the page's scripts could answer) is allowed and, for an approved call, of the approved
 * site. Code run with Runtime.callFunctionOn on the returned objectId runs in that document's
 * context or not at all (a navigation since destroys the context and the call fails), so a page
 * the tab moved to after the check never gets it. Release `objectGroup` afterwards.
 */
export async function checkedDocument(send: CdpSend, tabId: number, objectGroup: string): Promise<string> {
  const doc = await send<{ result: { objectId?: string } }>('Runtime.evaluate', { expression: 'document', objectGroup, returnByValue: false });
  const objectId = doc.result.objectId;
  if (!objectId) throw new ToolError(`Tab ${tabId} has no document to run in`, { code: 'not_available', category: 'validation', retryable: true });
  const { node } = await send<{ node: { documentURL?: string } }>('DOM.describeNode', { objectId });
  const url = node.documentURL ?? '';
  const why = refusalReason(url);
  if (why) throw tabRefusedError(tabId, why);
  assertApprovedSite(tabId, url);
  return objectId;
}
