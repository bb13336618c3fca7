/**
 * The side panel's Record names the tab it records. It showed the page's own title in place of
 * its origin: a page titled "Online banking — https://bank.example" read as if the bank were being
 * recorded (the command the panel prints then drafts a plugin from that tab's traffic), and a
 * U+202E in the title turned the "(tab N)" after it around. The origin now comes first and the
 * title shows direction-changing and invisible characters as \uXXXX, as the activity list does.
 * Real side panel of the real extension.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
const TITLE = 'Online banking \u2014 https://bank.example \u202e)1 bat(';

beforeAll(async () => {
  h = await startBrowserHarness({
    permissions: { browser: { default: 'auto' } },
    routes: (req) => {
      if (new URL(req.url).pathname !== '/spoof') return undefined;
      return new Response(`<!doctype html><title>${TITLE}</title><p>hello</p>`, { headers: { 'content-type': 'text/html; charset=utf-8' } });
    },
  });
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

describe('Record', () => {
  test('names the origin first and shows the page title with hidden characters escaped', async () => {
    const app = await h.context.newPage();
    await app.goto(h.fixtureUrl('/spoof'));
    const panel = await h.openSidePanel();
    await app.bringToFront();
    const tabId = await h.tabIdOf(app);
    await waitUntil(async () => ((await h.callTool('browser_get_tab_info', { tabId })).body.result?.title === TITLE ? true : null), 'the title');
    await panel.click('[data-testid="record-start"]');
    const line = panel.locator(`[data-testid="recording-${tabId}"]`);
    await line.waitFor({ timeout: 10_000 });
    const text = (await line.textContent()) ?? '';
    expect(text).toBe(`● Recording ${new URL(h.fixtureBase).origin} — Online banking \u2014 https://bank.example \\u202e)1 bat( (tab ${tabId})`);
    expect(text).not.toContain('\u202e');
    await panel.click('[data-testid="record-stop"]');
    await panel.waitForSelector('[data-testid="record-start"]', { timeout: 10_000 });
  });
});
