/**
 * What a plugin for a single-page app needs from the SDK, run through runTool as the page runs it:
 * a Bearer token kept in localStorage read at each request (setDefaultHeaders with a function), a
 * 429 waited out and sent again (FetchOptions.retry), a server-sent events feed read with that
 * token (readEventStream), an upload's base64 turned into bytes (base64ToBytes), and a request to
 * the API's other origin that the browser refuses under CORS named as such.
 */
import { afterEach, expect, test } from 'bun:test';
import * as v from 'valibot';
import { base64ToBytes, definePlugin, defineTool, fetchJson, getLocalStorage, readEventStream, request, setDefaultHeaders, ToolError } from '../../plugins/sdk/index.ts';
import { runTool } from '../../plugins/sdk/testing.ts';

const API = 'https://api.mail.example';
const PAGE = 'https://mail.example/app/inbox';

afterEach(() => setDefaultHeaders({}));

const plugin = definePlugin({
  name: 'mail',
  displayName: 'Mail',
  description: 'Mail',
  urlPatterns: ['https://mail.example/app/*'],
  isReady: () => Boolean(getLocalStorage('token')),
  tools: [
    defineTool({
      name: 'me',
      description: 'The account.',
      input: v.object({}),
      output: v.object({ user: v.string() }),
      handle: (_i, ctx) => fetchJson<{ user: string }>(`${API}/me`, { signal: ctx.signal, credentials: 'omit' }),
    }),
  ],
});

function bearerFromStorage() {
  setDefaultHeaders(() => ({ authorization: getLocalStorage('token') ? `Bearer ${getLocalStorage('token')}` : undefined }), { origins: [API] });
}

test('a token in localStorage is read at each request: a new token is the one sent, none means no header and the login words', async () => {
  bearerFromStorage();
  const requests: Request[] = [];
  const routes = {
    [`GET ${API}/me`]: (req: Request) =>
      req.headers.get('authorization') === 'Bearer t2' ? { user: 'ann' } : Response.json({ error: 'invalid token' }, { status: 401 }),
  };
  const first = await runTool(plugin, 'me', {}, { page: { url: PAGE, localStorage: { token: 't1' } }, routes, requests });
  expect(first.outcome).toMatchObject({ ok: false, error: { category: 'auth', code: 'http_401' } });
  const second = await runTool(plugin, 'me', {}, { page: { url: PAGE, localStorage: { token: 't2' } }, routes, requests });
  expect(second.outcome).toEqual({ ok: true, value: { user: 'ann' } });
  const none = await runTool(plugin, 'me', {}, { page: { url: PAGE }, routes, requests });
  expect(none.outcome.ok).toBe(false);
  expect((none.outcome as { error: { message: string } }).error.message).toContain('ask the user to log in to the app at https://mail.example in their browser');
  expect(requests.map((r) => r.headers.get('authorization'))).toEqual(['Bearer t1', 'Bearer t2', null]);
  // The requests runTool records keep the credentials asked for (Bun's own Request would say "include").
  expect(requests.map((r) => r.credentials)).toEqual(['omit', 'omit', 'omit']);
  // The token never goes to a host the headers were not set for.
  const elsewhere: Request[] = [];
  globalThis.location = new URL(PAGE) as unknown as Location;
  const realFetch = globalThis.fetch;
  globalThis.fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    elsewhere.push(new Request(String(input), init));
    return Response.json({});
  }) as unknown as typeof fetch;
  try {
    await fetchJson('https://evil.example/x');
  } finally {
    globalThis.fetch = realFetch;
    delete (globalThis as { location?: unknown }).location;
  }
  expect(elsewhere[0]!.headers.get('authorization')).toBeNull();
});

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

/** fetch answering from a list of Responses, in order; records each request. */
function scripted(answers: (() => Response)[]): { requests: { url: string; body: unknown }[] } {
  const requests: { url: string; body: unknown }[] = [];
  globalThis.fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    requests.push({ url: String(input), body: init?.body });
    const next = answers.shift();
    if (!next) throw new Error('no more answers');
    return next();
  }) as unknown as typeof fetch;
  return { requests };
}

const tooMany = (retryAfter?: string) => new Response('slow down', { status: 429, headers: retryAfter === undefined ? {} : { 'retry-after': retryAfter } });

test('retry: a 429 with a short Retry-After is waited out and sent again, body and all; onRetry is told', async () => {
  const { requests } = scripted([() => tooMany('0'), () => tooMany('0'), () => Response.json({ ok: 1 })]);
  const told: unknown[] = [];
  const r = await request('https://mail.example/api/send', { method: 'POST', body: '{"to":"bob"}', retry: { attempts: 2, onRetry: (i) => told.push(i) } });
  expect(await r.json()).toEqual({ ok: 1 });
  expect(requests.map((q) => q.body)).toEqual(['{"to":"bob"}', '{"to":"bob"}', '{"to":"bob"}']);
  expect(told).toEqual([
    { attempt: 1, waitMs: 0, status: 429, url: 'https://mail.example/api/send' },
    { attempt: 2, waitMs: 0, status: 429, url: 'https://mail.example/api/send' },
  ]);
});

test('retry: attempts used up, or a Retry-After over maxWaitMs, reach the caller as rate_limited with retryAfterMs', async () => {
  scripted([() => tooMany('0'), () => tooMany('0')]);
  const used = await request('https://mail.example/api/x', { retry: { attempts: 1 } }).catch((e: unknown) => e);
  expect(used).toBeInstanceOf(ToolError);
  expect(used).toMatchObject({ category: 'rate_limited', retryAfterMs: 0, code: 'http_429' });
  const { requests } = scripted([() => tooMany('120')]);
  const long = await request('https://mail.example/api/x', { retry: { attempts: 3, maxWaitMs: 5000 } }).catch((e: unknown) => e);
  expect(long).toMatchObject({ category: 'rate_limited', retryAfterMs: 120_000, retryable: true });
  expect((long as Error).message).toContain('(rate limited: retry after 120 s)');
  expect(requests).toHaveLength(1);
  // Other failures are not retried.
  const other = scripted([() => new Response('no', { status: 500 })]);
  await request('https://mail.example/api/x', { retry: { attempts: 3 } }).catch(() => {});
  expect(other.requests).toHaveLength(1);
  // No retry option: the 429 is thrown at once, as before.
  const plain = scripted([() => tooMany('0'), () => Response.json({})]);
  expect(await request('https://mail.example/api/x').catch((e: unknown) => (e as ToolError).category)).toBe('rate_limited');
  expect(plain.requests).toHaveLength(1);
});

test('retry: a cancel during the wait ends it at once as cancelled, and nothing more is sent', async () => {
  const { requests } = scripted([() => tooMany('5'), () => Response.json({})]);
  const controller = new AbortController();
  const p = request('https://mail.example/api/x', { signal: controller.signal, retry: { onRetry: () => controller.abort(new Error('stop')) } }).catch((e: unknown) => e);
  const err = (await p) as ToolError;
  expect(err).toMatchObject({ code: 'cancelled', retryable: false });
  expect(err.message).toContain('was cancelled while waiting 5 s to retry after HTTP 429');
  expect(requests).toHaveLength(1);
});

/** A text/event-stream body that sends `chunks`, then stays open unless `end`; `cancelled` resolves when the reader closes it. */
function sse(chunks: string[], end = false): { res: Response; cancelled: Promise<void> } {
  let onCancel!: () => void;
  const cancelled = new Promise<void>((r) => (onCancel = r));
  const enc = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      for (const ch of chunks) c.enqueue(enc.encode(ch));
      if (end) c.close();
    },
    cancel() {
      onCancel();
    },
  });
  return { res: new Response(body, { headers: { 'content-type': 'text/event-stream; charset=utf-8' } }), cancelled };
}

test('readEventStream: the standard format across chunk boundaries, stopped at max, the connection closed', async () => {
  const feed = sse([': hello\r\n', 'event: mail\r\nid: 1\r\nda', 'ta: {"from":"bob"}\r', '\n\r\ndata: line one\ndata: line two\n\n', 'data:no space\n\n', 'data: beyond max\n\n']);
  const seen: Request[] = [];
  globalThis.fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    seen.push(new Request(String(input), init));
    return feed.res;
  }) as unknown as typeof fetch;
  const events = await readEventStream('https://mail.example/events', { max: 3 });
  expect(events).toEqual([
    { event: 'mail', data: '{"from":"bob"}', id: '1' },
    { event: 'message', data: 'line one\nline two', id: '1' },
    { event: 'message', data: 'no space', id: '1' },
  ]);
  expect(seen[0]!.headers.get('accept')).toBe('text/event-stream');
  await feed.cancelled;
});

test('readEventStream: until, durationMs on a feed that stays open, a stream the server ends, a cancel, and an answer that is not a feed', async () => {
  let feed = sse(['data: a\n\n', 'data: stop\n\n', 'data: c\n\n']);
  globalThis.fetch = (async () => feed.res) as unknown as typeof fetch;
  expect((await readEventStream('/e', { until: (e) => e.data === 'stop' })).map((e) => e.data)).toEqual(['a', 'stop']);
  await feed.cancelled;

  feed = sse(['data: only\n\n']);
  expect(await readEventStream('/e', { durationMs: 50 })).toEqual([{ event: 'message', data: 'only' }]);
  await feed.cancelled;

  feed = sse(['data: x\n\n', 'data: unfinished'], true);
  expect(await readEventStream('/e')).toEqual([{ event: 'message', data: 'x' }]);

  feed = sse([]);
  const controller = new AbortController();
  const p = readEventStream('/e', { signal: controller.signal }).catch((e: unknown) => e);
  controller.abort();
  expect(await p).toMatchObject({ code: 'cancelled' });
  await feed.cancelled;

  globalThis.fetch = (async () => Response.json({ events: [] })) as unknown as typeof fetch;
  expect(await readEventStream('/e').catch((e: unknown) => e)).toMatchObject({ code: 'bad_response', message: 'GET /e answered application/json, not a text/event-stream feed' });
});

test('base64ToBytes: plain, data: URL, URL-safe and wrapped base64; anything else a validation error naming the argument', async () => {
  expect([...base64ToBytes('aGVsbG8=')]).toEqual([...new TextEncoder().encode('hello')]);
  expect([...base64ToBytes('data:text/plain;base64,aGVs\nbG8')]).toEqual([...new TextEncoder().encode('hello')]);
  expect([...base64ToBytes('-_8')]).toEqual([0xfb, 0xff]);
  const upload = definePlugin({
    name: 'mail',
    displayName: 'Mail',
    description: 'Mail',
    urlPatterns: ['https://mail.example/app/*'],
    isReady: () => true,
    tools: [
      defineTool({
        name: 'attach',
        description: 'Attach a file.',
        input: v.object({ name: v.string(), contentBase64: v.string() }),
        output: v.object({ bytes: v.number() }),
        handle: (input) => ({ bytes: base64ToBytes(input.contentBase64, 'contentBase64').length }),
      }),
    ],
  });
  const bad = await runTool(upload, 'attach', { name: 'a.txt', contentBase64: 'not base64!' });
  expect(bad.outcome).toMatchObject({ ok: false, error: { category: 'validation', code: 'invalid_base64' } });
  expect((bad.outcome as { error: { message: string } }).error.message).toStartWith('contentBase64 is not valid base64');
});

test('a request to the API on another origin that fails as the browser fails a CORS refusal says what the API must answer', async () => {
  globalThis.location = new URL(PAGE) as unknown as Location;
  globalThis.fetch = (async () => {
    throw new TypeError('Failed to fetch');
  }) as unknown as typeof fetch;
  try {
    const withCookies = (await fetchJson(`${API}/me`).catch((e: unknown) => e)) as ToolError;
    expect(withCookies.code).toBe('network_error');
    expect(withCookies.message).toContain(`GET ${API}/me failed: Failed to fetch (${API} is another origin than the page https://mail.example: if it is up, the browser refused its answer under CORS.`);
    expect(withCookies.message).toContain("answers Access-Control-Allow-Origin: * needs credentials: 'omit'");
    const omitted = (await fetchJson(`${API}/me`, { credentials: 'omit' }).catch((e: unknown) => e)) as ToolError;
    expect(omitted.message).toContain('Access-Control-Allow-Headers');
    const same = (await fetchJson('/api/me').catch((e: unknown) => e)) as ToolError;
    expect(same.message).toBe('GET /api/me failed: Failed to fetch');
  } finally {
    delete (globalThis as { location?: unknown }).location;
  }
});

test('logged out (isReady false): the agent is told to have the user log in, not also to wait and retry', async () => {
  const { fromRpcError } = await import('../../server/tools/call-errors.ts');
  const { RpcErrorCode } = await import('../../server/protocol/jsonrpc.ts');
  // The SDK runtime's words when isReady() is false at call time.
  const sdk =
    'mail is not ready in this tab (https://mail.example): its isReady() check is false now, so the user is probably logged out; ask the user to log in to Mail in their browser (or wait for the page to finish loading), then call again';
  expect(fromRpcError({ code: RpcErrorCode.ToolError, message: sdk, data: { code: 'adapter_not_ready', category: 'auth' } }, 'mail_whoami').message).toBe(sdk);
});
