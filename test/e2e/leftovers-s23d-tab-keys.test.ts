/**
 * In Chromium with the real extension: browser_type_text with keystrokes: true presses the Tab key
 * for a tab character, as a keyboard does: the page gets keydown Tab (no tab character is typed)
 * and the browser moves the focus on to the next control, where the rest of the text goes; a page
 * that takes Tab for itself (preventDefault) keeps the focus, and no tab goes into its text.
 */
import { expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { resultOf, useFixtureTab, type BrowserHarness } from '../harness/browser.ts';

let h: BrowserHarness;
let page: Page;
let tabId = 0;

useFixtureTab('/pages/leftovers-s23d-tab-keys.html', (t) => ({ h, page, tabId } = t));

const keysOf = () => page.evaluate(() => (window as any).keys as string[]);

test('a tab character is a Tab press: keydown Tab, then the focus and the rest of the text move to the next field', async () => {
  const r = resultOf(await h.callTool('browser_type_text', { tabId, selector: '#first', text: 'ab\tcd', keystrokes: true }));
  expect(r).toMatchObject({ typed: 5, keystrokes: true });
  expect(await page.inputValue('#first')).toBe('ab');
  expect(await page.inputValue('#second')).toBe('cd');
  expect(await keysOf()).toEqual(['first:a', 'first:b', 'first:Tab', 'second:c', 'second:d']);
  expect(await page.evaluate(() => document.activeElement?.id)).toBe('second');
}, 60_000);

test('a page that takes Tab for itself gets the keydown and keeps the focus; no tab character goes in', async () => {
  resultOf(await h.callTool('browser_type_text', { tabId, selector: '#code', text: 'x\ty', keystrokes: true }));
  expect(await page.inputValue('#code')).toBe('xy');
  expect(await keysOf()).toEqual(['code:x', 'code:Tab', 'code:y']);
  expect(await page.evaluate(() => document.activeElement?.id)).toBe('code');
}, 60_000);
