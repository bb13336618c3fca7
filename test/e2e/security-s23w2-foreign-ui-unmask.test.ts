/**
 * Another extension's own controls drawn in the page (a password manager's menu with an account
 * and a one-time code, under a closed shadow root on a custom element) were told from the page's
 * own web components by whether the page defined the element's name. A hostile page can define
 * any name: `customElements.define('pm-inline-menu', class extends HTMLElement {})`, before the
 * extension makes its element or after, and the snapshot then read the menu's account and code,
 * browser_click_at pressed its button, keys typed into its field and the screenshot showed it. Now a closed root is the
 * page's only when the page's own code attached it: both attacks find the menu left out of the
 * snapshot, refused to the mouse and the keys and hidden in the screenshot, while the page's own closed web
 * component is still read. Performed as an agent would (REST tool calls) with a real second
 * extension loaded beside OpenTabs.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { resultOf, startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(180_000);

const ACCOUNT = 'mallory.w2@example.com';
const CODE = '817263';
/** The menu's background: a colour the page never uses. */
const MARKER = [255, 0, 200];
/** The page's own block, under the menu. */
const GREEN = [0, 160, 0];

/** The password manager's content script: its menu, fixed over the top left of every page, in a closed shadow root. */
const CONTENT_SCRIPT = `
const host = document.createElement('pm-inline-menu');
host.style.cssText = 'position:fixed;left:0;top:0;width:320px;height:120px;z-index:2147483647';
const root = host.attachShadow({ mode: 'closed' });
root.innerHTML = '<div style="background:rgb(${MARKER.join(',')});width:320px;height:120px"><button id="fill" style="width:320px;height:60px">Fill ${ACCOUNT} code ${CODE}</button></div>';
let presses = 0;
root.getElementById('fill').addEventListener('mousedown', () => { host.dataset.presses = String(++presses); });
// Its search field takes focus when the menu opens; keys there are the extension's.
root.firstElementChild.insertAdjacentHTML('beforeend', '<input id="search">');
let keys = 0;
root.getElementById('search').addEventListener('keydown', () => { host.dataset.keys = String(++keys); });
document.addEventListener('pm-open', () => {
  root.getElementById('search').focus();
  host.dataset.focused = String(root.activeElement === root.getElementById('search'));
});
document.body.appendChild(host);
document.documentElement.dataset.menu = 'drawn';
`;

/**
 * The hostile page: with ?before it defines the menu's element name before the extension makes
 * its element, with ?after once the menu is in the page. Its own web component has a closed root.
 */
const PAGE = `<!doctype html><title>shop</title>
<script>
  const unmask = () => { customElements.define('pm-inline-menu', class extends HTMLElement {}); document.documentElement.dataset.defined = 'yes'; };
  if (location.search === '?before') unmask();
  if (location.search === '?after') {
    const seen = new MutationObserver(() => { if (document.querySelector('pm-inline-menu')) { seen.disconnect(); unmask(); } });
    seen.observe(document, { subtree: true, childList: true });
  }
  customElements.define('site-card', class extends HTMLElement { constructor() { super(); this.attachShadow({ mode: 'closed' }).innerHTML = '<p>Welcome back</p><button>Sign in</button>'; } });
</script>
<body style="margin:0;background:#fff">
<div style="position:absolute;left:0;top:0;width:400px;height:200px;background:rgb(${GREEN.join(',')})"></div>
<site-card style="position:absolute;left:0;top:240px"></site-card>`;

let h: BrowserHarness;
let extDir = '';
let viewer: Page;
const texts: string[] = [];

beforeAll(async () => {
  extDir = mkdtempSync(join(tmpdir(), 'opentabs-s23w2-pm-'));
  writeFileSync(join(extDir, 'manifest.json'), JSON.stringify({ manifest_version: 3, name: 'Password manager', version: '1.0', content_scripts: [{ matches: ['<all_urls>'], js: ['menu.js'], run_at: 'document_idle' }] }));
  writeFileSync(join(extDir, 'menu.js'), CONTENT_SCRIPT);
  h = await startBrowserHarness({
    permissions: { browser: { default: 'auto' } },
    extraExtensions: [extDir],
    routes: (req) => (new URL(req.url).pathname === '/s23w2-shop.html' ? new Response(PAGE, { headers: { 'content-type': 'text/html; charset=utf-8' } }) : undefined),
  });
  viewer = await h.context.newPage();
  await viewer.goto(h.fixtureUrl('/s23w2-shop.html?viewer'));
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (extDir) rmSync(extDir, { recursive: true, force: true });
});

/** Pixels of the image close to the marker colour and to the page's green, counted in a page of the browser. */
async function colours(data: string): Promise<{ marker: number; green: number }> {
  return viewer.evaluate(
    async ({ src, marker, green }) => {
      const bitmap = await createImageBitmap(await (await fetch(src)).blob());
      const c = new OffscreenCanvas(bitmap.width, bitmap.height);
      const g = c.getContext('2d')!;
      g.drawImage(bitmap, 0, 0);
      const px = g.getImageData(0, 0, bitmap.width, bitmap.height).data;
      const near = (i: number, rgb: number[]) => Math.abs(px[i]! - rgb[0]!) <= 12 && Math.abs(px[i + 1]! - rgb[1]!) <= 12 && Math.abs(px[i + 2]! - rgb[2]!) <= 12;
      let m = 0;
      let gr = 0;
      for (let i = 0; i < px.length; i += 4) {
        if (near(i, marker)) m++;
        if (near(i, green)) gr++;
      }
      return { marker: m, green: gr };
    },
    { src: `data:image/png;base64,${data}`, marker: MARKER, green: GREEN },
  );
}

for (const when of ['before', 'after'] as const) {
  describe(`a page defining the menu's element name ${when} the extension makes it`, () => {
    let page: Page;
    let tabId = 0;

    async function call(name: string, args: Record<string, unknown>) {
      const r = await h.callTool(name, { tabId, ...args });
      texts.push(JSON.stringify(r.body));
      return r;
    }

    beforeAll(async () => {
      page = await h.context.newPage();
      await page.goto(h.fixtureUrl(`/s23w2-shop.html?${when}`));
      await page.waitForSelector('html[data-menu=drawn][data-defined=yes]', { state: 'attached' });
      tabId = await h.tabIdOf(page);
    });

    afterAll(async () => {
      await page?.close();
    });

    test('the attack holds: the menu\'s element counts as defined, and the page still cannot read the menu', async () => {
      const seen = await page.evaluate(() => {
        const m = document.querySelector('pm-inline-menu')!;
        return { defined: m.matches(':defined'), root: m.shadowRoot };
      });
      expect(seen).toEqual({ defined: true, root: null });
    });

    test('browser_snapshot leaves the menu out; the page\'s own closed web component is still read', async () => {
      for (const args of [{}, { interactiveOnly: true }]) {
        const r = await call('browser_snapshot', args);
        const snap = resultOf(r).snapshot as string;
        expect(snap).not.toContain(ACCOUNT);
        expect(snap).not.toContain(CODE);
        expect(snap).toMatch(/button Sign in \[e\d+\]/);
        if (!('interactiveOnly' in args)) expect(snap).toContain('Welcome back');
      }
    });

    test('browser_click_at on the menu\'s button is refused and nothing reaches it; the page\'s component takes a click', async () => {
      const r = await call('browser_click_at', { x: 160, y: 30 });
      expect([r.status, r.body.error?.code]).toEqual([403, 'page_not_allowed']);
      expect(r.body.error.message).toContain('another extension\'s own controls');
      expect(await page.evaluate(() => document.querySelector('pm-inline-menu')!.getAttribute('data-presses'))).toBeNull();
      const card = (await page.locator('site-card').boundingBox())!;
      const own = await call('browser_click_at', { x: Math.round(card.x + card.width / 2), y: Math.round(card.y + card.height / 2) });
      expect(own.status).toBe(200);
    });

    test('browser_press_key is refused while focus is in the menu, and no key reaches it', async () => {
      await page.bringToFront();
      await page.evaluate(() => document.dispatchEvent(new Event('pm-open')));
      expect(await page.evaluate(() => document.querySelector('pm-inline-menu')!.getAttribute('data-focused'))).toBe('true');
      const r = await call('browser_press_key', { key: 'a' });
      expect([r.status, r.body.error?.code]).toEqual([403, 'page_not_allowed']);
      expect(r.body.error.message).toContain('another extension\'s own controls');
      expect(await page.evaluate(() => document.querySelector('pm-inline-menu')!.getAttribute('data-keys'))).toBeNull();
    });

    test('the screenshot shows no pixel of the menu; the page\'s block shows', async () => {
      await page.bringToFront();
      const r = await call('browser_screenshot_tab', {});
      resultOf(r);
      const c = await colours(r.body.images[0].data);
      expect(c.marker).toBe(0);
      expect(c.green).toBeGreaterThan(10_000);
    });
  });
}

test('the page sees its attachShadow as the browser\'s own (in its toString and another frame\'s)', async () => {
  const seen = await viewer.evaluate(() => {
    const fn = Element.prototype.attachShadow;
    const fresh = document.body.appendChild(document.createElement('iframe')).contentWindow as unknown as typeof globalThis;
    return { text: String(fn), name: fn.name, length: fn.length, prototype: 'prototype' in fn, other: fresh.Function.prototype.toString.call(fn) };
  });
  expect(seen).toMatchObject({ text: 'function attachShadow() { [native code] }', name: 'attachShadow', length: 1, prototype: false });
  expect(seen.other).toContain('[native code]');
});

test('no response carried the menu\'s text', () => {
  expect(texts.length).toBe(12);
  for (const t of texts) {
    expect(t).not.toContain(ACCOUNT);
    expect(t).not.toContain(CODE);
  }
});
