/**
 * A click, hover or drag on an element of an allowed iframe (a ref fFeN) checks what is drawn over
 * that iframe at the element's point, then sends the mouse events to that point of the tab. A page
 * whose timer keeps moving an iframe of a refused page (a hidden file framed by a file:// page,
 * file:// allowed) over and away from the element got some of them into the refused frame: it was
 * away at the check and back for the press. Now such iframes are pinned pointer-events:none from
 * before the press (a hover's move) until it was sent, as for the top page's elements, so the
 * events go to what is under them. Performed as an agent would (REST tool calls); the page is loaded with
 * Playwright, which also reads the refused frame's count of mouse events.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allowFileUrls, startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(180_000);

let h: BrowserHarness;
let home = '';
const ROUNDS = 30;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'opentabs-s19a-fref-'));
  mkdirSync(join(home, '.ssh'));
  mkdirSync(join(home, 'site'));
  writeFileSync(
    join(home, '.ssh', 'key.html'),
    `<!doctype html><body style="margin:0;background:#f00;height:100px"><h1>PRIVATE-KEY-LINE-19f</h1><script>window.presses = 0; window.moves = 0; for (const t of ['mousedown', 'mouseup']) addEventListener(t, () => { window.presses++; }); addEventListener('mousemove', () => { window.moves++; });</script>`,
  );
  writeFileSync(join(home, 'site', 'form.html'), '<!doctype html><body style="margin:0"><button id="b" style="position:absolute;left:0;top:0;width:200px;height:100px">Send</button><div id="d" style="position:absolute;left:300px;top:0;width:100px;height:100px">drop</div><script>window.presses = 0; document.getElementById("b").addEventListener("mousedown", () => { window.presses++; });</script>');
  writeFileSync(join(home, 'site', 'plain.html'), '<!doctype html><p>note</p>');
  writeFileSync(
    join(home, 'site', 'race.html'),
    `<!doctype html><title>race</title><body style="margin:0">
    <iframe id="f" src="form.html" style="position:absolute;left:0;top:0;border:0;width:500px;height:100px"></iframe>
    <iframe id="k" src="file://${home}/.ssh/key.html" style="position:absolute;left:600px;top:0;width:200px;height:100px;border:0"></iframe>
    <script>
      const k = document.getElementById('k');
      let over = false;
      setInterval(() => { over = !over; k.style.left = over ? '0px' : '600px'; }, 2);
    </script>`,
  );
  h = await startBrowserHarness({ permissions: { browser: { default: 'auto' } } });
  await allowFileUrls(h, `file://${home}/site/plain.html`);
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

describe('mouse input at an allowed iframe\'s element while the page moves a refused frame over it', () => {
  test('click, hover: no event reaches the refused frame', async () => {
    const page = await h.context.newPage();
    try {
      await page.goto(`file://${home}/site/race.html`);
      const key = await waitUntil(async () => page.frames().find((f) => f.url().endsWith('/.ssh/key.html')) ?? null, 'the key frame');
      await waitUntil(async () => ((await key.evaluate(() => typeof (window as unknown as { presses?: number }).presses)) === 'number' ? true : null), 'the key frame to count');
      const counts = () => key.evaluate(() => ({ presses: (window as unknown as { presses: number }).presses, moves: (window as unknown as { moves: number }).moves }));
      const tabId = await h.tabIdOf(page);
      const ref = await waitUntil(async () => {
        const r = await h.callTool('browser_snapshot', { tabId });
        return /button Send \[(f\d+e\d+)\]/.exec(JSON.stringify(r.body))?.[1] ?? null;
      }, 'the button ref');
      let sent = 0;
      let before = { presses: 0, moves: 0 };
      for (const tool of ['browser_click_element', 'browser_hover_element'] as const) {
        before = await counts();
        for (let i = 0; i < ROUNDS; i++) {
          const r = await h.callTool(tool, { tabId, ref });
          if (r.status === 200) sent++;
          else {
            // Refused, or the element found covered by the frame before any input.
            const why = r.body?.error?.code === 'not_found' && /is covered by/.test(String(r.body?.error?.message)) ? 'covered' : r.body?.error?.code;
            expect([tool, i, why === 'covered' ? 'page_not_allowed' : why]).toEqual([tool, i, 'page_not_allowed']);
          }
        }
      }
      console.log(`input at a frame ref beside a moving refused frame: ${sent} of ${2 * ROUNDS} sent`);
      // No press at all; and the hovers' moves none either (a click sends its move before its
      // point is checked again and the pins go on: a page can have that one move land in the frame).
      const after = await counts();
      expect(after.presses).toBe(0);
      expect(after.moves - before.moves).toBe(0);
    } finally {
      await page.close();
    }
  });
});
