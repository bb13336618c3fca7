/**
 * A click sends a mouse move, then the press. While the tab holds an iframe of a refused page (a
 * hidden file framed by a file:// page, file:// allowed), such iframes were pinned
 * pointer-events:none only after the move, for the press: a page whose timer keeps moving that
 * iframe over and away from the button got some of the clicks' mouse moves into the frame (it was
 * away when the point was checked and there when the move came). Now the pins are set before the
 * move, as for a hover. Performed as an agent would: REST tool calls; Playwright loads the page and
 * reads the frame's count of mouse events.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBrowserHarness, waitUntil, type BrowserHarness, allowFileUrls } from '../harness/browser.ts';

setDefaultTimeout(300_000);

let h: BrowserHarness;
let home = '';
const ROUNDS = 30;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'opentabs-s21a-move-'));
  mkdirSync(join(home, '.ssh'));
  mkdirSync(join(home, 'Downloads'));
  writeFileSync(
    join(home, '.ssh', 'key.html'),
    `<!doctype html><body style="margin:0;background:#f00;height:100px"><h1>PRIVATE-KEY-LINE-5e2a</h1><script>window.events = 0; for (const t of ['mousedown', 'mousemove', 'mouseup']) addEventListener(t, () => { window.events++; });</script>`,
  );
  writeFileSync(join(home, 'Downloads', 'plain.html'), '<!doctype html><p>an ordinary local note</p>');
  // The key's iframe over the button and away from it by turns, every 2 ms.
  writeFileSync(
    join(home, 'Downloads', 'flicker.html'),
    `<!doctype html><title>flicker</title><body style="margin:0">
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

describe('a click on a tab whose refused frame flickers over the button', () => {
  test('neither the move nor the press reaches the frame', async () => {
    const page = await h.context.newPage();
    try {
      await page.goto(`file://${home}/Downloads/flicker.html`);
      const frame = await waitUntil(async () => page.frames().find((f) => f.url().endsWith('/.ssh/key.html')) ?? null, 'the key frame');
      await waitUntil(async () => ((await frame.evaluate(() => typeof (window as unknown as { events?: number }).events)) === 'number' ? true : null), 'the key frame to count');
      const tabId = await h.tabIdOf(page);
      let sent = 0;
      for (const [tool, args, rounds] of [['browser_click_at', { x: 100, y: 50 }, 2 * ROUNDS], ['browser_click_element', { selector: '#b' }, ROUNDS]] as const) {
        for (let i = 0; i < rounds; i++) {
          const r = await h.callTool(tool, { tabId, ...args });
          if (r.status === 200) sent++;
          // Refused at the point, or (click_element) the button found covered before any input.
          else expect([tool, i, r.body?.error?.code]).toEqual([tool, i, r.body?.error?.code === 'not_found' ? 'not_found' : 'page_not_allowed']);
        }
      }
      expect(await frame.evaluate(() => (window as unknown as { events: number }).events)).toBe(0);
      console.log(`clicks sent: ${sent} of ${3 * ROUNDS}`);
    } finally {
      await page.close();
    }
  });
});
