/**
 * The side panel's activity list says where each call acted: the tab's title and origin. The title
 * is the page's own: a page titled "Bank — https://bank.example" read as if the call had acted on
 * the bank, with the real origin pushed after it, and a U+202E in the title turned the origin that
 * followed around. The origin now comes first, and the title (as the arguments and errors) shows
 * direction-changing and invisible characters as \uXXXX. Real side panel of the real extension.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
const TITLE = 'Online banking \u2014 https://bank.example \u202emoc.live';

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

describe('the activity list', () => {
  test('names the origin first and shows the page title with hidden characters escaped', async () => {
    const panel = await h.openSidePanel();
    const opened = await h.callTool('browser_open_tab', { url: h.fixtureUrl('/spoof') });
    const tabId = opened.body.result.id as number;
    await waitUntil(async () => ((await h.callTool('browser_get_tab_info', { tabId })).body.result?.title === TITLE ? true : null), 'the title');
    expect((await h.callTool('browser_get_tab_content', { tabId })).status).toBe(200);
    const line = await waitUntil(
      () => panel.evaluate(() => [...document.querySelectorAll('[data-testid="activity-done"] .where')].map((e) => e.textContent ?? '').find((t) => t.includes('Online banking')) ?? null),
      'the call in the activity list',
    );
    const origin = new URL(h.fixtureUrl('/')).origin;
    expect(line.startsWith(`${origin} \u2014 `)).toBe(true);
    expect(line).not.toContain('\u202e');
    expect(line).toContain('\\u202emoc.live');
  });
});
