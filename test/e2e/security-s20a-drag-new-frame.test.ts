/**
 * Mouse input sent over a while (a drag's press, moves and release; browser_move_mouse's steps)
 * went wherever the page had put things by each event. Refused frames' iframes there when the
 * guard looked are pinned pointer-events:none, but a page adding an iframe of a refused page (here
 * a hidden file, file:// allowed; another extension's page likewise) when the drag's press comes
 * had it load under the target during the drag (the wait for an HTML5 drag to start alone takes
 * 300 ms) and got the moves and the release into it. Now nothing more is sent once a frame of the
 * tab starts loading such a page but the end of the gesture, with such iframes pinned, and the call
 * fails. Performed as an agent would (REST tool calls); Playwright loads the pages and reads what
 * the refused frame got.
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

/** A source and a target; with `trap`, a press on the source adds an iframe of the hidden file over the target. */
function dragPage(name: string, draggable: boolean): void {
  writeFileSync(
    join(home, 'site', `${name}.html`),
    `<!doctype html><body style="margin:0">
      <div id="src" ${draggable ? 'draggable="true"' : ''} style="position:absolute;left:20px;top:20px;width:80px;height:80px;background:#c00">source</div>
      <div id="dst" style="position:absolute;left:300px;top:20px;width:200px;height:200px;background:#0c0">target</div>
      <script>
      window.got = [];
      window.clicks = 0;
      window.trap = true;
      addEventListener('message', (e) => window.got.push(String(e.data)));
      const dst = document.getElementById('dst');
      dst.addEventListener('click', () => window.clicks++);
      dst.addEventListener('dragover', (e) => e.preventDefault());
      window.addFrame = () => {
        const f = document.createElement('iframe');
        f.src = 'file://${home}/.ssh/menu.html';
        f.style.cssText = 'position:absolute;left:250px;top:0;width:300px;height:300px;border:0';
        f.onload = () => { f.dataset.loaded = '1'; };
        document.body.append(f);
      };
      document.getElementById('src').addEventListener('mousedown', () => { if (window.trap) window.addFrame(); });
    </script>`,
  );
}

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'opentabs-s20a-drag-'));
  mkdirSync(join(home, '.ssh'));
  mkdirSync(join(home, 'site'));
  // The refused frame: tells its page of every mouse and drag event it gets.
  writeFileSync(
    join(home, '.ssh', 'menu.html'),
    `<!doctype html><body style="margin:0;height:100vh"><script>for (const t of ['mousemove', 'mouseup', 'mousedown', 'dragenter', 'dragover', 'drop']) addEventListener(t, (e) => { e.preventDefault(); parent.postMessage(t, '*'); }, true);</script>`,
  );
  writeFileSync(join(home, 'site', 'plain.html'), '<!doctype html><p>note</p>');
  dragPage('pointer', false);
  dragPage('html5', true);
  h = await startBrowserHarness({ permissions: { browser: { default: 'auto' } } });
  await allowFileUrls(h, `file://${home}/site/plain.html`);
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

async function opened(name: string): Promise<{ page: Page; tabId: number }> {
  const page = await h.context.newPage();
  await page.goto(`file://${home}/site/${name}.html`);
  return { page, tabId: await h.tabIdOf(page) };
}

/** Every iframe the page added has loaded; then what the refused frames told it. */
async function got(page: Page): Promise<string[]> {
  await waitUntil(() => page.evaluate(() => [...document.querySelectorAll('iframe')].every((f) => f.dataset.loaded === '1') || null), 'the iframes to load');
  await page.evaluate(() => new Promise((r) => setTimeout(r, 0)));
  return page.evaluate(() => (window as unknown as { got: string[] }).got);
}

const clear = (page: Page) => page.evaluate(() => { for (const f of document.querySelectorAll('iframe')) f.remove(); });

describe('a refused frame added under the pointer while mouse input goes on', () => {
  for (const name of ['pointer', 'html5']) {
    test(`${name} drag: no event reaches it, the call fails, and the mouse button is up again`, async () => {
      const { page, tabId } = await opened(name);
      try {
        for (let i = 0; i < 3; i++) {
          await clear(page);
          const r = await h.callTool('browser_drag', { tabId, sourceSelector: '#src', targetSelector: '#dst', steps: 10 });
          expect([i, r.status, r.body?.error?.code]).toEqual([i, 403, 'page_not_allowed']);
          expect(String(r.body?.error?.message)).toContain('while the drag went on');
        }
        expect(await got(page)).toEqual([]);
        // The button was released: a click on the target (no frame there now) is a click.
        await clear(page);
        await page.evaluate(() => { (window as unknown as { trap: boolean }).trap = false; });
        const c = await h.callTool('browser_click_element', { tabId, selector: '#dst' });
        expect(c.status).toBe(200);
        expect(await page.evaluate(() => (window as unknown as { clicks: number }).clicks)).toBe(1);
        // And a drag with no frame added goes through.
        const d = await h.callTool('browser_drag', { tabId, sourceSelector: '#src', targetSelector: '#dst', steps: 4 });
        expect(d.status).toBe(200);
      } finally {
        await page.close();
      }
    });
  }

  test('browser_move_mouse steps: none reaches it once it loads', async () => {
    const { page, tabId } = await opened('pointer');
    try {
      expect((await h.callTool('browser_move_mouse', { tabId, x: 10, y: 150 })).status).toBe(200);
      // The first move over the page adds the iframe across the steps' path.
      await page.evaluate(() => {
        document.body.style.height = '100vh';
        document.body.addEventListener('mousemove', () => { if (!document.querySelector('iframe')) (window as unknown as { addFrame: () => void }).addFrame(); });
      });
      const r = await h.callTool('browser_move_mouse', { tabId, x: 400, y: 150, steps: 60 });
      expect([r.status, r.body?.error?.code]).toEqual([403, 'page_not_allowed']);
      expect(String(r.body?.error?.message)).toContain('while the mouse moves went on');
      expect(await got(page)).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
