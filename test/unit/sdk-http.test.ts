import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { categoryForStatus, fetchJson, fetchText, parseRetryAfter, postJson, ToolError } from '../../plugins/sdk/index.ts';

let server: ReturnType<typeof Bun.serve>;
let base = '';
const seen: { method: string; body: string; contentType: string | null }[] = [];

beforeAll(() => {
  server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const u = new URL(req.url);
      const status = Number(u.pathname.slice(1)) || 200;
      if (u.pathname === '/hang') {
        await new Promise<void>((r) => {
          const t = setTimeout(r, 30_000);
          req.signal.addEventListener('abort', () => (clearTimeout(t), r()));
        });
        return new Response('late');
      }
      if (u.pathname === '/echo') {
        seen.push({ method: req.method, body: await req.text(), contentType: req.headers.get('content-type') });
        return Response.json({ got: seen.at(-1), q: u.searchParams.get('q') });
      }
      if (u.pathname === '/text') return new Response('plain');
      if (u.pathname === '/notjson') return new Response('<html>');
      const headers: Record<string, string> = status === 429 ? { 'retry-after': '3' } : {};
      return Response.json({ error: { message: `status ${status}` } }, { status, headers });
    },
  });
  base = `http://127.0.0.1:${server.port}`;
});
afterAll(() => server.stop(true));

async function failure(p: Promise<unknown>): Promise<ToolError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(ToolError);
    return err as ToolError;
  }
  throw new Error('expected a ToolError');
}

describe('status → category', () => {
  test('table', () => {
    expect(categoryForStatus(200)).toBeNull();
    expect(categoryForStatus(401)).toBe('auth');
    expect(categoryForStatus(403)).toBe('auth');
    expect(categoryForStatus(404)).toBe('not_found');
    expect(categoryForStatus(429)).toBe('rate_limited');
    expect(categoryForStatus(400)).toBe('validation');
    expect(categoryForStatus(422)).toBe('validation');
    expect(categoryForStatus(500)).toBe('internal');
    expect(categoryForStatus(503)).toBe('internal');
  });
  test('Retry-After in seconds and as a date', () => {
    expect(parseRetryAfter('3')).toBe(3000);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:10 GMT', now)).toBe(10_000);
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(parseRetryAfter('soon')).toBeUndefined();
  });
});

describe('fetchJson / postJson / fetchText', () => {
  test('GET JSON with query parameters', async () => {
    const r = await fetchJson<{ q: string }>(`${base}/echo`, { query: { q: 'hello', skip: undefined } });
    expect(r.q).toBe('hello');
  });
  test('postJson sends a JSON body', async () => {
    const r = await postJson<{ got: { method: string; body: string; contentType: string } }>(`${base}/echo`, { a: 1 });
    expect(r.got).toEqual({ method: 'POST', body: '{"a":1}', contentType: 'application/json' });
  });
  test('fetchText returns text', async () => {
    expect(await fetchText(`${base}/text`)).toBe('plain');
  });
  test('a body that is not JSON is an internal error', async () => {
    const e = await failure(fetchJson(`${base}/notjson`));
    expect(e.category).toBe('internal');
    expect(e.message).toMatch(/not JSON/);
  });
  const cases: [number, string, boolean][] = [
    [401, 'auth', false],
    [403, 'auth', false],
    [404, 'not_found', false],
    [422, 'validation', false],
    [400, 'validation', false],
    [500, 'internal', true],
  ];
  for (const [status, category, retryable] of cases) {
    test(`HTTP ${status} → ${category}`, async () => {
      const e = await failure(fetchJson(`${base}/${status}`));
      expect(e.category).toBe(category as ToolError['category']);
      expect(e.retryable).toBe(retryable);
      expect(e.status).toBe(status);
      expect(e.message).toContain(`HTTP ${status}: status ${status}`);
    });
  }
  test('HTTP 429 → rate_limited with retryAfterMs', async () => {
    const e = await failure(fetchJson(`${base}/429`));
    expect(e.category).toBe('rate_limited');
    expect(e.retryable).toBe(true);
    expect(e.retryAfterMs).toBe(3000);
  });
  test('timeout → timeout category', async () => {
    const e = await failure(fetchJson(`${base}/hang`, { timeoutMs: 100 }));
    expect(e.category).toBe('timeout');
    expect(e.code).toBe('timeout');
    expect(e.retryable).toBe(true);
  });
  test('abort signal cancels the request', async () => {
    const c = new AbortController();
    const p = fetchJson(`${base}/hang`, { signal: c.signal });
    setTimeout(() => c.abort(new Error('user cancelled')), 20);
    const e = await failure(p);
    expect(e.code).toBe('cancelled');
    expect(e.retryable).toBe(false);
  });
  test('network failure is retryable internal', async () => {
    const e = await failure(fetchJson('http://127.0.0.1:1/x', { timeoutMs: 5000 }));
    expect(e.category).toBe('internal');
    expect(e.code).toBe('network_error');
  });
});
