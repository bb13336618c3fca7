/**
 * Bodies far above the default 10 MB limit still get the documented JSON 413, on every kind of
 * endpoint, whether the size is declared (Content-Length) or only found while streaming; the
 * server reads no more than the limit and keeps answering.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { MAX_BODY_BYTES } from '../../server/limits.ts';
import { startTestServer, type TestServer } from '../harness/server.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  await srv?.stop();
});

const MB = 1024 * 1024;
const headers = () => ({ ...srv.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' });
const PATHS = ['/tools/browser_list_tabs/call', '/mcp', '/mcp/gateway', '/plugin-settings', '/extension/reload'];

async function expectJson413(r: Response, where: string) {
  const text = await r.text();
  expect({ where, status: r.status }).toEqual({ where, status: 413 });
  const body = JSON.parse(text) as { error: { code: string; message: string } };
  expect(body.error.code).toBe('payload_too_large');
  expect(body.error.message).toContain(`${MAX_BODY_BYTES / MB} MB`);
}

describe('oversized bodies with the default limit', () => {
  for (const mb of [12, 50]) {
    test(`${mb} MB with Content-Length: JSON 413 everywhere`, async () => {
      const body = new Uint8Array(mb * MB).fill(0x20);
      for (const path of PATHS) await expectJson413(await fetch(srv.url + path, { method: 'POST', headers: headers(), body }), `${path} ${mb} MB`);
    });
  }

  test('a declared size far beyond anything sent (5 GB) is refused from the header alone', async () => {
    // The body stream ends after 1 MB: the answer must come from Content-Length, not from reading.
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent >= MB) return c.close();
        sent += 64 * 1024;
        c.enqueue(new Uint8Array(64 * 1024).fill(0x20));
      },
    });
    const r = await fetch(`${srv.url}/tools/browser_list_tabs/call`, {
      method: 'POST',
      headers: { ...headers(), 'content-length': String(5 * 1024 * MB) },
      body: stream,
      duplex: 'half',
    } as RequestInit).catch((e: unknown) => e as Error);
    expect(r).toBeInstanceOf(Response);
    await expectJson413(r as Response, 'declared 5 GB');
  });

  test('12 MB chunked (no Content-Length): JSON 413 after reading no more than the limit', async () => {
    for (const path of PATHS.filter((p) => p !== '/extension/reload')) {
      let i = 0;
      const stream = new ReadableStream<Uint8Array>({
        pull(c) {
          if (i++ >= 12) return c.close();
          c.enqueue(new Uint8Array(MB).fill(0x20));
        },
      });
      const r = await fetch(srv.url + path, { method: 'POST', headers: headers(), body: stream, duplex: 'half' } as RequestInit);
      await expectJson413(r, `${path} chunked`);
    }
  });

  test('the server keeps answering afterwards', async () => {
    const r = await fetch(`${srv.url}/health`, { headers: srv.auth });
    expect(r.status).toBe(200);
  });
});
