/**
 * The acting tools in Chromium: trusted clicks, typing, keys and hover through the DevTools
 * protocol (the page sees isTrusted events), select and scroll in the page, elements by selector
 * (also inside an open shadow root) or by browser_snapshot ref.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Acting</title></head><body>
<button id="count" onclick="this.dataset.n = Number(this.dataset.n || 0) + 1; window.trusted = event.isTrusted; window.mods = [event.shiftKey, event.ctrlKey]">Count</button>
<button id="dbl" ondblclick="window.dbl = true">Double</button>
<button id="order">Order</button>
<form id="f" onsubmit="event.preventDefault(); window.submitted = document.getElementById('name').value">
  <label for="name">Name</label><input id="name" value="old">
</form>
<select id="color"><option value="r">Red</option><option value="g">Green</option></select>
<div id="hov" onmouseenter="window.hovered = true" style="width:100px;height:40px;background:#eee">hover me</div>
<input id="keys" onkeydown="(window.keyLog ||= []).push(event.key)">
<div id="host"></div>
<div style="height:3000px"></div><p id="bottom">Bottom</p>
<script>
  document.getElementById('color').addEventListener('change', (e) => (window.changed = e.target.value));
  const root = document.getElementById('host').attachShadow({ mode: 'open' });
  root.innerHTML = '<button id="inner" onclick="window.inner = true">Inner</button>';
  for (const t of ['mousedown', 'mouseup', 'click', 'dblclick']) document.getElementById('order').addEventListener(t, () => (window.evOrder ||= []).push(t));
</script></body></html>`;

let h: BrowserHarness;
let page: Page;
let tabId = 0;

beforeAll(async () => {
  h = await startBrowserHarness({
    routes: (req) => (new URL(req.url).pathname === '/h3/acting.html' ? new Response(PAGE, { headers: { 'content-type': 'text/html' } }) : undefined),
  });
  page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/h3/acting.html'));
  tabId = await h.tabIdOf(page);
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

const win = (name: string) => page.evaluate((n) => (window as unknown as Record<string, unknown>)[n] ?? null, name);

describe('acting tools', () => {
  test('browser_click_element clicks with a trusted event, modifiers and double clicks', async () => {
    const r = await h.callTool('browser_click_element', { tabId, selector: '#count' });
    expect(r.status).toBe(200);
    expect(r.body.result).toMatchObject({ clicked: true, tag: 'button', text: 'Count' });
    expect(await page.locator('#count').getAttribute('data-n')).toBe('1');
    expect(await win('trusted')).toBe(true);
    await h.callTool('browser_click_element', { tabId, selector: '#count', modifiers: ['Shift'] });
    expect(await page.locator('#count').getAttribute('data-n')).toBe('2');
    expect(await win('mods')).toEqual([true, false]);
    await h.callTool('browser_click_element', { tabId, selector: '#dbl', clickCount: 2 });
    expect(await win('dbl')).toBe(true);
    // The page gets the gesture's events in a person's order.
    await h.callTool('browser_click_element', { tabId, selector: '#order', clickCount: 2 });
    expect(await win('evOrder')).toEqual(['mousedown', 'mouseup', 'click', 'mousedown', 'mouseup', 'click', 'dblclick']);
    // Inside an open shadow root.
    expect((await h.callTool('browser_click_element', { tabId, selector: '#inner' })).status).toBe(200);
    expect(await win('inner')).toBe(true);
  });

  test('browser_click_element by snapshot ref, and clear errors for bad targets', async () => {
    const snap = await h.callTool('browser_snapshot', { tabId, interactiveOnly: true });
    const ref = /button Count \[(e\d+)\]/.exec(snap.body.result.snapshot)![1];
    const before = Number(await page.locator('#count').getAttribute('data-n'));
    expect((await h.callTool('browser_click_element', { tabId, ref })).status).toBe(200);
    expect(Number(await page.locator('#count').getAttribute('data-n'))).toBe(before + 1);
    const missing = await h.callTool('browser_click_element', { tabId, selector: '#nope' });
    expect(missing.body.error.code).toBe('not_found');
    expect(missing.body.error.message).toContain('#nope');
    const neither = await h.callTool('browser_click_element', { tabId });
    expect(neither.body.error.message).toContain('selector or ref');
    const stale = await h.callTool('browser_click_element', { tabId, ref: 'e424242' });
    expect(stale.body.error.message).toContain('browser_snapshot');
  });

  test('browser_type_text types (appending when asked, replacing by default) and submits with Enter', async () => {
    const r = await h.callTool('browser_type_text', { tabId, selector: '#name', text: ' more', append: true });
    expect(r.status).toBe(200);
    expect(await page.locator('#name').inputValue()).toBe('old more');
    const c = await h.callTool('browser_type_text', { tabId, selector: '#name', text: 'Ada', clear: true, submit: true });
    expect(c.body.result).toMatchObject({ typed: 3, submitted: true });
    expect(await page.locator('#name').inputValue()).toBe('Ada');
    expect(await win('submitted')).toBe('Ada');
  });

  test('browser_press_key sends named keys and characters to the focused element', async () => {
    for (const key of ['a', 'Enter', 'ArrowDown', 'Escape']) {
      const r = await h.callTool('browser_press_key', { tabId, key, selector: '#keys' });
      expect(r.status).toBe(200);
    }
    expect(await win('keyLog')).toEqual(['a', 'Enter', 'ArrowDown', 'Escape']);
    expect(await page.locator('#keys').inputValue()).toBe('a');
    const bad = await h.callTool('browser_press_key', { tabId, key: 'NotAKey' });
    expect(bad.body.error.code).toBe('invalid_arguments');
  });

  test('browser_select_option picks by value or label and fires change', async () => {
    const r = await h.callTool('browser_select_option', { tabId, selector: '#color', label: 'Green' });
    expect(r.body.result).toEqual({ value: 'g', label: 'Green' });
    expect(await page.locator('#color').inputValue()).toBe('g');
    expect(await win('changed')).toBe('g');
    await h.callTool('browser_select_option', { tabId, selector: '#color', value: 'r' });
    expect(await page.locator('#color').inputValue()).toBe('r');
    const none = await h.callTool('browser_select_option', { tabId, selector: '#color', value: 'zz' });
    expect(none.body.error.message).toContain('Red, Green');
    const notSelect = await h.callTool('browser_select_option', { tabId, selector: '#name', value: 'x' });
    expect(notSelect.body.error.message).toContain('not a <select>');
  });

  test('browser_hover_element fires mouseenter', async () => {
    expect((await h.callTool('browser_hover_element', { tabId, selector: '#hov' })).status).toBe(200);
    expect(await win('hovered')).toBe(true);
  });

  test('browser_scroll: to an element, by direction, to coordinates', async () => {
    await h.callTool('browser_scroll', { tabId, x: 0, y: 0 });
    expect(await page.evaluate(() => scrollY)).toBe(0);
    const down = await h.callTool('browser_scroll', { tabId, direction: 'down', distance: 500 });
    expect(down.body.result.scrollY).toBe(500);
    expect(await page.evaluate(() => scrollY)).toBe(500);
    const el = await h.callTool('browser_scroll', { tabId, selector: '#bottom' });
    expect(el.body.result.scrollY).toBeGreaterThan(2000);
    expect(await page.locator('#bottom').isVisible()).toBe(true);
    const to = await h.callTool('browser_scroll', { tabId, y: 100 });
    expect(to.body.result.scrollY).toBe(100);
  });
});
