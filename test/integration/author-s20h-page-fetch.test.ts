/**
 * The SDK's HTTP helpers call the page's own window.fetch (an app's wrapper may add its auth). A
 * page whose replacement drops the AbortSignal must not keep a call's request running past its
 * timeout or its cancel, nor let a cancelled paging loop send its next request; one that answers
 * with something other than a Response is named as such.
 */
import { afterEach, expect, test } from 'bun:test';
import { fetchJson, request } from '../../plugins/sdk/http.ts';
import { ToolError } from '../../plugins/sdk/errors.ts';

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

/** A page's fetch replacement that passes everything on except the signal, and never answers /hang. */
function installSignalDroppingFetch(): { calls: string[] } {
  const calls: string[] = [];
  globalThis.fetch = (async (input: string | URL | Request, init: RequestInit = {}) => {
    const url = String(input);
    calls.push(url);
    const { signal: _dropped, ...rest } = init;
    if (url.includes('/hang')) return new Promise<Response>(() => {});
    expect(rest.credentials).toBe('include');
    return new Response(JSON.stringify({ url }), { headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
  return { calls };
}

async function failure(p: Promise<unknown>): Promise<ToolError> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(ToolError);
  return e as ToolError;
}

test('a fetch that drops the signal: the helper still works, and its timeout still ends the request', async () => {
  installSignalDroppingFetch();
  expect(await fetchJson('http://127.0.0.1:1/api/items')).toEqual({ url: 'http://127.0.0.1:1/api/items' });
  const e = await failure(fetchJson('http://127.0.0.1:1/hang', { timeoutMs: 50 }));
  expect(e.category).toBe('timeout');
  expect(e.message).toBe('GET http://127.0.0.1:1/hang timed out after 50 ms');
});

test('a fetch that drops the signal: a cancel ends the request, and a cancelled loop sends nothing more', async () => {
  const { calls } = installSignalDroppingFetch();
  const controller = new AbortController();
  const pending = failure(fetchJson('http://127.0.0.1:1/hang', { signal: controller.signal }));
  controller.abort(new Error('the user pressed Stop'));
  const e = await pending;
  expect(e.code).toBe('cancelled');
  expect(e.message).toBe('GET http://127.0.0.1:1/hang was cancelled');
  // The next page of a loop that ignores the abort: refused before the page's fetch is called.
  const next = await failure(fetchJson('http://127.0.0.1:1/api/items?page=2', { signal: controller.signal }));
  expect(next.code).toBe('cancelled');
  expect(calls).toEqual(['http://127.0.0.1:1/hang']);
});

test('a fetch that answers with something other than a Response is named, not a TypeError', async () => {
  for (const [answer, words] of [
    [undefined, 'undefined'],
    [{ ok: true, data: [] }, 'an object'],
    ['{"a":1}', 'a string'],
  ] as const) {
    globalThis.fetch = (async () => answer) as unknown as typeof fetch;
    const e = await failure(request('/api/items'));
    expect(e.code).toBe('bad_response');
    expect(e.message).toBe(
      `GET /api/items: the page's fetch returned ${words} instead of a Response (the page has replaced window.fetch with one that does not answer like it); read the data another way, e.g. from the page's own state`,
    );
  }
});
