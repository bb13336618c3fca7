/**
 * The server restarts, with its secret rotated in between, while the side panel is open and a call
 * waits for approval. The agent's waiting call ends with server_shutting_down. The card stays while
 * nothing is connected, and answering it then says the answer was not sent (it used to vanish as
 * if answered). Once the extension is back (reading the rotated secret), the card of the old
 * server's call is gone, and a new call's card is answered from the panel as usual.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';
import { rotateSecret } from '../../server/state/secret.ts';

let h: BrowserHarness;
let page: Page;
let tabId = 0;

const pendingInWorker = async (): Promise<string[]> =>
  (await h.serviceWorker()).evaluate(() => (globalThis as any).__opentabs.panelState().pending.map((p: { id: string }) => p.id));

beforeAll(async () => {
  h = await startBrowserHarness({ permissions: { browser: { tools: { browser_get_page_html: 'ask' } } } });
  page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/pages/index.html?restart'));
  tabId = await h.tabIdOf(page);
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

describe('the server restarts while a call waits for approval', () => {
  test('the agent gets server_shutting_down; the stale card cannot be answered into the void; the new server asks afresh', async () => {
    const panel = await h.openSidePanel();
    const waiting = h.callTool('browser_get_page_html', { tabId });
    const card = panel.locator('[data-testid="confirm-browser_get_page_html"]');
    await card.waitFor({ timeout: 20_000 });
    const [oldId] = await waitUntil(async () => ((await pendingInWorker()).length === 1 ? await pendingInWorker() : null), 'the worker to hold the card');

    await h.stopServer();
    const r = await waiting;
    expect(r.body.error.code).toBe('server_shutting_down');
    await waitUntil(async () => (await (await h.serviceWorker()).evaluate(() => (globalThis as any).__opentabs.conn.state.status)) !== 'connected', 'the extension to see the server go');

    // Answered while nothing is connected: the card stays and the panel says the answer was not sent.
    await card.locator('[data-testid="allow"]').click();
    await waitUntil(async () => /answer was not sent/.test((await panel.locator('#config-error').textContent().catch(() => '')) ?? ''), 'the panel to say the answer was not sent');
    expect(await pendingInWorker()).toEqual([oldId!]);

    await rotateSecret(h.configDir);
    await h.startServer();
    await h.waitForHealth((x) => x.extensionConnected === true, 'the extension to reconnect with the rotated secret', 30_000);
    await waitUntil(async () => (await pendingInWorker()).length === 0, 'the old server\'s card to go');
    await waitUntil(async () => (await panel.locator('#config-error').count()) === 0, 'the error line to go');

    const again = h.callTool('browser_get_page_html', { tabId });
    await card.waitFor({ timeout: 20_000 });
    await card.locator('[data-testid="allow"]').click();
    const done = await again;
    expect(done.status).toBe(200);
    expect(done.body.result.content).toContain('<html');
  }, 150_000);
});
