/**
 * Other extensions keep iframes of their own pages (inline menus) hidden in ordinary pages, and
 * restyle them as they are used. While a screenshot or PDF is taken such hidden iframes of refused
 * pages are pinned hidden (visibility:hidden !important); any change of their style attribute
 * meanwhile made the capture fail, though the frame could not paint (moved, display set again),
 * and an agent retrying got the image. Now only the pin going counts; and when it went for a
 * moment and the frame is hidden again, the image is dropped and taken again once. A frame that
 * stays shown, or is shown at every try, still gets no capture. Here the refused frame is a
 * hidden file framed by a file:// page (file:// allowed), which the URL policy refuses the same
 * way. Performed as an agent would: REST tool calls; the pages are loaded with Playwright.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { expectPageRefused, startBrowserHarness, waitUntil, type BrowserHarness, allowFileUrls } from '../harness/browser.ts';

setDefaultTimeout(180_000);

let h: BrowserHarness;
let home = '';
const PRIVATE = 'PRIVATE-KEY-LINE-2c1d0e';

/** A page with the key in a hidden iframe (display:none) and `script`. */
function pageWith(name: string, script: string): void {
  writeFileSync(
    join(home, 'Downloads', `${name}.html`),
    `<!doctype html><title>${name}</title><body style="margin:0"><p>a page</p>
    <iframe id="k" src="file://${home}/.ssh/key.html" style="border:0;width:300px;height:100px;display:none"></iframe><script>const k = document.getElementById('k'); ${script}</script>`,
  );
}

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'opentabs-s18a-restyle-'));
  mkdirSync(join(home, '.ssh'));
  mkdirSync(join(home, 'Downloads'));
  // Bold: a PDF holding the frame names a bold font (the page itself has none).
  writeFileSync(join(home, '.ssh', 'key.html'), `<!doctype html><body style="margin:0;background:#f00"><h1>${PRIVATE}</h1>`);
  writeFileSync(join(home, 'Downloads', 'plain.html'), '<!doctype html><p>an ordinary local note</p>');
  // As an extension placing its hidden menu: moved and set hidden again every 2 ms.
  pageWith('restyle', `let n = 0; setInterval(() => { k.style.top = (n++ % 50) + 'px'; k.style.display = 'none'; }, 2);`);
  // Shown while the first print runs (the pin's visibility replaced), hidden after it.
  pageWith('once', `var prints = 0;
    addEventListener('beforeprint', () => { if (prints++ === 0) { k.style.visibility = 'visible'; k.style.display = 'block'; } });
    addEventListener('afterprint', () => { k.style.display = 'none'; });`);
  // The same at every print.
  pageWith('every', `addEventListener('beforeprint', () => { k.style.visibility = 'visible'; k.style.display = 'block'; });
    addEventListener('afterprint', () => { k.style.display = 'none'; });`);
  // Shown at the first print and left shown.
  pageWith('stays', `addEventListener('beforeprint', () => { k.style.visibility = 'visible'; k.style.display = 'block'; });`);
  h = await startBrowserHarness({ permissions: { browser: { default: 'auto' } } });
  await allowFileUrls(h, `file://${home}/Downloads/plain.html`);
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

async function opened(name: string): Promise<{ page: Page; tabId: number }> {
  const page = await h.context.newPage();
  await page.goto(`file://${home}/Downloads/${name}.html`);
  await waitUntil(async () => page.frames().find((f) => f.url().endsWith('/.ssh/key.html')) ?? null, 'the key frame');
  return { page, tabId: await h.tabIdOf(page) };
}

function pdfOf(r: { body: unknown }): string {
  return Buffer.from(JSON.stringify(r.body).match(/JVBER[A-Za-z0-9+/=]+/)![0], 'base64').toString('latin1');
}

describe('a hidden iframe of a refused page restyled during a capture', () => {
  test('moved and set hidden again all the time: every capture is taken, none holds the frame', async () => {
    const { page, tabId } = await opened('restyle');
    try {
      for (let i = 0; i < 3; i++) {
        for (const [tool, args] of [['browser_screenshot_tab', {}], ['browser_screenshot_tab', { fullPage: true }], ['browser_print_pdf', {}]] as const) {
          const r = await h.callTool(tool, { tabId, ...args });
          expect([i, tool, JSON.stringify(args), r.status, r.body?.error?.message]).toEqual([i, tool, JSON.stringify(args), 200, undefined]);
          if (tool === 'browser_print_pdf') expect(pdfOf(r).includes('-Bold')).toBe(false);
        }
      }
    } finally {
      await page.close();
    }
  });

  test('shown for the first print only: the PDF is printed again, without the frame', async () => {
    const { page, tabId } = await opened('once');
    try {
      const r = await h.callTool('browser_print_pdf', { tabId });
      expect([r.status, r.body?.error?.message]).toEqual([200, undefined]);
      expect(pdfOf(r).includes('-Bold')).toBe(false);
      // The frame was shown once: the first PDF was taken and dropped.
      expect(await page.evaluate(() => (window as unknown as { prints: number }).prints)).toBe(2);
    } finally {
      await page.close();
    }
  });

  test('shown at every print: no PDF, and the message says to try again', async () => {
    const { page, tabId } = await opened('every');
    try {
      const r = await h.callTool('browser_print_pdf', { tabId });
      expectPageRefused(r, 'PDF', /changed the style of an iframe showing a page tools may not use, or moved it, while the PDF was taken \(2 times\).*Try again/);
      expect(JSON.stringify(r.body)).not.toContain('JVBER');
    } finally {
      await page.close();
    }
  });

  test('shown and left shown: no PDF, refused as a shown frame', async () => {
    const { page, tabId } = await opened('stays');
    try {
      const r = await h.callTool('browser_print_pdf', { tabId });
      expectPageRefused(r, 'PDF', /in an iframe, which tools may not use \(it is a hidden file/);
      expect(JSON.stringify(r.body)).not.toContain('JVBER');
    } finally {
      await page.close();
    }
  });
});
