/** Body size (413), JSON parsing (400) and rate limits (429 + Retry-After) on a real server. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startTestServer, type TestServer } from '../harness/server.ts';
import { rawRequest } from './raw-http.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({
    limits: { maxBodyBytes: 64 * 1024, adminRate: { max: 3, windowMs: 60_000 } },
  });
});
afterAll(async () => {
  await srv?.stop();
});

const post = (path: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${srv.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...srv.auth, ...headers }, body });

describe('body limits and JSON', () => {
  test('a body over the limit: 413 with a JSON error naming the limit', async () => {
    const r = await post('/plugin-settings', JSON.stringify({ plugin: 'x', settings: { big: 'a'.repeat(70 * 1024) } }));
    expect(r.status).toBe(413);
    const body = (await r.json()) as any;
    expect(body.error.code).toBe('payload_too_large');
    expect(body.error.message).toContain('64 KB');
  });

  test('a chunked body (no Content-Length) over the limit is also refused', async () => {
    const chunk = 'a'.repeat(16 * 1024);
    const parts = [`POST /plugin-settings HTTP/1.1`, `Host: 127.0.0.1:${srv.port}`, `Authorization: Bearer ${srv.secret}`, 'Content-Type: application/json', 'Transfer-Encoding: chunked', 'Connection: close', '', ''];
    let req = parts.join('\r\n');
    req += `${(1).toString(16)}\r\n"\r\n`;
    for (let i = 0; i < 6; i++) req += `${chunk.length.toString(16)}\r\n${chunk}\r\n`;
    req += '0\r\n\r\n';
    const r = await rawRequest(srv.port, req);
    expect(r.status).toBe(413);
    expect(JSON.parse(r.body).error.code).toBe('payload_too_large');
  });

  test('malformed JSON: 400 invalid_json', async () => {
    for (const body of ['{', '{"plugin": }', 'not json', '\u0000\u0001', '{"a":1}}']) {
      const r = await post('/plugin-settings', body);
      expect(r.status).toBe(400);
      expect(((await r.json()) as any).error.code).toBe('invalid_json');
    }
  });

  test('empty body: 400 saying a JSON document is expected', async () => {
    const r = await post('/plugin-settings', '');
    expect(r.status).toBe(400);
    expect(((await r.json()) as any).error.message).toContain('empty');
  });

  test('413/400 answers do not consume the rate limit (limits run after body checks)', async () => {
    // The three tests above sent 8 bad bodies; the limiter (max 3) must still have room.
    const r = await post('/plugin-settings', JSON.stringify({ plugin: 'nope', settings: {} }));
    expect(r.status).toBe(404);
  });
});

describe('rate limits', () => {
  test('/reload: past the limit 429 with Retry-After: 60', async () => {
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 5; i++) {
      last = await fetch(`${srv.url}/reload`, { method: 'POST', headers: srv.auth });
      statuses.push(last.status);
      if (last.status !== 429) await last.body?.cancel();
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    expect(last!.headers.get('retry-after')).toBe('60');
    const body = (await last!.json()) as any;
    expect(body.error.code).toBe('rate_limited');
    expect(body.error.retryable).toBe(true);
  });

  test('/extension/reload has its own window', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await fetch(`${srv.url}/extension/reload`, { method: 'POST', headers: srv.auth });
      statuses.push(r.status);
      if (r.status === 429) expect(r.headers.get('retry-after')).toBe('60');
      await r.body?.cancel();
    }
    expect(statuses).toEqual([503, 503, 503, 429]);
  });

  test('unauthenticated requests are refused before the limiter (they cannot exhaust it)', async () => {
    const r = await fetch(`${srv.url}/plugin-settings`, { method: 'POST', body: '{}' });
    expect(r.status).toBe(401);
  });

  test('/plugin-settings is limited too', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await post('/plugin-settings', JSON.stringify({ plugin: 'nope', settings: {} }));
      statuses.push(r.status);
      await r.body?.cancel();
    }
    // One slot was used by the earlier 404 test.
    expect(statuses).toEqual([404, 404, 429, 429]);
  });
});
