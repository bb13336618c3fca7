/**
 * Two browsers with the extension — a work and a personal Chrome profile — connected to one
 * server. Real Chromium, two persistent contexts (two profiles) loading the same installed
 * extension. The server serves one browser at a time, the one that connected last: tools act on
 * its tabs, a tab id of the other browser is not found, the other browser waits (no tug of war)
 * and says why, /health, `opentabs status` and `opentabs doctor` say another browser waits and
 * how to switch, and when the browser in use closes the waiting one takes over.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { CHROMIUM, startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';
import { runCli } from '../integration/cli-support.ts';

let h: BrowserHarness;
let personal: BrowserContext | null = null;
const personalProfile = mkdtempSync(join(tmpdir(), 'opentabs-chrome-personal-'));

beforeAll(async () => {
  h = await startBrowserHarness({});
}, 60_000);

afterAll(async () => {
  await personal?.close().catch(() => {});
  rmSync(personalProfile, { recursive: true, force: true });
  await h?.stop();
});

const tabUrls = async (): Promise<string[]> => ((await h.callTool('browser_list_tabs')).body.result?.tabs ?? []).map((t: { url: string }) => t.url);
const connState = async (ctx: BrowserContext) => {
  const w = ctx.serviceWorkers().find((x) => x.url().startsWith('chrome-extension://'));
  return w ? w.evaluate(() => (globalThis as any).__opentabs.conn.state as { status: string; reason?: string; detail?: string }) : null;
};

test('the browser that connected last is served; the other waits and says so; status and doctor say so', async () => {
  const work = await h.context.newPage();
  await work.goto(h.fixtureUrl('/pages/index.html?work-profile'));
  const workTab = await h.tabIdOf(work);

  const extDir = join(h.configDir, 'extension');
  personal = await chromium.launchPersistentContext(personalProfile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', `--disable-extensions-except=${extDir}`, `--load-extension=${extDir}`, '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  const home = await personal.newPage();
  await home.goto(h.fixtureUrl('/pages/index.html?personal-profile'));

  // The personal browser connected last: tools see its tabs only.
  await waitUntil(async () => (await tabUrls()).some((u) => u.endsWith('?personal-profile')), 'the personal browser to be served', 30_000);
  expect((await tabUrls()).some((u) => u.endsWith('?work-profile'))).toBe(false);
  const stale = await h.callTool('browser_snapshot', { tabId: workTab });
  expect(stale.body.error?.code).toBe('tab_closed');

  // The work browser waits and says why (its side panel shows this state).
  const waiting = await waitUntil(async () => {
    const s = await connState(h.context);
    return s?.reason === 'replaced' ? s : null;
  }, 'the work browser to wait');
  expect(waiting.status).toBe('disconnected');
  expect(waiting.detail).toContain('serves one browser at a time');

  // The server knows another browser waits.
  const health = await h.waitForHealth((x) => x.otherBrowser?.waiting === true, 'health to say another browser waits');
  expect(health.extensionConnected).toBe(true);
  expect(typeof health.otherBrowser.replacedAt).toBe('number');
  const status = await runCli(['status', '--port', String(h.srv.port)], { configDir: h.configDir });
  expect(status.stdout).toContain('another browser with the extension waits');
  const doctor = await runCli(['doctor', '--port', String(h.srv.port)], { configDir: h.configDir });
  expect(doctor.stdout).toContain('another browser with the extension waits');

  // No tug of war: still the personal browser a few polls later.
  for (let i = 0; i < 3; i++) {
    await Bun.sleep(2_000);
    expect((await tabUrls()).some((u) => u.endsWith('?personal-profile'))).toBe(true);
  }

  // The personal browser closes: the work browser takes over; its tab ids work again.
  await personal.close();
  personal = null;
  await waitUntil(async () => (await tabUrls()).some((u) => u.endsWith('?work-profile')), 'the work browser to take over', 30_000);
  const snap = await h.callTool('browser_snapshot', { tabId: workTab });
  expect(snap.status).toBe(200);
  expect(snap.body.result.snapshot).toContain('Fixture home');
  const after = await h.waitForHealth((x) => x.otherBrowser?.waiting === false, 'health to say no browser waits', 30_000);
  expect(after.otherBrowser.replacedAt).toBeNull();
}, 150_000);
