/**
 * A form controlled as React controls one (the state takes an edit only when its value tracker sees
 * a change, every field is given its state's value again, a re-render makes new elements) with a
 * phone and a date field masked as you type: values given with browser_fill_form and
 * browser_type_text end up in the state and stay after re-renders.
 */
import { expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { resultOf, useFixtureTab, type BrowserHarness } from '../harness/browser.ts';

let h: BrowserHarness;
let page: Page;
let tabId = 0;
const state = () => page.evaluate(() => (window as any).app.state);
const domValues = () => page.evaluate(() => Object.fromEntries([...document.querySelectorAll<HTMLInputElement>('[data-key]')].map((e) => [e.dataset.key, e.value])));

useFixtureTab('/pages/apps-s22g-forms.html', (t) => ({ h, page, tabId } = t));

const ok = resultOf;

test('browser_fill_form: the state takes every value, masks format them, a re-render keeps them', async () => {
  const r = ok(await h.callTool('browser_fill_form', { tabId, fields: [
    { selector: '[name=name]', value: 'Ada Lovelace' },
    { selector: '[name=email]', value: 'ada@example.test' },
    { selector: '[name=phone]', value: '5551234567' },
    { selector: '[name=date]', value: '12101815' },
    { selector: '[name=bio]', value: 'Wrote the first program' },
  ] }));
  // The values reported are the fields' own after the page's handlers ran (the masks' formatting).
  expect(r.fields.map((f: any) => f.value)).toEqual(['Ada Lovelace', 'ada@example.test', '(555) 123-4567', '12/10/1815', 'Wrote the first program']);
  const want = { name: 'Ada Lovelace', email: 'ada@example.test', phone: '(555) 123-4567', date: '12/10/1815', bio: 'Wrote the first program' };
  expect(await state()).toEqual(want);
  await page.evaluate(() => (window as any).app.rerender());
  expect(await domValues()).toEqual(want);
  expect(await page.isEnabled('button[type=submit]')).toBe(true);
}, 60_000);

test('browser_type_text: typed text reaches the state; masks format it; replacing and appending', async () => {
  ok(await h.callTool('browser_type_text', { tabId, selector: '[name=name]', text: 'Grace' }));
  ok(await h.callTool('browser_type_text', { tabId, selector: '[name=name]', text: ' Hopper', append: true }));
  ok(await h.callTool('browser_type_text', { tabId, selector: '[name=email]', text: 'grace@example.test' }));
  ok(await h.callTool('browser_type_text', { tabId, selector: '[name=phone]', text: '555-987-6543' }));
  ok(await h.callTool('browser_type_text', { tabId, selector: '[name=date]', text: '1209' }));
  ok(await h.callTool('browser_type_text', { tabId, selector: '[name=date]', text: '1906', append: true }));
  const want = { name: 'Grace Hopper', email: 'grace@example.test', phone: '(555) 987-6543', date: '12/09/1906', bio: '' };
  expect(await state()).toEqual(want);
  await page.evaluate(() => (window as any).app.rerender());
  expect(await domValues()).toEqual(want);
  // Backspace on the masked field goes through the mask too.
  ok(await h.callTool('browser_press_key', { tabId, selector: '[name=phone]', key: 'Backspace' }));
  expect((await state()).phone).toBe('(555) 987-654');
  // Clearing with an empty text empties the state.
  ok(await h.callTool('browser_type_text', { tabId, selector: '[name=name]', text: '' }));
  expect((await state()).name).toBe('');
}, 60_000);

test('browser_fill_form by snapshot refs: a field re-rendered by an earlier one is still filled', async () => {
  const snap = ok(await h.callTool('browser_snapshot', { tabId })).snapshot as string;
  const ref = (label: string) => new RegExp(`${label}[^\\n]*\\[(e\\d+)\\]`).exec(snap)?.[1];
  // Filling email enables Save, which makes the page render its fields again (new elements).
  const r = await h.callTool('browser_fill_form', { tabId, fields: [
    { ref: ref('Full name'), value: 'Alan Turing' },
    { ref: ref('Email'), value: 'alan@example.test' },
    { ref: ref('Phone'), value: '5550001111' },
  ] });
  expect(r.body.error?.message).toBeUndefined();
  expect(await state()).toMatchObject({ name: 'Alan Turing', email: 'alan@example.test', phone: '(555) 000-1111' });
}, 60_000);
