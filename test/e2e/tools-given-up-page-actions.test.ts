/**
 * Page actions given up while the page was busy, in Chromium with the real extension: a call of
 * browser_select_option, browser_scroll, browser_fill_form, browser_click_at, browser_move_mouse,
 * browser_drag, browser_click_element, browser_hover_element, browser_type_text or
 * browser_press_key or browser_upload_file that timed out or was cancelled while the page's main thread was blocked ends
 * at once, and the page has not changed once it is free again (no option chosen, no scroll, no
 * field filled or focused, no click, move or drag) — the caller was told the call failed.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

// Busy for 6 s when asked (longer than the calls' timeout below), then responsive again.
const BUSY = `<!doctype html><title>Busy</title><body style="height:5000px">
<select id="s"><option value="a">Apple</option><option value="b">Banana</option></select>
<input id="i"><input id="c" type="checkbox">
<div id="box" style="width:200px;height:100px;background:#ddd" onmousedown="window.downs = (window.downs || 0) + 1" onmousemove="window.moves = (window.moves || 0) + 1" onclick="window.clicks = (window.clicks || 0) + 1">Box</div>
<div id="drop" style="width:200px;height:100px;background:#bbb">Drop</div>
<div id="far" style="position:absolute;top:4000px">Far</div>
<input id="f" type="file" style="display:none"><button id="pick" onclick="document.getElementById('f').click()">Pick a file</button>
<iframe srcdoc="<select id='fs'><option value='a'>A</option><option value='b'>B</option></select>"></iframe>
<script>
window.changes = 0;
document.addEventListener('change', () => window.changes++, true);
window.busy = () => { const t = Date.now(); while (Date.now() - t < 6000) {} };
</script></body>`;

let h: BrowserHarness;
let n = 0;
let uploads = '';

beforeAll(async () => {
  h = await startBrowserHarness({
    // Short, so a call held up by the busy page is given up quickly.
    server: { limits: { dispatchTimeoutMs: 4_000 } },
    routes: (req) => (new URL(req.url).pathname === '/busy.html' ? new Response(BUSY, { headers: { 'content-type': 'text/html' } }) : undefined),
    permissions: { browser: { tools: { browser_upload_file: 'auto' } } },
  });
  // A folder the user allowed uploads from (`opentabs config set uploadFolders …`), with one file.
  uploads = mkdtempSync(join(tmpdir(), 'opentabs-given-up-upload-'));
  writeFileSync(join(uploads, 'report.txt'), 'report');
  await h.srv.ctx.config.update((d) => {
    d.uploadFolders = [uploads];
  });
}, 60_000);

afterAll(async () => {
  await h?.stop();
  if (uploads) rmSync(uploads, { recursive: true, force: true });
});

async function open(): Promise<{ page: Page; tabId: number }> {
  const page = await h.context.newPage();
  await page.goto(h.fixtureUrl(`/busy.html?n=${++n}`));
  return { page, tabId: await h.tabIdOf(page) };
}

/** Calls the extension lists as running (what the side panel shows). */
async function runningCalls(): Promise<string[]> {
  const sw = await h.serviceWorker();
  return sw.evaluate(() => (globalThis as any).__opentabs.panelState().running.map((c: { tool: string }) => c.tool));
}

/** What the actions would change. */
const state = (page: Page) =>
  page.evaluate(() => ({
    select: (document.getElementById('s') as HTMLSelectElement).value,
    field: (document.getElementById('i') as HTMLInputElement).value,
    checked: (document.getElementById('c') as HTMLInputElement).checked,
    frameSelect: (document.querySelector('iframe')!.contentDocument!.getElementById('fs') as HTMLSelectElement).value,
    scrollY: Math.round(scrollY),
    changes: (window as any).changes,
    downs: (window as any).downs ?? 0,
    moves: (window as any).moves ?? 0,
    clicks: (window as any).clicks ?? 0,
    focused: document.activeElement?.id ?? '',
    files: (document.getElementById('f') as HTMLInputElement).files?.length ?? 0,
  }));

/**
 * Makes the page busy, calls the tool (given up by the server's timeout, or cancelled by the
 * caller when `cancel`), lets the page free itself, and returns its state then.
 */
async function givenUp(page: Page, tabId: number, tool: string, args: Record<string, unknown>, cancel = false) {
  void page.evaluate(() => setTimeout(() => (window as any).busy(), 50));
  await new Promise((r) => setTimeout(r, 300));
  const ac = new AbortController();
  const call = h.callTool(tool, { tabId, ...args }, { signal: ac.signal }).catch((err) => ({ status: 0, body: { error: { code: 'aborted', message: String(err) } } }));
  if (cancel) setTimeout(() => ac.abort(), 1_000);
  const r = await call;
  expect({ tool, status: r.status }).toEqual({ tool, status: cancel ? 0 : 504 });
  await waitUntil(async () => (await runningCalls()).length === 0, `${tool} to end in the extension`, 10_000);
  await page.evaluate(() => 1); // free again: what the busy page held up runs now
  await new Promise((r) => setTimeout(r, 1_000));
  return state(page);
}

test('a select, scroll or form fill given up while the page was busy changes nothing once it is free', async () => {
  const t = await open();
  const before = await state(t.page);
  expect(before).toMatchObject({ select: 'a', field: '', checked: false, frameSelect: 'a', scrollY: 0, changes: 0 });
  // A ref into the page's iframe as well as the top page.
  const snap = await h.callTool('browser_snapshot', { tabId: t.tabId });
  const frameRef = /select = "A" \(A \| B\) \[(f\d+e\d+)\]/.exec(snap.body.result.snapshot)?.[1];
  expect(frameRef).toBeDefined();
  for (const [tool, args, cancel] of [
    ['browser_select_option', { selector: '#s', value: 'b' }, false],
    ['browser_select_option', { selector: '#s', label: 'Banana' }, true],
    ['browser_select_option', { ref: frameRef, value: 'b' }, false],
    ['browser_scroll', { direction: 'down', distance: 1500 }, false],
    ['browser_scroll', { y: 2000 }, true],
    ['browser_scroll', { selector: '#far' }, false],
    ['browser_fill_form', { fields: [{ selector: '#i', value: 'late' }, { selector: '#c', checked: true }, { selector: '#s', value: 'b' }] }, false],
    ['browser_fill_form', { fields: [{ selector: '#i', value: 'late' }] }, true],
  ] as const) {
    expect({ tool, args, after: await givenUp(t.page, t.tabId, tool, args, cancel) }).toEqual({ tool, args, after: before });
  }
  // The tab works normally afterwards.
  expect((await h.callTool('browser_select_option', { tabId: t.tabId, selector: '#s', value: 'b' })).status).toBe(200);
  expect((await h.callTool('browser_fill_form', { tabId: t.tabId, fields: [{ selector: '#i', value: 'now' }] })).status).toBe(200);
  expect((await h.callTool('browser_scroll', { tabId: t.tabId, y: 300 })).status).toBe(200);
  expect(await state(t.page)).toMatchObject({ select: 'b', field: 'now', scrollY: 300 });
  await t.page.close();
}, 120_000);

test('a click, mouse move, drag, typing or key press given up while the page was busy does not land, scroll or focus once it is free', async () => {
  const t = await open();
  const box = await t.page.evaluate(() => {
    const r = document.getElementById('box')!.getBoundingClientRect();
    return { x: Math.round(r.left + r.width / 2), y: Math.round(r.top + r.height / 2) };
  });
  const before = await state(t.page);
  for (const [tool, args] of [
    ['browser_click_at', box],
    ['browser_move_mouse', box],
    ['browser_drag', { sourceSelector: '#box', targetSelector: '#drop' }],
    // Finding the element scrolls it into view, and focuses a field to type into: not either.
    ['browser_click_element', { selector: '#far' }],
    ['browser_hover_element', { selector: '#far' }],
    ['browser_type_text', { selector: '#i', text: 'late' }],
    ['browser_press_key', { selector: '#i', key: 'a' }],
    ['browser_drag', { sourceSelector: '#far', targetSelector: '#drop' }],
    // Through the button that opens a file chooser: no click, so no chooser and no file.
    ['browser_upload_file', { selector: '#pick', paths: [join(uploads, 'report.txt')] }],
  ] as const) {
    expect({ tool, after: await givenUp(t.page, t.tabId, tool, args) }).toEqual({ tool, after: before });
  }
  expect((await h.callTool('browser_click_at', { tabId: t.tabId, ...box })).status).toBe(200);
  expect((await h.callTool('browser_upload_file', { tabId: t.tabId, selector: '#pick', paths: [join(uploads, 'report.txt')] })).status).toBe(200);
  expect(await state(t.page)).toMatchObject({ downs: 1, clicks: 1, files: 1 });
  await t.page.close();
}, 120_000);
