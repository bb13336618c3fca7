/**
 * browser_type_text with keystrokes: true, in Chromium with the real extension, on a page whose
 * fields react only to key events (an autocomplete filtering on keyup, a counter updated on keyup,
 * a field taking its characters on keydown). By default the text is inserted at once: the field
 * holds it but no key event fires, so those pages do not notice. With keystrokes each character
 * is a key press (keydown, keypress, input, keyup; Shift pressed before capitals and let go after),
 * a line break is Enter, and characters no US key types (é, an emoji, CJK) are inserted as text. Checked in the page's own state (window.keys, the
 * suggestion list, the counter).
 */
import { expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { resultOf, useFixtureTab, type BrowserHarness } from '../harness/browser.ts';

let h: BrowserHarness;
let page: Page;
let tabId = 0;

useFixtureTab('/pages/apps-s22g2-typing.html', (t) => ({ h, page, tabId } = t));

const ok = resultOf;
const keys = (id: string) => page.evaluate((i) => (window as any).keys[i] ?? { keydown: 0, keypress: 0, keyup: 0, input: 0, shifted: [] }, id);
const suggestions = () => page.$$eval('#suggestions li', (lis) => lis.map((li) => li.textContent));

test('default typing inserts the text at once: no key event, so the keyup autocomplete shows nothing', async () => {
  const r = ok(await h.callTool('browser_type_text', { tabId, selector: '#city', text: 'Ber' }));
  expect(r).toMatchObject({ typed: 3, replaced: true });
  expect(r.keystrokes).toBeUndefined();
  expect(await page.inputValue('#city')).toBe('Ber');
  expect(await keys('city')).toEqual({ keydown: 0, keypress: 0, keyup: 0, input: 1, shifted: [] });
  expect(await suggestions()).toEqual([]);
}, 60_000);

test('keystrokes: true types key by key: the autocomplete suggests, each character counted once', async () => {
  const r = ok(await h.callTool('browser_type_text', { tabId, selector: '#city', text: 'Ber', keystrokes: true }));
  expect(r).toMatchObject({ typed: 3, replaced: true, keystrokes: true });
  expect(await page.inputValue('#city')).toBe('Ber');
  // Shift's own keydown and keyup around the B.
  expect(await keys('city')).toEqual({ keydown: 4, keypress: 3, keyup: 4, input: 3, shifted: ['Shift', 'B'] });
  expect(await suggestions()).toEqual(['Berlin', 'Bern', 'Bergen']);
  // Replacing what the field holds: the first key types over the selection.
  ok(await h.callTool('browser_type_text', { tabId, selector: '#city', text: 'bo', keystrokes: true }));
  expect(await page.inputValue('#city')).toBe('bo');
  expect(await suggestions()).toEqual(['Boston']);
  // append, and Enter after the text with submit.
  ok(await h.callTool('browser_type_text', { tabId, selector: '#city', text: 's', keystrokes: true, append: true, submit: true }));
  expect(await page.inputValue('#city')).toBe('bos');
  expect(await keys('city')).toMatchObject({ keydown: 8, keyup: 8 });
}, 60_000);

test('keystrokes: characters with no US key (é, emoji, CJK) still arrive, as text; a line break is Enter', async () => {
  const text = 'Café 😀 東京!\nZ';
  const r = ok(await h.callTool('browser_type_text', { tabId, selector: '#note', text, keystrokes: true }));
  expect(r).toMatchObject({ typed: text.length, keystrokes: true });
  expect(await page.inputValue('#note')).toBe(text);
  // Key presses: C a f, two spaces, !, Enter, Z, and Shift around C, ! and Z (é, 😀, 東, 京 inserted as text).
  const k = await keys('note');
  expect(k).toMatchObject({ keydown: 11, keypress: 8, keyup: 11, input: 12, shifted: ['Shift', 'C', 'Shift', '!', 'Shift', 'Z'] });
  expect(await page.textContent('#count')).toBe(`${[...text].length} / 140`);
}, 60_000);

test('keystrokes: a field that takes its characters on keydown gets each one; default typing bypasses it', async () => {
  ok(await h.callTool('browser_type_text', { tabId, selector: '#code', text: 'ab-12', keystrokes: true }));
  expect(await page.inputValue('#code')).toBe('AB-12');
  expect(await keys('code')).toMatchObject({ keydown: 5, keyup: 5 });
  ok(await h.callTool('browser_type_text', { tabId, selector: '#code', text: 'xy' }));
  expect(await page.inputValue('#code')).toBe('xy');
}, 60_000);

test('keystrokes with an empty text clears the field as the default does', async () => {
  await page.fill('#city', 'Lisbon');
  ok(await h.callTool('browser_type_text', { tabId, selector: '#city', text: '', keystrokes: true }));
  expect(await page.inputValue('#city')).toBe('');
}, 60_000);
