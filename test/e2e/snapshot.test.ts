/**
 * browser_snapshot compacts honestly, in Chromium with the real extension: all visible text is
 * kept (on the test page and on both bench fixture pages; a very long text is elided only with a
 * mark saying how to read the rest), refs go only to what can be acted on and work with a click,
 * labels are not listed beside the fields they name, list items and table rows repeat no text,
 * and over MCP the model gets the Markdown-like text once.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';
import { connectMcp } from '../harness/fake-extension.ts';

const LONG = 'word '.repeat(700).trim(); // 3,499 characters
const MEDIUM = 'This sentence is longer than eighty characters, so an eighty-character cut would have lost its end.';
const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Snap</title></head><body>
<nav aria-label="Side"><ul><li><a href="/a">Alpha link</a></li><li><a href="/b">Beta link</a></li></ul></nav>
<main>
<h2>Report</h2>
<p>${MEDIUM}</p>
<p>Before <a href="/in">inline link</a> after.</p>
<p id="long">${LONG}</p>
<form><label for="email">Email</label><input id="email" value="a@b.c"><label><input type="checkbox" checked> Remember me</label></form>
<table><tr><th>Month</th><th>Total</th></tr><tr><td>Jan</td><td>12</td></tr><tr><td>Feb</td><td><button onclick="window.paid = (window.paid || 0) + 1">Pay</button></td></tr></table>
</main></body></html>`;

/** Every visible text of the page (text nodes in a rendered element, and select options), squashed. */
async function visibleTexts(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const out: string[] = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const t = (n.textContent ?? '').replace(/\s+/g, ' ').trim();
      const parent = n.parentElement!;
      if (t && parent.tagName !== 'OPTION' && parent.checkVisibility({ visibilityProperty: true })) out.push(t);
    }
    for (const o of document.querySelectorAll('select option')) out.push((o.textContent ?? '').replace(/\s+/g, ' ').trim());
    return out;
  });
}

let h: BrowserHarness;
let page: Page;
let tabId = 0;
let snap = '';

beforeAll(async () => {
  h = await startBrowserHarness({ routes: (req) => (new URL(req.url).pathname === '/snap.html' ? new Response(PAGE, { headers: { 'content-type': 'text/html' } }) : undefined) });
  page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/snap.html'));
  tabId = await h.tabIdOf(page);
  const r = await h.callTool('browser_snapshot', { tabId });
  expect(r.status).toBe(200);
  snap = r.body.result.snapshot;
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

test('every visible text is kept; a very long one is elided with a mark that says how to read it', async () => {
  for (const t of await visibleTexts(page)) if (t !== LONG) expect({ t, kept: snap.includes(t) }).toEqual({ t, kept: true });
  expect(snap).toContain(MEDIUM);
  // Inline content shares a line; a link is a Markdown link to its ref.
  expect(snap).toMatch(/^Before \[inline link\]\(e\d+\) after\.$/m);
  const long = snap.split('\n').find((l) => l.includes('word word'))!;
  expect(long).toContain('more characters: browser_get_tab_content');
  const rest = await h.callTool('browser_get_tab_content', { tabId, selector: '#long' });
  expect(JSON.stringify(rest.body.result)).toContain(LONG);
});

test('all visible text of the bench fixture pages is in their snapshots', async () => {
  for (const name of ['bench-app.html', 'bench-article.html']) {
    const p = await h.context.newPage();
    await p.goto(h.fixtureUrl(`/pages/${name}`));
    const id = await h.tabIdOf(p);
    const r = await h.callTool('browser_snapshot', { tabId: id });
    expect(r.status).toBe(200);
    const text: string = r.body.result.snapshot;
    const texts = await visibleTexts(p);
    expect(texts.length).toBeGreaterThan(20);
    for (const t of texts) expect({ name, t, kept: text.includes(t) }).toEqual({ name, t, kept: true });
    await p.close();
  }
});

test('refs only on what can be acted on; no label beside its field; no text twice; a ref clicks', async () => {
  const refMark = /\]\(e\d+\)|\[e\d+\]/;
  for (const line of snap.split('\n')) {
    const actionable = /\[(Alpha link|Beta link|inline link)\]|^ *textbox |^ *\[x\] |button /.test(line);
    expect({ line, ref: refMark.test(line) }).toEqual({ line, ref: actionable });
  }
  expect(snap).toMatch(/^nav Side:\n- \[Alpha link\]\(e\d+\)\n- \[Beta link\]\(e\d+\)\nmain:\n## Report\n/);
  expect(snap).toMatch(/^ *textbox Email = "a@b.c" \[e\d+\]$/m);
  expect(snap).toMatch(/^ *\[x\] Remember me \[e\d+\]$/m);
  expect(snap).not.toContain('label');
  expect(snap.split('Remember me').length - 1).toBe(1);
  expect(snap.split('Email').length - 1).toBe(1);
  // A list item's link text appears once.
  expect(snap.split('Alpha link').length - 1).toBe(1);
  // A row is one line, cells separated by tabs, its controls inline.
  expect(snap).toContain('\nJan\t12\n');
  const ref = /^Feb\tbutton Pay \[(e\d+)\]$/m.exec(snap)?.[1];
  expect(ref).toBeDefined();
  expect((await h.callTool('browser_click_element', { tabId, ref })).status).toBe(200);
  expect(await page.evaluate(() => (window as unknown as { paid?: number }).paid)).toBe(1);
});

test('over MCP the outline is plain text, once (no JSON escaping, no structuredContent copy)', async () => {
  const client = await connectMcp(h.url, h.srv.secret, '/mcp', 'snapshot');
  try {
    const r = (await client.callTool({ name: 'browser_snapshot', arguments: { tabId } })) as { content: { type: string; text: string }[]; structuredContent?: unknown };
    expect(r.structuredContent).toBeUndefined();
    expect(r.content).toHaveLength(1);
    expect(r.content[0]!.text).toStartWith('Page: Snap (');
    expect(r.content[0]!.text).toMatch(/\n## Report\n/);
    expect(r.content[0]!.text).not.toContain('\\n');
    // Smaller than the page's HTML.
    expect(r.content[0]!.text.length).toBeLessThan(PAGE.length);
  } finally {
    await client.close();
  }
});
