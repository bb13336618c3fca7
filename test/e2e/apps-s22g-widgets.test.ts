/**
 * The widgets of modern apps, used the way a person's hands would with the built-in tools: an ARIA
 * combobox that filters as you type, a custom select (a button and a listbox, no <select>), a date
 * picker popup, a menu opened by hovering, and a script-made modal dialog (aria-modal) that keeps
 * the focus in it. Each effect is checked in the page's own state (window.app).
 */
import { expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { resultOf, useFixtureTab, type BrowserHarness } from '../harness/browser.ts';

let h: BrowserHarness;
let page: Page;
let tabId = 0;
const app = () => page.evaluate(() => (window as any).app);
const snapshot = async () => ok(await h.callTool('browser_snapshot', { tabId })).snapshot as string;
const refIn = (snap: string, re: RegExp) => {
  const ref = re.exec(snap)?.[1];
  if (!ref) throw new Error(`no ${re} in:\n${snap}`);
  return ref;
};

useFixtureTab('/pages/apps-s22g-widgets.html', (t) => ({ h, page, tabId } = t));

const ok = resultOf;

test('combobox: typing filters the options, arrow keys and Enter pick one; an option clicked by its ref too', async () => {
  ok(await h.callTool('browser_type_text', { tabId, selector: '#assignee', text: 'al' }));
  const snap = await snapshot();
  expect(snap).toMatch(/Assignee = "al" \(expanded\) \[e\d+\]/);
  expect(snap).toMatch(/option Alan Turing \[e\d+\]\nLinus Torvalds \[e\d+\]/);
  ok(await h.callTool('browser_press_key', { tabId, key: 'ArrowDown' }));
  ok(await h.callTool('browser_press_key', { tabId, key: 'ArrowDown' }));
  ok(await h.callTool('browser_press_key', { tabId, key: 'Enter' }));
  expect((await app()).assignee).toBe('Linus Torvalds');

  ok(await h.callTool('browser_type_text', { tabId, selector: '#assignee', text: 'grace' }));
  ok(await h.callTool('browser_click_element', { tabId, ref: refIn(await snapshot(), /option Grace Hopper \[(e\d+)\]/) }));
  expect((await app()).assignee).toBe('Grace Hopper');
  expect(await page.inputValue('#assignee')).toBe('Grace Hopper');
}, 60_000);

test('a combobox whose options come later: browser_wait_for the option, then keys pick it', async () => {
  ok(await h.callTool('browser_type_text', { tabId, selector: '#project', text: 'mob' }));
  ok(await h.callTool('browser_wait_for', { tabId, text: 'Mobile web', timeoutMs: 10_000 }));
  expect(await snapshot()).toMatch(/Project = "mob" \(expanded\) \[e\d+\]\noption Mobile app \[e\d+\]\nMobile web \[e\d+\]/);
  ok(await h.callTool('browser_press_key', { tabId, key: 'ArrowDown' }));
  ok(await h.callTool('browser_press_key', { tabId, key: 'ArrowDown' }));
  ok(await h.callTool('browser_press_key', { tabId, key: 'Enter' }));
  expect((await app()).project).toBe('Mobile web');
}, 60_000);

test('custom select: browser_select_option says how to choose; opening it and clicking the option does', async () => {
  const r = await h.callTool('browser_select_option', { tabId, selector: '#priority', label: 'High' });
  expect(r.status).toBe(404);
  expect(r.body.error.message).toContain('#priority is a <button>, not a <select>: it is a custom select');
  expect(r.body.error.message).toContain('open it with browser_click_element');
  const snap = await snapshot();
  ok(await h.callTool('browser_click_element', { tabId, ref: refIn(snap, /button Medium \(Priority\) \(collapsed\) \[(e\d+)\]/) }));
  const open = await snapshot();
  expect(open).toMatch(/button Medium \(Priority\) \(expanded\) \[e\d+\]\noption Low \[e\d+\]\nMedium \(selected\) \[e\d+\]/);
  // The listbox itself is no <select> either.
  const onList = await h.callTool('browser_select_option', { tabId, selector: '#priority-list', value: 'High' });
  expect(onList.body.error.message).toContain('it is a custom select (role listbox)');
  ok(await h.callTool('browser_click_element', { tabId, ref: refIn(open, /^High \[(e\d+)\]$/m) }));
  expect((await app()).priority).toBe('High');
  expect(await snapshot()).toMatch(/button High \(Priority\) \(collapsed\) \[e\d+\]/);
}, 60_000);

test('date picker: the popup opens, the month moves on, a day is chosen by its ref', async () => {
  ok(await h.callTool('browser_click_element', { tabId, selector: '#due-button' }));
  ok(await h.callTool('browser_click_element', { tabId, ref: refIn(await snapshot(), /button › \(Next month\) \[(e\d+)\]/) }));
  const snap = await snapshot();
  expect(snap).toContain('April 2031');
  ok(await h.callTool('browser_click_element', { tabId, ref: refIn(snap, /Tuesday, April 15, 2031 \[(e\d+)\]/) }));
  expect((await app()).due).toBe('2031-04-15');
  expect(await page.inputValue('#due')).toBe('2031-04-15');
}, 60_000);

test('a menu that opens on hover: hover, then click its item by ref', async () => {
  const closed = await snapshot();
  expect(closed).not.toContain('Archive task');
  ok(await h.callTool('browser_hover_element', { tabId, selector: '#file-button' }));
  const snap = await snapshot();
  expect(snap).toMatch(/button File \(expanded\) \[e\d+\]\n *menuitem Export as CSV \[e\d+\]/);
  ok(await h.callTool('browser_click_element', { tabId, ref: refIn(snap, /^ *Archive task \[(e\d+)\]$/m) }));
  expect((await app()).menu).toEqual(['Archive task']);
}, 60_000);

test('a script-made modal dialog: the snapshot says it first and the rest inert; typing behind it is refused, not sent into the dialog', async () => {
  ok(await h.callTool('browser_click_element', { tabId, selector: '#delete' }));
  const snap = await snapshot();
  expect(snap.split('\n')[0]).toBe('(a modal dialog "Delete this task?" is open: only its controls can be used, the ones outside it say (inert))');
  expect(snap).toMatch(/button Delete task \(inert\) \[e\d+\]/);
  expect(snap).toMatch(/textbox Type DELETE to confirm \[e\d+\]/);
  expect(snap).not.toMatch(/Type DELETE to confirm \(inert\)/);
  // The page keeps the focus in the dialog: text typed "into" a field behind it would land in the
  // dialog's field. Refused, naming where the focus is.
  const behind = await h.callTool('browser_type_text', { tabId, selector: '#assignee', text: 'oops' });
  expect(behind.status).toBe(404);
  expect(behind.body.error.message).toBe('The element #assignee did not keep the focus: the page moved it to <input id="confirm-text"> (a modal dialog "Delete this task?" is open). Keys and text would go there; close what holds the focus, or act on that element');
  expect(await page.inputValue('#confirm-text')).toBe('');
  expect(await page.inputValue('#assignee')).toBe('');
  const click = await h.callTool('browser_click_element', { tabId, selector: '#other' });
  expect(click.body.error.message).toContain('is covered by <div id="backdrop">');
  // Tab moves within the dialog (its own trap).
  ok(await h.callTool('browser_press_key', { tabId, key: 'Tab' }));
  expect(await page.evaluate(() => document.activeElement?.id)).toBe('cancel');
  ok(await h.callTool('browser_type_text', { tabId, ref: refIn(snap, /textbox Type DELETE to confirm \[(e\d+)\]/), text: 'DELETE' }));
  ok(await h.callTool('browser_click_element', { tabId, ref: refIn(snap, /button Cancel \[e\d+\] Delete \[(e\d+)\]/) }));
  expect(await app()).toMatchObject({ deleted: true, events: [] });
  const after = await snapshot();
  expect(after).not.toContain('modal dialog');
  expect(after).not.toContain('(inert)');
  expect(after).toContain('Task deleted');
}, 60_000);
