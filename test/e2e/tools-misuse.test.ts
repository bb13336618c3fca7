/**
 * Built-in tools that were easy to misuse, in Chromium with the real extension: typing replaces a
 * field's value unless asked to append; contradictory arguments are refused; browser_execute_script
 * takes an expression, a function or a body with `return`, and returns DOM elements usefully;
 * screenshots back to back all succeed; debugger-driven actions keep one attachment per tab
 * between calls instead of attaching (and flashing Chrome's debugging bar) each time.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { extensionHoldsDebugger, startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Misuse</title></head><body>
<h1 id="title" class="big main">Hello</h1>
<input id="name" value="old">
<textarea id="notes">first</textarea>
<div id="rich" contenteditable="true">old <b>rich</b> text</div>
<input id="watched" value="before" oninput="(window.seen = window.seen || []).push(this.value)">
<button id="b" onclick="window.clicks = (window.clicks || 0) + 1">B</button>
<ul><li>one</li><li>two</li></ul>
</body></html>`;

let h: BrowserHarness;
let page: Page;
let tabId = 0;

beforeAll(async () => {
  h = await startBrowserHarness({
    permissions: { browser: { tools: { browser_execute_script: 'auto' } } },
    routes: (req) => (new URL(req.url).pathname === '/misuse.html' ? new Response(PAGE, { headers: { 'content-type': 'text/html' } }) : undefined),
  });
  page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/misuse.html'));
  tabId = await h.tabIdOf(page);
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

describe('browser_type_text', () => {
  test('replaces the value by default, appends when asked', async () => {
    const r = await h.callTool('browser_type_text', { tabId, selector: '#name', text: 'new' });
    expect(r.status).toBe(200);
    expect(r.body.result.replaced).toBe(true);
    expect(await page.inputValue('#name')).toBe('new');
    await h.callTool('browser_type_text', { tabId, selector: '#name', text: ' and more', append: true });
    expect(await page.inputValue('#name')).toBe('new and more');
    await h.callTool('browser_type_text', { tabId, selector: '#notes', text: 'second' });
    expect(await page.inputValue('#notes')).toBe('second');
  });

  test('replacing works in a contenteditable, an empty text empties the field, and the page sees the final value', async () => {
    await h.callTool('browser_type_text', { tabId, selector: '#rich', text: 'plain now' });
    expect(await page.evaluate(() => document.getElementById('rich')!.textContent)).toBe('plain now');
    const r = await h.callTool('browser_type_text', { tabId, selector: '#watched', text: 'after' });
    expect(r.status).toBe(200);
    expect(await page.inputValue('#watched')).toBe('after');
    // A framework listening to input events never sees a mix of the old and the new value.
    const seen = (await page.evaluate(() => (window as unknown as { seen: string[] }).seen)) ?? [];
    expect(seen.at(-1)).toBe('after');
    expect(seen.some((v) => v.includes('before'))).toBe(false);
    await h.callTool('browser_type_text', { tabId, selector: '#watched', text: '' });
    expect(await page.inputValue('#watched')).toBe('');
  });

  test('contradictory arguments are refused with what is wrong', async () => {
    const both = await h.callTool('browser_type_text', { tabId, selector: '#name', text: 'x', append: true, clear: true });
    expect(both.status).toBe(400);
    expect(both.body.error.code).toBe('invalid_arguments');
    expect(both.body.error.message).toContain('append and clear');
    const snap = await h.callTool('browser_snapshot', { tabId, interactiveOnly: true });
    const ref = /\b(e\d+)\b/.exec(JSON.stringify(snap.body.result))?.[1];
    expect(ref).toBeDefined();
    const refAndSelector = await h.callTool('browser_click_element', { tabId, selector: '#b', ref });
    expect(refAndSelector.status).toBe(400);
    expect(refAndSelector.body.error.message).toContain('either selector or ref, not both');
    expect(await page.evaluate(() => (window as any).clicks ?? 0)).toBe(0);
    expect(await page.inputValue('#name')).toBe('new and more');
  });
});

describe('browser_execute_script', () => {
  const run = async (code: string) => {
    const r = await h.callTool('browser_execute_script', { tabId, code });
    expect({ code, status: r.status, error: r.body.error }).toMatchObject({ code, status: 200 });
    return r.body.result as { type: string; value: any };
  };

  test('an expression, a function and a body with return all work', async () => {
    expect(await run('document.title')).toEqual({ type: 'string', value: 'Misuse' });
    expect(await run('() => document.title.length')).toEqual({ type: 'number', value: 6 });
    expect(await run('async () => { await new Promise((r) => setTimeout(r, 10)); return 7; }')).toEqual({ type: 'number', value: 7 });
    expect(await run('const a = 20; return a + 1')).toEqual({ type: 'number', value: 21 });
    expect(await run('new Promise((r) => setTimeout(() => r([1, 2]), 10))')).toEqual({ type: 'array', value: [1, 2] });
    // Run once, not twice, whatever form: a side effect happens one time.
    await run('window.runs = (window.runs || 0) + 1; return window.runs');
    expect(await page.evaluate(() => (window as any).runs)).toBe(1);
  });

  test('DOM elements come back as tag, id, text and a selector the other tools accept', async () => {
    const one = await run('document.querySelector("h1")');
    expect(one.type).toBe('element');
    expect(one.value).toMatchObject({ element: 'h1', id: 'title', classes: ['big', 'main'], text: 'Hello', selector: '#title' });
    const list = await run('document.querySelectorAll("li")');
    expect(list.value.map((x: any) => x.text)).toEqual(['one', 'two']);
    const found = await h.callTool('browser_query_elements', { tabId, selector: list.value[1].selector });
    expect(JSON.stringify(found.body.result)).toContain('two');
  });

  test('errors say what the script threw; cycles do not break the answer', async () => {
    const bad = await h.callTool('browser_execute_script', { tabId, code: 'throw new Error("boom")' });
    expect(bad.body.error.message).toContain('boom');
    const cyc = await run('const o = { a: 1 }; o.self = o; return o');
    expect(cyc.value).toEqual({ a: 1, self: '[circular]' });
  });
});

test('five screenshots back to back all succeed', async () => {
  await page.bringToFront();
  const results = [];
  for (let i = 0; i < 5; i++) results.push(await h.callTool('browser_screenshot_tab', { tabId }));
  expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
  for (const r of results) expect(r.body.images?.[0]?.data?.length ?? 0).toBeGreaterThan(100);
});

test('debugger-driven actions keep the tab attached between calls, and detach once idle', async () => {
  const attached = () => extensionHoldsDebugger(h, tabId);
  expect((await h.callTool('browser_click_element', { tabId, selector: '#b' })).status).toBe(200);
  // Still attached after the call: the next click reuses the session (no new debugging bar).
  expect(await attached()).toBe(true);
  expect((await h.callTool('browser_click_element', { tabId, selector: '#b' })).status).toBe(200);
  expect(await attached()).toBe(true);
  expect(await page.evaluate(() => (window as any).clicks)).toBe(2);
  await waitUntil(async () => !(await attached()), 'the idle debugger to detach', 20_000, 500);
}, 40_000);
