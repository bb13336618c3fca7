/**
 * A 100,000-row table of text, links and fields (300,000 cells), in real Chromium with the real
 * extension. browser_query_elements answers with its limit and the true total (spreading 300,000
 * matches overflowed the stack, which was reported as an invalid selector); browser_snapshot,
 * browser_get_page_html and browser_get_tab_content answer within their size caps with a mark;
 * and another tab answers after.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(180_000);
const ROWS = 100_000;
let h: BrowserHarness;
let page: Page;
let tabId = 0;

beforeAll(async () => {
  // The default dispatch timeout: every call must answer within it.
  h = await startBrowserHarness({});
  page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/pages/index.html?big-table'));
  await page.evaluate((rows) => {
    const t = document.createElement('table');
    const html: string[] = [];
    for (let i = 0; i < rows; i++) html.push(`<tr><td>row ${i}</td><td><a href="#r${i}">link ${i}</a></td><td><input aria-label="field ${i}" value="v${i}"></td></tr>`);
    t.innerHTML = html.join('');
    document.body.append(t);
  }, ROWS);
  // Laid out once, as a page on screen is (its first layout is the page's own cost, not a tool's).
  await page.bringToFront();
  await page.evaluate(() => document.body.getBoundingClientRect().height);
  tabId = await h.tabIdOf(page);
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

test('browser_query_elements: the first matches and the true total', async () => {
  const r = await h.callTool('browser_query_elements', { tabId, selector: 'td', limit: 5 });
  expect(r.status).toBe(200);
  expect(r.body.result.total).toBe(ROWS * 3);
  expect(r.body.result.elements.map((e: { text: string }) => e.text)).toEqual(['row 0', 'link 0', '', 'row 1', 'link 1']);
  const bad = await h.callTool('browser_query_elements', { tabId, selector: 'td[' });
  expect(bad.body.error?.message).toContain('Invalid CSS selector');
});

test('browser_snapshot: answers, cut with a mark', async () => {
  for (const args of [{}, { interactiveOnly: true }]) {
    const r = await h.callTool('browser_snapshot', { tabId, ...args });
    expect(r.status).toBe(200);
    const text: string = r.body.result.snapshot;
    expect(text).toContain('link 0');
    expect(text).toMatch(/\[snapshot cut at \d+ characters/);
    expect(text).not.toContain(`row ${ROWS - 1}`);
  }
});

test('browser_get_page_html and browser_get_tab_content answer within their caps; another tab after', async () => {
  const html = await h.callTool('browser_get_page_html', { tabId });
  expect(html.status).toBe(200);
  expect(html.body.result.truncated).toBe(true);
  const text = await h.callTool('browser_get_tab_content', { tabId });
  expect(text.status).toBe(200);
  expect(text.body.result.truncated).toBe(true);
  const other = await h.context.newPage();
  await other.goto(h.fixtureUrl('/pages/index.html?other'));
  expect((await h.callTool('browser_snapshot', { tabId: await h.tabIdOf(other) })).status).toBe(200);
});
