/**
 * Other extensions draw their own UI inside the pages the agent reads: a password manager's inline
 * menu (the user's accounts, a one-time code, a "Fill" button) under a custom element with a closed
 * shadow root, closed so that the page cannot read it. The snapshot reads closed shadow roots
 * through the extension's chrome.dom, and so showed that menu to the agent, with a ref to press
 * its buttons, a click's "covered by" error quoted its text, and browser_click_at pressed them.
 * Content scripts cannot define custom elements (their world has no registry): a closed root on a
 * custom element the page never defined is left closed now, as the page sees it, and neither
 * the mouse tools' events nor keys go into it (as none go into another extension's page in an
 * iframe). The page's own closed roots (on the elements it defined) are still read. Performed as an agent would (REST tool calls) with a real second
 * extension loaded beside OpenTabs.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(180_000);

const ACCOUNT = 'alice.s23a@example.com';
const CODE = '493021';

/** The password manager's content script: its menu, fixed over the top left of every page, in a closed shadow root. */
const CONTENT_SCRIPT = `
const host = document.createElement('pm-inline-menu');
host.style.cssText = 'position:fixed;left:0;top:0;width:320px;height:60px;z-index:2147483647';
const root = host.attachShadow({ mode: 'closed' });
root.innerHTML = '<div role="listbox" style="background:#fff;width:320px;height:60px"><button id="fill" style="width:320px;height:60px">Fill ${ACCOUNT} code ${CODE}</button></div>';
let presses = 0;
root.getElementById('fill').addEventListener('mousedown', () => { host.dataset.presses = String(++presses); });
if (location.search === '?focus') {
  // Its search field takes focus, as such menus do when they open; keys there are the extension's.
  root.firstElementChild.insertAdjacentHTML('beforeend', '<input id="search">');
  let keys = 0;
  root.getElementById('search').addEventListener('keydown', () => { host.dataset.keys = String(++keys); });
  document.addEventListener('pm-open', () => {
    root.getElementById('search').focus();
    host.dataset.focused = String(root.activeElement === root.getElementById('search'));
  });
}
document.body.appendChild(host);
`;

/** A login page: a button under where the menu is drawn, and a web component of its own with a closed root. */
const LOGIN = `<!doctype html><title>login</title>
<script>customElements.define('site-card', class extends HTMLElement { constructor() { super(); this.attachShadow({ mode: 'closed' }).innerHTML = '<p>Welcome back</p><button>Sign in</button>'; } });</script>
<body style="margin:0"><button id="under" style="position:absolute;left:10px;top:10px;width:100px;height:30px">Under</button>
<div id="src" draggable="true" style="position:absolute;left:400px;top:10px;width:60px;height:30px">Drag me</div>
<div style="margin-top:120px"><input aria-label="Email"><site-card></site-card></div>`;

let h: BrowserHarness;
let extDir = '';
let page: Page;
let tabId = 0;
const texts: string[] = [];

beforeAll(async () => {
  extDir = mkdtempSync(join(tmpdir(), 'opentabs-s23a-pm-'));
  writeFileSync(join(extDir, 'manifest.json'), JSON.stringify({ manifest_version: 3, name: 'Password manager', version: '1.0', content_scripts: [{ matches: ['<all_urls>'], js: ['menu.js'], run_at: 'document_idle' }] }));
  writeFileSync(join(extDir, 'menu.js'), CONTENT_SCRIPT);
  h = await startBrowserHarness({
    permissions: { browser: { default: 'auto' } },
    extraExtensions: [extDir],
    routes: (req) => (new URL(req.url).pathname === '/s23a-login.html' ? new Response(LOGIN, { headers: { 'content-type': 'text/html; charset=utf-8' } }) : undefined),
  });
  page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/s23a-login.html'));
  await page.waitForSelector('pm-inline-menu', { state: 'attached' });
  tabId = await h.tabIdOf(page);
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (extDir) rmSync(extDir, { recursive: true, force: true });
});

async function call(name: string, args: Record<string, unknown>) {
  const r = await h.callTool(name, { tabId, ...args });
  texts.push(JSON.stringify(r.body));
  return r;
}

describe('another extension\'s UI in a closed shadow root', () => {
  test('the page itself cannot read it (it is the extension\'s, not the page\'s)', async () => {
    const seen = await page.evaluate(() => ({ root: document.querySelector('pm-inline-menu')!.shadowRoot, text: document.documentElement.innerText }));
    expect(seen.root).toBeNull();
    expect(seen.text).not.toContain('493021');
  });

  test('browser_snapshot does not show it nor give a ref into it; the page\'s own closed root is still read', async () => {
    for (const args of [{}, { interactiveOnly: true }]) {
      const r = await call('browser_snapshot', args);
      expect(r.status).toBe(200);
      const snap = r.body.result.snapshot as string;
      expect(snap).not.toContain(ACCOUNT);
      expect(snap).not.toContain(CODE);
      expect(snap).toMatch(/button Sign in \[e\d+\]/);
      if (!('interactiveOnly' in args)) expect(snap).toContain('Welcome back');
    }
  });

  test('a click on the page\'s element it covers is refused without quoting it', async () => {
    const r = await call('browser_click_element', { selector: '#under' });
    expect([r.status, r.body.error?.code]).toEqual([404, 'not_found']);
    expect(r.body.error.message).toContain('covered by <pm-inline-menu>');
  });

  test('a drag onto the page\'s element it covers is refused, and nothing reaches it', async () => {
    const r = await call('browser_drag', { sourceSelector: '#src', targetSelector: '#under' });
    expect([r.status, r.body.error?.code]).toEqual([404, 'not_found']);
    expect(r.body.error.message).toContain('another extension\'s own controls');
    expect(await page.evaluate(() => document.querySelector('pm-inline-menu')!.getAttribute('data-presses'))).toBeNull();
  });

  test('browser_click_at and browser_move_mouse at its controls are refused, and nothing reaches them; the page around takes clicks', async () => {
    for (const tool of ['browser_click_at', 'browser_move_mouse']) {
      const r = await call(tool, { x: 200, y: 30 });
      expect([tool, r.status, r.body.error?.code]).toEqual([tool, 403, 'page_not_allowed']);
      expect(r.body.error.message).toContain('another extension\'s own controls');
    }
    expect(await page.evaluate(() => document.querySelector('pm-inline-menu')!.getAttribute('data-presses'))).toBeNull();
    const box = (await page.locator('input').boundingBox())!;
    const ok = await call('browser_click_at', { x: Math.round(box.x + 5), y: Math.round(box.y + 5) });
    expect(ok.status).toBe(200);
    expect(await page.evaluate(() => document.activeElement?.tagName)).toBe('INPUT');
    // The page's own web component (its closed root) takes clicks as before.
    const card = (await page.locator('site-card').boundingBox())!;
    const own = await call('browser_click_at', { x: Math.round(card.x + card.width / 2), y: Math.round(card.y + card.height / 2) });
    expect(own.status).toBe(200);
  });

  test('browser_press_key is refused while focus is in its controls; a page field focused first takes the key', async () => {
    const other = await h.context.newPage();
    try {
      await other.goto(h.fixtureUrl('/s23a-login.html?focus'));
      await other.bringToFront();
      await other.waitForSelector('pm-inline-menu', { state: 'attached' });
      await other.evaluate(() => document.dispatchEvent(new Event('pm-open')));
      expect(await other.evaluate(() => document.querySelector('pm-inline-menu')!.getAttribute('data-focused'))).toBe('true');
      const otherTab = await h.tabIdOf(other);
      for (const key of ['a', 'Enter']) {
        const r = await h.callTool('browser_press_key', { tabId: otherTab, key });
        texts.push(JSON.stringify(r.body));
        expect([key, r.status, r.body.error?.code]).toEqual([key, 403, 'page_not_allowed']);
        expect(r.body.error.message).toContain('another extension\'s own controls');
      }
      expect(await other.evaluate(() => document.querySelector('pm-inline-menu')!.getAttribute('data-keys'))).toBeNull();
      const ok = await h.callTool('browser_press_key', { tabId: otherTab, selector: 'input', key: 'a' });
      expect(ok.status).toBe(200);
      expect(await other.evaluate(() => (document.querySelector('input') as HTMLInputElement).value)).toBe('a');
    } finally {
      await other.close();
    }
  });

  test('no response carried the extension\'s text', () => {
    expect(texts.length).toBe(10);
    for (const t of texts) {
      expect(t).not.toContain(ACCOUNT);
      expect(t).not.toContain(CODE);
    }
  });
});
