/**
 * The network group: record a tab's requests and WebSocket frames through the DevTools protocol
 * (Network domain) between browser_enable_network_capture and browser_disable_network_capture.
 *
 * Recording holds a debugger session on the tab (one withDebugger call that only returns when
 * capture stops), so other debugger tools share that session meanwhile. State lives in the
 * service worker and is bounded: the newest maxRequests requests, WEBSOCKET_FRAMES_MAX frames,
 * bodies and payloads cut at CAPTURE_BODY_MAX_BYTES. The tab closing, the user cancelling the
 * debugging bar, or DevTools taking over ends the capture and frees everything.
 */
import {
  CAPTURE_BODY_MAX_BYTES,
  CAPTURE_RESULT_BODY_BUDGET_BYTES,
  CAPTURE_STORED_BODY_BYTES,
  NETWORK_CAPTURE_DEFAULT_REQUESTS,
  WEBSOCKET_FRAMES_MAX,
} from '../../server/protocol/limits.ts';
import { ToolError } from '../shared/tool-error.ts';
import { withDebugger, type CdpSend } from './debugger.ts';
import { debuggerEvents, guardTab, onDebuggerGone } from './cdp-events.ts';
import { getTab } from './tabs.ts';
import type { Handlers, InputOf } from './types.ts';

export interface CapturedBody {
  text: string;
  base64Encoded: boolean;
  /** Size of the whole body in bytes (before truncation). */
  size: number;
  truncated: boolean;
}

interface ResourceTiming {
  requestTime: number;
  dnsStart: number;
  dnsEnd: number;
  connectStart: number;
  connectEnd: number;
  sslStart: number;
  sslEnd: number;
  sendStart: number;
  sendEnd: number;
  receiveHeadersEnd: number;
}

interface CdpResponse {
  url: string;
  status: number;
  statusText: string;
  headers: Record<string, string>;
  mimeType: string;
  protocol?: string;
  remoteIPAddress?: string;
  remotePort?: number;
  fromDiskCache?: boolean;
  fromServiceWorker?: boolean;
  fromPrefetchCache?: boolean;
  encodedDataLength?: number;
  timing?: ResourceTiming;
}

interface NetRecord {
  requestId: string;
  url: string;
  method: string;
  type: string;
  requestHeaders: Record<string, string>;
  postData?: string;
  hasPostData: boolean;
  /** Wall clock (ms since epoch) and monotonic (s) time the request started. */
  wallTime: number;
  startTs: number;
  endTs?: number;
  response?: CdpResponse;
  encodedDataLength?: number;
  state: 'pending' | 'complete' | 'failed';
  error?: string;
  requestBody?: CapturedBody;
  responseBody?: CapturedBody;
  bodyError?: string;
}

export interface WebSocketFrame {
  requestId: string;
  url: string;
  direction: 'sent' | 'received' | 'error';
  /** 1 text, 2 binary (payload base64), 8 close … (RFC 6455 opcodes) */
  opcode: number;
  payload: string;
  size: number;
  truncated: boolean;
  /** ms since the epoch, or null when the clock could not be related */
  timestamp: number | null;
}

interface Capture {
  tabId: number;
  urlFilter: string | null;
  maxRequests: number;
  captureBodies: boolean;
  since: number;
  /** Insertion-ordered: the first key is the oldest request (dropped first). */
  requests: Map<string, NetRecord>;
  dropped: number;
  redirects: number;
  sockets: Map<string, string>;
  frames: WebSocketFrame[];
  framesDropped: number;
  /** wallTime − monotonic timestamp (s), learned from events that carry both. */
  clockOffset: number | null;
  pendingBodies: Set<Promise<void>>;
  /** Characters of captured bodies held (bounded by CAPTURE_STORED_BODY_BYTES). */
  bodyChars: number;
  send: CdpSend;
  stop: () => void;
  /** Settles once the held debugger session has been released (detached when nobody else uses it). */
  released: Promise<void>;
}

const captures = new Map<number, Capture>();

/** The URL contains the filter, where a `*` in the filter stands for any run of characters. */
export function urlMatches(url: string, filter: string | null): boolean {
  if (!filter) return true;
  if (!filter.includes('*')) return url.includes(filter);
  return new RegExp(filter.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')).test(url);
}

const utf8 = new TextEncoder();

/** Cut a body to the per-body cap, counting bytes (UTF-8 for text, decoded bytes for base64). */
export function capBody(text: string, base64Encoded: boolean, max = CAPTURE_BODY_MAX_BYTES): CapturedBody {
  if (base64Encoded) {
    const size = Math.floor((text.length * 3) / 4) - (text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0);
    if (size <= max) return { text, base64Encoded, size, truncated: false };
    return { text: text.slice(0, Math.floor(max / 3) * 4), base64Encoded, size, truncated: true };
  }
  const size = utf8.encode(text).length;
  if (size <= max) return { text, base64Encoded, size, truncated: false };
  // Cut the bytes, then drop a character the cut split in two (decoded as U+FFFD).
  const cut = new TextDecoder().decode(utf8.encode(text).slice(0, max)).replace(/\uFFFD$/, '');
  return { text: cut, base64Encoded, size, truncated: true };
}

function headerValue(headers: Record<string, string> | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  const k = Object.keys(headers).find((h) => h.toLowerCase() === name);
  return k === undefined ? undefined : headers[k];
}

function trim<T>(list: T[], max: number): number {
  const over = list.length - max;
  if (over > 0) list.splice(0, over);
  return Math.max(0, over);
}

const bodyLength = (rec: NetRecord) => (rec.requestBody?.text.length ?? 0) + (rec.responseBody?.text.length ?? 0);

function dropBodies(c: Capture, rec: NetRecord, why: string): void {
  c.bodyChars -= bodyLength(rec);
  rec.requestBody = undefined;
  rec.responseBody = undefined;
  rec.bodyError = why;
}

function forget(c: Capture, key: string): void {
  const rec = c.requests.get(key);
  if (!rec) return;
  c.bodyChars -= bodyLength(rec);
  c.requests.delete(key);
}

/** Drop the oldest requests beyond maxRequests. */
function enforceMax(c: Capture): void {
  while (c.requests.size > c.maxRequests) {
    forget(c, c.requests.keys().next().value!);
    c.dropped++;
  }
}

function store(c: Capture, key: string, rec: NetRecord): void {
  c.requests.set(key, rec);
  enforceMax(c);
}

function fetchBodies(c: Capture, rec: NetRecord, requestId: string): void {
  const job = (async () => {
    if (rec.hasPostData && rec.postData === undefined) {
      const r = await c.send<{ postData: string }>('Network.getRequestPostData', { requestId }).catch(() => null);
      if (r) rec.postData = r.postData;
    }
    // Bodies are attached only once both are in, so the byte count never sees half of them.
    const requestBody = rec.postData !== undefined ? capBody(rec.postData, false) : undefined;
    rec.postData = undefined;
    let responseBody: CapturedBody | undefined;
    try {
      const r = await c.send<{ body: string; base64Encoded: boolean }>('Network.getResponseBody', { requestId });
      responseBody = capBody(r.body, r.base64Encoded);
    } catch (err) {
      rec.bodyError = (err as Error).message ?? String(err); // e.g. redirects and 204s have none
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

function onNetworkEvent(c: Capture, method: string, params: Record<string, any>): void {
  const id = params.requestId as string | undefined;
  switch (method) {
    case 'Network.requestWillBeSent': {
      if (typeof params.wallTime === 'number') c.clockOffset = params.wallTime - params.timestamp;
      const prev = id ? c.requests.get(id) : undefined;
      if (prev && params.redirectResponse) {
        // A redirect reuses the request id: finish the hop and keep it under its own key.
        prev.response = params.redirectResponse;
        prev.endTs = params.timestamp;
        prev.state = 'complete';
        c.requests.delete(id!);
        c.requests.set(`${id}:redirect${++c.redirects}`, prev);
      }
      const req = params.request as { url: string; method: string; headers: Record<string, string>; postData?: string; hasPostData?: boolean };
      if (!id || !urlMatches(req.url, c.urlFilter)) return;
      store(c, id, {
        requestId: id,
        url: req.url,
        method: req.method,
        type: params.type ?? 'Other',
        requestHeaders: req.headers ?? {},
        postData: c.captureBodies ? req.postData : undefined,
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
      rec.response = params.response;
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
      if (id) c.sockets.set(id, params.url);
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
      const body = capBody(raw, false);
      c.frames.push({
        requestId: id!,
        url,
        direction: isError ? 'error' : method === 'Network.webSocketFrameSent' ? 'sent' : 'received',
        opcode: isError ? -1 : (f?.opcode ?? 0),
        payload: body.text,
        size: f?.opcode === 2 ? Math.floor((raw.length * 3) / 4) : body.size,
        truncated: body.truncated,
        timestamp: c.clockOffset === null ? null : Math.round((params.timestamp + c.clockOffset) * 1000),
      });
      c.framesDropped += trim(c.frames, WEBSOCKET_FRAMES_MAX);
      return;
    }
    case 'Network.webSocketClosed':
      c.sockets.delete(id!);
      return;
  }
}

/** HAR-style phase durations in ms (-1 where a phase did not happen). */
function timings(rec: NetRecord) {
  const total = rec.endTs !== undefined ? Math.max(0, (rec.endTs - rec.startTs) * 1000) : -1;
  const t = rec.response?.timing;
  if (!t) return { total, blocked: -1, dns: -1, connect: -1, ssl: -1, send: 0, wait: 0, receive: Math.max(0, total) };
  const span = (a: number, b: number) => (a >= 0 && b >= 0 ? b - a : -1);
  const firstPhase = [t.dnsStart, t.connectStart, t.sendStart].find((x) => x >= 0) ?? 0;
  // Request start as Chrome measures it can precede requestTime (queueing): blocked covers it.
  const queued = Math.max(0, (t.requestTime - rec.startTs) * 1000);
  const end = rec.endTs !== undefined ? (rec.endTs - t.requestTime) * 1000 : t.receiveHeadersEnd;
  return {
    total,
    blocked: queued + firstPhase,
    dns: span(t.dnsStart, t.dnsEnd),
    connect: span(t.connectStart, t.connectEnd),
    ssl: span(t.sslStart, t.sslEnd),
    send: Math.max(0, span(t.sendStart, t.sendEnd)),
    wait: Math.max(0, span(t.sendEnd, t.receiveHeadersEnd)),
    receive: Math.max(0, end - t.receiveHeadersEnd),
  };
}

/** Hands out bodies until the per-result budget (results travel over the WebSocket) is spent. */
function bodyBudget() {
  let left = CAPTURE_RESULT_BODY_BUDGET_BYTES;
  return (b: CapturedBody | undefined): CapturedBody | { omitted: string } | undefined => {
    if (!b) return undefined;
    if (b.text.length > left) return { omitted: 'over the size budget of one result; narrow with urlFilter or read with clear in batches' };
    left -= b.text.length;
    return b;
  };
}

function summary(rec: NetRecord, take: ReturnType<typeof bodyBudget> | null) {
  const r = rec.response;
  return {
    requestId: rec.requestId,
    method: rec.method,
    url: rec.url,
    type: rec.type,
    state: rec.state,
    status: r?.status ?? null,
    statusText: r?.statusText ?? null,
    mimeType: r?.mimeType ?? null,
    startedAt: new Date(rec.wallTime).toISOString(),
    durationMs: rec.endTs !== undefined ? Math.round((rec.endTs - rec.startTs) * 1000 * 10) / 10 : null,
    timing: timings(rec),
    requestHeaders: rec.requestHeaders,
    responseHeaders: r?.headers ?? null,
    protocol: r?.protocol ?? null,
    remoteAddress: r?.remoteIPAddress ? `${r.remoteIPAddress}:${r.remotePort ?? ''}` : null,
    fromCache: r ? r.fromDiskCache === true || r.fromPrefetchCache === true : false,
    fromServiceWorker: r?.fromServiceWorker === true,
    encodedDataLength: rec.encodedDataLength ?? null,
    ...(rec.error ? { error: rec.error } : {}),
    ...(take
      ? {
          requestBody: take(rec.requestBody) ?? null,
          responseBody: take(rec.responseBody) ?? null,
          ...(rec.bodyError && !rec.responseBody ? { bodyError: rec.bodyError } : {}),
        }
      : {}),
  };
}

const harHeaders = (h: Record<string, string> | undefined) =>
  Object.entries(h ?? {}).flatMap(([name, value]) => String(value).split('\n').map((v) => ({ name, value: v })));

function harHttpVersion(protocol: string | undefined): string {
  if (!protocol) return 'HTTP/1.1';
  if (protocol === 'h2') return 'HTTP/2.0';
  if (protocol === 'h3') return 'HTTP/3.0';
  return protocol.toUpperCase();
}

/** One recorded request as a HAR 1.2 entry (http://www.softwareishard.com/blog/har-12-spec/). */
function harEntry(rec: NetRecord, take: ReturnType<typeof bodyBudget>) {
  const r = rec.response;
  const t = timings(rec);
  let query: { name: string; value: string }[] = [];
  try {
    query = [...new URL(rec.url).searchParams].map(([name, value]) => ({ name, value }));
  } catch {}
  const reqBody = take(rec.requestBody);
  const resBody = take(rec.responseBody);
  const content: Record<string, unknown> = { size: rec.responseBody?.size ?? rec.encodedDataLength ?? 0, mimeType: r?.mimeType ?? 'x-unknown' };
  if (resBody && 'text' in resBody) {
    content.text = resBody.text;
    if (resBody.base64Encoded) content.encoding = 'base64';
    if (resBody.truncated) content.comment = `truncated to ${CAPTURE_BODY_MAX_BYTES} bytes`;
  } else if (resBody) content.comment = resBody.omitted;
  return {
    startedDateTime: new Date(rec.wallTime).toISOString(),
    time: Math.max(0, t.total),
    request: {
      method: rec.method,
      url: rec.url,
      httpVersion: harHttpVersion(r?.protocol),
      cookies: [],
      headers: harHeaders(rec.requestHeaders),
      queryString: query,
      ...(reqBody && 'text' in reqBody ? { postData: { mimeType: headerValue(rec.requestHeaders, 'content-type') ?? '', text: reqBody.text } } : {}),
      headersSize: -1,
      bodySize: rec.requestBody?.size ?? 0,
    },
    response: {
      status: r?.status ?? 0,
      statusText: r?.statusText ?? (rec.error ?? ''),
      httpVersion: harHttpVersion(r?.protocol),
      cookies: [],
      headers: harHeaders(r?.headers),
      content,
      redirectURL: headerValue(r?.headers, 'location') ?? '',
      headersSize: -1,
      bodySize: rec.encodedDataLength ?? -1,
    },
    cache: {},
    timings: { blocked: t.blocked, dns: t.dns, connect: t.connect, ssl: t.ssl, send: t.send, wait: t.wait, receive: t.receive },
    ...(r?.remoteIPAddress ? { serverIPAddress: r.remoteIPAddress.replace(/^\[|\]$/g, '') } : {}),
    _resourceType: rec.type,
    ...(rec.error ? { _error: rec.error } : {}),
  };
}

function captureOf(tabId: number): Capture {
  const c = captures.get(tabId);
  if (!c) throw new ToolError('not_available', `Network capture is off for tab ${tabId}; call browser_enable_network_capture first`, { category: 'validation' });
  return c;
}

/** Let body fetches started by already-delivered events finish, so a read sees them. */
async function settle(c: Capture): Promise<void> {
  for (let i = 0; i < 3 && c.pendingBodies.size > 0; i++) await Promise.allSettled([...c.pendingBodies]);
}

function settings(c: Capture) {
  return { urlFilter: c.urlFilter, maxRequests: c.maxRequests, captureBodies: c.captureBodies, since: new Date(c.since).toISOString() };
}

async function startCapture(tabId: number, input: InputOf<'browser_enable_network_capture'>): Promise<Capture> {
  let stop!: () => void;
  const held = new Promise<void>((r) => (stop = r));
  // The session stays attached for as long as `held` is pending.
  let released!: Promise<void>;
  const send = await new Promise<CdpSend>((resolve, reject) => {
    released = withDebugger(tabId, (s) => {
      resolve(s);
      return held;
    }).catch(reject);
  });
  const c: Capture = {
    tabId,
    urlFilter: input.urlFilter ?? null,
    maxRequests: input.maxRequests ?? NETWORK_CAPTURE_DEFAULT_REQUESTS,
    captureBodies: input.captureBodies === true,
    since: Date.now(),
    requests: new Map(),
    dropped: 0,
    redirects: 0,
    sockets: new Map(),
    frames: [],
    framesDropped: 0,
    clockOffset: null,
    pendingBodies: new Set(),
    bodyChars: 0,
    send,
    stop: () => {},
    released,
  };
  const offEvents = debuggerEvents(tabId, (method, params) => {
    if (method.startsWith('Network.')) onNetworkEvent(c, method, params as Record<string, unknown>);
  });
  const offGone = onDebuggerGone(tabId, () => c.stop());
  c.stop = () => {
    offEvents();
    offGone();
    if (captures.get(tabId) === c) captures.delete(tabId);
    stop();
  };
  captures.set(tabId, c);
  try {
    await send('Network.enable', {});
  } catch (err) {
    c.stop();
    throw err;
  }
  return c;
}

export const networkTools = {
  async browser_enable_network_capture(input) {
    const tab = await getTab(input.tabId);
    const tabId = tab.id!;
    const existing = captures.get(tabId);
    if (existing) {
      // Re-enabling changes the settings for what comes next; what was recorded stays.
      if (input.urlFilter !== undefined) existing.urlFilter = input.urlFilter;
      if (input.maxRequests !== undefined) existing.maxRequests = input.maxRequests;
      if (input.captureBodies !== undefined) existing.captureBodies = input.captureBodies === true;
      enforceMax(existing);
      return { value: { tabId, capturing: true, alreadyCapturing: true, ...settings(existing), recorded: existing.requests.size } };
    }
    const c = await guardTab(tabId, () => startCapture(tabId, input));
    return { value: { tabId, capturing: true, alreadyCapturing: false, ...settings(c), recorded: 0 } };
  },

  async browser_get_network_requests(input) {
    const tab = await getTab(input.tabId);
    const c = captureOf(tab.id!);
    await settle(c);
    const filter = input.urlFilter ?? null;
    const take = input.includeBodies === true ? bodyBudget() : null;
    const picked = [...c.requests.entries()].filter(([, rec]) => urlMatches(rec.url, filter));
    const requests = picked.map(([, rec]) => summary(rec, take));
    if (input.clear === true) for (const [key, rec] of picked) if (rec.state !== 'pending') forget(c, key);
    return { value: { tabId: tab.id, capture: settings(c), count: requests.length, dropped: c.dropped, requests } };
  },

  async browser_get_network_request(input) {
    const tab = await getTab(input.tabId);
    const c = captureOf(tab.id!);
    await settle(c);
    const id = String(input.requestId);
    // A redirect chain shares one requestId: its hops, oldest first; the last is the final answer.
    const hops = [...c.requests.values()].filter((r) => r.requestId === id);
    if (hops.length === 0) throw new ToolError('not_found', `No recorded request ${id} in tab ${tab.id}; list them with browser_get_network_requests`, { category: 'not_found' });
    const take = bodyBudget();
    return { value: { tabId: tab.id, ...summary(hops[hops.length - 1]!, take), ...(hops.length > 1 ? { redirectedFrom: hops.slice(0, -1).map((r) => r.url) } : {}) } };
  },

  async browser_get_websocket_frames(input) {
    const tab = await getTab(input.tabId);
    const c = captureOf(tab.id!);
    const frames = [...c.frames];
    if (input.clear === true) c.frames.length = 0;
    return { value: { tabId: tab.id, count: frames.length, dropped: c.framesDropped, openSockets: [...c.sockets.values()], frames } };
  },

  async browser_export_har(input, env) {
    const tab = await getTab(input.tabId);
    const c = captureOf(tab.id!);
    await settle(c);
    const take = bodyBudget();
    const har = {
      log: {
        version: '1.2',
        creator: { name: 'OpenTabs', version: env.version },
        pages: [],
        entries: [...c.requests.values()].filter((r) => r.state !== 'pending').map((r) => harEntry(r, take)),
        comment: `Recorded from tab ${tab.id} since ${new Date(c.since).toISOString()}${c.dropped ? `; ${c.dropped} older requests were dropped (maxRequests ${c.maxRequests})` : ''}`,
      },
    };
    return { value: har };
  },

  async browser_disable_network_capture(input) {
    const tab = await getTab(input.tabId);
    const c = captures.get(tab.id!);
    if (!c) return { value: { tabId: tab.id, capturing: false, wasCapturing: false } };
    const recorded = c.requests.size;
    await c.send('Network.disable').catch(() => {});
    c.stop();
    await c.released;
    return { value: { tabId: tab.id, capturing: false, wasCapturing: true, discarded: recorded } };
  },
} satisfies Partial<Handlers>;
