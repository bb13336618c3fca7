/**
 * Attacks on plugin calls from web pages, performed in real Chromium with the real extension and
 * the fixture plugin (urlPatterns http://127.0.0.1/pages/plugin-app*). Each test fails if the
 * attack succeeds:
 *   - a page on another origin opens the plugin's app in a new tab and navigates that tab to its
 *     own page while it is still loading: the agent's call must not reach the attacker's document;
 *   - a bridge Port opened from a page that is not the plugin's is refused, and what that page
 *     sends (logs, a result for a running call) is routed nowhere;
 *   - a plugin page that moves itself (history.pushState) to a URL outside the patterns gets no call;
 *   - a matching page sends an 11 MB log line, an 11 MB progress message, an 11 MB result and a
 *     burst of large lines: the extension's connection stays up (same connection, a call running
 *     in another tab finishes), the result is a result_too_large error, the lines arrive cut with
 *     a mark;
 *   - a page sprays log lines (and progress, and a result) with guessed dispatch ids and with the
 *     real ids of two MCP sessions' running calls: nothing of it reaches either session.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';
import { writeFixturePlugin } from '../fixtures/ext-plugin/plugin.ts';
import { connectMcp } from '../harness/fake-extension.ts';
import { PLUGIN_LOG_DATA_MAX_CHARS, PLUGIN_LOG_MESSAGE_MAX_CHARS, PLUGIN_RESULT_MAX_BYTES } from '../../server/limits.ts';
import { TRUNCATION_MARK } from '../../server/protocol/page-channel.ts';

const SECRET_INPUT = 'SECRET-INPUT-7f3a';
const SECRET_SETTING = 'SECRET-SETTING-91c2';
const html = (body: string) => new Response(body, { headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' } });

/** The attacker's opener: opens a window and later navigates it (allowed for the window's opener, cross-origin too). */
const OPENER = `<!doctype html><html><head><meta charset="utf-8"><title>opener</title><script>
window.openApp = (url) => { window.popup = window.open(url, 'app'); return !!window.popup; };
window.goEvil = (url) => { window.popup.location.href = url; };
</script></head><body>opener</body></html>`;

/** The attacker's page: records anything that reaches it through any channel a bridge or adapter uses, and looks "signed in" to the fixture adapter. */
const EVIL = `<!doctype html><html><head><meta charset="utf-8"><title>evil</title><script>
window.__got = [];
document.addEventListener('opentabs:bridge-to-page', (e) => window.__got.push('event ' + String(e.detail)));
window.addEventListener('message', (e) => window.__got.push('message ' + JSON.stringify(e.data)));
</script></head><body data-user="mallory">evil</body></html>`;

/** The fixture app, sent in two parts: the document commits, but stays loading until released. */
const SLOW_HEAD = `<!doctype html><html><head><meta charset="utf-8"><title>Fixture Plugin App</title></head><body data-user="ada"><h1>Plugin app</h1>${' '.repeat(4096)}`;
const SLOW_TAIL = '<p>loaded</p></body></html>';

let h: BrowserHarness;
let pluginParent = '';
const releaseSlow: (() => void)[] = [];
let slowRequests = 0;

beforeAll(async () => {
  pluginParent = mkdtempSync(join(tmpdir(), 'opentabs-sec-plugin-'));
  h = await startBrowserHarness({
    localPlugins: [writeFixturePlugin(pluginParent)],
    permissions: { fixture: { default: 'auto' } },
    pluginSettings: { fixture: { greeting: SECRET_SETTING } },
    routes: (req) => {
      const { pathname } = new URL(req.url);
      if (pathname === '/sec/opener.html') return html(OPENER);
      if (pathname === '/sec/evil.html') return html(EVIL);
      if (pathname !== '/pages/plugin-app-slow.html') return undefined;
      slowRequests++;
      const enc = new TextEncoder();
      const stream = new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(enc.encode(SLOW_HEAD));
          releaseSlow.push(() => {
            try {
              c.enqueue(enc.encode(SLOW_TAIL));
              c.close();
            } catch {}
          });
        },
      });
      return new Response(stream, { headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' } });
    },
  });
}, 60_000);

afterAll(async () => {
  for (const r of releaseSlow) r();
  await h?.stop();
  if (pluginParent) rmSync(pluginParent, { recursive: true, force: true });
});

const fixtureTabs = async () => ((await h.health())?.pluginDetails ?? []).find((p: { name: string }) => p.name === 'fixture')?.tabs ?? [];
const fixtureLogs = () => h.srv.ctx.plugins.logs('fixture');
/** The extension's current WebSocket on the server (a new one means it was dropped and reconnected). */
const connId = () => (h.srv.ctx.hub as unknown as { active: { data: { connId: number } } | null }).active?.data.connId;

async function closeAll(pages: Page[]): Promise<void> {
  for (const p of pages) await p.close().catch(() => {});
  await waitUntil(async () => (await fixtureTabs()).length === 0, 'no fixture tab left open');
}

/** Record every call message the bridge hands to this page (what an adapter, or the page, sees). */
async function recordCalls(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = window as unknown as { __calls: unknown[] };
    w.__calls = [];
    document.addEventListener('opentabs:bridge-to-page', (e) => w.__calls.push(JSON.parse(String((e as CustomEvent).detail))));
  });
}

async function callIdIn(page: Page, ms: number): Promise<string> {
  return waitUntil(
    () => page.evaluate((ms) => ((window as unknown as { __calls: any[] }).__calls.find((c) => c.type === 'call' && c.input?.ms === ms) ?? null)?.id ?? null, ms),
    `the call with ms=${ms} to reach the page`,
  );
}

/** What any script in a page can do: send a message to the bridge. */
async function pageSend(page: Page, msgs: unknown[]): Promise<void> {
  await page.evaluate((msgs) => {
    for (const m of msgs) document.dispatchEvent(new CustomEvent('opentabs:page-to-bridge', { detail: JSON.stringify(m) }));
  }, msgs);
}

async function readyApp(path: string): Promise<{ page: Page; tabId: number }> {
  const page = await h.context.newPage();
  await page.goto(h.fixtureUrl(path));
  await waitUntil(async () => (await fixtureTabs()).some((t: { url: string; ready: boolean }) => t.url === page.url() && t.ready), `${path} ready`);
  return { page, tabId: await h.tabIdOf(page) };
}

describe('plugin calls stay on the plugin\'s own pages', () => {
  test('a tab navigated to a foreign origin while loading never receives the call, its input or the settings', async () => {
    const port = new URL(h.fixtureBase).port;
    const foreign = `http://localhost:${port}`;
    const slowUrl = h.fixtureUrl('/pages/plugin-app-slow.html');
    const opener = await h.context.newPage();
    const pages: Page[] = [opener];
    try {
      await opener.goto(`${foreign}/sec/opener.html`);
      const popupEvent = h.context.waitForEvent('page', { timeout: 15_000 });
      expect(await opener.evaluate((u) => (window as any).openApp(u), slowUrl)).toBe(true);
      const popup = await popupEvent;
      pages.push(popup);
      // The app's document committed and is still loading: the extension lists it as the plugin's tab.
      await waitUntil(async () => (await fixtureTabs()).some((t: { url: string }) => t.url === slowUrl), 'the loading app tab to be a fixture tab');
      expect(slowRequests).toBe(1);

      // The agent calls without a tabId: the only candidate is the loading tab.
      const call = h.callTool('fixture_echo', { text: SECRET_INPUT });
      await waitUntil(() => h.srv.ctx.hub.inFlightDispatches === 1, 'the dispatch to be sent to the extension');
      // One more round trip through the extension, so the dispatch is waiting for the tab to load.
      expect((await h.callTool('browser_list_tabs')).status).toBe(200);

      // While it loads, the attacker navigates the tab to its own page.
      await opener.evaluate((u) => (window as any).goEvil(u), `${foreign}/sec/evil.html`);
      const r = await call;
      expect(r.status).toBe(409);
      expect(r.body.error.code).toBe('no_matching_tab');
      expect(r.body.error.message).toContain('/sec/evil.html');

      await popup.waitForURL(`${foreign}/sec/evil.html`, { timeout: 15_000 });
      await popup.waitForLoadState('load');
      // A later call has nowhere to go either (and flushes anything still in flight to the page).
      expect((await h.callTool('fixture_echo', { text: SECRET_INPUT })).body.error?.code).toBe('no_matching_tab');
      const seen = await popup.evaluate(() => ({
        got: (window as any).__got as string[],
        adapters: Object.keys((window as any).__opentabs_adapters__ ?? {}),
        injections: (window as any).__fixtureInjections ?? 0,
      }));
      expect(seen).toEqual({ got: [], adapters: [], injections: 0 });
      expect(JSON.stringify(seen)).not.toContain('SECRET');
    } finally {
      for (const r of releaseSlow.splice(0)) r();
      await closeAll(pages);
    }
  });

  test('a bridge Port from a page that is not the plugin\'s is refused, and what it sends goes nowhere', async () => {
    const app = await readyApp('/pages/plugin-app.html');
    const other = await h.context.newPage();
    const pages = [app.page, other];
    try {
      await recordCalls(app.page);
      const running = h.callTool('fixture_wait', { ms: 600_001 }, { tabId: app.tabId });
      const id = await callIdIn(app.page, 600_001);

      await other.goto(h.fixtureUrl('/pages/index.html'));
      const otherTab = await h.tabIdOf(other);
      // Put the real bridge into the non-matching page, as a bug or a compromised path could.
      const worker = await h.serviceWorker();
      await worker.evaluate(async (tabId) => {
        await chrome.scripting.executeScript({ target: { tabId }, files: ['tab-bridge.js'] });
      }, otherTab);
      const bridgeAlive = () =>
        worker.evaluate(async (tabId) => {
          const [r] = await chrome.scripting.executeScript({ target: { tabId }, func: () => (globalThis as any).__opentabs_bridge__?.alive ?? null });
          return r?.result as boolean | null;
        }, otherTab);
      // The worker refuses the Port (the page matches no plugin): the bridge there is dead.
      await waitUntil(async () => (await bridgeAlive()) === false, 'the foreign bridge Port to be refused');

      await pageSend(other, [
        { type: 'log', plugin: 'fixture', id, level: 'error', message: 'FORGED-LOG-FOR-CALL', ts: Date.now() },
        { type: 'log', plugin: 'fixture', level: 'error', message: 'FORGED-LOG-PLAIN', ts: Date.now() },
        { type: 'progress', id, plugin: 'fixture', progress: 1, total: 1, message: 'FORGED-PROGRESS' },
        { type: 'result', id, plugin: 'fixture', ok: true, value: { forged: true } },
      ]);
      // The genuine page's own line and its own result still get through.
      await pageSend(app.page, [{ type: 'log', plugin: 'fixture', level: 'info', message: 'GENUINE-BARRIER', ts: Date.now() }]);
      await waitUntil(() => fixtureLogs().some((l) => l.message === 'GENUINE-BARRIER'), 'the genuine line in the server buffer');
      await pageSend(app.page, [{ type: 'result', id, plugin: 'fixture', ok: true, value: { genuine: true } }]);
      const r = await running;
      expect(r.status).toBe(200);
      expect(r.body.result).toEqual({ genuine: true });
      expect(fixtureLogs().filter((l) => l.message.startsWith('FORGED'))).toEqual([]);
    } finally {
      await closeAll(pages);
    }
  });
  test('a plugin page that moves itself off the plugin\'s patterns (same document) gets no call', async () => {
    const app = await readyApp('/pages/plugin-app.html');
    try {
      await recordCalls(app.page);
      expect((await h.callTool('fixture_echo', { text: 'before' })).status).toBe(200);
      await app.page.evaluate(() => history.pushState({}, '', '/pages/not-the-app.html'));
      await waitUntil(async () => (await fixtureTabs()).length === 0, 'the moved page to stop being a fixture tab');
      const auto = await h.callTool('fixture_echo', { text: SECRET_INPUT });
      expect(auto.status).toBe(409);
      expect(auto.body.error.code).toBe('no_matching_tab');
      const pinned = await h.callTool('fixture_echo', { text: SECRET_INPUT }, { tabId: app.tabId });
      expect(pinned.status).toBe(409);
      expect(pinned.body.error.code).toBe('tab_mismatch');
      const calls = await app.page.evaluate(() => (window as any).__calls.map((c: { input: unknown }) => c.input));
      expect(calls).toEqual([{ text: 'before' }]);
    } finally {
      await closeAll([app.page]);
    }
  });
});

describe('a page cannot knock the extension offline', () => {
  test('11 MB log, progress and result, and a burst of large lines: same connection, capped, result_too_large', async () => {
    const a = await readyApp('/pages/plugin-app.html');
    const b = await readyApp('/pages/plugin-app-other.html');
    const pages = [a.page, b.page];
    try {
      const conn = connId();
      expect(conn).toBeDefined();
      const replaced = h.srv.ctx.hub.stats.replacedConnections;
      await recordCalls(a.page);
      await recordCalls(b.page);
      // A call running in another tab must survive all of it.
      const survivor = h.callTool('fixture_wait', { ms: 600_002 }, { tabId: b.tabId });
      const survivorId = await callIdIn(b.page, 600_002);
      const tooBig = h.callTool('fixture_wait', { ms: 600_003 }, { tabId: a.tabId });
      const tooBigId = await callIdIn(a.page, 600_003);

      const elevenMb = 11 * 1024 * 1024;
      await a.page.evaluate((n) => {
        const send = (m: unknown) => document.dispatchEvent(new CustomEvent('opentabs:page-to-bridge', { detail: JSON.stringify(m) }));
        send({ type: 'log', plugin: 'fixture', level: 'warning', message: 'BIGLOG' + 'x'.repeat(n), ts: Date.now() });
        send({ type: 'log', plugin: 'fixture', level: 'warning', message: 'BIGDATA', data: { blob: 'y'.repeat(n) }, ts: Date.now() });
        // 150 lines within the per-line limits, of three-byte characters: about 111 KB each, so
        // 100 of them (one batch by count) would be a frame over the server's limit.
        const text = '€'.repeat(7_000);
        const line = '€'.repeat(30_000);
        for (let i = 0; i < 150; i++) send({ type: 'log', plugin: 'fixture', level: 'info', message: `BURST ${i} ${text}`, data: { line }, ts: Date.now() });
      }, elevenMb);
      await b.page.evaluate(
        ({ n, id }) =>
          document.dispatchEvent(
            new CustomEvent('opentabs:page-to-bridge', { detail: JSON.stringify({ type: 'progress', id, plugin: 'fixture', progress: 0.5, total: 1, message: 'P'.repeat(n) }) }),
          ),
        { n: elevenMb, id: survivorId },
      );
      await a.page.evaluate(
        ({ n, id }) =>
          document.dispatchEvent(new CustomEvent('opentabs:page-to-bridge', { detail: JSON.stringify({ type: 'result', id, plugin: 'fixture', ok: true, value: { blob: 'z'.repeat(n) } }) })),
        { n: elevenMb, id: tooBigId },
      );

      const r = await tooBig;
      expect(r.status).toBe(502);
      expect(r.body.error.code).toBe('result_too_large');
      expect(r.body.error.message).toContain(String(PLUGIN_RESULT_MAX_BYTES));
      expect(r.body.error.message).toMatch(/is 11\d{6} bytes/);

      await waitUntil(() => fixtureLogs().filter((l) => l.message.startsWith('BURST')).length === 150, 'all 150 burst lines in the server buffer', 30_000);
      const logs = fixtureLogs();
      const bigLog = logs.find((l) => l.message.startsWith('BIGLOG'))!;
      expect(bigLog).toBeDefined();
      expect(bigLog.message.length).toBeLessThanOrEqual(PLUGIN_LOG_MESSAGE_MAX_CHARS);
      expect(bigLog.message).toContain(TRUNCATION_MARK);
      const bigData = logs.find((l) => l.message === 'BIGDATA')!;
      expect(typeof bigData.data).toBe('string');
      expect(String(bigData.data).length).toBeLessThanOrEqual(PLUGIN_LOG_DATA_MAX_CHARS);
      expect(String(bigData.data)).toContain(TRUNCATION_MARK);
      // The burst lines were within the per-line limits: they arrive whole.
      const last = logs.find((l) => l.message.startsWith('BURST 149 '))!;
      expect(last.message).toBe(`BURST 149 ${'€'.repeat(7_000)}`);
      expect((last.data as { line: string }).line.length).toBe(30_000);

      // The survivor is still running on the same connection; its own page finishes it.
      await pageSend(b.page, [{ type: 'result', id: survivorId, plugin: 'fixture', ok: true, value: { survived: true } }]);
      const s = await survivor;
      expect(s.status).toBe(200);
      expect(s.body.result).toEqual({ survived: true });
      expect(connId()).toBe(conn);
      expect(h.srv.ctx.hub.stats.replacedConnections).toBe(replaced);
      expect((await h.health()).extensionConnected).toBe(true);
    } finally {
      await closeAll(pages);
    }
  }, 120_000);
});

describe('a page cannot write into other calls\' MCP streams', () => {
  test('log lines, progress and a result sprayed with guessed and stolen dispatch ids reach no session', async () => {
    const app = await readyApp('/pages/plugin-app.html');
    // Another page of the same plugin (its adapter is injected, not ready): the sprayer.
    const sprayer = await h.context.newPage();
    const pages = [app.page, sprayer];
    let sa: Client | undefined;
    let sb: Client | undefined;
    try {
      await sprayer.goto(h.fixtureUrl('/pages/plugin-app-logged-out.html'));
      await waitUntil(async () => (await fixtureTabs()).some((t: { url: string }) => t.url === sprayer.url()), 'the sprayer to be a fixture tab');
      await waitUntil(() => h.srv.ctx.hub.allTabStates().get('fixture')?.tabs.length === 2, 'both fixture tabs known to the server');
      await recordCalls(app.page);

      sa = await connectMcp(h.url, h.srv.secret, '/mcp', 'session-a');
      sb = await connectMcp(h.url, h.srv.secret, '/mcp', 'session-b');
      const got: Record<'a' | 'b', string[]> = { a: [], b: [] };
      for (const [k, c] of [['a', sa], ['b', sb]] as const) {
        await c.setLoggingLevel('debug');
        c.setNotificationHandler(LoggingMessageNotificationSchema, async (n) => void got[k].push(JSON.stringify(n.params)));
      }
      // Both sessions' GET streams are open: a plain line of the sprayer's plugin reaches both.
      await waitUntil(async () => {
        await pageSend(sprayer, [{ type: 'log', plugin: 'fixture', level: 'info', message: 'STREAMS-OPEN', ts: Date.now() }]);
        return got.a.some((x) => x.includes('STREAMS-OPEN')) && got.b.some((x) => x.includes('STREAMS-OPEN'));
      }, 'both sessions to receive a broadcast line', 15_000, 300);

      const progressA: unknown[] = [];
      const callA = sa.callTool({ name: 'fixture_wait', arguments: { ms: 600_004 } }, undefined, { onprogress: (p) => void progressA.push(p), timeout: 120_000 });
      const callB = sb.callTool({ name: 'fixture_wait', arguments: { ms: 600_005 } }, undefined, { onprogress: () => {}, timeout: 120_000 });
      const idA = await callIdIn(app.page, 600_004);
      const idB = await callIdIn(app.page, 600_005);
      await waitUntil(() => progressA.length > 0, 'the call in session A to report progress');

      // The spray: the old sequential ids d1…d5000 and the real ids of both calls.
      await sprayer.evaluate(
        ({ ids }) => {
          const send = (m: unknown) => document.dispatchEvent(new CustomEvent('opentabs:page-to-bridge', { detail: JSON.stringify(m) }));
          for (const id of ids) {
            send({ type: 'log', plugin: 'fixture', id, level: 'error', message: `INJECTED into ${id}`, ts: Date.now() });
            send({ type: 'log', plugin: 'other-plugin', id, level: 'error', message: `INJECTED other plugin ${id}`, ts: Date.now() });
          }
          for (const id of ids.slice(-2)) {
            send({ type: 'progress', id, plugin: 'fixture', progress: 0.9, total: 1, message: `INJECTED progress ${id}` });
            send({ type: 'result', id, plugin: 'fixture', ok: true, value: { injected: id } });
          }
        },
        { ids: [...Array.from({ length: 5000 }, (_, i) => `d${i + 1}`), idA, idB] },
      );
      // A plain line sent after the spray over the same bridge: once both sessions have it, the
      // spray before it has been handled. Sent again until it arrives: the page's log lines are
      // rate-limited, and right after 10,000 of them one line may be dropped as over the limit.
      await waitUntil(async () => {
        await pageSend(sprayer, [{ type: 'log', plugin: 'fixture', level: 'info', message: 'AFTER-SPRAY', ts: Date.now() }]);
        return got.a.some((x) => x.includes('AFTER-SPRAY')) && got.b.some((x) => x.includes('AFTER-SPRAY'));
      }, 'the line after the spray in both sessions', 30_000, 500);

      // The call's own page still logs into its own call, and only there.
      await pageSend(app.page, [{ type: 'log', plugin: 'fixture', id: idA, level: 'info', message: 'LEGIT-FOR-A', ts: Date.now() }]);
      await waitUntil(() => got.a.some((x) => x.includes('LEGIT-FOR-A')), 'the genuine line in session A');
      await pageSend(app.page, [
        { type: 'result', id: idA, plugin: 'fixture', ok: true, value: { from: 'app-a' } },
        { type: 'result', id: idB, plugin: 'fixture', ok: true, value: { from: 'app-b' } },
      ]);
      const [ra, rb] = (await Promise.all([callA, callB])) as { isError?: boolean; structuredContent?: unknown; content: { text?: string }[] }[];
      expect(ra.isError).toBeFalsy();
      expect(JSON.stringify(ra)).toContain('app-a');
      expect(JSON.stringify(rb)).toContain('app-b');
      expect(JSON.stringify([ra, rb])).not.toContain('injected');
      expect(progressA.map((p) => JSON.stringify(p)).join()).not.toContain('INJECTED');

      expect(got.a.filter((x) => x.includes('INJECTED'))).toEqual([]);
      expect(got.b.filter((x) => x.includes('INJECTED'))).toEqual([]);
      expect(got.b.filter((x) => x.includes('LEGIT-FOR-A'))).toEqual([]);
      // The extension dropped them: not even the plugin's log buffer has them.
      expect(h.srv.ctx.plugins.logs().filter((l) => l.message.includes('INJECTED'))).toEqual([]);
      // And the ids are not guessable in the first place.
      expect(idA).toMatch(/^d[0-9a-f]{32}$/);
      expect(idB).toMatch(/^d[0-9a-f]{32}$/);
      expect(idA).not.toBe(idB);
    } finally {
      await sa?.close().catch(() => {});
      await sb?.close().catch(() => {});
      await closeAll(pages);
    }
  }, 120_000);
});
