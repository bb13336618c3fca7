/**
 * browser_snapshot compacts honestly, in Chromium with the real extension: all visible text is
 * kept (a very long text is elided only with a mark saying how to read the rest), refs go only
 * to what can be acted on, labels are not listed beside the fields they name, list items and
 * table rows repeat no text, and over MCP the model gets the outline as plain text, once.
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
<table><tr><th>Month</th><th>Total</th></tr><tr><td>Jan</td><td>12</td></tr><tr><td>Feb</td><td><button>Pay</button></td></tr></table>
</main></body></html>`;

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
  expect(snap).toContain(MEDIUM);
  expect(snap).toContain('- text "Before"');
  expect(snap).toContain('- link "inline link" [ref=');
  expect(snap).toContain('- text "after."');
  const long = snap.split('\n').find((l) => l.includes('word word'))!;
  expect(long).toContain('more characters: browser_get_tab_content');
  const rest = await h.callTool('browser_get_tab_content', { tabId, selector: '#long' });
  expect(JSON.stringify(rest.body.result)).toContain(LONG);
});

test('refs only on what can be acted on; no label beside its field; no text twice', async () => {
  for (const line of snap.split('\n')) {
    const actionable = /- (link|button|textbox|checkbox) /.test(line);
    expect({ line, ref: /\[ref=e\d+\]/.test(line) }).toEqual({ line, ref: actionable });
  }
  expect(snap).toMatch(/- textbox "Email" value="a@b.c" \[ref=e\d+\]/);
  expect(snap).toMatch(/- checkbox "Remember me" \[checked\] \[ref=e\d+\]/);
  expect(snap).not.toContain('- label');
  expect(snap.split('Remember me').length - 1).toBe(1);
  expect(snap.split('"Email"').length - 1).toBe(1);
  // A list item's link text appears once.
  expect(snap.split('Alpha link').length - 1).toBe(1);
  // A row of plain cells is one line; a row with a control lists the control.
  expect(snap).toContain('- row "Jan | 12"');
  expect(snap).toMatch(/- button "Pay" \[ref=e\d+\]/);
});

test('over MCP the outline is plain text, once (no JSON escaping, no structuredContent copy)', async () => {
  const client = await connectMcp(h.url, h.srv.secret, '/mcp', 'snapshot');
  try {
    const r = (await client.callTool({ name: 'browser_snapshot', arguments: { tabId } })) as { content: { type: string; text: string }[]; structuredContent?: unknown };
    expect(r.structuredContent).toBeUndefined();
    expect(r.content).toHaveLength(1);
    expect(r.content[0]!.text).toStartWith('Page: Snap (');
    expect(r.content[0]!.text).toMatch(/\n *- heading "Report" \[level=2\]\n/);
    expect(r.content[0]!.text).not.toContain('\\n');
    // Smaller than the page's HTML.
    expect(r.content[0]!.text.length).toBeLessThan(PAGE.length);
  } finally {
    await client.close();
  }
});
