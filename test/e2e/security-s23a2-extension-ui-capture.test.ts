/**
 * Another extension's own controls drawn in the page (a password manager's menu with an account
 * and a one-time code, under a closed shadow root on a custom element the page never defined) are
 * left out of the snapshot and refused to input, but every capture showed them: the visible tab,
 * a background tab and a minimized window's tab (drawn through the DevTools protocol), one
 * element, the full page, and the PDF. Now each capture is taken with them hidden: no pixel of the
 * menu's marker colour is in an image and none of its characters is in the PDF's text, while the
 * page's own content still shows; the menu is drawn again after. A page taking the hiding off
 * while the capture runs, or a menu whose own rules keep it drawn, gets no capture at all.
 * Performed as an agent would (REST tool calls) with a real second extension loaded beside OpenTabs.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import type { Page, Worker } from 'playwright-core';
import { expectPageRefused, resultOf, startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(180_000);

const ACCOUNT = 'zed@example.com';
const CODE = '493021';
/** The menu's background: a colour the page never uses. */
const MARKER = [255, 0, 200];
/** The page's own block, under the menu. */
const GREEN = [0, 160, 0];

/**
 * The password manager's content script: its menu, fixed over the top left of every page, in a
 * closed shadow root. With ?stubborn its own rules keep its host drawn.
 */
const CONTENT_SCRIPT = `
const host = document.createElement('pm-inline-menu');
host.style.cssText = 'position:fixed;left:0;top:0;width:320px;height:120px;z-index:2147483647';
const root = host.attachShadow({ mode: 'closed' });
root.innerHTML = (location.search === '?stubborn' ? '<style>:host { display: block !important }</style>' : '') +
  '<div style="background:rgb(${MARKER.join(',')});width:320px;height:120px;font:24px monospace;color:#fff;-webkit-print-color-adjust:exact;print-color-adjust:exact">${ACCOUNT} ${CODE}</div>';
document.body.appendChild(host);
document.documentElement.dataset.menu = 'drawn';
`;

/** The page: a green block under the menu and its own text (letters the menu's text lacks: no digits, no @). */
const PAGE = `<!doctype html><title>shop</title>
<body style="margin:0;background:#fff">
<div id="under" style="position:absolute;left:0;top:0;width:400px;height:200px;background:rgb(${GREEN.join(',')});-webkit-print-color-adjust:exact;print-color-adjust:exact"></div>
<p style="position:absolute;left:0;top:240px;font:20px serif">Welcome back to our shop</p>
<script>
  // With ?framed the page shows itself in an iframe too, where the extension draws its menu as well.
  if (location.search === '?framed') document.write('<iframe src="?inner" style="position:absolute;left:500px;top:0;width:420px;height:300px;border:0"></iframe>');
</script>
<script>
  // With ?fight the page takes any hiding of the menu off at once.
  if (location.search === '?fight') {
    new MutationObserver(() => {
      const m = document.querySelector('pm-inline-menu');
      if (m && m.style.display === 'none') m.style.removeProperty('display');
    }).observe(document.documentElement, { subtree: true, attributes: true, attributeFilter: ['style'] });
  }
</script>`;

let h: BrowserHarness;
let sw: Worker;
let extDir = '';
let page: Page;
let viewer: Page;
let tabId = 0;

async function opened(search = ''): Promise<{ page: Page; tabId: number }> {
  const p = await h.context.newPage();
  await p.goto(h.fixtureUrl(`/s23a2-shop.html${search}`));
  await p.waitForSelector('html[data-menu=drawn]', { state: 'attached' });
  return { page: p, tabId: await h.tabIdOf(p) };
}

beforeAll(async () => {
  extDir = mkdtempSync(join(tmpdir(), 'opentabs-s23a2-pm-'));
  writeFileSync(join(extDir, 'manifest.json'), JSON.stringify({ manifest_version: 3, name: 'Password manager', version: '1.0', content_scripts: [{ matches: ['<all_urls>'], js: ['menu.js'], run_at: 'document_idle', all_frames: true }] }));
  writeFileSync(join(extDir, 'menu.js'), CONTENT_SCRIPT);
  h = await startBrowserHarness({
    permissions: { browser: { default: 'auto' } },
    extraExtensions: [extDir],
    routes: (req) => (new URL(req.url).pathname === '/s23a2-shop.html' ? new Response(PAGE, { headers: { 'content-type': 'text/html; charset=utf-8' } }) : undefined),
  });
  sw = await h.serviceWorker();
  ({ page, tabId } = await opened());
  viewer = await h.context.newPage();
  await viewer.goto(h.fixtureUrl('/s23a2-shop.html?viewer'));
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (extDir) rmSync(extDir, { recursive: true, force: true });
});

/** Pixels of the image close to the marker colour and to the page's green, counted in a page of the browser. */
async function colours(data: string): Promise<{ marker: number; green: number; width: number }> {
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
      return { marker: m, green: gr, width: bitmap.width };
    },
    { src: `data:image/png;base64,${data}`, marker: MARKER, green: GREEN },
  );
}

/** Every character a PDF's fonts map glyphs to (their ToUnicode maps): the characters its text can hold. */
function pdfCharacters(b64: string): Set<string> {
  const pdf = Buffer.from(b64, 'base64');
  const text = pdf.toString('latin1');
  const chars = new Set<string>();
  const hex = (s: string) => String.fromCharCode(...(s.match(/.{4}/g) ?? []).map((u) => parseInt(u, 16)));
  for (const m of text.matchAll(/stream\r?\n/g)) {
    const start = m.index! + m[0].length;
    const end = text.indexOf('endstream', start);
    if (end < 0) continue;
    let body: string;
    try {
      body = inflateSync(pdf.subarray(start, end)).toString('latin1');
    } catch {
      continue;
    }
    if (!body.includes('begincmap')) continue;
    for (const [, block] of body.matchAll(/beginbfchar([\s\S]*?)endbfchar/g)) {
      for (const [, dst] of block!.matchAll(/<[0-9a-fA-F]+>\s*<([0-9a-fA-F]+)>/g)) for (const ch of hex(dst!)) chars.add(ch);
    }
    for (const [, block] of body.matchAll(/beginbfrange([\s\S]*?)endbfrange/g)) {
      for (const [, lo, hi, dst, list] of block!.matchAll(/<([0-9a-fA-F]+)>\s*<([0-9a-fA-F]+)>\s*(?:<([0-9a-fA-F]+)>|\[([^\]]*)\])/g)) {
        if (list !== undefined) {
          for (const [, d] of list.matchAll(/<([0-9a-fA-F]+)>/g)) for (const ch of hex(d!)) chars.add(ch);
          continue;
        }
        const first = parseInt(dst!, 16);
        for (let k = 0; k <= parseInt(hi!, 16) - parseInt(lo!, 16) && k < 256; k++) chars.add(String.fromCharCode(first + k));
      }
    }
  }
  return chars;
}

/** The menu's characters the page's text does not have. */
const MENU_ONLY = [...new Set(`${ACCOUNT}${CODE}`)].filter((c) => !'Welcome back to our shop'.includes(c));

async function menuDrawn(p: Page): Promise<{ display: string; inline: string }> {
  return p.evaluate(() => {
    const m = document.querySelector('pm-inline-menu') as HTMLElement;
    return { display: getComputedStyle(m).display, inline: m.style.display };
  });
}

describe("another extension's menu drawn in the page", () => {
  test('the menu is drawn in the page (as the captures would show it)', async () => {
    expect(MENU_ONLY.length).toBeGreaterThan(5);
    expect(await menuDrawn(page)).toEqual({ display: 'block', inline: '' });
  });

  test('the visible tab (captureVisibleTab): no pixel of the menu, the page\'s block shows; the menu is drawn again after', async () => {
    await page.bringToFront();
    const r = await h.callTool('browser_screenshot_tab', { tabId });
    resultOf(r);
    const c = await colours(r.body.images[0].data);
    expect(c.marker).toBe(0);
    expect(c.green).toBeGreaterThan(10_000);
    expect(await menuDrawn(page)).toEqual({ display: 'block', inline: '' });
  });

  test('a background tab (the DevTools protocol): no pixel of the menu', async () => {
    await viewer.bringToFront();
    const r = await h.callTool('browser_screenshot_tab', { tabId });
    resultOf(r);
    const c = await colours(r.body.images[0].data);
    expect(c.marker).toBe(0);
    expect(c.green).toBeGreaterThan(10_000);
    expect(await menuDrawn(page)).toEqual({ display: 'block', inline: '' });
  });

  test('the tab of a minimized window (the DevTools protocol): no pixel of the menu', async () => {
    const win = await sw.evaluate(async (url) => {
      const w = await chrome.windows.create({ url, focused: false });
      return { id: w!.id!, tabId: w!.tabs![0]!.id! };
    }, h.fixtureUrl('/s23a2-shop.html?minimized'));
    try {
      await waitUntil(
        async () => (await sw.evaluate(async (id) => (await chrome.scripting.executeScript({ target: { tabId: id }, func: () => document.documentElement.dataset.menu ?? '' }))[0]?.result, win.tabId)) === 'drawn' || null,
        'the menu in the new window',
      );
      await sw.evaluate((id) => chrome.windows.update(id, { state: 'minimized' }), win.id);
      const r = await h.callTool('browser_screenshot_tab', { tabId: win.tabId });
      resultOf(r);
      const c = await colours(r.body.images[0].data);
      expect(c.marker).toBe(0);
      expect(c.green).toBeGreaterThan(10_000);
    } finally {
      await sw.evaluate((id) => chrome.windows.remove(id), win.id).catch(() => {});
    }
  });

  test('an element under the menu, and the full page: no pixel of the menu', async () => {
    await page.bringToFront();
    for (const args of [{ selector: '#under' }, { fullPage: true }]) {
      const r = await h.callTool('browser_screenshot_tab', { tabId, ...args });
      resultOf(r);
      const c = await colours(r.body.images[0].data);
      expect({ args, marker: c.marker }).toEqual({ args, marker: 0 });
      expect(c.green).toBeGreaterThan(10_000);
    }
    expect(await menuDrawn(page)).toEqual({ display: 'block', inline: '' });
  });

  test('the PDF holds none of the menu\'s text, and the page\'s', async () => {
    const r = await h.callTool('browser_print_pdf', { tabId, printBackground: true });
    resultOf(r);
    const chars = pdfCharacters(r.body.resources[0].blob);
    for (const c of 'Welcomshp') expect({ c, in: chars.has(c) }).toEqual({ c, in: true });
    expect(MENU_ONLY.filter((c) => chars.has(c))).toEqual([]);
    expect(await menuDrawn(page)).toEqual({ display: 'block', inline: '' });
  });

  test('in an iframe of the page too: no pixel of the menu, the frame\'s block shows', async () => {
    const framed = await opened('?framed');
    try {
      await waitUntil(async () => (await framed.page.frames()[1]?.evaluate(() => document.documentElement.dataset.menu).catch(() => undefined)) === 'drawn' || null, 'the menu in the iframe');
      await framed.page.bringToFront();
      for (const args of [{}, { fullPage: true }]) {
        const r = await h.callTool('browser_screenshot_tab', { tabId: framed.tabId, ...args });
        resultOf(r);
        const c = await colours(r.body.images[0].data);
        expect({ args, marker: c.marker }).toEqual({ args, marker: 0 });
        // Both blocks: the page's and the frame's (400 × 200 each).
        expect(c.green).toBeGreaterThan(150_000);
      }
    } finally {
      await framed.page.close();
    }
  });

  test('captures of the tab at once: none shows the menu, and it is drawn again after the last', async () => {
    await page.bringToFront();
    const [shot, full, pdf] = await Promise.all([
      h.callTool('browser_screenshot_tab', { tabId }),
      h.callTool('browser_screenshot_tab', { tabId, fullPage: true }),
      h.callTool('browser_print_pdf', { tabId, printBackground: true }),
    ]);
    for (const r of [shot, full]) {
      resultOf(r);
      expect((await colours(r.body.images[0].data)).marker).toBe(0);
    }
    resultOf(pdf);
    expect(MENU_ONLY.filter((c) => pdfCharacters(pdf.body.resources[0].blob).has(c))).toEqual([]);
    expect(await menuDrawn(page)).toEqual({ display: 'block', inline: '' });
  });

  test('a page taking the hiding off while the capture runs gets no capture', async () => {
    const fight = await opened('?fight');
    try {
      await fight.page.bringToFront();
      for (const [tool, args] of [['browser_screenshot_tab', {}], ['browser_screenshot_tab', { fullPage: true }], ['browser_print_pdf', { printBackground: true }]] as const) {
        const r = await h.callTool(tool, { tabId: fight.tabId, ...args });
        expectPageRefused(r, `${tool} ${JSON.stringify(args)}`, /changed another extension's own controls/);
        expect(JSON.stringify(r.body)).not.toContain('"images"');
        expect(JSON.stringify(r.body)).not.toContain('"resources"');
      }
    } finally {
      await fight.page.close();
    }
  });

  test('a menu whose own rules keep it drawn: no capture, named', async () => {
    const stubborn = await opened('?stubborn');
    try {
      await stubborn.page.bringToFront();
      for (const [tool, args] of [['browser_screenshot_tab', {}], ['browser_print_pdf', {}]] as const) {
        const r = await h.callTool(tool, { tabId: stubborn.tabId, ...args });
        expectPageRefused(r, tool, /<pm-inline-menu>, another extension's own controls .* could not be hidden/);
        expect(JSON.stringify(r.body)).not.toContain('"images"');
      }
      expect(await menuDrawn(stubborn.page)).toEqual({ display: 'block', inline: '' });
    } finally {
      await stubborn.page.close();
    }
  });
});
