/**
 * Storage, cookies and browser_execute_script in Chromium. These start off (or ask): the test
 * shows the default refusal, then enables them the way `opentabs config` does (config.json).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';

const CSP_PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Strict</title>
<meta http-equiv="Content-Security-Policy" content="script-src 'none'"></head><body><p id="p">strict page</p></body></html>`;

let h: BrowserHarness;
let page: Page;
let tabId = 0;

beforeAll(async () => {
  h = await startBrowserHarness({
    routes: (req) => (new URL(req.url).pathname === '/h3/strict.html' ? new Response(CSP_PAGE, { headers: { 'content-type': 'text/html' } }) : undefined),
  });
  page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/pages/index.html'));
  tabId = await h.tabIdOf(page);
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

async function enable(...tools: string[]) {
  for (const t of tools) await h.srv.ctx.config.setToolPermission('browser', t, 'auto');
  h.srv.ctx.catalog.rebuild();
}

describe('storage, cookies and scripts', () => {
  test('dangerous tools start off and say how to enable them', async () => {
    for (const tool of ['browser_execute_script', 'browser_get_storage', 'browser_get_cookies']) {
      const r = await h.callTool(tool, tool === 'browser_get_cookies' ? { url: h.fixtureBase } : { tabId, code: '1', storageType: 'local' });
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe('permission_off');
    }
    const tools = (await (await fetch(`${h.url}/tools`, { headers: h.srv.auth })).json()) as { tools?: { name: string; permission: string }[] } | { name: string; permission: string }[];
    const list = Array.isArray(tools) ? tools : (tools.tools ?? []);
    expect(list.find((t) => t.name === 'browser_set_cookie')?.permission).toBe('ask');
  });

  test('browser_execute_script returns the value, awaits promises, reports exceptions, works under a strict CSP', async () => {
    await enable('browser_execute_script');
    const r = await h.callTool('browser_execute_script', { tabId, code: 'document.title + ":" + (1 + 2)' });
    expect(r.status).toBe(200);
    expect(r.body.result).toEqual({ type: 'string', value: 'Fixture Home:3' });
    const p = await h.callTool('browser_execute_script', { tabId, code: 'new Promise((r) => setTimeout(() => r({ ok: [1, 2] }), 20))' });
    expect(p.body.result.value).toEqual({ ok: [1, 2] });
    await h.callTool('browser_execute_script', { tabId, code: 'window.fromTool = 42' });
    expect(await page.evaluate(() => (window as unknown as { fromTool?: number }).fromTool)).toBe(42);
    const bad = await h.callTool('browser_execute_script', { tabId, code: 'throw new Error("boom")' });
    expect(bad.body.error.message).toContain('boom');
    const strict = await h.context.newPage();
    await strict.goto(h.fixtureUrl('/h3/strict.html'));
    const strictId = await h.tabIdOf(strict);
    const s = await h.callTool('browser_execute_script', { tabId: strictId, code: 'document.getElementById("p").textContent' });
    expect(s.body.result.value).toBe('strict page');
    await strict.close();
  });

  test('browser_get_storage reads localStorage and sessionStorage', async () => {
    await enable('browser_get_storage');
    await page.evaluate(() => {
      localStorage.setItem('token', 'abc');
      localStorage.setItem('theme', 'dark');
      sessionStorage.setItem('s', '1');
    });
    const all = await h.callTool('browser_get_storage', { tabId });
    expect(all.body.result).toEqual({ count: 2, entries: { token: 'abc', theme: 'dark' } });
    const one = await h.callTool('browser_get_storage', { tabId, storageType: 'session', key: 's' });
    expect(one.body.result).toEqual({ key: 's', value: '1' });
    const missing = await h.callTool('browser_get_storage', { tabId, key: 'nope' });
    expect(missing.body.result).toEqual({ key: 'nope', value: null });
  });

  test('cookies: set, read (also what the page sees), delete', async () => {
    await enable('browser_get_cookies', 'browser_set_cookie', 'browser_delete_cookies');
    const url = h.fixtureUrl('/pages/index.html');
    const set = await h.callTool('browser_set_cookie', { url, name: 'sid', value: 'v1' });
    expect(set.status).toBe(200);
    expect(set.body.result).toMatchObject({ name: 'sid', value: 'v1', domain: '127.0.0.1', session: true });
    expect(await page.evaluate(() => document.cookie)).toContain('sid=v1');
    const got = await h.callTool('browser_get_cookies', { url, name: 'sid' });
    expect(got.body.result.cookies).toEqual([expect.objectContaining({ name: 'sid', value: 'v1' })]);
    const del = await h.callTool('browser_delete_cookies', { url, name: 'sid' });
    expect(del.body.result.removed).toBe(true);
    expect((await h.callTool('browser_get_cookies', { url })).body.result.cookies).toEqual([]);
    expect(await page.evaluate(() => document.cookie)).not.toContain('sid=');
    const bad = await h.callTool('browser_get_cookies', { url: 'chrome://settings' });
    expect(bad.body.error.code).toBe('invalid_arguments');
  });
});
