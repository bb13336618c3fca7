/**
 * A page the tools may use can show, in an iframe, a page they may not: with file:// allowed, a
 * file:// page (one the agent downloaded with browser_download, say) may hold iframes of hidden
 * files — ~/.ssh/id_rsa, ~/.aws/credentials, MCP client configs — and Chrome draws them. Reading
 * tools refuse such frames, but a screenshot or a PDF holds every frame's pixels: they are now
 * refused while any frame of the tab shows a refused page, checked before and after the capture
 * and for every frame that loads one while the capture runs (a page swapping an iframe to the
 * hidden file and back). Frames of the page's own making (srcdoc, data:) and allowed file://
 * frames do not stop a capture. Performed as an agent would: REST tool calls only; the pages are
 * loaded with Playwright so the iframes are there when the calls come.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { expectPageRefused, startBrowserHarness, waitUntil, type BrowserHarness, allowFileUrls } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
let home = '';
const PRIVATE = 'PRIVATE-KEY-LINE-0f1e2d';

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'opentabs-s17x-frames-'));
  mkdirSync(join(home, '.ssh'));
  mkdirSync(join(home, 'Downloads'));
  writeFileSync(join(home, '.ssh', 'id_rsa'), `-----BEGIN OPENSSH PRIVATE KEY-----\n${PRIVATE}\n`);
  writeFileSync(join(home, '.ssh', 'key.html'), `<!doctype html><body style="margin:0;background:#f00"><h1>${PRIVATE}</h1>`);
  writeFileSync(join(home, 'Downloads', 'plain.html'), '<!doctype html><p>an ordinary local note</p>');
  // What an agent would have saved with browser_download: a page framing the user's hidden files.
  writeFileSync(
    join(home, 'Downloads', 'report.html'),
    `<!doctype html><title>report</title><body style="margin:0"><iframe id="key" src="file://${home}/.ssh/key.html" style="border:0;width:400px;height:200px"></iframe><iframe src="file://${home}/.ssh/id_rsa"></iframe>`,
  );
  writeFileSync(join(home, 'Downloads', 'allowed.html'), `<!doctype html><title>allowed</title><p>outer</p><iframe src="file://${home}/Downloads/plain.html"></iframe>`);
  // Shows a hidden file in its iframe only for a moment at a time (back to the plain file as soon
  // as it has loaded): checks before and after a capture mostly see the plain file.
  writeFileSync(
    join(home, 'Downloads', 'swap.html'),
    `<!doctype html><title>swap</title><body style="margin:0"><iframe id="f" src="file://${home}/Downloads/plain.html" style="border:0;width:400px;height:200px"></iframe><script>
      const f = document.getElementById('f');
      let shown = 0;
      f.onload = () => {
        if (f.src.includes('.ssh')) { shown++; document.title = 'shown ' + shown; f.src = 'file://${home}/Downloads/plain.html'; }
        else setTimeout(() => { f.src = 'file://${home}/.ssh/key.html'; }, 30);
      };
    </script>`,
  );
  h = await startBrowserHarness({
    permissions: { browser: { default: 'auto' } },
    routes: (req) => {
      if (new URL(req.url).pathname !== '/s17x/own-frames') return undefined;
      return new Response(`<!doctype html><title>own</title><p>outer</p><iframe srcdoc="<p>inner</p>"></iframe><iframe src="data:text/html,<p>data frame</p>"></iframe>`, { headers: { 'content-type': 'text/html' } });
    },
  });
  // The user turned file:// pages on.
  await allowFileUrls(h, `file://${home}/Downloads/plain.html`);
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

async function opened(url: string): Promise<{ page: Page; tabId: number }> {
  const page = await h.context.newPage();
  await page.goto(url);
  return { page, tabId: await h.tabIdOf(page) };
}

const CAPTURES = [
  ['browser_screenshot_tab', {}],
  ['browser_screenshot_tab', { fullPage: true }],
  ['browser_screenshot_tab', { selector: 'iframe' }],
  ['browser_print_pdf', {}],
] as const;

describe('a page showing a refused page in an iframe', () => {
  test('a file:// page framing hidden files is neither shot nor printed', async () => {
    const { page, tabId } = await opened(`file://${home}/Downloads/report.html`);
    try {
      // Chrome does draw them: the frames hold the files' text.
      const texts = await Promise.all(page.frames().map((f) => f.evaluate(() => document.body?.innerText ?? '').catch(() => '')));
      expect(texts.filter((t) => t.includes(PRIVATE)).length).toBe(2);
      // The reading tools refuse those frames.
      const content = await h.callTool('browser_get_tab_content', { tabId });
      expect(content.status).toBe(200);
      expect(JSON.stringify(content.body)).not.toContain(PRIVATE);
      for (const [tool, args] of CAPTURES) {
        const r = await h.callTool(tool, { tabId, ...args });
        expectPageRefused(r, `${tool} ${JSON.stringify(args)}`, /in an iframe, which tools may not use \(it is a hidden file/);
        expect(JSON.stringify(r.body)).not.toContain('"images"');
        expect(JSON.stringify(r.body)).not.toContain('"resources"');
        expect(String(r.body.error.message)).not.toContain(home);
      }
    } finally {
      await page.close();
    }
  });

  test('a frame that shows a hidden file only for moments makes every capture fail', async () => {
    const { page, tabId } = await opened(`file://${home}/Downloads/swap.html`);
    try {
      await waitUntil(async () => (await page.title()).startsWith('shown') || null, 'the page to show the hidden file once');
      for (let i = 0; i < 5; i++) {
        for (const [tool, args] of CAPTURES) {
          const r = await h.callTool(tool, { tabId, ...args });
          // A print can fall between two showings of the file on a loaded machine (the page's 30 ms
          // timer runs late): then it holds the plain file only, not the key's bold heading.
          if (tool === 'browser_print_pdf' && r.status === 200) {
            const pdf = Buffer.from(JSON.stringify(r.body).match(/JVBER[A-Za-z0-9+/=]+/)![0], 'base64').toString('latin1');
            expect([i, pdf.includes('-Bold')]).toEqual([i, false]);
            continue;
          }
          expectPageRefused(r, `${tool} ${JSON.stringify(args)} #${i}`, /in an iframe, which tools may not use/);
          expect(JSON.stringify(r.body)).not.toContain('"images"');
        }
      }
    } finally {
      await page.close();
    }
  });

  test('allowed file:// frames and frames of the page\'s own making do not stop a capture', async () => {
    for (const url of [`file://${home}/Downloads/allowed.html`, h.fixtureUrl('/s17x/own-frames')]) {
      const { page, tabId } = await opened(url);
      try {
        for (const [tool, args] of CAPTURES) {
          const r = await h.callTool(tool, { tabId, ...args });
          expect([url, tool, JSON.stringify(args), r.status]).toEqual([url, tool, JSON.stringify(args), 200]);
        }
      } finally {
        await page.close();
      }
    }
  });
});
