/**
 * Chrome stops MV3 service workers whenever it likes. Here the worker is stopped for real
 * (CDP Target.closeTarget on its target); the next browser event starts it again, and it must
 * reconnect, pick up its state and reuse the adapter already living in the page (a fresh
 * ISOLATED bridge, no second adapter injection).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';
import { writeFixturePlugin } from '../fixtures/ext-plugin/plugin.ts';

let h: BrowserHarness;
let pluginParent = '';
let app: Page;

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
  pluginParent = mkdtempSync(join(tmpdir(), 'opentabs-worker-'));
  h = await startBrowserHarness({ localPlugins: [writeFixturePlugin(pluginParent)], permissions: { fixture: { default: 'auto' } } });
  app = await h.context.newPage();
  await app.goto(h.fixtureUrl('/pages/plugin-app.html'));
  await h.waitForHealth((x) => x.pluginDetails?.find((p: any) => p.name === 'fixture')?.tabState === 'ready', 'fixture tab ready');
}, 60_000);

afterAll(async () => {
  await h?.stop();
  if (pluginParent) rmSync(pluginParent, { recursive: true, force: true });
});

describe('service worker restart', () => {
  test('the worker comes back, reconnects and calls reuse the adapter in the page', async () => {
    expect((await h.callTool('fixture_echo', { text: 'before' })).status).toBe(200);
    await stopWorker();
    await h.waitForHealth((x) => x.extensionConnected === false, 'the server to see the extension go', 15_000);
    // Any extension event starts the worker again; a tab navigation is one.
    const other = await h.context.newPage();
    await other.goto(h.fixtureUrl('/pages/index.html?wake'));
    await h.waitForHealth((x) => x.extensionConnected === true, 'the restarted worker to reconnect', 20_000);
    const r = await waitUntil(async () => {
      const x = await h.callTool('fixture_echo', { text: 'after' });
      return x.status === 200 ? x : null;
    }, 'a plugin call after the restart');
    expect(r.body.result.input).toEqual({ text: 'after' });
    // The adapter from before the restart answered: still exactly one injection in the page.
    expect(await app.evaluate(() => (window as any).__fixtureInjections)).toBe(1);
    await h.waitForHealth((x) => x.pluginDetails?.find((p: any) => p.name === 'fixture')?.tabState === 'ready', 'tab state reported again');
    await other.close();
  }, 60_000);
});
