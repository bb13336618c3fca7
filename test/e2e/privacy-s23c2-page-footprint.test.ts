/**
 * The page-tools observer runs in every http(s) page the user opens. A page must not be able to
 * tell from it that OpenTabs is installed: its first script looks for a global, reads the text,
 * name and length of Object.defineProperty, Reflect.defineProperty and Function.prototype.toString,
 * and compares the own properties of window and navigator with a fresh frame's, and finds nothing;
 * page tools defined with defineProperty (as polyfills do) or by assignment still work. Real
 * Chromium with the real extension.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

/** Runs first in the page (right after the extension's document_start script) and records what it sees. */
const PROBE = `<!doctype html><html><head><script>
(() => {
  const frame = document.createElement('iframe');
  document.documentElement.appendChild(frame);
  const fresh = frame.contentWindow;
  // Frame indices (window[0] is the frame made here) are not properties anyone added.
  const extra = (mine, theirs) => mine.filter((k) => !theirs.includes(k) && !/^\\d+$/.test(k)).map(String);
  const native = (fn, name) => ({
    text: Function.prototype.toString.call(fn),
    viaMethod: fn.toString(),
    otherFrame: fresh.Function.prototype.toString.call(fn),
    name: fn.name,
    length: fn.length,
    hasPrototype: 'prototype' in fn,
    own: Object.getOwnPropertyNames(fn),
  });
  window.seen = {
    globalKey: '__opentabs_page_tools__' in window,
    windowNames: extra(Object.getOwnPropertyNames(window), Object.getOwnPropertyNames(fresh)),
    windowSymbols: Object.getOwnPropertySymbols(window).map(String),
    navigatorNames: Object.getOwnPropertyNames(navigator),
    navigatorSymbols: Object.getOwnPropertySymbols(navigator).map(String),
    defineProperty: native(Object.defineProperty),
    reflectDefineProperty: native(Reflect.defineProperty),
    toString: native(Function.prototype.toString),
    freshDefineProperty: native(fresh.Object.defineProperty),
    freshReflectDefineProperty: native(fresh.Reflect.defineProperty),
    freshToString: native(fresh.Function.prototype.toString),
    modelContextIn: 'modelContext' in navigator,
  };
  frame.remove();
})();
</script></head><body><h1>Probe</h1><script>
  // A polyfill's way: defineProperty, then tools registered at once.
  const tools = new Map();
  Object.defineProperty(document, 'modelContext', { configurable: true, enumerable: true, writable: false, value: { registerTool(t) { tools.set(t.name, t); }, unregisterTool(n) { tools.delete(n); } } });
  document.modelContext.registerTool({ name: 'via_define', description: 'Defined with defineProperty', inputSchema: { type: 'object', properties: {} }, execute: () => ({ content: [{ type: 'text', text: 'define ran' }] }) });
</script></body></html>`;

/** A hand-written shim assigns navigator.modelContext. */
const SHIM = `<!doctype html><title>Shim</title><body><script>
navigator.modelContext = { registerTool(t) { window.t = t; } };
navigator.modelContext.registerTool({ name: 'via_assign', description: 'Assigned', inputSchema: { type: 'object', properties: {} }, execute: () => ((window.runs = (window.runs || 0) + 1), { content: [{ type: 'text', text: 'assign ran' }] }) });
</script></body>`;

let h: BrowserHarness;

beforeAll(async () => {
  h = await startBrowserHarness({
    routes: (req) => {
      const { pathname } = new URL(req.url);
      if (pathname === '/probe.html') return new Response(PROBE, { headers: { 'content-type': 'text/html' } });
      if (pathname === '/shim.html') return new Response(SHIM, { headers: { 'content-type': 'text/html' } });
      return undefined;
    },
  });
  await h.srv.ctx.config.setOriginPermission(new URL(h.fixtureBase).origin, 'auto');
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

test('a page finds no global, no replaced-looking function and no added property', async () => {
  const page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/probe.html'));
  // The extension's script did run in this page: its tool is listed.
  const name = `tab${await h.tabIdOf(page)}_via_define`;
  await waitUntil(() => h.srv.ctx.catalog.current().get(name) !== undefined, 'the page tool listed', 15_000);
  const seen = await page.evaluate(() => (window as any).seen);
  expect(seen.globalKey).toBe(false);
  expect(seen.windowNames).toEqual([]);
  expect(seen.windowSymbols).toEqual([]);
  expect(seen.navigatorNames).toEqual([]);
  expect(seen.navigatorSymbols).toEqual([]);
  expect(seen.modelContextIn).toBe(false);
  for (const [mine, fresh, text] of [
    ['defineProperty', 'freshDefineProperty', 'function defineProperty() { [native code] }'],
    ['reflectDefineProperty', 'freshReflectDefineProperty', 'function defineProperty() { [native code] }'],
    ['toString', 'freshToString', 'function toString() { [native code] }'],
  ] as const) {
    const m = seen[mine];
    const f = seen[fresh];
    expect([mine, m.text]).toEqual([mine, text]);
    expect([mine, m.viaMethod]).toEqual([mine, text]);
    expect([mine, { name: m.name, length: m.length, hasPrototype: m.hasPrototype, own: m.own }]).toEqual([mine, { name: f.name, length: f.length, hasPrototype: f.hasPrototype, own: f.own }]);
    // Another frame's toString shows no source of ours either.
    expect([mine, m.otherFrame.includes('[native code]')]).toEqual([mine, true]);
  }
  const r = await h.callTool(name, {});
  expect(r.status).toBe(200);
  expect((r.body.result as { content: { text: string }[] }).content.at(-1)!.text).toBe('define ran');
  await page.close();
});

test('a tool of a hand-written navigator.modelContext (assigned) still works', async () => {
  const page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/shim.html'));
  const name = `tab${await h.tabIdOf(page)}_via_assign`;
  await waitUntil(() => h.srv.ctx.catalog.current().get(name) !== undefined, 'the shim tool listed', 15_000);
  const r = await h.callTool(name, {});
  expect(r.status).toBe(200);
  expect((r.body.result as { content: { text: string }[] }).content.at(-1)!.text).toBe('assign ran');
  await page.close();
});

test('Object.defineProperty behaves as the browser’s: results, errors and other keys', async () => {
  const page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/pages/index.html?footprint'));
  const out = await page.evaluate(() => {
    const o = {};
    const same = Object.defineProperty(o, 'x', { value: 1 }) === o;
    const reflected = Reflect.defineProperty(Object.freeze({}), 'y', { value: 1 });
    let error = '';
    try {
      Object.defineProperty(Object.freeze({}), 'z', { value: 1 });
    } catch (e) {
      error = `${(e as Error).name}: ${(e as Error).message}`;
    }
    return { same, reflected, error, x: (o as any).x };
  });
  expect(out).toEqual({ same: true, reflected: false, error: 'TypeError: Cannot define property z, object is not extensible', x: 1 });
  await page.close();
});

test('injected again into a page that has it (an install or update over open tabs), the observer stays one: a call runs once', async () => {
  const page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/shim.html?again'));
  const tabId = await h.tabIdOf(page);
  const name = `tab${tabId}_via_assign`;
  await waitUntil(() => h.srv.ctx.catalog.current().get(name) !== undefined, 'the shim tool listed', 15_000);
  await h.worker.evaluate((id: number) => chrome.scripting.executeScript({ target: { tabId: id }, world: 'MAIN', files: ['page-tools-main.js'] }).then(() => true), tabId);
  const r = await h.callTool(name, {});
  expect(r.status).toBe(200);
  expect(await page.evaluate(() => (window as any).runs)).toBe(1);
  const seen = await page.evaluate(() => ({ text: Function.prototype.toString.call(Object.defineProperty), global: Object.getOwnPropertyNames(window).filter((k) => /opentabs/i.test(k)) }));
  expect(seen).toEqual({ text: 'function defineProperty() { [native code] }', global: [] });
  await page.close();
});
