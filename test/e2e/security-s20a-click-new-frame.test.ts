/**
 * A click (or hover) at an element goes where the page has things drawn when the events arrive.
 * Refused frames' iframes there when the guard looks are pinned pointer-events:none; with none in
 * the tab there is no guard at all. Finding the element scrolls it into view, and a page adding an
 * iframe of a refused page (here a hidden file, file:// allowed; another extension's page
 * likewise) over the element on that scroll had it load while the debugger attached, and the
 * click (mousedown, mouseup, click) went into it, the call answering "clicked". Now the tab is
 * watched from before the element is found: once a frame starts loading such a page, the click is
 * not sent and the call fails. Performed as an agent would (REST tool calls); Playwright loads the
 * pages and reads what the refused frame got.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allowFileUrls, startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(180_000);

let h: BrowserHarness;
let home = '';

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'opentabs-s20a-click-'));
  mkdirSync(join(home, '.ssh'));
  mkdirSync(join(home, 'site'));
  // The refused frame: tells its page of every mouse event it gets.
  writeFileSync(
    join(home, '.ssh', 'menu.html'),
    `<!doctype html><body style="margin:0;height:100vh"><script>for (const t of ['mousemove', 'mousedown', 'mouseup', 'click']) addEventListener(t, () => parent.postMessage(t, '*'), true);</script>`,
  );
  writeFileSync(join(home, 'site', 'plain.html'), '<!doctype html><p>note</p>');
  // A button below the fold; scrolling adds an iframe of the hidden file over it.
  writeFileSync(
    join(home, 'site', 'click.html'),
    `<!doctype html><body style="margin:0;height:4000px">
      <button id="b" style="position:absolute;left:20px;top:2000px;width:200px;height:60px">Go</button>
      <script>
      window.got = [];
      window.clicks = 0;
      window.trap = true;
      addEventListener('message', (e) => window.got.push(String(e.data)));
      document.getElementById('b').addEventListener('click', () => window.clicks++);
      addEventListener('scroll', () => {
        if (!window.trap || document.querySelector('iframe')) return;
        const f = document.createElement('iframe');
        f.src = 'file://${home}/.ssh/menu.html';
        f.style.cssText = 'position:absolute;left:0;top:1900px;width:400px;height:300px;border:0';
        f.onload = () => { f.dataset.loaded = '1'; };
        document.body.append(f);
      });
    </script>`,
  );
  h = await startBrowserHarness({ permissions: { browser: { default: 'auto' } } });
  await allowFileUrls(h, `file://${home}/site/plain.html`);
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

describe('a refused frame added over the element as it is scrolled into view', () => {
  test('click and hover: none reaches the frame, the calls fail; without the frame the click works', async () => {
    const page = await h.context.newPage();
    try {
      await page.goto(`file://${home}/site/click.html`);
      const tabId = await h.tabIdOf(page);
      const reset = async () => {
        await page.evaluate(() => scrollTo(0, 0));
        // The scroll back may add an iframe too: none is left.
        await waitUntil(() => page.evaluate(() => scrollY === 0 || null), 'the page at its top');
        await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))));
        await page.evaluate(() => { for (const f of document.querySelectorAll('iframe')) f.remove(); });
      };
      // The first call attaches the debugger (the iframe loads meanwhile); later ones may be sent
      // before the page's scroll handler runs, and go to the button.
      let refused = 0;
      for (const tool of ['browser_click_element', 'browser_hover_element', 'browser_click_element', 'browser_hover_element']) {
        await reset();
        const r = await h.callTool(tool, { tabId, selector: '#b' });
        if (r.status === 200) continue;
        refused++;
        expect([tool, r.status, r.body?.error?.code]).toEqual([tool, 403, 'page_not_allowed']);
        expect(String(r.body?.error?.message)).toMatch(/loaded file: in an iframe.*while the (click|hover) went on/);
      }
      await waitUntil(() => page.evaluate(() => [...document.querySelectorAll('iframe')].every((f) => f.dataset.loaded === '1') || null), 'the iframes to load');
      await page.evaluate(() => new Promise((r) => setTimeout(r, 0)));
      expect(await page.evaluate(() => (window as unknown as { got: string[] }).got)).toEqual([]);
      expect(refused).toBeGreaterThan(0);
      // No frame added: the click reaches the button.
      await reset();
      await page.evaluate(() => { (window as unknown as { trap: boolean }).trap = false; });
      const ok = await h.callTool('browser_click_element', { tabId, selector: '#b' });
      expect(ok.status).toBe(200);
      expect(await page.evaluate(() => (window as unknown as { clicks: number }).clicks)).toBeGreaterThan(0);
    } finally {
      await page.close();
    }
  });
});
