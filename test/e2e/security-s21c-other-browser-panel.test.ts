/**
 * Two browsers with the extension (two Chrome profiles) and one server: the server serves the one
 * that connected last. The waiting browser's side panel said so; the panel of the browser in use
 * said nothing, so a user approving calls there did not learn that their other profile's
 * extension is shut out (and which of the two the agent's tools act in). Its header now says
 * another browser waits and how to switch (config.getState `otherBrowserWaiting`, the server's
 * /health otherBrowser.waiting). Real Chromium, two persistent contexts, real side panels.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { CHROMIUM, openRealSidePanel, startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

let h: BrowserHarness;
let personal: BrowserContext | null = null;
const personalProfile = mkdtempSync(join(tmpdir(), 'opentabs-s21c-personal-'));

beforeAll(async () => {
  h = await startBrowserHarness({});
}, 60_000);

afterAll(async () => {
  await personal?.close().catch(() => {});
  rmSync(personalProfile, { recursive: true, force: true });
  await h?.stop();
});

const tabUrls = async (): Promise<string[]> => ((await h.callTool('browser_list_tabs')).body.result?.tabs ?? []).map((t: { url: string }) => t.url);

test("the side panel of the browser in use says another browser waits, and stops saying it once none does", async () => {
  const workPanel = await h.openSidePanel();
  await workPanel.waitForSelector('[data-testid="connection"][data-state="connected"]', { timeout: 15_000 });

  const extDir = join(h.configDir, 'extension');
  personal = await chromium.launchPersistentContext(personalProfile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', `--disable-extensions-except=${extDir}`, `--load-extension=${extDir}`, '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  const home = await personal.newPage();
  await home.goto(h.fixtureUrl('/pages/index.html?personal-profile'));
  await waitUntil(async () => (await tabUrls()).some((u) => u.endsWith('?personal-profile')), 'the personal browser to be served', 30_000);

  // The waiting browser's panel says it was replaced (as before).
  await workPanel.waitForSelector('[data-testid="connection"][data-state="replaced"]', { timeout: 15_000 });
  expect(await workPanel.locator('[data-testid="connection-detail"]').getAttribute('data-other-browser')).toBeNull();

  // The panel of the browser in use says another one waits, and how to switch.
  const panel = await openRealSidePanel(personal, h.extensionId);
  await panel.waitForSelector('[data-testid="connection"][data-state="connected"]', { timeout: 15_000 });
  const line = panel.locator('[data-testid="connection-detail"][data-other-browser="waiting"]');
  await line.waitFor({ timeout: 30_000 });
  expect(await line.isVisible()).toBe(true);
  const text = (await line.textContent()) ?? '';
  expect(text).toContain('Another browser with the extension');
  expect(text).toContain('turn OpenTabs off here');

  // The personal browser closes: the work browser takes over, and no browser waits any more.
  await panel.close().catch(() => {});
  await personal.close();
  personal = null;
  await workPanel.waitForSelector('[data-testid="connection"][data-state="connected"]', { timeout: 30_000 });
  await waitUntil(async () => (await workPanel.locator('[data-testid="connection-detail"]').getAttribute('data-other-browser')) === null, 'the work panel to show no waiting browser', 30_000);
  expect(await workPanel.locator('[data-testid="connection-detail"]').isVisible()).toBe(false);
}, 150_000);
