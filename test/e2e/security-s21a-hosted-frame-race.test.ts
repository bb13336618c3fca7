/**
 * An iframe of a refused page (a hidden file framed by a file:// page, file:// allowed) that is a
 * shadow host's child can be slotted, and the shadow root's ::slotted !important rules beat the
 * inline pointer-events:none pin a click puts on such iframes: such an iframe got the point checks
 * only. A page moving one over the button the agent clicks a little after each mouse move got
 * some presses into the frame (away at the last check, there at the press). Now such an iframe is
 * also pinned inert for the press (an attribute no style undoes; hit testing passes an inert
 * element by). Performed as an agent would: REST tool calls; Playwright loads the page and reads
 * the frame's count of mouse events.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBrowserHarness, waitUntil, type BrowserHarness, allowFileUrls } from '../harness/browser.ts';

setDefaultTimeout(300_000);

let h: BrowserHarness;
let home = '';
const ROUNDS = 100;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'opentabs-s21a-hosted-'));
  mkdirSync(join(home, '.ssh'));
  mkdirSync(join(home, 'Downloads'));
  writeFileSync(
    join(home, '.ssh', 'key.html'),
    `<!doctype html><body style="margin:0;background:#f00;height:100px"><h1>PRIVATE-KEY-LINE-9d3b</h1><script>window.hits = 0; addEventListener('mousedown', () => { window.hits++; });</script>`,
  );
  writeFileSync(join(home, 'Downloads', 'plain.html'), '<!doctype html><p>an ordinary local note</p>');
  // The key's iframe slotted into a host whose ::slotted rule undoes a pointer-events pin; each
  // mouse move brings the host over the button a little later (0–15 ms, by turns) for 20 ms: some
  // rounds bring it there after the check that follows the move, before the press.
  writeFileSync(
    join(home, 'Downloads', 'hosted.html'),
    `<!doctype html><title>hosted</title><body style="margin:0">
    <button id="b" style="position:absolute;left:0;top:0;width:200px;height:100px">ok</button>
    <div id="h" style="position:absolute;left:400px;top:0"><iframe id="k" src="file://${home}/.ssh/key.html" style="width:200px;height:100px;border:0"></iframe></div>
    <script>
      const host = document.getElementById('h');
      host.attachShadow({ mode: 'closed' }).innerHTML = '<style>::slotted(iframe){pointer-events:auto !important;interactivity:auto !important}</style><slot></slot>';
      let round = 0;
      addEventListener('mousemove', () => {
        setTimeout(() => { host.style.left = '0px'; setTimeout(() => { host.style.left = '400px'; }, 20); }, round++ % 16);
      });
    </script>`,
  );
  h = await startBrowserHarness({ permissions: { browser: { default: 'auto' } } });
  await allowFileUrls(h, `file://${home}/Downloads/plain.html`);
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

describe('a refused frame slotted into a shadow host, moving over the button', () => {
  test('takes no press; some clicks still go to the button', async () => {
    const page = await h.context.newPage();
    try {
      await page.goto(`file://${home}/Downloads/hosted.html`);
      const frame = await waitUntil(async () => page.frames().find((f) => f.url().endsWith('/.ssh/key.html')) ?? null, 'the key frame');
      await waitUntil(async () => ((await frame.evaluate(() => typeof (window as unknown as { hits?: number }).hits)) === 'number' ? true : null), 'the key frame to count');
      const tabId = await h.tabIdOf(page);
      let sent = 0;
      for (let i = 0; i < ROUNDS; i++) {
        const r = await h.callTool('browser_click_at', { tabId, x: 100, y: 50 });
        if (r.status === 200) sent++;
        else expect([i, r.body?.error?.code]).toEqual([i, 'page_not_allowed']);
      }
      expect(await frame.evaluate(() => (window as unknown as { hits: number }).hits)).toBe(0);
      expect(sent).toBeGreaterThan(0);
      console.log(`clicks sent: ${sent} of ${ROUNDS}`);
    } finally {
      await page.close();
    }
  });
});
