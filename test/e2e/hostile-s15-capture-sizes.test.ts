/**
 * A hostile page under network capture, in real Chromium with the real extension: it makes
 * requests with 2 MB URLs and 200 KB headers, and POSTs 5 MB bodies that never get an answer.
 * The capture keeps each URL cut at CAPTURE_URL_MAX_CHARS and each set of headers at
 * CAPTURE_HEADERS_MAX_CHARS, both with a mark saying what was cut, so the worker holds kilobytes
 * per request instead of megabytes and the list still fits one result; a capture in another tab
 * and the built-in tools still answer. A page sending and receiving hundreds of 120 KB WebSocket
 * frames: the capture keeps the newest CAPTURE_STORED_FRAME_CHARS of payload (the rest counted as
 * dropped), so browser_get_websocket_frames still answers.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { CAPTURE_BODY_MAX_BYTES } from '../../server/protocol/limits.ts';
import { CAPTURE_HEADERS_MAX_CHARS, CAPTURE_STORED_FRAME_CHARS, CAPTURE_URL_MAX_CHARS } from '../../extension/tools/network-records.ts';
import { startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);
let h: BrowserHarness;

beforeAll(async () => {
  h = await startBrowserHarness({ permissions: { browser: { default: 'auto' } } });
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

interface Req {
  url: string;
  requestHeaders: Record<string, string>;
  requestBody?: { text: string; size: number; truncated: boolean } | null;
}

test('2 MB URLs, 200 KB headers and 5 MB unanswered bodies are kept cut, with a mark', async () => {
  const good = await h.context.newPage();
  await good.goto(h.fixtureUrl('/pages/index.html?good'));
  const goodTab = await h.tabIdOf(good);
  const page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/pages/index.html?hostile'));
  const tabId = await h.tabIdOf(page);
  for (const id of [goodTab, tabId]) expect((await h.callTool('browser_enable_network_capture', { tabId: id, captureBodies: true })).status).toBe(200);

  await page.evaluate(async () => {
    const long = 'a'.repeat(2_000_000);
    const all: Promise<unknown>[] = [];
    for (let i = 0; i < 20; i++) all.push(fetch(`/long-url-${i}?${long}`).catch(() => null));
    // Refused by the server (431) after the browser sent them: no answer body, the request body stays.
    for (let i = 0; i < 5; i++) all.push(fetch(`/big-headers-${i}`, { method: 'POST', body: 'b'.repeat(5_000_000), headers: { 'x-big': 'h'.repeat(200_000), 'x-after': 'y' } }).catch(() => null));
    await Promise.all(all);
  });
  await good.evaluate(() => fetch('/pages/second.html?from-good').then((r) => r.text()));

  const r = await h.callTool('browser_get_network_requests', { tabId });
  expect(r.status).toBe(200);
  const requests = r.body.result.requests as Req[];
  const long = requests.filter((q) => q.url.includes('/long-url-'));
  expect(long.length).toBe(20);
  for (const q of long) {
    expect(q.url.length).toBeLessThan(CAPTURE_URL_MAX_CHARS + 100);
    expect(q.url).toMatch(/…\[URL cut: \d+ more characters\]$/);
  }
  const big = requests.filter((q) => q.url.includes('/big-headers-'));
  expect(big.length).toBe(5);
  for (const q of big) {
    const chars = Object.entries(q.requestHeaders).reduce((n, [k, v]) => n + k.length + v.length, 0);
    expect(chars).toBeLessThan(CAPTURE_HEADERS_MAX_CHARS + 200);
    expect(q.requestHeaders['x-big'] ?? q.requestHeaders['X-Big']).toMatch(/…\[header cut: \d+ more characters\]$/);
    if (q.requestBody) {
      expect(q.requestBody.truncated).toBe(true);
      expect(q.requestBody.text.length).toBeLessThanOrEqual(CAPTURE_BODY_MAX_BYTES);
    }
  }
  // The whole list is far below one result's limit.
  expect(JSON.stringify(r.body).length).toBeLessThan(2_000_000);
  // The HAR of the same capture too.
  const har = await h.callTool('browser_export_har', { tabId });
  expect(har.status).toBe(200);

  const other = await h.callTool('browser_get_network_requests', { tabId: goodTab });
  expect(other.status).toBe(200);
  expect(JSON.stringify(other.body)).toContain('second.html?from-good');
  expect((await h.callTool('browser_list_tabs')).status).toBe(200);
  await page.close();
  await good.close();
});

test('hundreds of 120 KB WebSocket frames: the newest few MB are kept, the rest counted as dropped', async () => {
  const echo = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (req, server) => (server.upgrade(req) ? undefined : new Response('no', { status: 400 })),
    websocket: { message: (ws, m) => void ws.send(m) },
  });
  try {
    const page = await h.context.newPage();
    await page.goto(h.fixtureUrl('/pages/index.html?ws-flood'));
    const tabId = await h.tabIdOf(page);
    expect((await h.callTool('browser_enable_network_capture', { tabId })).status).toBe(200);
    const FRAMES = 300;
    const echoed = await page.evaluate(
      async ({ url, frames }) => {
        const ws = new WebSocket(url);
        await new Promise((done, fail) => ((ws.onopen = done), (ws.onerror = fail)));
        let got = 0;
        const all = new Promise<void>((done) => (ws.onmessage = () => ++got === frames && done()));
        for (let i = 0; i < frames; i++) ws.send(`${i}:`.padEnd(120_000, 'w'));
        await all;
        return got;
      },
      { url: `ws://127.0.0.1:${echo.port}/`, frames: FRAMES },
    );
    expect(echoed).toBe(FRAMES);
    const r = await h.callTool('browser_get_websocket_frames', { tabId });
    expect(r.status).toBe(200);
    const res = r.body.result as { count: number; dropped: number; frames: { payload: string }[] };
    const chars = res.frames.reduce((n, f) => n + f.payload.length, 0);
    expect(chars).toBeLessThanOrEqual(CAPTURE_STORED_FRAME_CHARS);
    expect(res.count).toBeGreaterThan(0);
    expect(res.count + res.dropped).toBe(2 * FRAMES);
    // The newest frame is kept.
    expect(res.frames[res.frames.length - 1]!.payload.startsWith(`${FRAMES - 1}:`)).toBe(true);
    expect((await h.callTool('browser_list_tabs')).status).toBe(200);
    await page.close();
  } finally {
    echo.stop(true);
  }
});
