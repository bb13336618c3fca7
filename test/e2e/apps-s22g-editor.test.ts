/**
 * A model-based rich-text editor (as ProseMirror, Lexical and Slate are: every beforeinput is
 * cancelled and applied to the editor's own document, which is drawn again): text typed and keys
 * pressed with browser_type_text / browser_press_key end up in that document, not only in the DOM.
 */
import { expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { resultOf, useFixtureTab, type BrowserHarness } from '../harness/browser.ts';

let h: BrowserHarness;
let page: Page;
let tabId = 0;
const model = () => page.evaluate(() => ({ text: (window as any).editor.text(), dom: (window as any).editor.domText(), unhandled: (window as any).editor.unhandled, types: (window as any).editor.inputTypes }));
const setModel = (paras: string[]) => page.evaluate((p) => { (window as any).editor.model = p; (window as any).editor.inputTypes = []; document.getElementById('editor')!.dispatchEvent(new Event('rerender')); }, paras);

useFixtureTab('/pages/apps-s22g-editor.html', (t) => ({ h, page, tabId } = t));

const ok = resultOf;

test('typing replaces the editor text in its model', async () => {
  ok(await h.callTool('browser_type_text', { tabId, selector: '#editor', text: 'First comment' }));
  expect(await model()).toMatchObject({ text: 'First comment', dom: 'First comment', unhandled: [] });
}, 60_000);

test('typing with append adds at the end of the existing text', async () => {
  ok(await h.callTool('browser_type_text', { tabId, selector: '#editor', text: ', again', append: true }));
  expect(await model()).toMatchObject({ text: 'Hello world, again', dom: 'Hello world, again', unhandled: [] });
}, 60_000);

test('Enter makes a new paragraph, Backspace deletes one character', async () => {
  ok(await h.callTool('browser_type_text', { tabId, selector: '#editor', text: 'line one' }));
  ok(await h.callTool('browser_press_key', { tabId, key: 'Enter' }));
  ok(await h.callTool('browser_type_text', { tabId, selector: '#editor', text: 'line twoo', append: true }));
  ok(await h.callTool('browser_press_key', { tabId, key: 'Backspace' }));
  expect(await model()).toMatchObject({ text: 'line one\nline two', dom: 'line one\nline two', unhandled: [] });
}, 60_000);

test('text with line breaks makes paragraphs', async () => {
  ok(await h.callTool('browser_type_text', { tabId, selector: '#editor', text: 'a\nb' }));
  expect(await model()).toMatchObject({ text: 'a\nb', dom: 'a\nb', unhandled: [] });
}, 60_000);

test('select all and replace', async () => {
  ok(await h.callTool('browser_type_text', { tabId, selector: '#editor', text: 'one\ntwo', }));
  ok(await h.callTool('browser_press_key', { tabId, key: 'a', modifiers: ['Control'] }));
  ok(await h.callTool('browser_press_key', { tabId, key: 'x' }));
  expect(await model()).toMatchObject({ text: 'x', dom: 'x', unhandled: [] });
}, 60_000);

test('emoji, non-BMP and CJK text', async () => {
  const text = 'Looks good 👍🏽 𝔘 日本語のテキスト 한국어 中文';
  ok(await h.callTool('browser_type_text', { tabId, selector: '#editor', text }));
  expect(await model()).toMatchObject({ text, dom: text, unhandled: [] });
  ok(await h.callTool('browser_press_key', { tabId, key: 'Backspace' }));
  ok(await h.callTool('browser_press_key', { tabId, key: '😀' }));
  expect(await model()).toMatchObject({ text: text.slice(0, -1) + '😀', unhandled: [] });
}, 60_000);

test('a ref from browser_snapshot names the editor; typing through it reaches the model', async () => {
  const snap = ok(await h.callTool('browser_snapshot', { tabId })).snapshot as string;
  const ref = /textbox Comment = "Hello world" \[(e\d+)\]/.exec(snap)?.[1];
  expect(ref).toBeDefined();
  ok(await h.callTool('browser_type_text', { tabId, ref, text: 'Through the ref', submit: true }));
  expect(await model()).toMatchObject({ text: 'Through the ref\n', unhandled: [] });
}, 60_000);

test('browser_fill_form gives an editor its text through beforeinput, so its model has it', async () => {
  const r = ok(await h.callTool('browser_fill_form', { tabId, fields: [{ selector: '#editor', value: 'Filled in\nsecond line' }, { selector: '#plain', value: 'plain text' }] }));
  expect(r.fields).toEqual([{ field: '#editor', kind: 'contenteditable', value: 'Filled in\nsecond line' }, { field: '#plain', kind: 'contenteditable', value: 'plain text' }]);
  expect(await model()).toMatchObject({ text: 'Filled in\nsecond line', dom: 'Filled in\nsecond line', unhandled: [] });
  // A contenteditable the page leaves to the browser is edited by the browser (input events fire).
  expect(await page.evaluate(() => ({ text: document.getElementById('plain')!.innerText, inputs: (window as any).plainInputs }))).toEqual({ text: 'plain text', inputs: ['insertText'] });
  // An empty value clears it.
  ok(await h.callTool('browser_fill_form', { tabId, fields: [{ selector: '#editor', value: '' }] }));
  expect(await model()).toMatchObject({ text: '', unhandled: [] });
}, 60_000);

test('a field that hands the focus to the editor as it gets it, and goes: the text is typed into the editor', async () => {
  const r = ok(await h.callTool('browser_type_text', { tabId, selector: '#opener', text: 'Typed where the focus went' }));
  expect(r.tag).toBe('div');
  expect(await model()).toMatchObject({ text: 'Typed where the focus went', unhandled: [] });
}, 60_000);
