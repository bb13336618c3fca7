/**
 * In Chromium with the real extension:
 * - browser_fill_form and a script-made modal dialog (aria-modal, a backdrop, focus kept in it):
 *   a field behind the open dialog (or in [inert]) is refused, naming the field and the dialog,
 *   and nothing of the call is set (the page's fields and events as they were); the dialog's own
 *   fields fill; once it is closed the field behind fills. The snapshot says (inert) for the same
 *   fields.
 * - browser_type_text keystrokes: true holds Shift as a keyboard does (one Shift keydown before a
 *   run of shifted characters, its keyup after), and a line break is an Enter press: a new line in
 *   a textarea or an editable element, a submit in a one-line field's form.
 * Checked in the page's own state (window.app).
 */
import { expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { resultOf, useFixtureTab, type BrowserHarness } from '../harness/browser.ts';

let h: BrowserHarness;
let page: Page;
let tabId = 0;

useFixtureTab('/pages/apps-s22j-leftovers.html', (t) => ({ h, page, tabId } = t));

const ok = resultOf;
const app = () => page.evaluate(() => (window as any).app);

test('fill_form refuses a field behind an open modal dialog and sets nothing; the dialog\'s fields fill; closed, the field behind fills', async () => {
  ok(await h.callTool('browser_click_element', { tabId, selector: '#open' }));
  expect(await page.evaluate(() => document.activeElement?.id)).toBe('reason');
  const snap = ok(await h.callTool('browser_snapshot', { tabId })).snapshot as string;
  expect(snap).toMatch(/textbox Name \(inert\) \[e\d+\]/);
  const nameRef = /textbox Name \(inert\) \[(e\d+)\]/.exec(snap)![1]!;

  const behind = await h.callTool('browser_fill_form', { tabId, fields: [{ ref: nameRef, value: 'Mallory' }] });
  expect(behind.status).toBe(400);
  expect(behind.body.error.message).toBe(`fields[0]: ${nameRef} is behind the open modal dialog "Change your plan" (<div id="modal">), which a user cannot reach until it is closed: it was not filled. Fill the dialog's own fields, or close it first (its close or cancel button with browser_click_element)`);
  // A field of the dialog first, then one behind it: the call is refused before anything is set.
  const mixed = await h.callTool('browser_fill_form', { tabId, fields: [{ selector: '#reason', value: 'cheaper' }, { selector: '#news', checked: true }] });
  expect(mixed.status).toBe(400);
  expect(mixed.body.error.message).toStartWith('fields[1]: #news is behind the open modal dialog "Change your plan"');
  expect(mixed.body.error.message).not.toContain('filled before it');
  const inert = await h.callTool('browser_fill_form', { tabId, fields: [{ selector: '#locked', value: 'x' }] });
  expect(inert.body.error.message).toBe('fields[0]: #locked is inside an [inert] part of the page, which a user cannot reach: it was not filled');
  // The page as it was: no value, no event, the focus still in the dialog.
  expect(await page.inputValue('#name')).toBe('');
  expect(await page.inputValue('#reason')).toBe('');
  expect(await page.isChecked('#news')).toBe(false);
  expect(await page.inputValue('#locked')).toBe('');
  expect((await app()).events).toEqual({});
  expect(await page.evaluate(() => document.activeElement?.id)).toBe('reason');

  // The dialog's own field fills.
  expect(ok(await h.callTool('browser_fill_form', { tabId, fields: [{ selector: '#reason', value: 'cheaper' }] }))).toMatchObject({ filled: 1 });
  expect(await page.inputValue('#reason')).toBe('cheaper');

  // Closed: the fields behind it fill, and the snapshot no longer says (inert).
  ok(await h.callTool('browser_click_element', { tabId, selector: '#close' }));
  const after = ok(await h.callTool('browser_snapshot', { tabId })).snapshot as string;
  expect(after).toMatch(/textbox Name \[e\d+\]/);
  expect(ok(await h.callTool('browser_fill_form', { tabId, fields: [{ selector: '#name', value: 'Ada' }, { selector: '#news', checked: true }] }))).toMatchObject({ filled: 2 });
  expect(await page.inputValue('#name')).toBe('Ada');
  expect(await page.isChecked('#news')).toBe(true);
  expect((await app()).events).toMatchObject({ name: ['input', 'change'], reason: ['input', 'change'] });
}, 90_000);

test('keystrokes: one Shift keydown before a run of shifted characters and its keyup after, as a keyboard sends', async () => {
  const r = ok(await h.callTool('browser_type_text', { tabId, selector: '#line', text: 'ABc D!e', keystrokes: true }));
  expect(r).toMatchObject({ typed: 7, keystrokes: true });
  expect(await page.inputValue('#line')).toBe('ABc D!e');
  expect((await app()).keys.line).toEqual([
    '↓Shift', '↓A+shift', '↑A', '↓B+shift', '↑B', '↑Shift', '↓c', '↑c', '↓ ', '↑ ',
    '↓Shift', '↓D+shift', '↑D', '↓!+shift', '↑!', '↑Shift', '↓e', '↑e',
  ]);
  // Shift held at the end is let go too.
  ok(await h.callTool('browser_type_text', { tabId, selector: '#line', text: 'xY', keystrokes: true }));
  expect((await app()).keys.line.slice(-6)).toEqual(['↓x', '↑x', '↓Shift', '↓Y+shift', '↑Y', '↑Shift']);
  expect((await app()).submits).toBe(0);
}, 60_000);

test('keystrokes: a line break is an Enter press: a new line in a textarea and an editable element, a submit in a one-line field', async () => {
  ok(await h.callTool('browser_type_text', { tabId, selector: '#note', text: 'one\ntwo\r\nthree', keystrokes: true }));
  expect(await page.inputValue('#note')).toBe('one\ntwo\nthree');
  expect((await app()).keys.note.filter((k: string) => k === '↓Enter')).toHaveLength(2);

  ok(await h.callTool('browser_type_text', { tabId, selector: '#editor', text: 'top\nend', keystrokes: true }));
  expect(await page.evaluate(() => (document.getElementById('editor') as HTMLElement).innerText.trim().split(/\n+/))).toEqual(['top', 'end']);
  expect((await app()).keys.editor.filter((k: string) => k === '↓Enter')).toHaveLength(1);

  ok(await h.callTool('browser_type_text', { tabId, selector: '#line', text: 'go\n', keystrokes: true }));
  expect(await page.inputValue('#line')).toBe('go');
  expect((await app()).keys.line).toEqual(['↓g', '↑g', '↓o', '↑o', '↓Enter', '↑Enter']);
  expect((await app()).submits).toBe(1);
}, 60_000);
