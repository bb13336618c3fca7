/**
 * The extension reconnects on browser activity rather than waiting for its backoff timer or the
 * 30 s wake alarm: a tab switch after the server came back reconnects a live worker whose retry
 * timer is far away, and a tab switch starts a stopped worker, which connects.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

let h: BrowserHarness;
let a: Page;
let b: Page;

async function stopWorker(): Promise<void> {
  const cdp = await h.context.browser()!.newBrowserCDPSession();
  try {
    const { targetInfos } = (await cdp.send('Target.getTargets')) as { targetInfos: { targetId: string; type: string; url: string }[] };
    const sw = targetInfos.find((t) => t.type === 'service_worker' && t.url.startsWith(`chrome-extension://${h.extensionId}/`));
    if (!sw) throw new Error('no extension service worker target');
    await cdp.send('Target.closeTarget', { targetId: sw.targetId });
  } finally {
    await cdp.detach().catch(() => {});
  }
}

beforeAll(async () => {
  h = await startBrowserHarness({});
  a = await h.context.newPage();
  await a.goto(h.fixtureUrl('/pages/index.html?a'));
  b = await h.context.newPage();
  await b.goto(h.fixtureUrl('/pages/index.html?b'));
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

describe('reconnect on browser activity', () => {
  test('a live worker waiting out a long backoff reconnects on a tab switch', async () => {
    await h.stopServer();
    const worker = await h.serviceWorker();
    await waitUntil(() => worker.evaluate(() => (globalThis as any).__opentabs.conn.state.status === 'disconnected'), 'the extension to see the server go');
    // Push the next retry ten minutes away, as if the backoff were long; only activity can beat it.
    await waitUntil(
      () =>
        worker.evaluate(() => {
          const c = (globalThis as any).__opentabs.conn;
          if (c.connecting) return false;
          c.delay = 600_000;
          c.schedule(600_000);
          c.lastActivityAttempt = 0;
          return true;
        }),
      'no connection attempt in progress',
    );
    await h.startServer();
    // Longer than the normal backoff cap: without activity the extension stays away.
    await Bun.sleep(4_000);
    expect((await h.health())?.extensionConnected).toBe(false);
    await a.bringToFront();
    await h.waitForHealth((x) => x.extensionConnected === true, 'the extension to reconnect after a tab switch', 15_000);
  }, 60_000);

  test('a stopped worker is started by a tab switch and connects', async () => {
    await stopWorker();
    await h.waitForHealth((x) => x.extensionConnected === false, 'the server to see the extension go', 15_000);
    await b.bringToFront();
    await h.waitForHealth((x) => x.extensionConnected === true, 'the restarted worker to reconnect', 15_000);
    const r = await waitUntil(async () => {
      const x = await h.callTool('browser_list_tabs');
      return x.status === 200 ? x : null;
    }, 'a call after the restart');
    expect(JSON.stringify(r.body)).toContain('index.html?b');
  }, 60_000);

  test('activity while connected changes nothing', async () => {
    const worker = await h.serviceWorker();
    const before = await worker.evaluate(() => (globalThis as any).__opentabs.conn.state.since);
    await a.bringToFront();
    await b.goto(h.fixtureUrl('/pages/index.html?c'));
    expect((await h.health())?.extensionConnected).toBe(true);
    expect(await worker.evaluate(() => (globalThis as any).__opentabs.conn.state.since)).toBe(before);
  }, 30_000);
});
