/**
 * HTTP helpers for adapters: requests with the page's cookies (credentials: 'include'), a
 * timeout, the call's AbortSignal, and HTTP failures mapped to ToolError categories so the AI
 * client gets a useful error (and knows whether to retry). Default headers (setDefaultHeaders)
 * go only to the page's own origin and the origins named with them: a URL may come from the
 * agent's input, and an app token set as a default header must not go to whatever host it names.
 */
import { ToolError, type ToolErrorCategory } from './errors.ts';
import { jsonText } from './json-text.ts';

export const DEFAULT_FETCH_TIMEOUT_MS = 30_000;

export interface FetchOptions extends Omit<RequestInit, 'signal' | 'body'> {
  /** Abort with the call: pass ctx.signal. */
  signal?: AbortSignal;
  /** Default 30 s; a timeout is a ToolError with category "timeout". */
  timeoutMs?: number;
  /** Query parameters appended to the URL (undefined values skipped). */
  query?: Record<string, string | number | boolean | undefined>;
  body?: BodyInit | null;
  /**
   * Wait and send again when the app answers 429 (or 503 with Retry-After): up to `attempts`
   * more times, each wait the answer's Retry-After (1 s, 2 s … without one), as long as it is at
   * most `maxWaitMs` (default 10 s; a longer one is thrown at once as rate_limited with
   * retryAfterMs). The wait ends with the call's signal; `onRetry` is told before each wait (to
   * report progress or log it).
   */
  retry?: { attempts?: number; maxWaitMs?: number; onRetry?: (info: RetryInfo) => void };
}

/** What FetchOptions.retry's onRetry is told before waiting. */
export interface RetryInfo {
  /** 1 for the first retry. */
  attempt: number;
  waitMs: number;
  status: number;
  url: string;
}

/** Category of an HTTP status, or null for success. */
export function categoryForStatus(status: number): ToolErrorCategory | null {
  if (status >= 200 && status < 400) return null;
  if (status === 401 || status === 403) return 'auth';
  if (status === 404 || status === 410) return 'not_found';
  if (status === 429) return 'rate_limited';
  if (status === 400 || status === 409 || status === 422) return 'validation';
  if (status === 408 || status === 504) return 'timeout';
  return 'internal';
}

/** Retry-After (seconds or an HTTP date) in milliseconds. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * What an HTTP status tells the AI client, so it does not ask the user to log in when the real
 * cause is a stale CSRF token, a permission or a conflict.
 */
export function hintForStatus(status: number, retryAfterMs?: number, site?: string): string {
  if (status === 401) {
    // The agent cannot log in: it has to ask the user, in words the user can act on.
    const where = site ? ` at ${site}` : '';
    return ` (not logged in: the session in the browser has ended or was never started; ask the user to log in to the app${where} in their browser, then call again)`;
  }
  if (status === 403) return ' (forbidden: the session lacks permission for this resource, or a CSRF token is missing or stale; reload the tab to refresh the token)';
  if (status === 404 || status === 410) return ' (not found: check the id or path)';
  if (status === 409) return ' (conflict: the resource changed or already exists; re-read it and retry)';
  if (status === 429) return retryAfterMs !== undefined ? ` (rate limited: retry after ${Math.ceil(retryAfterMs / 1000)} s)` : ' (rate limited: retry later)';
  if (status >= 500) return ' (server error in the app: retry later)';
  return '';
}

function withQuery(url: string, query?: FetchOptions['query']): string {
  if (!query) return url;
  const u = new URL(url, globalThis.location?.href ?? 'http://localhost/');
  for (const [k, val] of Object.entries(query)) if (val !== undefined) u.searchParams.set(k, String(val));
  return u.toString();
}

/** Best-effort message from an error body: {error: {message}} / {error: "..."} / {message} / text. */
function messageFromBody(text: string): string | undefined {
  if (!text) return undefined;
  try {
    const j = JSON.parse(text) as Record<string, unknown>;
    const e = j.error;
    if (typeof e === 'string') return e;
    if (e && typeof e === 'object' && typeof (e as Record<string, unknown>).message === 'string') return (e as Record<string, string>).message;
    if (typeof j.message === 'string') return j.message;
  } catch {
    // not JSON
  }
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/** Headers, or a function giving them at each request (a header whose value is undefined is not sent). */
export type DefaultHeaders = Record<string, string> | (() => Record<string, string | undefined>);

let defaultHeaders: DefaultHeaders = {};
let defaultHeaderOrigins: string[] = [];

/**
 * Headers sent with every request of this plugin (e.g. `x-requested-with`, an app token) to the
 * page's own origin, and to the origins in `opts.origins` (e.g. `['https://api.example.com']`
 * for an app whose API lives on another host); later calls replace earlier ones. A request to any
 * other origin gets only its own headers.
 *
 * A function is called at each request: a token the app keeps in localStorage or a global is read
 * when it is used, so a token refreshed or a user logged in again after the adapter loaded is the
 * one sent (a record built once at load keeps the token of that moment, or none).
 */
export function setDefaultHeaders(headers: DefaultHeaders, opts: { origins?: string[] } = {}): void {
  defaultHeaders = typeof headers === 'function' ? headers : { ...headers };
  defaultHeaderOrigins = (opts.origins ?? []).map((o) => new URL(o).origin);
}

function currentDefaultHeaders(): Record<string, string> {
  const h = typeof defaultHeaders === 'function' ? defaultHeaders() : defaultHeaders;
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(h ?? {})) if (val !== undefined && val !== null) out[k] = String(val);
  return out;
}

/** Whether `target` is on another origin than the page (a cross-origin request, subject to CORS). */
function crossOrigin(target: string): string | undefined {
  const page = (globalThis as { location?: { href?: string; origin?: string } }).location;
  if (!page?.origin || page.origin === 'null') return undefined;
  try {
    const origin = new URL(target, page.href).origin;
    return origin === page.origin ? undefined : origin;
  } catch {
    return undefined;
  }
}

/** Whether the default headers go to `target`: the page's origin, or one named with them (no page: every request is its own). */
function takesDefaultHeaders(target: string): boolean {
  const page = (globalThis as { location?: { href?: string; origin?: string } }).location;
  if (!page?.origin || page.origin === 'null') return true;
  let origin: string;
  try {
    origin = new URL(target, page.href).origin;
  } catch {
    return false;
  }
  return origin === page.origin || defaultHeaderOrigins.includes(origin);
}

/** Where the user logs in: the page's origin (an app whose API is on another host logs in on its own). */
function loginSite(target: string): string | undefined {
  const page = (globalThis as { location?: { href?: string; origin?: string } }).location;
  if (page?.origin && page.origin !== 'null') return page.origin;
  try {
    return new URL(target).origin;
  } catch {
    return undefined;
  }
}

function headersRecord(h: HeadersInit | undefined): Record<string, string> {
  if (!h) return {};
  if (h instanceof Headers) return Object.fromEntries(h.entries());
  if (Array.isArray(h)) return Object.fromEntries(h);
  return { ...(h as Record<string, string>) };
}

/**
 * The page's CSRF token: from `<meta name="csrf-token">` (or the given meta name) and, failing
 * that, from a cookie (default names XSRF-TOKEN, csrftoken, csrf_token). undefined when absent.
 */
export function csrfToken(opts: { meta?: string; cookie?: string } = {}): string | undefined {
  const doc = (globalThis as { document?: Document }).document;
  if (!doc) return undefined;
  const metaNames = opts.meta ? [opts.meta] : ['csrf-token', 'csrf_token', '_csrf', 'xsrf-token'];
  for (const name of metaNames) {
    const el = doc.querySelector(`meta[name="${name}"]`);
    const content = el?.getAttribute('content');
    if (content) return content;
  }
  const cookieNames = opts.cookie ? [opts.cookie] : ['XSRF-TOKEN', 'csrftoken', 'csrf_token'];
  const cookies = new Map<string, string>();
  for (const part of (doc.cookie ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i > 0) cookies.set(part.slice(0, i).trim(), part.slice(i + 1).trim());
  }
  for (const name of cookieNames) {
    const val = cookies.get(name);
    if (val) return decodeURIComponent(val);
  }
  return undefined;
}

/** `{ [header]: token }` for the page's CSRF token, or {} when there is none. */
export function csrfHeaders(header = 'x-csrf-token', opts: { meta?: string; cookie?: string } = {}): Record<string, string> {
  const token = csrfToken(opts);
  return token ? { [header]: token } : {};
}

/**
 * Why a request to another origin may fail with only "Failed to fetch": the browser hides a CORS
 * refusal behind the same network error. The helpers send cookies (credentials: 'include'), which
 * an API answering `Access-Control-Allow-Origin: *` (usual for token APIs) refuses, though the
 * app's own frontend, whose fetch sends no cookies across origins, is answered.
 */
function corsHint(target: string, credentials: RequestCredentials | undefined): string {
  const other = crossOrigin(target);
  if (!other) return '';
  const page = (globalThis as { location?: { origin?: string } }).location!.origin;
  const withCookies = credentials === undefined || credentials === 'include';
  return withCookies
    ? ` (${other} is another origin than the page ${page}: if it is up, the browser refused its answer under CORS. The SDK sends cookies (credentials: 'include'), which needs the API to answer Access-Control-Allow-Origin: ${page} and Access-Control-Allow-Credentials: true; an API that takes a token header (Authorization: Bearer …) and answers Access-Control-Allow-Origin: * needs credentials: 'omit' in the request's options)`
    : ` (${other} is another origin than the page ${page}: if it is up, the browser refused its answer under CORS; the API must allow the origin ${page} and each header sent, e.g. authorization, in Access-Control-Allow-Headers)`;
}

/** What a Response must have for the helpers to read it (a page's fetch replacement may return anything). */
function isResponseLike(x: unknown): x is Response {
  if (typeof x !== 'object' || x === null) return false;
  const r = x as Record<string, unknown>;
  return typeof r.status === 'number' && typeof r.text === 'function' && typeof (r.headers as { get?: unknown } | undefined)?.get === 'function';
}

function describeNonResponse(x: unknown): string {
  if (x === null || x === undefined) return String(x);
  if (typeof x !== 'object') return `a ${typeof x}`;
  try {
    const name = (x as { constructor?: { name?: unknown } }).constructor?.name;
    return typeof name === 'string' && name && name !== 'Object' ? `a ${name}` : 'an object';
  } catch {
    return 'an object';
  }
}

/**
 * fetch() with cookies, timeout and cancellation; throws ToolError for network failures, timeouts
 * and non-2xx statuses. Returns the Response for the caller to read.
 */
export async function request(url: string, options: FetchOptions = {}): Promise<Response> {
  const { retry, ...once } = options;
  if (!retry) return requestOnce(url, once);
  const attempts = Math.max(0, Math.floor(retry.attempts ?? 2));
  const maxWaitMs = retry.maxWaitMs ?? 10_000;
  for (let attempt = 1; ; attempt++) {
    try {
      // Each attempt sends the same body: a string, Blob or FormData (a stream can be sent once only).
      return await requestOnce(url, once);
    } catch (err) {
      const status = (err as ToolError).status;
      const retriable = err instanceof ToolError && (status === 429 || (status === 503 && err.retryAfterMs !== undefined));
      if (!retriable || attempt > attempts) throw err;
      const waitMs = err.retryAfterMs ?? 1000 * attempt;
      if (waitMs > maxWaitMs) throw err;
      retry.onRetry?.({ attempt, waitMs, status: status!, url });
      await sleep(waitMs, once.signal, `${(once.method ?? 'GET').toUpperCase()} ${url} was cancelled while waiting ${Math.ceil(waitMs / 1000)} s to retry after HTTP ${status}`);
    }
  }
}

/** Wait `ms`, or throw a `cancelled` ToolError when `signal` aborts first. */
function sleep(ms: number, signal: AbortSignal | undefined, cancelledText: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stop = () => {
      clearTimeout(timer);
      reject(new ToolError(cancelledText, { code: 'cancelled', category: 'internal', retryable: false }));
    };
    if (signal?.aborted) return stop();
    timer = setTimeout(() => {
      signal?.removeEventListener('abort', stop);
      resolve();
    }, ms);
    signal?.addEventListener('abort', stop, { once: true });
  });
}

async function requestOnce(url: string, options: Omit<FetchOptions, 'retry'>): Promise<Response> {
  const { timeoutMs = DEFAULT_FETCH_TIMEOUT_MS, signal, query, ...init } = options;
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error('timeout'));
  }, timeoutMs);
  const onAbort = () => controller.abort(signal?.reason);
  if (signal?.aborted) onAbort();
  else signal?.addEventListener('abort', onAbort, { once: true });
  const method = (init.method ?? 'GET').toUpperCase();
  const target = withQuery(url, query);
  init.headers = { ...(takesDefaultHeaders(target) ? currentDefaultHeaders() : {}), ...headersRecord(init.headers) };
  let res: Response;
  try {
    // A call cancelled before this request sends nothing (a page's fetch may not honour the signal).
    if (controller.signal.aborted) throw controller.signal.reason;
    // The page's own fetch runs (an app's wrapper may add its auth), and it may be one that drops
    // the signal: the timeout and the cancel end the request here whether or not it honours it.
    let stopWaiting!: () => void;
    const aborted = new Promise<never>((_, reject) => {
      stopWaiting = () => reject(controller.signal.reason);
      controller.signal.addEventListener('abort', stopWaiting, { once: true });
    });
    try {
      res = await Promise.race([fetch(target, { credentials: 'include', ...init, method, signal: controller.signal }), aborted]);
    } finally {
      controller.signal.removeEventListener('abort', stopWaiting);
    }
  } catch (err) {
    if (timedOut) throw ToolError.timeout(`${method} ${url} timed out after ${timeoutMs} ms`);
    if (signal?.aborted) throw new ToolError(`${method} ${url} was cancelled`, { code: 'cancelled', category: 'internal', retryable: false });
    throw ToolError.internal(`${method} ${url} failed: ${(err as Error)?.message ?? err}${corsHint(target, init.credentials)}`, { code: 'network_error', retryable: true });
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
  if (!isResponseLike(res)) {
    throw ToolError.internal(
      `${method} ${url}: the page's fetch returned ${describeNonResponse(res)} instead of a Response (the page has replaced window.fetch with one that does not answer like it); read the data another way, e.g. from the page's own state`,
      { code: 'bad_response', retryable: false },
    );
  }
  const category = categoryForStatus(res.status);
  if (category) {
    const text = await res.text().catch(() => '');
    const detail = messageFromBody(text);
    const retryAfterMs = category === 'rate_limited' ? parseRetryAfter(res.headers.get('retry-after')) : undefined;
    const hint = hintForStatus(res.status, retryAfterMs, res.status === 401 ? loginSite(target) : undefined);
    throw new ToolError(`${method} ${url} returned HTTP ${res.status}${detail ? `: ${detail}` : ''}${hint}`, {
      category,
      code: `http_${res.status}`,
      status: res.status,
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    });
  }
  return res;
}

export async function fetchJson<T = unknown>(url: string, options: FetchOptions = {}): Promise<T> {
  const res = await request(url, { ...options, headers: { accept: 'application/json', ...(options.headers as Record<string, string> | undefined) } });
  const text = await res.text();
  if (text === '') return undefined as T;
  try {
    return JSON.parse(text) as T;
  } catch {
    throw ToolError.internal(`${(options.method ?? 'GET').toUpperCase()} ${url} returned a body that is not JSON`, { code: 'bad_response', retryable: false });
  }
}

export async function fetchText(url: string, options: FetchOptions = {}): Promise<string> {
  return (await request(url, options)).text();
}

/** POST a JSON body, parse a JSON answer. */
export function postJson<T = unknown>(url: string, body: unknown, options: FetchOptions = {}): Promise<T> {
  return fetchJson<T>(url, {
    method: 'POST',
    ...options,
    headers: { 'content-type': 'application/json', ...(options.headers as Record<string, string> | undefined) },
    body: jsonText(body ?? null),
  });
}

function sendJson<T>(method: string, url: string, body: unknown, options: FetchOptions): Promise<T> {
  return fetchJson<T>(url, {
    ...options,
    method,
    headers: { 'content-type': 'application/json', ...headersRecord(options.headers) },
    body: body === undefined ? undefined : jsonText(body),
  });
}

/** PUT a JSON body, parse a JSON answer. */
export function putJson<T = unknown>(url: string, body: unknown, options: FetchOptions = {}): Promise<T> {
  return sendJson<T>('PUT', url, body ?? null, options);
}

/** PATCH a JSON body, parse a JSON answer. */
export function patchJson<T = unknown>(url: string, body: unknown, options: FetchOptions = {}): Promise<T> {
  return sendJson<T>('PATCH', url, body ?? null, options);
}

/** DELETE (with an optional JSON body), parse a JSON answer (undefined for an empty body). */
export function deleteJson<T = unknown>(url: string, body?: unknown, options: FetchOptions = {}): Promise<T> {
  return sendJson<T>('DELETE', url, body, options);
}

/** A GraphQL error as servers send it (`extensions.code` is Apollo's convention, widely followed). */
export interface GraphqlError {
  message: string;
  path?: (string | number)[];
  extensions?: { code?: string; [key: string]: unknown };
}

/** ToolError category of a GraphQL error code (UNAUTHENTICATED, FORBIDDEN, BAD_USER_INPUT …). */
function graphqlCategory(code: string | undefined): ToolErrorCategory {
  const c = (code ?? '').toUpperCase();
  if (c === 'UNAUTHENTICATED' || c === 'UNAUTHORIZED' || c === 'FORBIDDEN') return 'auth';
  if (c === 'NOT_FOUND') return 'not_found';
  if (c === 'RATE_LIMITED' || c === 'TOO_MANY_REQUESTS' || c === 'THROTTLED') return 'rate_limited';
  if (c === 'BAD_USER_INPUT' || c === 'GRAPHQL_VALIDATION_FAILED' || c === 'GRAPHQL_PARSE_FAILED' || c === 'BAD_REQUEST') return 'validation';
  return 'internal';
}

/**
 * POST a GraphQL operation (`{query, variables, operationName}`) and return its `data`. GraphQL
 * servers answer errors with HTTP 200 and an `errors` list: any error becomes a ToolError with the
 * errors' messages (and paths), its category from the first error's `extensions.code`
 * (UNAUTHENTICATED → auth with the same "ask the user to log in" hint as a 401, BAD_USER_INPUT →
 * validation, RATE_LIMITED → rate_limited …). HTTP failures are mapped as for fetchJson.
 */
export async function graphql<T = unknown>(url: string, query: string, variables?: Record<string, unknown>, options: FetchOptions & { operationName?: string } = {}): Promise<T> {
  const { operationName, ...rest } = options;
  const body = { query, ...(variables !== undefined ? { variables } : {}), ...(operationName ? { operationName } : {}) };
  const res = await postJson<{ data?: T | null; errors?: GraphqlError[] } | undefined>(url, body, rest);
  const errors = Array.isArray(res?.errors) ? res.errors : [];
  if (errors.length > 0) {
    const first = errors[0]!;
    const category = graphqlCategory(first.extensions?.code);
    const text = errors
      .slice(0, 5)
      .map((e) => `${typeof e?.message === 'string' ? e.message : JSON.stringify(e)}${Array.isArray(e?.path) ? ` (at ${e.path.join('.')})` : ''}`)
      .join('; ');
    const more = errors.length > 5 ? ` (and ${errors.length - 5} more)` : '';
    const hint = category === 'auth' && (first.extensions?.code ?? '').toUpperCase() !== 'FORBIDDEN' ? hintForStatus(401, undefined, loginSite(url)) : category === 'rate_limited' ? hintForStatus(429) : '';
    throw new ToolError(`GraphQL ${operationName ?? 'operation'} at ${url} failed: ${text}${more}${hint}`, {
      category,
      code: `graphql_${(first.extensions?.code ?? 'error').toLowerCase()}`,
      ...(category === 'rate_limited' ? { retryable: true } : {}),
    });
  }
  if (res?.data === undefined || res.data === null) {
    throw ToolError.internal(`GraphQL ${operationName ?? 'operation'} at ${url} returned no data and no errors`, { code: 'bad_response', retryable: false });
  }
  return res.data;
}

/** Bytes as base64, in chunks (String.fromCharCode of a whole large file would overflow the stack). */
export function bytesToBase64(bytes: Uint8Array): string {
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}

/**
 * GET a file (an image, a PDF, an export) as base64 with its MIME type, for a tool result:
 * results are JSON, so binary data travels as a base64 string. HTTP failures are mapped as for
 * fetchJson; `maxBytes` (default 6 MB, which stays under the 8 MB result limit once base64)
 * refuses a larger file with a validation error naming its size.
 */
export async function fetchBase64(url: string, options: FetchOptions & { maxBytes?: number } = {}): Promise<{ mimeType: string; base64: string; bytes: number }> {
  const { maxBytes = 6 * 1024 * 1024, ...rest } = options;
  const res = await request(url, rest);
  const declared = Number(res.headers.get('content-length'));
  const tooLarge = (n: number) =>
    ToolError.validation(`${url} is ${n} bytes, over the ${maxBytes}-byte limit of this tool (fetchBase64 maxBytes); ask for a smaller version or a part of it`, { code: 'file_too_large' });
  if (Number.isFinite(declared) && declared > maxBytes) {
    await res.body?.cancel().catch(() => {});
    throw tooLarge(declared);
  }
  const bytes = new Uint8Array(await res.arrayBuffer());
  if (bytes.length > maxBytes) throw tooLarge(bytes.length);
  const mimeType = (res.headers.get('content-type') ?? 'application/octet-stream').split(';')[0]!.trim() || 'application/octet-stream';
  return { mimeType, base64: bytesToBase64(bytes), bytes: bytes.length };
}

/**
 * Base64 (as an agent sends a file's content in a tool's arguments) as bytes, for an upload
 * (`new Blob([base64ToBytes(input.contentBase64)], { type: input.mimeType })`). Takes a `data:`
 * URL's base64 and the URL-safe alphabet too, and ignores whitespace; anything else is a
 * `validation` error naming `what` (the argument), which the agent can fix. Typed as backed by an
 * ArrayBuffer, so TypeScript takes it as a BlobPart.
 */
export function base64ToBytes(base64: string, what = 'the base64 text'): Uint8Array<ArrayBuffer> {
  const clean = String(base64)
    .replace(/^data:[^,]*;base64,/i, '')
    .replace(/\s+/g, '')
    .replace(/-/g, '+')
    .replace(/_/g, '/');
  let bin: string;
  try {
    if (/[^A-Za-z0-9+/=]/.test(clean)) throw new Error('bad character');
    bin = atob(clean.length % 4 === 0 ? clean : clean + '='.repeat(4 - (clean.length % 4)));
  } catch {
    throw ToolError.validation(`${what} is not valid base64 (send the file's bytes base64-encoded, e.g. "aGVsbG8=", or as a data: URL)`, { code: 'invalid_base64' });
  }
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** One server-sent event: its type (`event:`, "message" when the stream names none), its data and the last id seen. */
export interface ServerSentEvent {
  event: string;
  data: string;
  id?: string;
}

export interface EventStreamOptions extends Omit<FetchOptions, 'retry'> {
  /** Stop after this many events (default 100). */
  max?: number;
  /** Stop reading after this long and return what came (default 10 s; keep it under the call's 30 s timeout or report progress). */
  durationMs?: number;
  /** Stop after the first event for which this returns true (that event included). */
  until?: (event: ServerSentEvent) => boolean;
}

/**
 * Read a server-sent events feed (`text/event-stream`) for a while and return its events, parsed
 * as the EventSource standard says (multi-line data, `event:`, `id:`, comments). It is a fetch,
 * not an EventSource: it sends the plugin's default headers (an `Authorization: Bearer` token,
 * which EventSource cannot send) and cookies, maps HTTP failures as fetchJson does, and always
 * closes the connection when it stops: at `max` events, at `until`, after `durationMs`, when the
 * server ends the stream, or when `signal` aborts (then it throws `cancelled`). An answer that is
 * not text/event-stream is a `bad_response` error.
 */
export async function readEventStream(url: string, options: EventStreamOptions = {}): Promise<ServerSentEvent[]> {
  const { max = 100, durationMs = 10_000, until, ...rest } = options;
  const method = (rest.method ?? 'GET').toUpperCase();
  const res = await request(url, { ...rest, headers: { accept: 'text/event-stream', ...headersRecord(rest.headers) } });
  const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'text/event-stream' || !res.body) {
    await res.body?.cancel().catch(() => {});
    throw ToolError.internal(`${method} ${url} answered ${type || 'with no content type'}, not a text/event-stream feed`, { code: 'bad_response', retryable: false });
  }
  const reader = res.body.getReader();
  const events: ServerSentEvent[] = [];
  let cancelled = false;
  let stopped = false;
  const stop = () => {
    stopped = true;
    void reader.cancel().catch(() => {});
  };
  const timer = setTimeout(stop, durationMs);
  const onAbort = () => {
    cancelled = true;
    stop();
  };
  if (rest.signal?.aborted) onAbort();
  else rest.signal?.addEventListener('abort', onAbort, { once: true });
  const decoder = new TextDecoder();
  let buf = '';
  let data: string[] = [];
  let eventType = '';
  let lastId: string | undefined;
  /** One line of the stream; true once reading should stop. */
  const line = (text: string): boolean => {
    if (text === '') {
      if (data.length > 0) {
        const ev: ServerSentEvent = { event: eventType || 'message', data: data.join('\n'), ...(lastId !== undefined ? { id: lastId } : {}) };
        events.push(ev);
        if (events.length >= max || until?.(ev)) return true;
      }
      data = [];
      eventType = '';
      return false;
    }
    if (text.startsWith(':')) return false;
    const colon = text.indexOf(':');
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') eventType = value;
    else if (field === 'id' && !value.includes('\0')) lastId = value;
    return false;
  };
  const drain = (final: boolean): boolean => {
    for (;;) {
      const m = /\r\n|\r|\n/.exec(buf);
      if (!m) return final && buf !== '' ? line(buf) : false;
      // A \r at the end may be the first half of \r\n.
      if (m[0] === '\r' && m.index === buf.length - 1 && !final) return false;
      const text = buf.slice(0, m.index);
      buf = buf.slice(m.index + m[0].length);
      if (line(text)) return true;
    }
  };
  try {
    while (!stopped) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (err) {
        if (stopped) break;
        throw ToolError.internal(`${method} ${url}: the event stream broke off: ${(err as Error)?.message ?? err}`, { code: 'network_error', retryable: true });
      }
      if (chunk.done) {
        buf += decoder.decode();
        drain(true);
        break;
      }
      buf += decoder.decode(chunk.value, { stream: true });
      if (drain(false)) break;
    }
  } finally {
    clearTimeout(timer);
    rest.signal?.removeEventListener('abort', onAbort);
    if (!stopped) stop();
  }
  if (cancelled) throw new ToolError(`${method} ${url} was cancelled`, { code: 'cancelled', category: 'internal', retryable: false });
  return events;
}
