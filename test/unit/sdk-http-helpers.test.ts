import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { csrfHeaders, csrfToken, deleteJson, fetchJson, hintForStatus, patchJson, putJson, setDefaultHeaders, type ToolError } from '../../plugins/sdk/index.ts';

let server: ReturnType<typeof Bun.serve>;
let base = '';

beforeAll(() => {
  server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const u = new URL(req.url);
      if (u.pathname === '/echo') {
        return Response.json({ method: req.method, body: await req.text(), contentType: req.headers.get('content-type'), csrf: req.headers.get('x-csrf-token'), rw: req.headers.get('x-requested-with') });
      }
      const status = Number(u.pathname.slice(1));
      const headers: Record<string, string> = status === 429 ? { 'retry-after': '7' } : {};
      return Response.json({ error: 'nope' }, { status, headers });
    },
  });
  base = `http://127.0.0.1:${server.port}`;
});
afterAll(() => {
  server.stop(true);
  setDefaultHeaders({});
});

async function failure(p: Promise<unknown>): Promise<ToolError> {
  try {
    await p;
  } catch (e) {
    return e as ToolError;
  }
  throw new Error('expected a failure');
}

describe('JSON verbs', () => {
  test('putJson / patchJson / deleteJson send the method and a JSON body', async () => {
    const put = await putJson<{ method: string; body: string; contentType: string }>(`${base}/echo`, { a: 1 });
    expect(put).toMatchObject({ method: 'PUT', body: '{"a":1}', contentType: 'application/json' });
    const patch = await patchJson<{ method: string; body: string }>(`${base}/echo`, { b: 2 });
    expect(patch).toMatchObject({ method: 'PATCH', body: '{"b":2}' });
    const del = await deleteJson<{ method: string; body: string }>(`${base}/echo`);
    expect(del).toMatchObject({ method: 'DELETE', body: '' });
  });
  test('default headers reach every request; per-call headers override them', async () => {
    setDefaultHeaders({ 'x-requested-with': 'XMLHttpRequest', 'x-csrf-token': 'default' });
    try {
      const a = await fetchJson<{ rw: string; csrf: string }>(`${base}/echo`);
      expect(a).toMatchObject({ rw: 'XMLHttpRequest', csrf: 'default' });
      const b = await putJson<{ rw: string; csrf: string }>(`${base}/echo`, {}, { headers: { 'x-csrf-token': 'fresh' } });
      expect(b).toMatchObject({ rw: 'XMLHttpRequest', csrf: 'fresh' });
    } finally {
      setDefaultHeaders({});
    }
    const c = await fetchJson<{ rw: string | null }>(`${base}/echo`);
    expect(c.rw).toBeNull();
  });
});

describe('error hints say what the status means', () => {
  test('401 says log in; 403 says forbidden/CSRF and never "log in"', async () => {
    expect((await failure(fetchJson(`${base}/401`))).message).toContain('not logged in');
    const e403 = await failure(fetchJson(`${base}/403`));
    expect(e403.message).toContain('forbidden');
    expect(e403.message).toContain('CSRF');
    expect(e403.message).not.toContain('log in');
  });
  test('404, 409, 429 with retry-after, 5xx', async () => {
    expect((await failure(fetchJson(`${base}/404`))).message).toContain('not found');
    expect((await failure(fetchJson(`${base}/409`))).message).toContain('conflict');
    expect((await failure(fetchJson(`${base}/429`))).message).toContain('retry after 7 s');
    expect((await failure(fetchJson(`${base}/503`))).message).toContain('server error');
    expect(hintForStatus(429)).toContain('retry later');
  });
});

describe('CSRF token', () => {
  const g = globalThis as { document?: unknown };
  function fakeDocument(meta: Record<string, string>, cookie: string) {
    return {
      cookie,
      querySelector(sel: string) {
        const name = /name="([^"]+)"/.exec(sel)?.[1] ?? '';
        return name in meta ? { getAttribute: () => meta[name] } : null;
      },
    };
  }
  test('meta tag first, then cookie, else undefined', () => {
    const saved = g.document;
    try {
      g.document = fakeDocument({ 'csrf-token': 'from-meta' }, 'XSRF-TOKEN=from-cookie');
      expect(csrfToken()).toBe('from-meta');
      expect(csrfHeaders()).toEqual({ 'x-csrf-token': 'from-meta' });
      g.document = fakeDocument({}, 'a=1; XSRF-TOKEN=c%2Fd');
      expect(csrfToken()).toBe('c/d');
      expect(csrfHeaders('x-xsrf-token')).toEqual({ 'x-xsrf-token': 'c/d' });
      g.document = fakeDocument({ mytok: 'm' }, 'sess=1');
      expect(csrfToken()).toBeUndefined();
      expect(csrfToken({ meta: 'mytok' })).toBe('m');
      expect(csrfHeaders()).toEqual({});
    } finally {
      g.document = saved;
    }
  });
});
