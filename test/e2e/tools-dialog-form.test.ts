/**
 * browser_handle_dialog and browser_fill_form in Chromium with the real extension: a click that
 * opens an alert, confirm or prompt returns at once saying so (it does not hang), and the dialog
 * is answered with the tool; a form is filled in one call with the page seeing input and change
 * events, and a field it cannot fill stops it with a clear error.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Dialogs</title></head><body>
<button id="alert" onclick="alert('Hi there'); window.afterAlert = true">Alert</button>
<button id="confirm" onclick="window.answer = confirm('Sure?')">Confirm</button>
<button id="prompt" onclick="window.named = prompt('Name?', 'nobody')">Prompt</button>
<form id="f">
  <input id="name" value="old">
  <textarea id="bio"></textarea>
  <input id="news" type="checkbox">
  <input type="radio" name="size" value="s" id="s" checked><input type="radio" name="size" value="l" id="l">
  <select id="color"><option value="r">Red</option><option value="g">Green</option></select>
</form>
<script>
  window.events = [];
  for (const el of document.querySelectorAll('#f input, #f textarea, #f select')) {
    el.addEventListener('input', () => window.events.push('input:' + (el.id || el.name)));
    el.addEventListener('change', () => window.events.push('change:' + (el.id || el.name)));
  }
</script></body></html>`;

let h: BrowserHarness;
let page: Page;
let tabId = 0;
const win = (name: string) => page.evaluate((n) => (window as any)[n], name);

beforeAll(async () => {
  h = await startBrowserHarness({ routes: (req) => (new URL(req.url).pathname === '/dialogs.html' ? new Response(PAGE, { headers: { 'content-type': 'text/html' } }) : undefined) });
  // Playwright would answer dialogs itself otherwise: this test wants the extension to.
  page = await h.context.newPage();
  page.on('dialog', () => {});
  await page.goto(h.fixtureUrl('/dialogs.html'));
  tabId = await h.tabIdOf(page);
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

describe('dialogs', () => {
  test('a click that opens an alert returns at once with the dialog; accepting it lets the page go on', async () => {
    const r = await h.callTool('browser_click_element', { tabId, selector: '#alert' });
    expect(r.status).toBe(200);
    expect(r.body.result.dialog).toEqual({ type: 'alert', message: 'Hi there' });
    expect(r.body.result.note).toContain('browser_handle_dialog');
    const a = await h.callTool('browser_handle_dialog', { tabId });
    expect(a.status).toBe(200);
    expect(a.body.result).toMatchObject({ handled: true, action: 'accept', dialog: { type: 'alert', message: 'Hi there' } });
    expect(await win('afterAlert')).toBe(true);
  });

  test('confirm dismissed answers false; prompt accepted with text answers that text', async () => {
    expect((await h.callTool('browser_click_element', { tabId, selector: '#confirm' })).body.result.dialog.type).toBe('confirm');
    expect((await h.callTool('browser_handle_dialog', { tabId, action: 'dismiss' })).status).toBe(200);
    expect(await win('answer')).toBe(false);
    const p = await h.callTool('browser_click_element', { tabId, selector: '#prompt' });
    expect(p.body.result.dialog).toEqual({ type: 'prompt', message: 'Name?', defaultPrompt: 'nobody' });
    expect((await h.callTool('browser_handle_dialog', { tabId, promptText: 'Ada' })).status).toBe(200);
    expect(await win('named')).toBe('Ada');
  });

  test('no dialog open: a clear not_found', async () => {
    const r = await h.callTool('browser_handle_dialog', { tabId });
    expect(r.status).toBe(404);
    expect(r.body.error.message).toContain('No dialog is open');
  });
});

describe('browser_wait_for', () => {
  test('text appearing, text going away, the URL matching, a time; one condition at a time', async () => {
    const appear = h.callTool('browser_wait_for', { tabId, text: 'Ready now' });
    await page.evaluate(() => setTimeout(() => document.body.insertAdjacentHTML('beforeend', '<p id="ready">Ready now</p>'), 200));
    expect((await appear).body.result.waited).toBe('text');
    const gone = h.callTool('browser_wait_for', { tabId, textGone: 'Ready now' });
    await page.evaluate(() => setTimeout(() => document.getElementById('ready')!.remove(), 200));
    expect((await gone).body.result.waited).toBe('textGone');
    const url = h.callTool('browser_wait_for', { tabId, urlPattern: '*#step-2' });
    await page.evaluate(() => setTimeout(() => (location.hash = 'step-2'), 200));
    const urlRes = await url;
    expect(urlRes.body).toMatchObject({ result: { waited: 'url' } });
    expect(urlRes.body.result.url).toEndWith('#step-2');
    expect((await h.callTool('browser_wait_for', { tabId, time: 50 })).body.result.waited).toBe('time');
    const late = await h.callTool('browser_wait_for', { tabId, text: 'never shown', timeoutMs: 300 });
    expect(late.body.error.code).toBe('timeout');
    const two = await h.callTool('browser_wait_for', { tabId, text: 'a', time: 10 });
    expect(two.status).toBe(400);
    expect(two.body.error.message).toContain('exactly one of');
  });
});

describe('browser_fill_form', () => {
  test('text, textarea, checkbox, radio and select in one call, with input and change events', async () => {
    await page.evaluate(() => ((window as any).events = []));
    const r = await h.callTool('browser_fill_form', {
      tabId,
      fields: [
        { selector: '#name', value: 'Ada' },
        { selector: '#bio', value: 'Writes programs' },
        { selector: '#news', checked: true },
        { selector: '#l', checked: true },
        { selector: '#color', value: 'Green' },
      ],
    });
    expect(r.status).toBe(200);
    expect(r.body.result.filled).toBe(5);
    expect(await page.inputValue('#name')).toBe('Ada');
    expect(await page.inputValue('#bio')).toBe('Writes programs');
    expect(await page.isChecked('#news')).toBe(true);
    expect(await page.isChecked('#l')).toBe(true);
    expect(await page.isChecked('#s')).toBe(false);
    expect(await page.inputValue('#color')).toBe('g');
    const events = (await win('events')) as string[];
    for (const e of ['input:name', 'change:name', 'change:bio', 'change:news', 'change:l', 'change:color']) expect(events).toContain(e);
  });

  test('a field it cannot fill stops it with what is wrong and what was filled before', async () => {
    const r = await h.callTool('browser_fill_form', { tabId, fields: [{ selector: '#name', value: 'Grace' }, { selector: '#color', value: 'Purple' }, { selector: '#bio', value: 'never' }] });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toContain('no option "Purple"');
    expect(r.body.error.message).toContain('Red, Green');
    expect(r.body.error.message).toContain('filled before it: #name');
    expect(await page.inputValue('#bio')).toBe('Writes programs');
    const both = await h.callTool('browser_fill_form', { tabId, fields: [{ selector: '#name', ref: 'e1', value: 'x' }] });
    expect(both.status).toBe(400);
    expect(both.body.error.message).toContain('either selector or ref');
  });
});
