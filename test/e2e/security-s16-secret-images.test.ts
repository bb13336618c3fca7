/**
 * The extension replaces its secret in every frame it sends to the server, but that scrub reads
 * text. A page showing the secret (a config file served by a local web server, a copy of it opened
 * as a file) could still be handed to the agent as a screenshot or a PDF, whose pixels and
 * compressed text carry it, and network capture returned a binary answer or WebSocket frame
 * holding it as base64, which the scrub does not decode. Screenshots and PDFs of a page whose
 * text (document, form fields, shadow roots, frames) shows the secret are now refused, and base64
 * bodies and frames holding it are replaced. Performed as an agent would: REST tool calls only.
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

beforeAll(async () => {
  h = await startBrowserHarness({
    permissions: { browser: { default: 'auto' } },
    routes: (req) => {
      const path = new URL(req.url).pathname;
      const secret = h.srv.secret;
      if (path === '/s16/text') return page(`<pre>{"secret": "${secret}"}</pre>`);
      if (path === '/s16/upper') return page(`<p>token ${secret.toUpperCase().slice(10, 40)}</p>`);
      if (path === '/s16/field') return page(`<input id="f" style="width:90%" value="${secret}">`);
      if (path === '/s16/shadow') return page(`<div id="host"></div><script>document.getElementById('host').attachShadow({ mode: 'closed' }).innerHTML = '<b>${secret}</b>';</script>`);
      if (path === '/s16/frame') return page(`<p>outer</p><iframe src="/s16/text"></iframe>`);
      if (path === '/s16/srcdoc') return page(`<p>outer</p><iframe srcdoc="<pre>${secret}</pre>"></iframe>`);
      if (path === '/s16/blank') return page(`<p>outer</p><iframe></iframe><script>document.querySelector('iframe').contentDocument.body.textContent = '${secret}';</script>`);
      if (path === '/s16/plain') return page(`<p>nothing secret here: 0123456789abcdef0123</p>`);
      if (path === '/s16/secret.bin') return new Response(`{"secret":"${secret}"}`, { headers: { 'content-type': 'application/octet-stream' } });
      if (path === '/s16/other.bin') return new Response(`{"other":"value"}`, { headers: { 'content-type': 'application/octet-stream' } });
      if (path === '/s16/fetches') return page(`<script>fetch('/s16/secret.bin').then((r) => r.text()).then(() => fetch('/s16/other.bin')).then(() => (document.title = 'done'));</script>`);
      return undefined;
    },
  });
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

describe('a page showing the secret', () => {
  test('is neither screenshot nor printed, wherever its text shows it', async () => {
    for (const path of ['/s16/text', '/s16/upper', '/s16/field', '/s16/shadow', '/s16/frame', '/s16/srcdoc', '/s16/blank']) {
      const opened = await call('browser_open_tab', { url: h.fixtureUrl(path), active: true });
      expect(opened.status).toBe(200);
      const tabId = opened.body.result.id as number;
      for (const [tool, args] of [
        ['browser_screenshot_tab', {}],
        ['browser_screenshot_tab', { fullPage: true }],
        ['browser_print_pdf', {}],
      ] as const) {
        const r = await call(tool, { tabId, ...args });
        expect([path, tool, r.status, r.body.error?.code]).toEqual([path, tool, 403, 'page_not_allowed']);
        expect(JSON.stringify(r.body)).not.toContain('"images"');
      }
      await call('browser_close_tab', { tabId });
    }
  });

  test('an ordinary page is still shot and printed', async () => {
    const opened = await call('browser_open_tab', { url: h.fixtureUrl('/s16/plain'), active: true });
    const tabId = opened.body.result.id as number;
    const shot = await call('browser_screenshot_tab', { tabId });
    expect(shot.status).toBe(200);
    const pdf = await call('browser_print_pdf', { tabId });
    expect(pdf.status).toBe(200);
    await call('browser_close_tab', { tabId });
  });
});

describe('network capture', () => {
  test('a binary answer holding the secret is not returned as base64; another binary answer is', async () => {
    const opened = await call('browser_open_tab', { url: h.fixtureUrl('/s16/plain') });
    const tabId = opened.body.result.id as number;
    expect((await call('browser_enable_network_capture', { tabId, captureBodies: true })).status).toBe(200);
    expect((await call('browser_navigate_tab', { tabId, url: h.fixtureUrl('/s16/fetches') })).status).toBe(200);
    let requests: any[] = [];
    for (let i = 0; i < 100; i++) {
      const r = await call('browser_get_network_requests', { tabId, includeBodies: true });
      requests = (r.body.result?.requests ?? []) as any[];
      const done = (name: string) => requests.some((q) => String(q.url).endsWith(name) && q.responseBody);
      if (done('/s16/secret.bin') && done('/s16/other.bin')) break;
      await Bun.sleep(100);
    }
    const secretBin = requests.find((q) => String(q.url).endsWith('/s16/secret.bin'));
    const otherBin = requests.find((q) => String(q.url).endsWith('/s16/other.bin'));
    expect(secretBin).toBeDefined();
    expect(otherBin).toBeDefined();
    expect(JSON.stringify(secretBin)).toContain('[redacted: opentabs secret]');
    expect(JSON.stringify(otherBin)).toContain(Buffer.from('{"other":"value"}').toString('base64'));
    const har = await call('browser_export_har', { tabId });
    expect(har.status).toBe(200);
    await call('browser_close_tab', { tabId });
  });
});

describe('the secret', () => {
  test('appears in no response of this file, in no encoding', () => {
    const secret = h.srv.secret;
    const text = JSON.stringify(responses);
    const b64 = Buffer.from(`{"secret":"${secret}"}`).toString('base64');
    expect(text).not.toContain(secret);
    expect(text).not.toContain(b64.slice(8, 60));
  });
});
