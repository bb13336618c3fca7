/**
 * Console and network capture in Chromium against test/fixtures/pages/console-network.html: the
 * page logs at every level while loading (before any tool call) and, on demand, makes fetch / XHR
 * requests to the fixture server and talks to a WebSocket echo server on 127.0.0.1 (started here:
 * the fixture server's route hook cannot upgrade connections).
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { CAPTURE_BODY_MAX_BYTES, CONSOLE_ENTRY_MAX_CHARS } from '../../server/limits.ts';
import { extensionHoldsDebugger, startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';
import { capBody, urlMatches } from '../../extension/tools/network-records.ts';
import { formatConsoleArgs } from '../../extension/tools/console.ts';

const BIG_BYTES = CAPTURE_BODY_MAX_BYTES + 50_000;

function apiRoutes(req: Request): Response | Promise<Response> | undefined {
  const { pathname, searchParams } = new URL(req.url);
  const json = (v: unknown, status = 200) => new Response(JSON.stringify(v), { status, headers: { 'content-type': 'application/json', 'x-served-by': 'fixture' } });
  if (pathname === '/api/data') return json({ x: searchParams.get('x'), items: [1, 2, 3] });
  if (pathname === '/api/echo') return req.text().then((body) => new Response(`echo:${body}`, { headers: { 'content-type': 'text/plain' } }));
  if (pathname === '/api/redirect') return new Response(null, { status: 302, headers: { location: '/api/data?x=redirected' } });
  if (pathname === '/api/xhr') return json({ via: 'xhr' });
  if (pathname === '/api/big') return new Response('b'.repeat(BIG_BYTES), { headers: { 'content-type': 'text/plain' } });
  if (pathname.startsWith('/api/')) return json({ error: 'nope' }, 404);
  return undefined;
}

let h: BrowserHarness;
/** The WebSocket echo server. */
const ws = { port: 0, stop: () => {} };
let page: Page;
let tabId = 0;

beforeAll(async () => {
  const echo = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req, server) {
      return server.upgrade(req, { data: undefined }) ? undefined : new Response('websocket only', { status: 426 });
    },
    websocket: {
      message(socket, msg) {
        socket.send(`echo:${msg}`);
      },
    },
  });
  ws.port = echo.port!;
  ws.stop = () => void echo.stop(true);
  h = await startBrowserHarness({ routes: apiRoutes });
  page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/pages/console-network.html'));
  await page.locator('#status', { hasText: 'ready' }).waitFor();
  tabId = await h.tabIdOf(page);
}, 60_000);

afterAll(async () => {
  await h?.stop();
  ws.stop();
});

/**
 * Does the extension hold a debugger session on this tab? (getTargets' `attached` also counts
 * Playwright's own session, so probe instead: a second attach by the extension is refused.)
 */
const debuggerAttached = (id: number): Promise<boolean> => extensionHoldsDebugger(h, id);

async function allow(tool: string) {
  await h.srv.ctx.config.setToolPermission('browser', tool, 'auto');
  h.srv.ctx.catalog.rebuild();
}

type LogEntry = { level: string; type: string; text: string; url: string | null; line: number | null; timestamp: number };

describe('console logs', () => {
  test('browser_get_console_logs returns messages logged before the first call, at every level, and detaches', async () => {
    const r = await waitUntil(async () => {
      const res = await h.callTool('browser_get_console_logs', { tabId });
      // The uncaught error and the failed load land shortly after the page script ran.
      const logs = (res.body?.result?.logs ?? []) as LogEntry[];
      return logs.some((l) => l.type === 'exception') && logs.some((l) => l.type === 'network') ? res : null;
    }, 'console logs with the exception and the failed load');
    expect(r.status).toBe(200);
    const logs = r.body.result.logs as LogEntry[];
    const byText = (t: string) => logs.find((l) => l.text.includes(t));
    expect(byText('debug-at-load')).toMatchObject({ level: 'debug', type: 'debug' });
    expect(byText('log-at-load')).toMatchObject({ level: 'info', type: 'log' });
    expect(byText('log-at-load')!.text).toBe('log-at-load {"a":1,"b":"two"} [1,2]');
    expect(byText('info-at-load')!.text).toBe('info-at-load answer=42');
    expect(byText('warn-at-load')).toMatchObject({ level: 'warning', type: 'warning' });
    const err = byText('error-at-load')!;
    expect(err).toMatchObject({ level: 'error', type: 'error' });
    expect(err.url).toContain('/pages/console-network.html');
    expect(err.line).toBeGreaterThan(1);
    expect(byText('uncaught-at-load')).toMatchObject({ level: 'error', type: 'exception' });
    const failedLoad = logs.find((l) => l.type === 'network')!;
    expect(failedLoad.level).toBe('error');
    expect(failedLoad.url).toContain('/api/missing-at-load');
    // Oldest first.
    const ts = logs.map((l) => l.timestamp);
    expect(ts).toEqual([...ts].sort((a, b) => a - b));
    // Detached once idle (DEBUGGER_IDLE_DETACH_MS after the last call).
    await waitUntil(async () => !(await debuggerAttached(tabId)), 'the idle debugger to detach', 20_000, 500);
  });

  test('level is a minimum, limit keeps the newest, messages logged later show up', async () => {
    const errors = await h.callTool('browser_get_console_logs', { tabId, level: 'warning' });
    const levels = new Set((errors.body.result.logs as LogEntry[]).map((l) => l.level));
    expect([...levels].sort()).toEqual(['error', 'warning']);
    await page.evaluate(() => console.log('logged-later', 7));
    const last = await h.callTool('browser_get_console_logs', { tabId, limit: 1 });
    expect(last.body.result.count).toBe(1);
    expect(last.body.result.logs[0].text).toBe('logged-later 7');
    expect(last.body.result.omitted).toBeGreaterThan(5);
    // A huge message is cut and flagged.
    await page.evaluate((n) => console.log('x'.repeat(n)), CONSOLE_ENTRY_MAX_CHARS * 3);
    const huge = (await h.callTool('browser_get_console_logs', { tabId, limit: 1 })).body.result.logs[0];
    expect(huge.truncated).toBe(true);
    expect(huge.text.length).toBe(CONSOLE_ENTRY_MAX_CHARS + 1);
  });

  test('clear and browser_clear_console_logs empty the list; a bad tab id fails cleanly', async () => {
    const read = await h.callTool('browser_get_console_logs', { tabId, clear: true });
    expect(read.body.result.count).toBeGreaterThan(0);
    expect(read.body.result.cleared).toBe(true);
    expect((await h.callTool('browser_get_console_logs', { tabId })).body.result.count).toBe(0);
    await page.evaluate(() => console.warn('after-clear'));
    const again = await h.callTool('browser_get_console_logs', { tabId });
    expect((again.body.result.logs as LogEntry[]).map((l) => l.text)).toEqual(['after-clear']);
    const cleared = await h.callTool('browser_clear_console_logs', { tabId });
    expect(cleared.status).toBe(200);
    expect(cleared.body.result.cleared).toBe(1);
    expect((await h.callTool('browser_get_console_logs', { tabId })).body.result.count).toBe(0);
    // A reload starts a fresh list: the load-time messages once, nothing from before.
    await page.evaluate(() => console.warn('before-reload'));
    await page.reload();
    await page.locator('#status', { hasText: 'ready' }).waitFor();
    const fresh = (await h.callTool('browser_get_console_logs', { tabId })).body.result.logs as LogEntry[];
    expect(fresh.filter((l) => l.text === 'warn-at-load')).toHaveLength(1);
    expect(fresh.some((l) => l.text === 'before-reload')).toBe(false);
    const gone = await h.callTool('browser_get_console_logs', { tabId: 999999 });
    expect(gone.body.error.code).toBe('tab_closed');
    const bad = await h.callTool('browser_get_console_logs', { tabId, level: 'loud' });
    expect(bad.status).toBe(400);
  });
});

type Req = {
  requestId: string;
  method: string;
  url: string;
  type: string;
  state: string;
  status: number | null;
  mimeType: string | null;
  durationMs: number | null;
  timing: Record<string, number>;
  requestHeaders: Record<string, string>;
  responseHeaders: Record<string, string> | null;
  requestBody?: { text: string; truncated: boolean; size: number } | null;
  responseBody?: { text: string; truncated: boolean; size: number; base64Encoded: boolean } | null;
};

describe('network capture', () => {
  // A failed test must not leave capture on for the next one (disabling is idempotent).
  afterEach(async () => {
    await h.callTool('browser_disable_network_capture', { tabId });
  });

  test('enable_network_capture asks by default; reading before enabling says what to do', async () => {
    const r = await fetch(`${h.url}/tools`, { headers: h.srv.auth });
    const body = (await r.json()) as { tools?: { name: string; permission: string }[] } | { name: string; permission: string }[];
    const list = Array.isArray(body) ? body : (body.tools ?? []);
    expect(list.find((t) => t.name === 'browser_enable_network_capture')?.permission).toBe('ask');
    expect(list.find((t) => t.name === 'browser_get_network_requests')?.permission).toBe('auto');
    const off = await h.callTool('browser_get_network_requests', { tabId });
    expect(off.body.error.code).toBe('not_available');
    expect(off.body.error.message).toContain('browser_enable_network_capture');
  });

  test('records fetch and XHR with headers, status, type, timing and capped bodies; websocket frames; HAR; disable detaches', async () => {
    await allow('browser_enable_network_capture');
    const on = await h.callTool('browser_enable_network_capture', { tabId, captureBodies: true, urlFilter: '/api/' });
    expect(on.status).toBe(200);
    expect(on.body.result).toMatchObject({ capturing: true, alreadyCapturing: false, captureBodies: true, maxRequests: 200, urlFilter: '/api/' });
    expect(await debuggerAttached(tabId)).toBe(true);

    const out = await page.evaluate((port) => (window as unknown as { runRequests(p: number): Promise<Record<string, unknown>> }).runRequests(port), ws.port);
    expect(out).toMatchObject({ get: { x: '1' }, post: 'echo:{"hello":"world"}', xhr: 200, big: BIG_BYTES, notFound: 404, ws: 'echo:ping-from-page' });

    const r = await waitUntil(async () => {
      const res = await h.callTool('browser_get_network_requests', { tabId, includeBodies: true });
      const reqs = (res.body?.result?.requests ?? []) as Req[];
      return reqs.length >= 5 && reqs.every((q) => q.state !== 'pending') ? res : null;
    }, 'five finished requests');
    const reqs = r.body.result.requests as Req[];
    expect(reqs.map((q) => new URL(q.url).pathname)).toEqual(['/api/data', '/api/echo', '/api/xhr', '/api/big', '/api/not-here']);
    const [get, post, xhr, big, missing] = reqs as [Req, Req, Req, Req, Req];
    expect(get).toMatchObject({ method: 'GET', type: 'Fetch', status: 200, mimeType: 'application/json', state: 'complete' });
    expect(get.requestHeaders['x-test']).toBe('yes');
    expect(get.responseHeaders!['x-served-by']).toBe('fixture');
    expect(JSON.parse(get.responseBody!.text)).toEqual({ x: '1', items: [1, 2, 3] });
    expect(get.durationMs).toBeGreaterThanOrEqual(0);
    expect(get.timing.total).toBeGreaterThanOrEqual(0);
    expect(get.timing.wait).toBeGreaterThanOrEqual(0);
    expect(post).toMatchObject({ method: 'POST', status: 200 });
    expect(post.requestBody).toMatchObject({ text: '{"hello":"world"}', truncated: false });
    expect(post.responseBody!.text).toBe('echo:{"hello":"world"}');
    expect(xhr).toMatchObject({ type: 'XHR', status: 200 });
    expect(big.responseBody).toMatchObject({ truncated: true, size: BIG_BYTES });
    expect(big.responseBody!.text.length).toBe(CAPTURE_BODY_MAX_BYTES);
    expect(missing.status).toBe(404);
    // One request in full, by its id; an unknown id is not_found.
    const one = await h.callTool('browser_get_network_request', { tabId, requestId: post.requestId });
    expect(one.body.result).toMatchObject({ requestId: post.requestId, method: 'POST', status: 200, requestBody: { text: '{"hello":"world"}' } });
    expect(one.body.result.responseBody.text).toBe('echo:{"hello":"world"}');
    expect((await h.callTool('browser_get_network_request', { tabId, requestId: 'no-such-id' })).body.error.code).toBe('not_found');
    // The page itself was filtered out by urlFilter; bodies are left out unless asked for.
    const lean = await h.callTool('browser_get_network_requests', { tabId, urlFilter: 'echo' });
    expect(lean.body.result.count).toBe(1);
    expect(lean.body.result.requests[0].responseBody).toBeUndefined();

    const frames = await waitUntil(async () => {
      const res = await h.callTool('browser_get_websocket_frames', { tabId });
      return (res.body?.result?.frames ?? []).length >= 2 ? res.body.result : null;
    }, 'two websocket frames');
    const [sent, received] = frames.frames as { direction: string; payload: string; opcode: number; url: string; timestamp: number | null }[];
    expect(sent).toMatchObject({ direction: 'sent', payload: 'ping-from-page', opcode: 1 });
    expect(received).toMatchObject({ direction: 'received', payload: 'echo:ping-from-page', opcode: 1 });
    expect(sent!.url).toBe(`ws://127.0.0.1:${ws.port}/echo`);
    expect(typeof sent!.timestamp).toBe('number');
    await h.callTool('browser_get_websocket_frames', { tabId, clear: true });
    expect((await h.callTool('browser_get_websocket_frames', { tabId })).body.result.count).toBe(0);

    const har = (await h.callTool('browser_export_har', { tabId })).body.result;
    expect(har.log.version).toBe('1.2');
    expect(har.log.creator.name).toBe('OpenTabs');
    expect(har.log.entries).toHaveLength(5);
    for (const e of har.log.entries) {
      expect(typeof e.startedDateTime).toBe('string');
      expect(Number.isNaN(Date.parse(e.startedDateTime))).toBe(false);
      expect(e.time).toBeGreaterThanOrEqual(0);
      for (const k of ['send', 'wait', 'receive']) expect(e.timings[k]).toBeGreaterThanOrEqual(0);
      expect(Array.isArray(e.request.headers)).toBe(true);
      expect(Array.isArray(e.response.headers)).toBe(true);
      expect(e.request.cookies).toEqual([]);
      expect(typeof e.response.content.mimeType).toBe('string');
    }
    const harGet = har.log.entries[0];
    expect(harGet.request.queryString).toEqual([{ name: 'x', value: '1' }, { name: 'y', value: 'two' }]);
    expect(harGet.response.status).toBe(200);
    expect(JSON.parse(harGet.response.content.text)).toEqual({ x: '1', items: [1, 2, 3] });
    expect(har.log.entries[1].request.postData).toEqual({ mimeType: 'application/json', text: '{"hello":"world"}' });
    expect(har.log.entries[3].response.content.comment).toContain('truncated');

    // clear forgets what was read; capture goes on.
    await h.callTool('browser_get_network_requests', { tabId, clear: true });
    expect((await h.callTool('browser_get_network_requests', { tabId })).body.result.count).toBe(0);

    const off = await h.callTool('browser_disable_network_capture', { tabId });
    expect(off.body.result).toMatchObject({ capturing: false, wasCapturing: true });
    await waitUntil(async () => !(await debuggerAttached(tabId)), 'the idle debugger to detach', 20_000, 500);
    expect((await h.callTool('browser_get_network_requests', { tabId })).body.error.code).toBe('not_available');
    expect((await h.callTool('browser_disable_network_capture', { tabId })).body.result.wasCapturing).toBe(false);
  });

  test('maxRequests keeps the newest; other debugger tools share the capture session', async () => {
    await allow('browser_enable_network_capture');
    const on = await h.callTool('browser_enable_network_capture', { tabId, maxRequests: 2, urlFilter: '/api/*' });
    expect(on.body.result.maxRequests).toBe(2);
    await page.evaluate(async () => {
      for (const n of [1, 2, 3, 4]) await fetch(`/api/data?x=${n}`);
    });
    const r = await waitUntil(async () => {
      const res = await h.callTool('browser_get_network_requests', { tabId });
      const reqs = (res.body?.result?.requests ?? []) as Req[];
      return reqs.some((q) => q.url.endsWith('x=4') && q.state === 'complete') ? res.body.result : null;
    }, 'the fourth request');
    expect((r.requests as Req[]).map((q) => new URL(q.url).searchParams.get('x'))).toEqual(['3', '4']);
    expect(r.dropped).toBe(2);
    // Console reads and clicks attach their own calls to the held session and leave it attached.
    const logs = await h.callTool('browser_get_console_logs', { tabId });
    expect(logs.status).toBe(200);
    expect((await h.callTool('browser_click_element', { tabId, selector: '#status' })).status).toBe(200);
    expect(await debuggerAttached(tabId)).toBe(true);
    // Capture survives a navigation of the tab.
    await page.reload();
    await page.evaluate(() => fetch('/api/data?x=after-reload'));
    await waitUntil(async () => {
      const res = await h.callTool('browser_get_network_requests', { tabId, urlFilter: 'after-reload' });
      return res.body?.result?.requests?.[0]?.state === 'complete';
    }, 'the request made after the reload');
    const again = await h.callTool('browser_enable_network_capture', { tabId, maxRequests: 1 });
    expect(again.body.result).toMatchObject({ alreadyCapturing: true, maxRequests: 1, recorded: 1 });
    await h.callTool('browser_disable_network_capture', { tabId });
    await waitUntil(async () => !(await debuggerAttached(tabId)), 'the idle debugger to detach', 20_000, 500);
  });

  test('a redirect is recorded as its own hop, a refused connection as failed (also in the HAR)', async () => {
    await allow('browser_enable_network_capture');
    await h.callTool('browser_enable_network_capture', { tabId, urlFilter: '/api/' });
    // A port that was just free: connecting to it is refused.
    const gone = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') });
    const deadPort = gone.port!;
    await gone.stop(true);
    const out = await page.evaluate((p) => (window as unknown as { runRedirectAndFailure(p: number): Promise<Record<string, unknown>> }).runRedirectAndFailure(p), deadPort);
    expect(out).toEqual({ redirected: { x: 'redirected', items: [1, 2, 3] }, failed: 'TypeError' });
    const r = await waitUntil(async () => {
      const res = await h.callTool('browser_get_network_requests', { tabId });
      const reqs = (res.body?.result?.requests ?? []) as (Req & { error?: string })[];
      return reqs.length >= 3 && reqs.every((q) => q.state !== 'pending') ? reqs : null;
    }, 'the redirect, its target and the failure');
    const hop = r.find((q) => q.url.endsWith('/api/redirect'))!;
    expect(hop).toMatchObject({ status: 302, state: 'complete' });
    // Header names keep the case they had on the wire.
    expect(Object.entries(hop.responseHeaders!).find(([k]) => k.toLowerCase() === 'location')?.[1]).toBe('/api/data?x=redirected');
    expect(r.find((q) => q.url.endsWith('x=redirected'))).toMatchObject({ status: 200, state: 'complete' });
    const failed = r.find((q) => q.url.includes(`:${deadPort}/api/refused`))!;
    expect(failed.state).toBe('failed');
    expect(failed.status).toBeNull();
    expect(failed.error).toContain('ERR_CONNECTION_REFUSED');
    const har = (await h.callTool('browser_export_har', { tabId })).body.result;
    const harHop = har.log.entries.find((e: { request: { url: string } }) => e.request.url.endsWith('/api/redirect'));
    expect(harHop.response.redirectURL).toBe('/api/data?x=redirected');
    const harFailed = har.log.entries.find((e: { request: { url: string } }) => e.request.url.includes(`:${deadPort}/api/refused`));
    expect(harFailed.response.status).toBe(0);
    expect(harFailed._error).toContain('ERR_CONNECTION_REFUSED');
  });

  test('closing the tab ends the capture and later calls fail with tab_closed', async () => {
    await allow('browser_enable_network_capture');
    const other = await h.context.newPage();
    await other.goto(h.fixtureUrl('/pages/console-network.html?closing'));
    const otherId = await h.tabIdOf(other);
    expect((await h.callTool('browser_enable_network_capture', { tabId: otherId })).status).toBe(200);
    expect(await debuggerAttached(otherId)).toBe(true);
    await other.close();
    for (const tool of ['browser_get_network_requests', 'browser_export_har', 'browser_get_console_logs']) {
      const r = await h.callTool(tool, { tabId: otherId });
      expect(r.body.error.code).toBe('tab_closed');
    }
    // The capture on the closed tab is gone: enabling on the first tab still works normally.
    expect((await h.callTool('browser_enable_network_capture', { tabId })).body.result.alreadyCapturing).toBe(false);
    await h.callTool('browser_disable_network_capture', { tabId });
  });
});

describe('capture helpers (no browser)', () => {
  test('capBody cuts by bytes, keeps whole characters, flags truncation', () => {
    expect(capBody('hello', false, 10)).toEqual({ text: 'hello', base64Encoded: false, size: 5, truncated: false });
    const euro = capBody('€€€€', false, 7); // 3 bytes each
    expect(euro).toEqual({ text: '€€', base64Encoded: false, size: 12, truncated: true });
    const b64 = capBody(Buffer.from('0123456789').toString('base64'), true, 6);
    expect(b64.truncated).toBe(true);
    expect(b64.size).toBe(10);
    expect(Buffer.from(b64.text, 'base64').toString()).toBe('012345');
  });

  test('urlMatches: substring, * wildcards, regex characters taken literally', () => {
    expect(urlMatches('http://a/api/x?y=1', '/api/')).toBe(true);
    expect(urlMatches('http://a/api/x?y=1', '/api/*?y=')).toBe(true);
    expect(urlMatches('http://a/apixx', '/api/')).toBe(false);
    expect(urlMatches('http://a/a.b', 'a(b')).toBe(false);
    expect(urlMatches('http://a/x', null)).toBe(true);
  });

  test('formatConsoleArgs applies %s/%d/%c and joins the rest', () => {
    const str = (value: string) => ({ type: 'string', value });
    expect(formatConsoleArgs([str('%cstyled %s=%d'), str('color:red'), str('n'), { type: 'number', value: 4.7 }, str('tail')])).toBe('styled n=4 tail');
    expect(formatConsoleArgs([{ type: 'object', subtype: 'null', value: null }, { type: 'undefined' }, { type: 'bigint', unserializableValue: '5n' }])).toBe('null undefined 5n');
  });
});
