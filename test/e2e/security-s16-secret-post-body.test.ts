/**
 * Network capture keeps request bodies. Chrome hands a binary POST body (bytes that are not
 * UTF-8: an ArrayBuffer, a Blob) to DevTools as base64, and the extension's scrub of frames to
 * the server reads text, so a body holding the secret passed it encoded. A page POSTing the
 * secret inside binary bytes must not get it back to the agent in any encoding; another binary
 * body is still returned. Performed as an agent would: REST tool calls only.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { startBrowserHarness, type BrowserHarness, type ToolCallResult } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
const responses: ToolCallResult[] = [];

async function call(name: string, args: Record<string, unknown> = {}): Promise<ToolCallResult> {
  const r = await h.callTool(name, args);
  responses.push(r);
  return r;
}

const page = (body: string) => new Response(`<!doctype html><title>page</title>${body}`, { headers: { 'content-type': 'text/html; charset=utf-8' } });

/** Bytes that are not UTF-8 around an ASCII text, as a page script expression. */
const binary = (ascii: string) => `new Uint8Array([0xff, 0xfe, 0x80, ...new TextEncoder().encode(${JSON.stringify(ascii)}), 0xc3, 0x28, 0x00])`;

beforeAll(async () => {
  h = await startBrowserHarness({
    permissions: { browser: { default: 'auto' } },
    routes: (req) => {
      const path = new URL(req.url).pathname;
      const secret = h.srv.secret;
      if (path === '/s16p/plain') return page(`<p>nothing secret here</p>`);
      if (path === '/s16p/sink') return new Response('ok');
      if (path === '/s16p/posts')
        return page(
          `<script>(async () => {
            await fetch('/s16p/sink?buffer', { method: 'POST', body: ${binary(`{"secret":"${secret}"}`)}.buffer });
            await fetch('/s16p/sink?blob', { method: 'POST', body: new Blob([${binary(`key=${secret}`)}]) });
            await fetch('/s16p/sink?other', { method: 'POST', body: new Blob([${binary('{"other":"value"}')}]) });
            document.title = 'done';
          })();</script>`,
        );
      return undefined;
    },
  });
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

describe('network capture', () => {
  test('a binary POST body holding the secret is not returned in any encoding; another one is', async () => {
    const opened = await call('browser_open_tab', { url: h.fixtureUrl('/s16p/plain') });
    const tabId = opened.body.result.id as number;
    expect((await call('browser_enable_network_capture', { tabId, captureBodies: true })).status).toBe(200);
    expect((await call('browser_navigate_tab', { tabId, url: h.fixtureUrl('/s16p/posts') })).status).toBe(200);
    let requests: any[] = [];
    const find = (q: string) => requests.find((r) => String(r.url).endsWith(`/s16p/sink?${q}`));
    for (let i = 0; i < 100; i++) {
      const r = await call('browser_get_network_requests', { tabId, includeBodies: true });
      requests = (r.body.result?.requests ?? []) as any[];
      if (['buffer', 'blob', 'other'].every((q) => find(q)?.responseBody)) break;
      await Bun.sleep(100);
    }
    const buffer = find('buffer');
    const blob = find('blob');
    const other = find('other');
    expect(buffer?.requestBody).toBeDefined();
    expect(blob?.requestBody).toBeDefined();
    expect(other?.requestBody).toBeDefined();
    expect(JSON.stringify(buffer.requestBody)).toContain('[redacted: opentabs secret]');
    expect(JSON.stringify(blob.requestBody)).toContain('[redacted: opentabs secret]');
    // Another binary body comes back, as base64 with its encoding said.
    expect(other.requestBody.base64Encoded).toBe(true);
    expect(Buffer.from(other.requestBody.text, 'base64').toString('latin1')).toContain('{"other":"value"}');
    const har = await call('browser_export_har', { tabId });
    expect(har.status).toBe(200);
    await call('browser_close_tab', { tabId });
  });
});

describe('the secret', () => {
  test('appears in no response of this file, in no encoding', () => {
    const secret = h.srv.secret;
    const text = JSON.stringify(responses);
    expect(text.toLowerCase()).not.toContain(secret.slice(0, 16));
    // Base64 of the secret at each of the three byte alignments.
    for (let shift = 0; shift < 3; shift++) {
      const b64 = Buffer.from(`${'x'.repeat(shift)}${secret}`).toString('base64').slice(8, 60);
      expect(text).not.toContain(b64);
    }
  });
});
