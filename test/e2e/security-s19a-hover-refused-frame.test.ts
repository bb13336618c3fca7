/**
 * Mouse moves on a tab holding a refused page in an iframe (a hidden file framed by a file://
 * page, file:// allowed). browser_move_mouse's steps pass over whatever lies between the last
 * point and the new one: they went into an iframe of the hidden file lying in between, though
 * only the end point was checked. browser_hover_element checked the element's point and then
 * moved: a page moving that iframe under the element in between got the move into the frame.
 * Now such iframes are pinned pointer-events:none for the moves of the call (as for a click's
 * press), so the moves go to what is under them. Performed as an agent would (REST tool calls);
 * the pages are loaded with Playwright, which also reads the frame's count of mouse events.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { allowFileUrls, startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(180_000);

let h: BrowserHarness;
let home = '';
const ROUNDS = 40;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'opentabs-s19a-hover-'));
  mkdirSync(join(home, '.ssh'));
  mkdirSync(join(home, 'Downloads'));
  // The frame counts the mouse moves and presses it gets (Playwright reads it; the tools may not).
  // Not mouseover: Chrome sends that when a page moves a frame under a pointer at rest, which any
  // page can do wherever the last input left the pointer.
  writeFileSync(
    join(home, '.ssh', 'key.html'),
    `<!doctype html><body style="margin:0;background:#f00;height:100px"><h1>PRIVATE-KEY-LINE-19a</h1><script>window.events = 0; for (const t of ['mousemove', 'mousedown']) addEventListener(t, () => { window.events++; });</script>`,
  );
  writeFileSync(join(home, 'Downloads', 'plain.html'), '<!doctype html><p>an ordinary local note</p>');
  // The key's iframe lies between the left edge and a target on the right.
  writeFileSync(
    join(home, 'Downloads', 'between.html'),
    `<!doctype html><title>between</title><body style="margin:0">
    <iframe id="k" src="file://${home}/.ssh/key.html" style="position:absolute;left:200px;top:0;width:200px;height:100px;border:0"></iframe>
    <button id="t" style="position:absolute;left:600px;top:0;width:100px;height:100px">target</button>
    <script>let moves = 0; addEventListener('mousemove', () => { moves++; document.title = 'moves ' + moves; });</script>`,
  );
  // A button, and the key's iframe moved over it and away by a timer every 2 ms.
  writeFileSync(
    join(home, 'Downloads', 'race.html'),
    `<!doctype html><title>race</title><body style="margin:0">
    <button id="b" style="position:absolute;left:0;top:0;width:200px;height:100px">ok</button>
    <iframe id="k" src="file://${home}/.ssh/key.html" style="position:absolute;left:400px;top:0;width:200px;height:100px;border:0"></iframe>
    <script>
      const f = document.getElementById('k');
      let over = false;
      setInterval(() => { over = !over; f.style.left = over ? '0px' : '400px'; }, 2);
    </script>`,
  );
  h = await startBrowserHarness({ permissions: { browser: { default: 'auto' } } });
  await allowFileUrls(h, `file://${home}/Downloads/plain.html`);
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

async function opened(name: string): Promise<{ page: Page; tabId: number; events: () => Promise<number> }> {
  const page = await h.context.newPage();
  await page.goto(`file://${home}/Downloads/${name}.html`);
  const frame = await waitUntil(async () => page.frames().find((f) => f.url().endsWith('/.ssh/key.html')) ?? null, 'the key frame');
  await waitUntil(async () => ((await frame.evaluate(() => typeof (window as unknown as { events?: number }).events)) === 'number' ? true : null), 'the key frame to count');
  return { page, tabId: await h.tabIdOf(page), events: () => frame.evaluate(() => (window as unknown as { events: number }).events) };
}

describe('mouse moves and a refused frame', () => {
  test('browser_move_mouse steps across the iframe: none reaches the frame, the page gets them', async () => {
    const { page, tabId, events } = await opened('between');
    try {
      const start = await h.callTool('browser_move_mouse', { tabId, x: 10, y: 50 });
      expect([start.status, start.body?.error?.message]).toEqual([200, undefined]);
      const r = await h.callTool('browser_move_mouse', { tabId, x: 650, y: 50, steps: 10 });
      expect([r.status, r.body?.error?.message]).toEqual([200, undefined]);
      expect(await events()).toBe(0);
      // The steps over the pinned iframe went to the page under it.
      expect(Number((await page.title()).replace('moves ', ''))).toBeGreaterThanOrEqual(10);
    } finally {
      await page.close();
    }
  });

  test('browser_hover_element while the page moves the iframe over the element: no move reaches the frame', async () => {
    const { page, tabId, events } = await opened('race');
    try {
      let sent = 0;
      for (let i = 0; i < ROUNDS; i++) {
        const r = await h.callTool('browser_hover_element', { tabId, selector: '#b' });
        if (r.status === 200) sent++;
        // Refused (the check saw the iframe at the point), or the element found covered by it.
        else {
          const why = r.body?.error?.code === 'not_found' && /is covered by <iframe/.test(String(r.body?.error?.message)) ? 'covered' : r.body?.error?.code;
          expect([i, why === 'covered' ? 'page_not_allowed' : why]).toEqual([i, 'page_not_allowed']);
        }
      }
      console.log(`hover on a tab holding a moving refused frame: ${sent} of ${ROUNDS} sent`);
      expect(await events()).toBe(0);
    } finally {
      await page.close();
    }
  });
});
