/**
 * browser_type_text with keystrokes: true sends one key after another, over a while in which the
 * page runs: each key is let through by the same guard as browser_press_key's, and typing stops
 * when the page changes under it. Performed as an agent would (REST tool calls), the pages loaded
 * with Playwright, which also reads what the other frames and pages got:
 * - a page that adds an iframe of a page tools may not use (a hidden file) when its field holds
 *   three characters, and focuses it once loaded: no later key reaches that frame;
 * - a page that navigates away when its field holds three characters: the next page's focused
 *   field gets none of the rest;
 * - a key that opens an alert: the call returns with the dialog, and no key follows once the
 *   dialog is answered.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allowFileUrls, startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
let home = '';
const LONG = 'abcdefghijklmnopqrstuvwxyz'.repeat(8);

const html = (body: string) => new Response(`<!doctype html><meta charset="utf-8">${body}`, { headers: { 'content-type': 'text/html' } });
const routes = (req: Request) => {
  const path = new URL(req.url).pathname;
  if (path === '/g2-leave.html') return html(`<title>Leave</title><input id="q"><script>q.addEventListener('keyup', () => { if (q.value.length === 3) location.href = '/g2-next.html'; });</script>`);
  if (path === '/g2-next.html') return html(`<title>Next</title><input id="n" autofocus><script>window.got = []; addEventListener('keydown', (e) => got.push(e.key), true); n.focus();</script>`);
  if (path === '/g2-alert.html') return html(`<title>Alert</title><input id="q"><script>q.addEventListener('keyup', () => { if (q.value.length === 3) alert('three'); });</script>`);
  return undefined;
};

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'opentabs-s22g2-keys-'));
  mkdirSync(join(home, '.ssh'));
  mkdirSync(join(home, 'site'));
  // The refused frame: a field that takes focus with its frame, telling its page of every key.
  writeFileSync(
    join(home, '.ssh', 'menu.html'),
    `<!doctype html><body><input id="i"><script>const i = document.getElementById('i'); addEventListener('focus', () => i.focus()); addEventListener('keydown', (e) => parent.postMessage('key ' + e.key, '*'), true);</script>`,
  );
  writeFileSync(join(home, 'site', 'plain.html'), '<!doctype html><p>note</p>');
  writeFileSync(
    join(home, 'site', 'grow.html'),
    `<!doctype html><body><input id="name" aria-label="Name"><script>
      window.got = [];
      addEventListener('message', (e) => window.got.push(String(e.data)));
      const name = document.getElementById('name');
      name.addEventListener('keyup', () => {
        if (name.value.length !== 3) return;
        const f = document.createElement('iframe');
        f.src = 'file://${home}/.ssh/menu.html';
        f.onload = () => { f.dataset.loaded = '1'; f.focus(); };
        document.body.append(f);
      });
    </script>`,
  );
  h = await startBrowserHarness({ routes, permissions: { browser: { default: 'auto' } } });
  await allowFileUrls(h, `file://${home}/site/plain.html`);
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

test('a refused frame added and focused while keys are typed gets none of them', async () => {
  const page = await h.context.newPage();
  try {
    await page.goto(`file://${home}/site/grow.html`);
    const tabId = await h.tabIdOf(page);
    const r = await h.callTool('browser_type_text', { tabId, selector: '#name', text: LONG, keystrokes: true });
    expect(r.status).not.toBe(200);
    expect(r.body.error.code).toBe('page_not_allowed');
    await waitUntil(() => page.evaluate(() => (document.querySelector('iframe') as HTMLElement | null)?.dataset.loaded === '1' || null), 'the iframe to load');
    await page.evaluate(() => new Promise((res) => setTimeout(res, 300)));
    expect(await page.evaluate(() => (window as unknown as { got: string[] }).got)).toEqual([]);
    const typed = await page.inputValue('#name');
    expect(LONG.startsWith(typed) && typed.length >= 3 && typed.length < LONG.length).toBe(true);
  } finally {
    await page.close();
  }
});

test('a page that navigates away while keys are typed: the next page gets none of them', async () => {
  const page = await h.context.newPage();
  try {
    await page.goto(h.fixtureUrl('/g2-leave.html'));
    const tabId = await h.tabIdOf(page);
    const r = await h.callTool('browser_type_text', { tabId, selector: '#q', text: LONG, keystrokes: true });
    expect(r.status).not.toBe(200);
    expect(r.body.error.message).toMatch(/started loading another page while the text was typed: \d+ of 208 characters were typed, the rest not/);
    await waitUntil(() => (page.url().endsWith('/g2-next.html') ? page.evaluate(() => document.readyState === 'complete' || null) : null), 'the next page');
    await page.evaluate(() => new Promise((res) => setTimeout(res, 300)));
    expect(await page.evaluate(() => (window as unknown as { got: string[] }).got)).toEqual([]);
    expect(await page.inputValue('#n')).toBe('');
  } finally {
    await page.close();
  }
});

test('a key that opens an alert ends the typing: none follows once it is answered', async () => {
  const page = await h.context.newPage();
  page.on('dialog', () => {}); // answered through the tools
  try {
    await page.goto(h.fixtureUrl('/g2-alert.html'));
    const tabId = await h.tabIdOf(page);
    const r = await h.callTool('browser_type_text', { tabId, selector: '#q', text: 'abcdefgh', keystrokes: true, submit: true });
    expect(r.status).toBe(200);
    expect(r.body.result).toMatchObject({ typed: 3, submitted: false, dialog: { type: 'alert', message: 'three' } });
    expect((await h.callTool('browser_handle_dialog', { tabId })).status).toBe(200);
    await page.evaluate(() => new Promise((res) => setTimeout(res, 300)));
    expect(await page.inputValue('#q')).toBe('abc');
  } finally {
    await page.close();
  }
});
