/**
 * While a click, a drag or a capture is under way, iframes of refused pages (here a hidden file
 * framed by a file:// page, file:// allowed) are pinned with inline !important styles
 * (pointer-events:none for a press, visibility:hidden for a capture). A shadow root's ::slotted
 * !important rules beat an element's inline !important style, and a page can make a pinned iframe
 * a shadow host's child without touching its style attribute (attachShadow on its parent, or
 * moveBefore into a host, which keeps the frame loaded): the pin no longer held, and nobody saw it
 * go. The page below does it the moment the pin is written (a MutationObserver on the iframe's
 * style attribute) and puts the frame over the button at once. Performed as an agent would: REST
 * tool calls; Playwright loads the pages and reads the frame's count of events it got.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { startBrowserHarness, waitUntil, type BrowserHarness, allowFileUrls } from '../harness/browser.ts';

setDefaultTimeout(180_000);

let h: BrowserHarness;
let home = '';

/**
 * A button at (0,0)–(200,100) and the key's iframe away from it at left 400, in a div `#p`. When
 * the iframe's style attribute first gets a pinned property (`pinned`), the page runs `attack`
 * (with `f` the iframe, `p` its parent div, `h` a div with a shadow root whose ::slotted rule
 * undoes the pins and puts the frame over the button).
 */
function attackPage(name: string, pinned: string, attack: string): void {
  writeFileSync(
    join(home, 'Downloads', `${name}.html`),
    `<!doctype html><title>${name}</title><body style="margin:0">
    <button id="b" style="position:absolute;left:0;top:0;width:200px;height:100px">ok</button>
    <div id="h" style="position:absolute;left:0;top:0"></div>
    <div id="p" style="position:absolute;left:400px;top:0"><iframe id="k" src="file://${home}/.ssh/key.html" style="width:200px;height:100px;border:0"></iframe></div>
    <script>
      const f = document.getElementById('k');
      const p = document.getElementById('p');
      const h = document.getElementById('h');
      const undo = '<style>::slotted(iframe){interactivity:auto !important;pointer-events:auto !important;visibility:visible !important;display:block !important}</style><slot></slot>';
      h.attachShadow({ mode: 'closed' }).innerHTML = undo;
      window.attacks = 0;
      new MutationObserver(() => {
        if (window.attacks || !f.style.cssText.includes('${pinned}')) return;
        window.attacks++;
        ${attack}
      }).observe(f, { attributes: true, attributeFilter: ['style'] });
    </script>`,
  );
}

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'opentabs-s21a-slot-'));
  mkdirSync(join(home, '.ssh'));
  mkdirSync(join(home, 'Downloads'));
  writeFileSync(
    join(home, '.ssh', 'key.html'),
    `<!doctype html><body style="margin:0;background:#f00;height:100px"><h1>PRIVATE-KEY-LINE-7c1d</h1><script>window.hits = 0; window.events = 0; addEventListener('mousedown', () => { window.hits++; }); for (const t of ['mousedown', 'mousemove', 'mouseup']) addEventListener(t, () => { window.events++; });</script>`,
  );
  writeFileSync(join(home, 'Downloads', 'plain.html'), '<!doctype html><p>an ordinary local note</p>');
  // Its parent becomes a shadow host: the iframe is slotted where its parent was, and moved over the button.
  attackPage('attach', 'pointer-events', `p.attachShadow({ mode: 'closed' }).innerHTML = undo; p.style.left = '0px';`);
  // Moved (without a reload) into a host over the button.
  attackPage('move', 'pointer-events', `h.moveBefore(f, null);`);
  // A capture: the iframe, hidden by the page's stylesheet, is moved into the host when the pin
  // comes (visible there) and back when it goes, hidden again for the check after the capture.
  writeFileSync(
    join(home, 'Downloads', 'print.html'),
    `<!doctype html><title>print</title><style>#k{visibility:hidden}</style><body style="margin:0"><p>a page</p>
    <div id="h"></div>
    <div id="p"><iframe id="k" src="file://${home}/.ssh/key.html" style="width:300px;height:100px;border:0"></iframe></div>
    <script>
      const f = document.getElementById('k');
      const p = document.getElementById('p');
      const h = document.getElementById('h');
      h.attachShadow({ mode: 'closed' }).innerHTML = '<style>::slotted(iframe){visibility:visible !important}</style><slot></slot>';
      window.attacks = 0;
      new MutationObserver(() => {
        const pinned = f.style.cssText.includes('visibility');
        if (pinned && f.parentNode === p) { window.attacks++; h.moveBefore(f, null); }
        else if (!pinned && f.parentNode === h) p.moveBefore(f, null);
      }).observe(f, { attributes: true, attributeFilter: ['style'] });
    </script>`,
  );
  h = await startBrowserHarness({ permissions: { browser: { default: 'auto' } } });
  await allowFileUrls(h, `file://${home}/Downloads/plain.html`);
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

async function opened(name: string): Promise<{ page: Page; tabId: number; hits: () => Promise<number> }> {
  const page = await h.context.newPage();
  await page.goto(`file://${home}/Downloads/${name}.html`);
  const frame = await waitUntil(async () => page.frames().find((f) => f.url().endsWith('/.ssh/key.html')) ?? null, 'the key frame');
  await waitUntil(async () => ((await frame.evaluate(() => typeof (window as unknown as { hits?: number }).hits)) === 'number' ? true : null), 'the key frame to count');
  return { page, tabId: await h.tabIdOf(page), hits: () => frame.evaluate(() => (window as unknown as { hits: number }).hits) };
}

describe('a pinned refused iframe made a shadow host\'s child', () => {
  for (const name of ['attach', 'move']) {
    for (const tool of ['browser_click_at', 'browser_click_element'] as const) {
      test(`${name}, ${tool}: no press reaches the frame`, async () => {
        const { page, tabId, hits } = await opened(name);
        try {
          const r = await h.callTool(tool, { tabId, ...(tool === 'browser_click_at' ? { x: 100, y: 50 } : { selector: '#b' }) });
          // The page did act on the pin.
          expect(await page.evaluate(() => (window as unknown as { attacks: number }).attacks)).toBe(1);
          expect(await hits()).toBe(0);
          // The press went to the button (the pinned frame is inert), and the page's move is told.
          expect([r.status, r.body?.error?.code]).toEqual([403, 'page_not_allowed']);
          expect(String(r.body?.error?.message)).toMatch(/or moved that iframe/);
          // The frame is still loaded, where the page put it.
          expect(await page.evaluate(() => document.getElementById('k')!.isConnected)).toBe(true);
        } finally {
          await page.close();
        }
      });
    }
  }

  test('moved into a host while a PDF is printed and back after: no PDF holds the frame', async () => {
    const { page, tabId } = await opened('print');
    try {
      const r = await h.callTool('browser_print_pdf', { tabId });
      expect(await page.evaluate(() => (window as unknown as { attacks: number }).attacks)).toBeGreaterThan(0);
      // The frame's page has a bold heading, the page none: a PDF holding the frame names a bold font.
      const pdf = /JVBER[A-Za-z0-9+/=]+/.exec(JSON.stringify(r.body));
      expect(pdf ? Buffer.from(pdf[0], 'base64').toString('latin1').includes('-Bold') : false).toBe(false);
      expect([r.status, r.body?.error?.code]).toEqual([403, 'page_not_allowed']);
    } finally {
      await page.close();
    }
  });
});
