/**
 * In Chromium with the real extension: browser_screenshot_tab of the tab a minimized window shows
 * draws it through the DevTools protocol, as for a tab its window does not show: the image is the
 * page's, and the user's window stays minimized. captureVisibleTab, which shoots only what a window
 * shows on screen, is not used for it: in a desktop Chrome it fails for a minimized window ("view
 * is invisible"). Headless Chromium still reads its surface back, so the worker's captureVisibleTab
 * is made to fail as a desktop Chrome's does and counted. A window minimized while its tab is
 * captured is drawn the same way.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Worker } from 'playwright-core';
import { resultOf, startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

let h: BrowserHarness;
let sw: Worker;
let win = { id: 0, tabId: 0 };

beforeAll(async () => {
  h = await startBrowserHarness({
    routes: (req) => (new URL(req.url).pathname === '/red.html' ? new Response('<!doctype html><title>Red</title><body style="margin:0;background:rgb(255,0,0)"></body>', { headers: { 'content-type': 'text/html' } }) : undefined),
  });
  sw = await h.serviceWorker();
  win = await sw.evaluate(async (url) => {
    const w = await chrome.windows.create({ url, focused: false });
    return { id: w!.id!, tabId: w!.tabs![0]!.id! };
  }, h.fixtureUrl('/red.html'));
  await waitUntil(async () => (await sw.evaluate(async (id) => (await chrome.tabs.get(id)).status, win.tabId)) === 'complete', 'the red page to load');
  // As a desktop Chrome: no image of a minimized window's view.
  await sw.evaluate(() => {
    const g = globalThis as unknown as { visibleCaptures: number };
    g.visibleCaptures = 0;
    const original = chrome.tabs.captureVisibleTab.bind(chrome.tabs) as (windowId: number, options: object) => Promise<string>;
    (chrome.tabs as unknown as { captureVisibleTab: unknown }).captureVisibleTab = async (windowId: number, options: object) => {
      g.visibleCaptures++;
      // The user minimizes the window while the capture runs.
      if ((globalThis as unknown as { minimizeDuringCapture?: boolean }).minimizeDuringCapture) {
        (globalThis as unknown as { minimizeDuringCapture?: boolean }).minimizeDuringCapture = false;
        await chrome.windows.update(windowId, { state: 'minimized' });
      }
      if ((await chrome.windows.get(windowId)).state === 'minimized') throw new Error('Failed to capture tab: view is invisible');
      return original(windowId, options);
    };
  });
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

/** The colour at the image's centre, read in a page of the browser. */
async function centre(data: string): Promise<number[]> {
  const page = await h.context.newPage();
  try {
    return await page.evaluate(async (src) => {
      const bitmap = await createImageBitmap(await (await fetch(src)).blob());
      const c = new OffscreenCanvas(bitmap.width, bitmap.height);
      const g = c.getContext('2d')!;
      g.drawImage(bitmap, 0, 0);
      return [...g.getImageData(bitmap.width >> 1, bitmap.height >> 1, 1, 1).data.slice(0, 3)];
    }, `data:image/png;base64,${data}`);
  } finally {
    await page.close();
  }
}

test('the shown tab of a minimized window is shot through the DevTools protocol, and the window stays minimized', async () => {
  await sw.evaluate((id) => chrome.windows.update(id, { state: 'minimized' }), win.id);
  expect(await sw.evaluate(async (id) => (await chrome.windows.get(id)).state, win.id)).toBe('minimized');
  expect(await sw.evaluate(async (id) => (await chrome.tabs.get(id)).active, win.tabId)).toBe(true);

  const r = await h.callTool('browser_screenshot_tab', { tabId: win.tabId });
  const shot = resultOf(r);
  expect(shot).toMatchObject({ tabId: win.tabId, format: 'png' });
  expect(await centre(r.body.images[0].data)).toEqual([255, 0, 0]);
  expect(await sw.evaluate(() => (globalThis as unknown as { visibleCaptures: number }).visibleCaptures)).toBe(0);
  expect(await sw.evaluate(async (id) => (await chrome.windows.get(id)).state, win.id)).toBe('minimized');
}, 60_000);

test('restored, the shown tab is shot with captureVisibleTab as before', async () => {
  await sw.evaluate((id) => chrome.windows.update(id, { state: 'normal' }), win.id);
  const r = await h.callTool('browser_screenshot_tab', { tabId: win.tabId });
  resultOf(r);
  expect(await centre(r.body.images[0].data)).toEqual([255, 0, 0]);
  expect(await sw.evaluate(() => (globalThis as unknown as { visibleCaptures: number }).visibleCaptures)).toBe(1);
}, 60_000);

test('a window minimized while its tab is captured: drawn through the DevTools protocol instead', async () => {
  expect(await sw.evaluate(async (id) => (await chrome.windows.get(id)).state, win.id)).toBe('normal');
  await sw.evaluate(() => ((globalThis as unknown as { minimizeDuringCapture?: boolean }).minimizeDuringCapture = true));
  const r = await h.callTool('browser_screenshot_tab', { tabId: win.tabId });
  resultOf(r);
  expect(await sw.evaluate(() => (globalThis as unknown as { visibleCaptures: number }).visibleCaptures)).toBe(2);
  expect(await sw.evaluate(async (id) => (await chrome.windows.get(id)).state, win.id)).toBe('minimized');
  // (Read after: a page opened to read it may open in that window.)
  expect(await centre(r.body.images[0].data)).toEqual([255, 0, 0]);
}, 60_000);
