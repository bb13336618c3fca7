/**
 * An about:blank window opened by an extension's page (window.open() from a popup, an options or
 * an export page: other extensions do this; OpenTabs's own pages do not) has that extension's
 * origin while its URL reads about:blank, which the URL policy allows. Through the DevTools
 * protocol, which Chrome does not keep out of it as it keeps chrome.scripting out, a script there
 * read the opener page and fetched the extension's files: for our extension, auth.json, whose
 * secret came back base64-encoded past the scrubber. Here our own side panel page, opened in a tab
 * as the user could, stands for such a page. Performed as an agent would (REST tool calls).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { startBrowserHarness, waitUntil, type BrowserHarness, type ToolCallResult } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
const responses: ToolCallResult[] = [];

async function call(name: string, args: Record<string, unknown> = {}): Promise<ToolCallResult> {
  const r = await h.callTool(name, args);
  responses.push(r);
  return r;
}

beforeAll(async () => {
  h = await startBrowserHarness({ permissions: { browser: { default: 'auto' } } });
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

/** The tab whose about:blank page has `title` (set by whoever opened it). */
async function blankTab(title: string): Promise<number> {
  return waitUntil(async () => {
    const tabs = (await call('browser_list_tabs')).body.result.tabs as { id: number; url: string; title: string }[];
    return tabs.find((t) => t.url === 'about:blank' && t.title === title)?.id ?? null;
  }, `the about:blank tab titled ${title}`);
}

const READ_OPENER_AND_FILES = `
  const out = [];
  try { out.push(opener.document.title); } catch (e) { out.push(String(e)); }
  out.push(await fetch('auth.json').then((r) => r.text()).then((t) => btoa(t), (e) => String(e)));
  return out.join(' | ');
`;

describe('about:blank opened by an extension page', () => {
  test('no DevTools-driven tool runs there, nothing of the extension comes back', async () => {
    const ext = await h.context.newPage();
    try {
      await ext.goto(`chrome-extension://${h.extensionId}/sidepanel.html`);
      await ext.evaluate(() => {
        const w = window.open('about:blank', '_blank');
        if (w) w.document.title = 'opened by an extension page';
      });
      const tabId = await blankTab('opened by an extension page');
      const got: [string, number, string | undefined][] = [];
      // Tools that go to the page through DevTools only.
      for (const [tool, args] of [
        ['browser_execute_script', { code: READ_OPENER_AND_FILES }],
        ['browser_press_key', { key: 'a' }],
        ['browser_enable_network_capture', {}],
        ['browser_get_console_logs', {}],
      ] as const) {
        const r = await call(tool, { tabId, ...args });
        got.push([tool, r.status, r.body?.error?.code]);
      }
      expect(got).toEqual(got.map(([tool]) => [tool, 403, 'page_not_allowed']));
      // Tools that inject a script first (Chrome refuses it there) or check the page with one.
      for (const [tool, args] of [
        ['browser_click_at', { x: 5, y: 5 }],
        ['browser_screenshot_tab', {}],
        ['browser_print_pdf', {}],
        ['browser_get_tab_content', {}],
        ['browser_snapshot', {}],
        ['browser_get_page_html', {}],
      ] as const) {
        expect([tool, (await call(tool, { tabId, ...args })).status]).not.toEqual([tool, 200]);
      }
    } finally {
      await ext.close();
    }
  });

  test('an about:blank window a site opened is still usable', async () => {
    const site = await h.context.newPage();
    try {
      await site.goto(h.fixtureUrl('/pages/index.html'));
      await site.evaluate(() => {
        const w = window.open('about:blank', '_blank');
        if (w) w.document.title = 'opened by a site';
      });
      const tabId = await blankTab('opened by a site');
      const r = await call('browser_execute_script', { tabId, code: 'return window.origin' });
      expect(r.status).toBe(200);
      expect(r.body.result.value).toBe(new URL(h.fixtureUrl('/')).origin);
    } finally {
      await site.close();
    }
  });

  test('no response holds the secret, plain or base64, or the extension page', () => {
    const b64 = Buffer.from(JSON.stringify({ secret: h.srv.secret })).toString('base64').slice(0, 40);
    expect(responses.length).toBeGreaterThan(5);
    for (const r of responses) {
      const text = JSON.stringify(r.body);
      expect(text).not.toContain(h.srv.secret);
      expect(text).not.toContain(b64.slice(8, 32));
      expect(text).not.toContain('OpenTabs |');
    }
  });
});
