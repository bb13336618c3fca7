/** browser_get_styles and browser_accessibility_audit in Chromium with the real extension, on a page with known problems. */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Audit</title>
<style>#title { color: rgb(200, 10, 10); font-size: 30px; } .faint { color: #bbb; background: #fff; }</style></head><body>
<h1 id="title">Styled</h1>
<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" width="20" height="20">
<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" width="20" height="20" alt="logo">
<input id="nolabel" placeholder="Search">
<label for="named">Name</label><input id="named">
<button id="empty"></button><button>Save</button>
<p class="faint">Hard to read</p><p>Easy to read</p>
</body></html>`;

let h: BrowserHarness;
let tabId = 0;

beforeAll(async () => {
  h = await startBrowserHarness({ routes: (req) => (new URL(req.url).pathname === '/audit.html' ? new Response(PAGE, { headers: { 'content-type': 'text/html' } }) : undefined) });
  const page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/audit.html'));
  tabId = await h.tabIdOf(page);
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

test('browser_get_styles: chosen properties, or all; a missing element is not_found', async () => {
  const r = await h.callTool('browser_get_styles', { tabId, selector: '#title', properties: ['color', 'font-size'] });
  expect(r.body.result).toEqual({ element: 'h1', count: 2, styles: { color: 'rgb(200, 10, 10)', 'font-size': '30px' } });
  const all = await h.callTool('browser_get_styles', { tabId, selector: '#title' });
  expect(all.body.result.count).toBeGreaterThan(100);
  expect((await h.callTool('browser_get_styles', { tabId, selector: '#nope' })).body.error.code).toBe('not_found');
});

test('browser_accessibility_audit finds exactly the planted problems', async () => {
  const r = await h.callTool('browser_accessibility_audit', { tabId });
  expect(r.status).toBe(200);
  const byRule = r.body.result.byRule as Record<string, number>;
  expect(byRule).toEqual({ 'image-alt': 1, label: 1, 'button-name': 1, 'color-contrast': 1 });
  const findings = r.body.result.findings as { rule: string; selector: string; detail: string }[];
  expect(findings.find((f) => f.rule === 'label')).toMatchObject({ selector: 'input#nolabel' });
  expect(findings.find((f) => f.rule === 'label')!.detail).toContain('placeholder is not a label');
  expect(findings.find((f) => f.rule === 'button-name')).toMatchObject({ selector: 'button#empty' });
  expect(findings.find((f) => f.rule === 'color-contrast')!.detail).toContain('Hard to read');
});
