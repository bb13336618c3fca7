/**
 * Recording a tab's network through the DevTools protocol (Network domain): one held debugger
 * session per tab (a withDebugger call that only returns when capture stops, so other debugger
 * tools share it meanwhile), events turned into records (network-records.ts). The tab closing,
 * the user cancelling the debugging bar, or DevTools taking over ends the capture and frees it.
 */
import { CAPTURE_STORED_BODY_BYTES, NETWORK_CAPTURE_DEFAULT_REQUESTS, WEBSOCKET_FRAMES_MAX } from '../../server/protocol/limits.ts';
import { ToolError } from '../shared/tool-error.ts';
import { debuggerEvents } from './cdp-events.ts';
import { holdDebugger } from './held-debugger.ts';
import type { InputOf } from './types.ts';
import { siteOf } from './url-policy.ts';
import { REDACTED_SECRET, base64HoldsSecret } from '../background/own-secret.ts';
import { addFrame, bodyLength, capBody, capHeaders, capResponse, capUrl, dropBodies, headerValue, store, urlMatches, type CapturedBody, type Capture, type NetRecord } from './network-records.ts';

/** The capture running on each tab (at most one). */
export const captures = new Map<number, Capture>();

/**
 * Why the answer's body is not kept, or null when it is. The capture is for the site the tab
 * shows; an answer from another origin is kept only when the page itself could read it (CORS
 * allowed it: Access-Control-Allow-Origin the site's origin or *). Otherwise DevTools would hand
 * the agent what the browser keeps from the page — another site's file fetched with the user's
 * cookies, an intranet resource — on the say-so of an approval for this site.
 */
function hiddenFromPage(c: Capture, rec: NetRecord): string | null {
  let origin: string;
  try {
    const u = new URL(rec.response?.url || rec.url);
    if (u.protocol === 'data:') return null;
    origin = u.origin;
  } catch {
    // A URL cut at CAPTURE_URL_MAX_CHARS that no longer parses: its origin is unknown.
    return (rec.response?.url || rec.url).startsWith('data:') || !(rec.response?.url || rec.url).includes('…[URL cut:') ? null : 'body not kept: the URL was too long to tell which origin answered';
  }
  if (origin === c.site) return null;
  const allowed = headerValue(rec.response?.headers, 'access-control-allow-origin')?.trim();
  if (allowed === '*' || allowed === c.site) return null;
  return `body not kept: an answer from ${origin} that the page itself cannot read (no CORS permission for ${c.site})`;
}

export function fetchBodies(c: Capture, rec: NetRecord, requestId: string): void {
  const job = (async () => {
    if (rec.hasPostData && rec.postBody === undefined) {
      // A body that is not UTF-8 (an ArrayBuffer or Blob of bytes) comes as base64: capBody decodes
      // it to look for the secret, which the scrub of frames to the server would not see encoded.
      const r = await c.send<{ postData: string; base64Encoded?: boolean }>('Network.getRequestPostData', { requestId }).catch(() => null);
      if (r) rec.postBody = capBody(r.postData, r.base64Encoded === true);
    }
    // Bodies are attached only once both are in, so the byte count never sees half of them.
    const requestBody = rec.postBody;
    rec.postBody = undefined;
    let responseBody: CapturedBody | undefined;
    const unreadable = hiddenFromPage(c, rec);
    if (unreadable) rec.bodyError = unreadable;
    else {
      try {
        const r = await c.send<{ body: string; base64Encoded: boolean }>('Network.getResponseBody', { requestId });
        responseBody = capBody(r.body, r.base64Encoded);
      } catch (err) {
        rec.bodyError = (err as Error).message ?? String(err); // e.g. redirects and 204s have none
      }
    }
    // Evicted (or cleared) while its body was being fetched: nothing to keep.
    if (![...c.requests.values()].includes(rec)) return;
    rec.requestBody = requestBody;
    rec.responseBody = responseBody;
    c.bodyChars += bodyLength(rec);
    for (const old of c.requests.values()) {
      if (c.bodyChars <= CAPTURE_STORED_BODY_BYTES) break;
      if (old !== rec && bodyLength(old) > 0) dropBodies(c, old, `body dropped: a capture keeps at most ${CAPTURE_STORED_BODY_BYTES / 1024 / 1024} MB of bodies, the newest`);
    }
  })();
  c.pendingBodies.add(job);
  void job.finally(() => c.pendingBodies.delete(job));
}

/**
 * Whether a request was made while the tab showed another site than the one capture is for. A
 * request of the main frame's document is judged by that document (its documentURL: for a
 * navigation, the page being requested, so the request that leaves the site is not kept and the
 * one coming back is); any other (frames, workers, sockets) by the top-level page last committed.
 */
function madeAway(c: Capture, params: Record<string, any>): boolean {
  if (c.mainFrameId !== null && params.frameId === c.mainFrameId && typeof params.documentURL === 'string') return siteOf(params.documentURL) !== c.site;
  return c.topSite !== c.site;
}

/** Schemes of extensions' own files (their scripts' URLs in a stack). */
const EXTENSION_SCRIPT = /^(?:chrome-extension|moz-extension|extension):\/\/([^/]*)/i;

/**
 * Whether a request or socket was made by another extension's script: a frame of its initiator's
 * stack (async parents too) is a chrome-extension:// script not of this extension. Other
 * extensions' content scripts send requests from the page's tab (a translator posting the page's
 * text with its key, a password manager asking its server), with headers and bodies the page
 * never sees: that extension's, not the site's, and not recorded. This extension's own scripts
 * (plugin adapters, run in the page's world) are kept.
 */
function madeByOtherExtension(params: Record<string, any>): boolean {
  const own = typeof chrome !== 'undefined' ? chrome.runtime?.id : undefined;
  const foreign = (url: unknown) => {
    const m = typeof url === 'string' ? EXTENSION_SCRIPT.exec(url) : null;
    return m !== null && m[1]!.toLowerCase() !== own;
  };
  const initiator = params.initiator as { url?: string; stack?: { callFrames?: { url?: string }[]; parent?: unknown } } | undefined;
  if (foreign(initiator?.url)) return true;
  let stack = initiator?.stack as { callFrames?: { url?: string }[]; parent?: unknown } | undefined;
  for (let depth = 0; stack && depth < 64; depth++, stack = stack.parent as typeof stack) {
    if ((stack.callFrames ?? []).some((f) => foreign(f.url))) return true;
  }
  return false;
}

export function onNetworkEvent(c: Capture, method: string, params: Record<string, any>): void {
  const id = params.requestId as string | undefined;
  switch (method) {
    case 'Network.requestWillBeSent': {
      if (typeof params.wallTime === 'number') c.clockOffset = params.wallTime - params.timestamp;
      const prev = id ? c.requests.get(id) : undefined;
      if (prev && params.redirectResponse) {
        // A redirect reuses the request id: finish the hop and keep it under its own key.
        prev.response = capResponse(params.redirectResponse);
        prev.endTs = params.timestamp;
        prev.state = 'complete';
        c.requests.delete(id!);
        c.requests.set(`${id}:redirect${++c.redirects}`, prev);
      }
      const req = params.request as { url: string; method: string; headers: Record<string, string>; postData?: string; hasPostData?: boolean };
      if (!id || !urlMatches(req.url, c.urlFilter) || madeByOtherExtension(params)) return;
      if (madeAway(c, params)) {
        c.skippedAway++;
        return;
      }
      store(c, id, {
        requestId: id,
        url: capUrl(req.url),
        method: req.method,
        type: params.type ?? 'Other',
        requestHeaders: capHeaders(req.headers),
        postBody: c.captureBodies && req.postData !== undefined ? capBody(req.postData, false) : undefined,
        hasPostData: c.captureBodies && (req.hasPostData === true || req.postData !== undefined),
        wallTime: (params.wallTime as number) * 1000,
        startTs: params.timestamp,
        state: 'pending',
      });
      return;
    }
    case 'Network.responseReceived': {
      const rec = c.requests.get(id!);
      if (!rec) return;
      rec.response = capResponse(params.response);
      if (params.type) rec.type = params.type;
      return;
    }
    case 'Network.loadingFinished': {
      const rec = c.requests.get(id!);
      if (!rec) return;
      rec.endTs = params.timestamp;
      rec.encodedDataLength = params.encodedDataLength;
      rec.state = 'complete';
      if (c.captureBodies) fetchBodies(c, rec, id!);
      return;
    }
    case 'Network.loadingFailed': {
      const rec = c.requests.get(id!);
      if (!rec) return;
      rec.endTs = params.timestamp;
      rec.state = 'failed';
      rec.error = params.canceled ? 'canceled' : params.blockedReason ? `blocked: ${params.blockedReason}` : params.errorText;
      return;
    }
    case 'Network.webSocketCreated':
      // urlFilter is about HTTP requests: frames of every socket are kept (bounded anyway).
      if (!id || madeByOtherExtension(params)) return;
      if (madeAway(c, params)) {
        c.skippedAway++;
        return;
      }
      c.sockets.set(id, capUrl(params.url));
      return;
    case 'Network.webSocketWillSendHandshakeRequest':
      if (typeof params.wallTime === 'number') c.clockOffset = params.wallTime - params.timestamp;
      return;
    case 'Network.webSocketFrameSent':
    case 'Network.webSocketFrameReceived':
    case 'Network.webSocketFrameError': {
      const url = c.sockets.get(id!);
      if (url === undefined) return;
      const isError = method === 'Network.webSocketFrameError';
      const f = params.response as { opcode: number; payloadData: string } | undefined;
      const raw = isError ? String(params.errorMessage) : (f?.payloadData ?? '');
      // A binary frame's payload is base64 (opcode 2), which the scrub of frames to the server cannot read.
      const body = !isError && f?.opcode === 2 && base64HoldsSecret(raw) ? { text: REDACTED_SECRET, truncated: false, size: 0 } : capBody(raw, false);
      addFrame(c, {
        requestId: id!,
        url,
        direction: isError ? 'error' : method === 'Network.webSocketFrameSent' ? 'sent' : 'received',
        opcode: isError ? -1 : (f?.opcode ?? 0),
        payload: body.text,
        size: f?.opcode === 2 ? Math.floor((raw.length * 3) / 4) : body.size,
        truncated: body.truncated,
        timestamp: c.clockOffset === null ? null : Math.round((params.timestamp + c.clockOffset) * 1000),
      }, WEBSOCKET_FRAMES_MAX);
      return;
    }
    case 'Network.webSocketClosed':
      c.sockets.delete(id!);
      return;
  }
}


export function captureOf(tabId: number): Capture {
  const c = captures.get(tabId);
  if (!c) throw new ToolError(`Network capture is off for tab ${tabId}; call browser_enable_network_capture first`, { code: 'not_available', category: 'validation' });
  return c;
}

/** Let body fetches started by already-delivered events finish, so a read sees them. */
export async function settle(c: Capture): Promise<void> {
  for (let i = 0; i < 3 && c.pendingBodies.size > 0; i++) await Promise.allSettled([...c.pendingBodies]);
}

export function settings(c: Capture) {
  return { urlFilter: c.urlFilter, maxRequests: c.maxRequests, captureBodies: c.captureBodies, since: new Date(c.since).toISOString(), site: c.site };
}

/** What the read tools say about requests left out because the tab was on another site. */
export function awayNote(c: Capture): { skippedWhileAway: number; note?: string } {
  return {
    skippedWhileAway: c.skippedAway,
    ...(c.skippedAway > 0 ? { note: `${c.skippedAway} requests were made while the tab showed another site than ${c.site}, where capture was started: they were not recorded (capture pauses while the tab is away and resumes when it comes back)` } : {}),
  };
}

/**
 * Start recording tab `tabId` for `site` (the site of the page the call was allowed on). Recording
 * pauses while the tab shows another site and resumes when it is back (madeAway).
 */
export async function startCapture(tabId: number, input: InputOf<'browser_enable_network_capture'>, site: string): Promise<Capture> {
  // The session stays attached until the capture stops (or the debugger leaves the tab).
  const session = await holdDebugger(tabId, () => c.stop());
  const send = session.send;
  const c: Capture = {
    tabId,
    site,
    topSite: site,
    mainFrameId: null,
    skippedAway: 0,
    urlFilter: input.urlFilter ?? null,
    maxRequests: input.maxRequests ?? NETWORK_CAPTURE_DEFAULT_REQUESTS,
    captureBodies: input.captureBodies === true,
    since: Date.now(),
    requests: new Map(),
    dropped: 0,
    redirects: 0,
    sockets: new Map(),
    frames: [],
    frameChars: 0,
    framesDropped: 0,
    clockOffset: null,
    pendingBodies: new Set(),
    bodyChars: 0,
    send,
    stop: () => {},
    released: session.released,
  };
  const offEvents = debuggerEvents(tabId, (method, params) => {
    if (method.startsWith('Network.')) onNetworkEvent(c, method, params as Record<string, unknown>);
  });
  // The top-level page: every commit (a back/forward-cache restore too) and URL change of the tab.
  const onCommitted = (d: { tabId: number; frameId: number; url: string }) => {
    if (d.tabId === tabId && d.frameId === 0) c.topSite = siteOf(d.url);
  };
  const onUpdated = (id: number, info: { url?: string }) => {
    if (id === tabId && info.url !== undefined) c.topSite = siteOf(info.url);
  };
  chrome.webNavigation.onCommitted.addListener(onCommitted);
  chrome.tabs.onUpdated.addListener(onUpdated);
  c.stop = () => {
    offEvents();
    chrome.webNavigation.onCommitted.removeListener(onCommitted);
    chrome.tabs.onUpdated.removeListener(onUpdated);
    if (captures.get(tabId) === c) captures.delete(tabId);
    session.release();
  };
  captures.set(tabId, c);
  try {
    // The page the tab shows now, which may no longer be the one the call was allowed on.
    const tree = await send<{ frameTree: { frame: { id: string; url: string; urlFragment?: string } } }>('Page.getFrameTree');
    c.mainFrameId = tree.frameTree.frame.id;
    c.topSite = siteOf(tree.frameTree.frame.url);
    await send('Network.enable', {});
  } catch (err) {
    c.stop();
    throw err;
  }
  return c;
}

