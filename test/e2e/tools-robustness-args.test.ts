/**
 * Built-in tools called over MCP (the official SDK client) with wrong types and edge values, in
 * Chromium with the real extension: each ends in an error naming the argument or the problem, and
 * none reports a success that did nothing. A selector that is not valid CSS is the caller's
 * mistake everywhere (invalid_arguments; most element tools said not_found); typing into a button,
 * a disabled or a read-only field, or choosing in a disabled select, is refused (each reported
 * success); a tab showing Chrome's error page says so (was "Frame with ID 0 is showing error page"
 * as an internal error); a result too big for the one frame it travels in is result_too_large (it
 * dropped the extension's connection, failing every call in flight). Also: the snapshot shows open
 * shadow roots (web components were blank) with refs the other tools take; a selector pierces open
 * shadow roots in every element tool (styles, query, scroll, select and element screenshots said
 * "No element matches"); an MCP client cancelling a long wait stops it in the page.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Page } from 'playwright-core';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';
import { connectMcp } from '../harness/fake-extension.ts';

const PAGE = `<!doctype html><html><head><title>Args</title></head><body>
<button id="b" onclick="window.clicks = (window.clicks || 0) + 1">B</button>
<input id="field" value="keep"><input id="off" value="keep" disabled><input id="ro" value="keep" readonly>
<select id="s"><option value="a">A</option></select><select id="s-off" disabled><option value="a">A</option><option value="b">B</option></select>
<div id="host"></div>
<script>
  const root = document.getElementById('host').attachShadow({ mode: 'open' });
  root.innerHTML = '<p>Inside the component</p><button id="inner">Shadow button</button><select id="inner-sel"><option value="x">X</option><option value="y">Y</option></select><slot></slot>';
  root.getElementById('inner').addEventListener('click', () => { window.inner = (window.inner || 0) + 1; });
</script>
</body></html>`;

let h: BrowserHarness;
let client: Client;
let page: Page;
let tabId = 0;

beforeAll(async () => {
  h = await startBrowserHarness({
    permissions: { browser: { tools: { browser_execute_script: 'auto' } } },
    routes: (req) => (new URL(req.url).pathname === '/args.html' ? new Response(PAGE, { headers: { 'content-type': 'text/html' } }) : undefined),
  });
  page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/args.html'));
  tabId = await h.tabIdOf(page);
  client = await connectMcp(h.url, h.srv.secret);
}, 60_000);

afterAll(async () => {
  await client?.close();
  await h?.stop();
});

async function mcp(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<{ isError: boolean; text: string; structured?: any }> {
  const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 30_000, ...(signal ? { signal } : {}) });
  const text = (r.content as { type: string; text?: string }[]).filter((c) => c.type === 'text').map((c) => c.text).join(' ');
  return { isError: r.isError === true, text, structured: r.structuredContent };
}

describe('wrong types and edge values', () => {
  test('schema violations name the argument', async () => {
    for (const [name, args, where] of [
      ['browser_snapshot', { tabId: -1 }, '/tabId'],
      ['browser_snapshot', { tabId: '1' }, '/tabId'],
      ['browser_snapshot', { tabId: 1.5 }, '/tabId'],
      ['browser_snapshot', {}, '/tabId'],
      ['browser_click_element', { tabId, selector: '#b', button: 'side' }, '/button'],
      ['browser_click_element', { tabId, ref: 'x1' }, '/ref'],
      ['browser_navigate_tab', { tabId, url: '' }, '/url'],
      ['browser_wait_for_element', { tabId, selector: '#b', state: 'gone' }, '/state'],
      ['browser_screenshot_tab', { tabId, format: 'gif' }, '/format'],
    ] as const) {
      const r = await mcp(name, args);
      expect({ name, isError: r.isError }).toEqual({ name, isError: true });
      expect(r.text).toContain(`at ${where}`);
      expect(r.text).toContain('[invalid_arguments]');
    }
  });

  test('a tab id no tab has, however large, is tab_closed naming it', async () => {
    const big = 2 ** 53 - 1;
    for (const name of ['browser_snapshot', 'browser_close_tab', 'browser_navigate_tab']) {
      const r = await mcp(name, { tabId: big, ...(name === 'browser_navigate_tab' ? { url: 'about:blank' } : {}) });
      expect({ name, isError: r.isError }).toEqual({ name, isError: true });
      expect(r.text).toContain(`No tab with id ${big}`);
      expect(r.text).toContain('[tab_closed]');
    }
  });

  test('a selector that is not valid CSS is invalid_arguments in every element tool', async () => {
    for (const [name, extra] of [
      ['browser_snapshot', {}],
      ['browser_click_element', {}],
      ['browser_type_text', { text: 'x' }],
      ['browser_query_elements', {}],
      ['browser_get_tab_content', {}],
      ['browser_get_styles', {}],
      ['browser_screenshot_tab', {}],
      ['browser_select_option', { value: 'a' }],
      ['browser_scroll', {}],
      ['browser_wait_for_element', { timeoutMs: 100 }],
    ] as const) {
      const r = await mcp(name, { tabId, selector: 'a[', ...extra });
      expect({ name, isError: r.isError, code: r.text.match(/\[(\w+)\]$/)?.[1] }).toEqual({ name, isError: true, code: 'invalid_arguments' });
      expect(r.text).toContain('Invalid CSS selector: a[');
    }
  });

  test('typing into something that takes no text, or choosing in a disabled select, is refused, and nothing changes', async () => {
    for (const [selector, why] of [
      ['#b', 'takes no typed text'],
      ['#off', 'is disabled'],
      ['#ro', 'is read-only'],
    ] as const) {
      const r = await mcp('browser_type_text', { tabId, selector, text: 'typed' });
      expect({ selector, isError: r.isError }).toEqual({ selector, isError: true });
      expect(r.text).toContain(why);
    }
    expect(await page.evaluate(() => [...document.querySelectorAll('input')].map((i) => i.value))).toEqual(['keep', 'keep', 'keep']);
    // Nor is an option chosen in a disabled select.
    const sel = await mcp('browser_select_option', { tabId, selector: '#s-off', value: 'b' });
    expect(sel.isError).toBe(true);
    expect(sel.text).toContain('is disabled');
    expect(await page.inputValue('#s-off')).toBe('a');
    // A real field still takes it.
    expect((await mcp('browser_type_text', { tabId, selector: '#field', text: 'typed' })).isError).toBe(false);
    expect(await page.inputValue('#field')).toBe('typed');
  });
});

test('the snapshot shows an open shadow root, and its refs work with the other tools', async () => {
  const r = await mcp('browser_snapshot', { tabId });
  expect(r.isError).toBe(false);
  expect(r.text).toContain('Inside the component');
  const ref = /button Shadow button \[(e\d+)\]/.exec(r.text)?.[1];
  expect(ref).toBeDefined();
  expect((await mcp('browser_click_element', { tabId, ref })).isError).toBe(false);
  expect(await page.evaluate(() => (window as any).inner)).toBe(1);
});

test('a selector reaches into open shadow roots in every element tool, as its description says', async () => {
  for (const [name, args] of [
    ['browser_query_elements', { selector: '#inner' }],
    ['browser_get_styles', { selector: '#inner', properties: ['display'] }],
    ['browser_scroll', { selector: '#inner' }],
    ['browser_screenshot_tab', { selector: '#inner' }],
    ['browser_select_option', { selector: '#inner-sel', value: 'y' }],
  ] as const) {
    const r = await mcp(name, { tabId, ...args });
    expect({ name, isError: r.isError, text: r.isError ? r.text : '' }).toEqual({ name, isError: false, text: '' });
  }
  expect((await mcp('browser_query_elements', { tabId, selector: 'button' })).structured.total).toBe(2);
  expect(await page.evaluate(() => (document.getElementById('host')!.shadowRoot!.getElementById('inner-sel') as HTMLSelectElement).value)).toBe('y');
});

test('an MCP client cancelling a long wait stops it in the extension and in the page', async () => {
  const waitsInPage = async () => {
    const sw = await h.serviceWorker();
    return sw.evaluate(async (id) => {
      const [res] = await chrome.scripting.executeScript({ target: { tabId: id }, world: 'ISOLATED', func: () => (globalThis as any).__opentabs_waits__?.size ?? 0 });
      return res?.result as number;
    }, tabId);
  };
  const running = async () => (await h.serviceWorker()).evaluate(() => (globalThis as any).__opentabs.panelState().running.length as number);
  const ac = new AbortController();
  const call = mcp('browser_wait_for', { tabId, text: 'Never shows up', timeoutMs: 25_000 }, ac.signal).catch((err) => err);
  await waitUntil(async () => (await waitsInPage()) === 1, 'the wait to run in the page');
  ac.abort();
  expect(await call).toBeInstanceOf(Error);
  await waitUntil(async () => (await waitsInPage()) === 0 && (await running()) === 0, 'the wait to stop in the page and the extension', 10_000);
});

test('a result too big for one frame to the server is result_too_large, and the extension stays connected', async () => {
  const other = h.callTool('browser_wait_for', { tabId, time: 2_000 });
  // 6 Mi characters of 2 bytes each in UTF-8: 12 MB, over the server's 10 MB frame limit.
  const r = await h.callTool('browser_execute_script', { tabId, code: "'é'.repeat(6 * 1024 * 1024)" });
  expect({ status: r.status, code: r.body.error?.code }).toEqual({ status: 502, code: 'result_too_large' });
  expect(r.body.error.message).toContain('The result of browser_execute_script is 12.0 MB');
  expect(r.body.error.message).toContain('return less from the script');
  // It cut the extension's socket: every call in flight failed, and the next ones until it reconnected.
  expect((await other).status).toBe(200);
  expect((await h.health()).extensionConnected).toBe(true);
  expect((await mcp('browser_execute_script', { tabId, code: "'é'.repeat(1024)" })).isError).toBe(false);
}, 60_000);

test("a tab showing Chrome's error page says so", async () => {
  const other = await h.context.newPage();
  await other.goto(h.fixtureUrl('/args.html?error-page'));
  const id = await h.tabIdOf(other);
  // Port 1 is one Chrome refuses to load (ERR_UNSAFE_PORT): its error page stays in the tab.
  const nav = await mcp('browser_navigate_tab', { tabId: id, url: 'http://127.0.0.1:1/', timeoutMs: 5_000 });
  expect(nav.isError).toBe(true);
  for (const [name, args] of [
    ['browser_snapshot', {}],
    ['browser_click_element', { selector: '#b' }],
  ] as const) {
    const r = await mcp(name, { tabId: id, ...args });
    expect({ name, isError: r.isError }).toEqual({ name, isError: true });
    expect(r.text).toContain("shows Chrome's error page");
    expect(r.text).toContain('[not_available]');
  }
  await other.close();
});
