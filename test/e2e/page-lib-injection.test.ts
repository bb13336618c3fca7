/**
 * The page library (extension/page/, dist/page-lib.js), in Chromium with the real extension: the
 * built-in tools inject it once per document and then only a small stub per call; a call after the
 * tab navigated injects it into the new document; a document that lost it gets it again; a page
 * that plants a fake library under the library's own global name, fake refs, or overrides DOM
 * methods in its own (MAIN) world changes nothing the tools see or do.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { EXTENSION_DIST_DIR } from '../../extension/build.ts';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);

const PLAIN = `<!doctype html><title>Plain</title><body>
<button id="b" onclick="window.clicks = (window.clicks || 0) + 1">Go</button>
<input id="i"><select id="s"><option value="a">Apple</option><option value="b">Banana</option></select>
<p>hello world</p>
<script>window.changes = 0; document.addEventListener('change', () => window.changes++, true);</script></body>`;

let h: BrowserHarness;
/** The library's global name in this build (page-lib.js assigns it). */
let libKey = '';

beforeAll(async () => {
  h = await startBrowserHarness({
    permissions: { browser: { default: 'auto' } },
    routes: (req) => {
      const path = new URL(req.url).pathname;
      if (path === '/plain.html' || path === '/other.html') return new Response(PLAIN.replace('Plain', path.slice(1)), { headers: { 'content-type': 'text/html' } });
      if (path === '/hostile.html') return new Response(hostilePage(), { headers: { 'content-type': 'text/html' } });
      return undefined;
    },
  });
  libKey = /\["(__opentabs_page_lib_[0-9A-Za-z_]+)"\]/.exec(readFileSync(join(EXTENSION_DIST_DIR, 'page-lib.js'), 'utf8'))?.[1] ?? '';
  expect(libKey).not.toBe('');
  // Counts, in the worker, the scripts the extension injects: page-lib.js (by document) and
  // functions (by tab).
  const worker = await h.serviceWorker();
  await worker.evaluate(() => {
    const g = globalThis as unknown as { __spy?: { files: { tabId: number; documentId?: string }[]; funcs: Record<number, number>; delayFilesMs: number } };
    if (g.__spy) return;
    const spy = (g.__spy = { files: [] as { tabId: number; documentId?: string }[], funcs: {} as Record<number, number>, delayFilesMs: 0 });
    const original = chrome.scripting.executeScript.bind(chrome.scripting);
    chrome.scripting.executeScript = (async (opts: chrome.scripting.ScriptInjection<unknown[], unknown>) => {
      const o = opts as { target: { tabId: number; documentIds?: string[] }; files?: string[]; func?: unknown; world?: string };
      if (o.files?.includes('page-lib.js')) {
        spy.files.push({ tabId: o.target.tabId, documentId: o.target.documentIds?.[0] });
        // A file that reaches the page late (as when Chrome reads it after the next call went out).
        if (spy.delayFilesMs) await new Promise((r) => setTimeout(r, spy.delayFilesMs));
      } else if (o.func && o.world !== 'MAIN') spy.funcs[o.target.tabId] = (spy.funcs[o.target.tabId] ?? 0) + 1;
      return original(opts as never);
    }) as typeof chrome.scripting.executeScript;
  });
});

afterAll(async () => {
  await h?.stop();
});

async function spied(tabId: number): Promise<{ files: { tabId: number; documentId?: string }[]; funcs: number }> {
  const worker = await h.serviceWorker();
  return worker.evaluate((id) => {
    const spy = (globalThis as unknown as { __spy: { files: { tabId: number; documentId?: string }[]; funcs: Record<number, number> } }).__spy;
    return { files: spy.files.filter((f) => f.tabId === id), funcs: spy.funcs[id] ?? 0 };
  }, tabId);
}

async function open(path: string): Promise<{ page: Page; tabId: number }> {
  const page = await h.context.newPage();
  await page.goto(h.fixtureUrl(path));
  return { page, tabId: await h.tabIdOf(page) };
}

async function ok(tool: string, args: Record<string, unknown>) {
  const r = await h.callTool(tool, args);
  if (r.status !== 200) throw new Error(`${tool}: ${r.status} ${JSON.stringify(r.body).slice(0, 400)}`);
  return r.body.result;
}

test('the library is injected once per document; each call then injects one small script, page actions included', async () => {
  const { page, tabId } = await open('/plain.html');
  // Different arguments every call, as an agent sends them.
  for (let i = 0; i < 5; i++) expect((await ok('browser_query_elements', { tabId, selector: `button, x-${i}` })).total).toBe(1);
  const snap = await ok('browser_snapshot', { tabId });
  expect(snap.snapshot).toContain('hello world');
  const ref = /button Go \[(e\d+)\]/.exec(snap.snapshot)?.[1];
  expect(ref).toBeDefined();
  const before = await spied(tabId);
  expect(before.files.length).toBe(1);
  expect(before.files[0]!.documentId).toBeTruthy();
  // Page actions: one script each (no separate "is the page free" script first).
  await ok('browser_select_option', { tabId, selector: '#s', value: 'b' });
  await ok('browser_scroll', { tabId, y: 0 });
  await ok('browser_fill_form', { tabId, fields: [{ selector: '#i', value: 'filled' }] });
  await ok('browser_click_element', { tabId, ref });
  await ok('browser_get_tab_content', { tabId });
  const after = await spied(tabId);
  expect(after.files.length).toBe(1);
  expect(after.funcs - before.funcs).toBe(5);
  expect(await page.evaluate(() => ({ clicks: (window as any).clicks, s: (document.getElementById('s') as HTMLSelectElement).value, i: (document.getElementById('i') as HTMLInputElement).value }))).toEqual({ clicks: 1, s: 'b', i: 'filled' });
  await page.close();
});

test('after the tab navigates, the next call injects the library into the new document and works', async () => {
  const { page, tabId } = await open('/plain.html?nav=1');
  expect((await ok('browser_query_elements', { tabId, selector: 'p' })).elements[0].text).toBe('hello world');
  await page.goto(h.fixtureUrl('/other.html'));
  const r = await ok('browser_get_tab_content', { tabId });
  expect(r.title).toBe('other.html');
  expect(r.content).toContain('hello world');
  await ok('browser_select_option', { tabId, selector: '#s', label: 'Banana' });
  expect(await page.evaluate(() => (document.getElementById('s') as HTMLSelectElement).value)).toBe('b');
  const s = await spied(tabId);
  expect(s.files.length).toBe(2);
  expect(s.files[0]!.documentId).not.toBe(s.files[1]!.documentId);
  await page.close();
});

test('a tab the tools used gets the library as its next document commits, so the first call there sends one script; untouched tabs and refused pages get nothing', async () => {
  const used = await open('/plain.html?pre=1');
  await ok('browser_query_elements', { tabId: used.tabId, selector: 'p' });
  await used.page.goto(h.fixtureUrl('/other.html?pre=1'));
  // Before any call in the new document, its library is already on the way (or in).
  await waitUntil(async () => (await spied(used.tabId)).files.length === 2, 'the library for the new document', 10_000);
  const newDoc = (await spied(used.tabId)).files[1]!.documentId;
  const before = await spied(used.tabId);
  const snap = await ok('browser_snapshot', { tabId: used.tabId });
  expect(snap.snapshot).toContain('hello world');
  const after = await spied(used.tabId);
  expect(after.files.length).toBe(2);
  expect(after.files[1]!.documentId).toBe(newDoc);
  expect(after.funcs - before.funcs).toBe(1);

  // A tab no tool has run page code in: its navigations inject nothing.
  const untouched = await open('/plain.html?untouched=1');
  await untouched.page.goto(h.fixtureUrl('/other.html?untouched=1'));
  // A page the tools may not use (a data: document), in the used tab: nothing either.
  await used.page.goto('data:text/html,<p>not for the tools</p>');
  await new Promise((r) => setTimeout(r, 1_000));
  expect((await spied(untouched.tabId)).files.length).toBe(0);
  expect((await spied(used.tabId)).files.length).toBe(2);
  await untouched.page.close();
  await used.page.close();
});

test('a first call whose script reaches a new document before the library does nothing there and goes again: done once', async () => {
  const { page, tabId } = await open('/plain.html?first=1');
  const worker = await h.serviceWorker();
  await worker.evaluate(() => ((globalThis as any).__spy.delayFilesMs = 300));
  try {
    const before = await spied(tabId);
    const r = await ok('browser_select_option', { tabId, selector: '#s', value: 'b' });
    expect(r).toEqual({ value: 'b', label: 'Banana' });
    const after = await spied(tabId);
    expect(after.files.length - before.files.length).toBe(1);
    // The first script found no library; the second, sent once the file was in, chose the option.
    expect(after.funcs - before.funcs).toBe(2);
    expect(await page.evaluate(() => ({ s: (document.getElementById('s') as HTMLSelectElement).value, changes: (window as any).changes }))).toEqual({ s: 'b', changes: 1 });
  } finally {
    await worker.evaluate(() => ((globalThis as any).__spy.delayFilesMs = 0));
  }
  await page.close();
});

test('a document that lost the library (the worker took it for one that has it) gets it again', async () => {
  const { page, tabId } = await open('/plain.html?lost=1');
  await ok('browser_query_elements', { tabId, selector: 'p' });
  const worker = await h.serviceWorker();
  // Removed from the document's isolated world behind the worker's back.
  const removed = await worker.evaluate(async ({ tabId, key }) => {
    const [res] = await chrome.scripting.executeScript({ target: { tabId }, world: 'ISOLATED', func: (k: string) => delete (globalThis as any)[k] && !(k in globalThis), args: [key] });
    return res?.result;
  }, { tabId, key: libKey });
  expect(removed).toBe(true);
  expect((await ok('browser_query_elements', { tabId, selector: 'button' })).total).toBe(1);
  expect((await spied(tabId)).files.length).toBe(2);
  await page.close();
});

test('a page action the page started late, while its call still stands, is sent again and done', async () => {
  const { page, tabId } = await open('/plain.html?late=1');
  await ok('browser_query_elements', { tabId, selector: 'p' });
  const before = await spied(tabId);
  // Busy for 1.5 s: the action's first script starts long after its deadline, the call (30 s) stands.
  await page.evaluate(() => setTimeout(() => { const t = Date.now(); while (Date.now() - t < 1_500) {} }, 50));
  await new Promise((r) => setTimeout(r, 200));
  const r = await ok('browser_select_option', { tabId, selector: '#s', value: 'b' });
  expect(r).toEqual({ value: 'b', label: 'Banana' });
  expect(await page.evaluate(() => (document.getElementById('s') as HTMLSelectElement).value)).toBe('b');
  // The late script did nothing; the second one chose the option.
  expect((await spied(tabId)).funcs - before.funcs).toBe(2);
  await page.close();
});

/** A page that plants a fake library under the real name, fake refs and lying DOM methods, all in its own world. */
function hostilePage(): string {
  return `<!doctype html><title>Hostile</title><body>
<button id="b" onclick="window.clicks = (window.clicks || 0) + 1">Real</button>
<select id="s"><option value="a">Apple</option><option value="b">Banana</option></select>
<p>real text</p>
<script>
const fake = () => { window.fakeCalled = (window.fakeCalled || 0) + 1; return { total: 99, elements: [], iframes: 0, url: 'x', title: 'fake', elements: 0, snapshot: 'fake', frameIndex: -1, x: 1, y: 1, tag: 'fake', text: 'fake' }; };
window.__KEY__ = new Proxy({}, { get: () => fake });
window.__opentabs_refs__ = { next: 1, byRef: { get: () => document.querySelector('p') }, byEl: new WeakMap() };
const qs = Document.prototype.querySelector;
Document.prototype.querySelector = function () { window.fakeCalled = (window.fakeCalled || 0) + 1; return qs.call(this, 'p'); };
Element.prototype.querySelectorAll = function () { window.fakeCalled = (window.fakeCalled || 0) + 1; return []; };
Document.prototype.querySelectorAll = function () { window.fakeCalled = (window.fakeCalled || 0) + 1; return []; };
Element.prototype.getBoundingClientRect = function () { window.fakeCalled = (window.fakeCalled || 0) + 1; return new DOMRect(-500, -500, 0, 0); };
Object.defineProperty(HTMLElement.prototype, 'innerText', { get() { window.fakeCalled = (window.fakeCalled || 0) + 1; return 'fake'; } });
Date.now = () => 1e15;
</script></body>`.replace('__KEY__', libKey);
}

test('a page that plants a fake library, fake refs or lying DOM methods in its own world changes nothing', async () => {
  const { page, tabId } = await open('/hostile.html');
  const q = await ok('browser_query_elements', { tabId, selector: 'button, p' });
  expect(q.total).toBe(2);
  expect(q.elements.map((e: { text: string }) => e.text)).toEqual(['Real', 'real text']);
  const snap = await ok('browser_snapshot', { tabId });
  expect(snap.snapshot).toContain('real text');
  const ref = /button Real \[(e\d+)\]/.exec(snap.snapshot)?.[1];
  expect(ref).toBeDefined();
  await ok('browser_click_element', { tabId, ref });
  await ok('browser_select_option', { tabId, selector: '#s', value: 'b' });
  expect((await ok('browser_get_tab_content', { tabId })).content).toContain('real text');
  expect(await page.evaluate(() => ({ clicks: (window as any).clicks, s: (document.getElementById('s') as HTMLSelectElement).value, fake: (window as any).fakeCalled ?? 0 }))).toEqual({ clicks: 1, s: 'b', fake: 0 });
  await page.close();
});
