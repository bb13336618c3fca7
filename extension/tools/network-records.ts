/**
 * What a network capture holds (extension/tools/network-capture.ts fills it): requests with
 * their headers, timings and (when asked) bodies, WebSocket frames, all bounded — the newest
 * maxRequests requests, WEBSOCKET_FRAMES_MAX frames, bodies cut at CAPTURE_BODY_MAX_BYTES and
 * CAPTURE_STORED_BODY_BYTES in all, URLs cut at CAPTURE_URL_MAX_CHARS and each set of headers at
 * CAPTURE_HEADERS_MAX_CHARS (a page can make requests with 2 MB URLs and headers of hundreds of KB).
 */
import { REDACTED_SECRET, base64HoldsSecret } from '../background/own-secret.ts';
import { CAPTURE_BODY_MAX_BYTES } from '../../server/protocol/limits.ts';
import type { CdpSend } from './debugger.ts';
import { wildcardMatch } from './wildcard.ts';

export interface CapturedBody {
  text: string;
  base64Encoded: boolean;
  /** Size of the whole body in bytes (before truncation). */
  size: number;
  truncated: boolean;
}

export interface ResourceTiming {
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

export interface CdpResponse {
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

export interface NetRecord {
  requestId: string;
  url: string;
  method: string;
  type: string;
  requestHeaders: Record<string, string>;
  /** The request body (cut at CAPTURE_BODY_MAX_BYTES) until it is attached with the response body. */
  postBody?: CapturedBody;
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

export interface Capture {
  tabId: number;
  /**
   * siteOf the page capture was started (approved) on: requests are recorded only while the tab
   * shows that site, so an approval on one site records nothing of another the tab goes to.
   */
  site: string;
  /** siteOf the tab's committed top-level page, as last seen. */
  topSite: string;
  /** The DevTools id of the tab's main frame (requests of its document carry their documentURL). */
  mainFrameId: string | null;
  /** Requests (and WebSocket connections) made while the tab showed another site: counted, nothing else kept. */
  skippedAway: number;
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
  /** Characters of frame payloads held (bounded by CAPTURE_STORED_FRAME_CHARS). */
  frameChars: number;
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


/** The URL contains the filter, where a `*` in the filter stands for any run of characters. */
export function urlMatches(url: string, filter: string | null): boolean {
  if (!filter) return true;
  if (!filter.includes('*')) return url.includes(filter);
  return wildcardMatch(url, `*${filter}*`);
}

/** Characters of a URL a capture keeps; longer ones are cut with a mark saying how much is missing. */
export const CAPTURE_URL_MAX_CHARS = 4096;
/** Characters (names and values) of one request's or response's headers a capture keeps. */
export const CAPTURE_HEADERS_MAX_CHARS = 8192;

/** A URL cut at CAPTURE_URL_MAX_CHARS, ending in a mark when it was. */
export function capUrl(url: string): string {
  if (typeof url !== 'string') return '';
  return url.length <= CAPTURE_URL_MAX_CHARS ? url : `${url.slice(0, CAPTURE_URL_MAX_CHARS)}…[URL cut: ${url.length - CAPTURE_URL_MAX_CHARS} more characters]`;
}

/**
 * Headers cut to CAPTURE_HEADERS_MAX_CHARS of names and values: the value that crosses the limit
 * is cut with a mark, the headers after it are left out and counted under the name "…".
 */
export function capHeaders(headers: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!headers || typeof headers !== 'object') return out;
  let left = CAPTURE_HEADERS_MAX_CHARS;
  let omitted = 0;
  for (const [name, raw] of Object.entries(headers)) {
    const value = String(raw);
    if (left <= 0 || name.length > left) {
      omitted++;
      continue;
    }
    left -= name.length;
    out[name] = value.length <= left ? value : `${value.slice(0, left)}…[header cut: ${value.length - left} more characters]`;
    left -= Math.min(value.length, left);
  }
  if (omitted > 0) out['…'] = `${omitted} more headers left out (a capture keeps ${CAPTURE_HEADERS_MAX_CHARS} characters of headers per request and per response)`;
  return out;
}

/** A DevTools response as a capture keeps it: the fields it shows, URL and headers cut like a request's. */
export function capResponse(r: CdpResponse): CdpResponse {
  return {
    url: capUrl(r.url),
    status: r.status,
    statusText: typeof r.statusText === 'string' ? r.statusText.slice(0, 200) : '',
    headers: capHeaders(r.headers),
    mimeType: typeof r.mimeType === 'string' ? r.mimeType.slice(0, 200) : '',
    protocol: r.protocol,
    remoteIPAddress: r.remoteIPAddress,
    remotePort: r.remotePort,
    fromDiskCache: r.fromDiskCache,
    fromServiceWorker: r.fromServiceWorker,
    fromPrefetchCache: r.fromPrefetchCache,
    encodedDataLength: r.encodedDataLength,
    timing: r.timing,
  };
}

/**
 * Characters of WebSocket frame payloads a capture keeps in all (the oldest frames go first), so
 * the frames fit one browser_get_websocket_frames result: 500 frames of 100 KB would not.
 */
export const CAPTURE_STORED_FRAME_CHARS = 4 * 1024 * 1024;

/** Add a frame, then drop the oldest beyond WEBSOCKET_FRAMES_MAX frames or CAPTURE_STORED_FRAME_CHARS of payload (counted in framesDropped). */
export function addFrame(c: Capture, f: WebSocketFrame, maxFrames: number): void {
  c.frames.push(f);
  c.frameChars += f.payload.length;
  let drop = Math.max(0, c.frames.length - maxFrames);
  let chars = c.frameChars;
  for (let i = 0; i < drop; i++) chars -= c.frames[i]!.payload.length;
  while (chars > CAPTURE_STORED_FRAME_CHARS && drop < c.frames.length - 1) chars -= c.frames[drop++]!.payload.length;
  if (drop === 0) return;
  c.frames.splice(0, drop);
  c.frameChars = chars;
  c.framesDropped += drop;
}

export const utf8 = new TextEncoder();

/** Cut a body to the per-body cap, counting bytes (UTF-8 for text, decoded bytes for base64). */
export function capBody(text: string, base64Encoded: boolean, max = CAPTURE_BODY_MAX_BYTES): CapturedBody {
  if (base64Encoded) {
    const size = Math.floor((text.length * 3) / 4) - (text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0);
    // The scrub of frames to the server reads text: the secret in base64 would pass it.
    if (base64HoldsSecret(text)) return { text: REDACTED_SECRET, base64Encoded: false, size, truncated: false };
    if (size <= max) return { text, base64Encoded, size, truncated: false };
    return { text: text.slice(0, Math.floor(max / 3) * 4), base64Encoded, size, truncated: true };
  }
  const size = utf8.encode(text).length;
  if (size <= max) return { text, base64Encoded, size, truncated: false };
  // Cut the bytes, then drop a character the cut split in two (decoded as U+FFFD).
  const cut = new TextDecoder().decode(utf8.encode(text).slice(0, max)).replace(/\uFFFD$/, '');
  return { text: cut, base64Encoded, size, truncated: true };
}

export function headerValue(headers: Record<string, string> | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  const k = Object.keys(headers).find((h) => h.toLowerCase() === name);
  return k === undefined ? undefined : headers[k];
}

export function trim<T>(list: T[], max: number): number {
  const over = list.length - max;
  if (over > 0) list.splice(0, over);
  return Math.max(0, over);
}

export const bodyLength = (rec: NetRecord) => (rec.requestBody?.text.length ?? 0) + (rec.responseBody?.text.length ?? 0);

export function dropBodies(c: Capture, rec: NetRecord, why: string): void {
  c.bodyChars -= bodyLength(rec);
  rec.requestBody = undefined;
  rec.responseBody = undefined;
  rec.bodyError = why;
}

export function forget(c: Capture, key: string): void {
  const rec = c.requests.get(key);
  if (!rec) return;
  c.bodyChars -= bodyLength(rec);
  c.requests.delete(key);
}

/** Drop the oldest requests beyond maxRequests. */
export function enforceMax(c: Capture): void {
  while (c.requests.size > c.maxRequests) {
    forget(c, c.requests.keys().next().value!);
    c.dropped++;
  }
}

export function store(c: Capture, key: string, rec: NetRecord): void {
  c.requests.set(key, rec);
  enforceMax(c);
}

