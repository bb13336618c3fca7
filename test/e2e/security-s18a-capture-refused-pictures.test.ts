/**
 * With file:// pages on, a file:// page (one the agent saved with browser_download, say) can show
 * a file the tools may not use as a picture, without any frame: an <img>, a CSS background, an SVG
 * <image>, a video poster, an image <object>, a canvas it drew the picture on, media of a <video>
 * it keeps out of the page, or an image it only loaded and can show at any moment (clearing its resource timing list does not hide it); or it
 * runs a script of such a file, which writes what the file holds into the page. Chrome paints
 * them, and a screenshot or a PDF held them. Now such a capture is refused; a picture from a file
 * the tools may use does not stop it. Performed as an
 * agent would: REST tool calls only; the pages are loaded with Playwright so the pictures are
 * there when the calls come.
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
/** A 1×1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==', 'base64');

const CAPTURES = [
  ['browser_screenshot_tab', {}],
  ['browser_screenshot_tab', { fullPage: true }],
  ['browser_print_pdf', {}],
] as const;

/** Pages showing `src` as a picture in one way each; the page's title is 'ready' once it is shown. */
function pages(src: string): Record<string, string> {
  const ready = `<script>addEventListener('load', () => { document.title = 'ready'; });</script>`;
  return {
    img: `<img src="${src}" style="width:200px;height:200px">${ready}`,
    css: `<div style="width:200px;height:200px;background-image:url('${src}');background-size:cover"></div>${ready}`,
    pseudo: `<style>#d::before { content: url("${src}"); }</style><div id="d"></div>${ready}`,
    svg: `<svg width="200" height="200"><image href="${src}" width="200" height="200"/></svg>${ready}`,
    poster: `<video poster="${src}" width="200" height="200"></video>${ready}`,
    object: `<object data="${src}" type="image/png" width="200" height="200"></object>${ready}`,
    // Drawn on a canvas from an Image no element holds, the resource timing list cleared after.
    canvas: `<canvas width="200" height="200"></canvas><script>
      const i = new Image();
      i.onload = () => { document.querySelector('canvas').getContext('2d').drawImage(i, 0, 0, 200, 200); performance.clearResourceTimings(); document.title = 'ready'; };
      i.src = '${src}';
    </script>`,
    // Loaded into an Image no element holds, never drawn: the document can show it at any moment.
    loaded: `<script>
      const i = new Image();
      i.onload = () => { document.title = 'ready'; };
      i.src = '${src}';
    </script>`,
    // Media of a <video> no element holds (what it plays could be drawn on a canvas).
    media: `<script>
      const v = document.createElement('video');
      v.preload = 'auto';
      // A picture is no media: Chrome fetches it, then reports the error.
      v.onerror = v.onloadedmetadata = () => { document.title = 'ready'; };
      v.src = '${src}';
    </script>`,
    // Loaded into an <img> that is then dropped from the page, the list cleared: the picture is
    // the document's, which can show it again from its memory at any moment.
    dropped: `<script>
      const i = new Image();
      i.onload = () => { performance.clearResourceTimings(); setTimeout(() => { document.body.append(i); document.title = 'ready'; }, 0); };
      i.src = '${src}';
    </script>`,
  };
}

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'opentabs-s18a-pictures-'));
  mkdirSync(join(home, '.ssh'));
  mkdirSync(join(home, 'Downloads'));
  mkdirSync(join(home, 'Pictures'));
  writeFileSync(join(home, '.ssh', 'key.png'), PNG);
  writeFileSync(join(home, 'Pictures', 'ok.png'), PNG);
  writeFileSync(join(home, 'Downloads', 'plain.html'), '<!doctype html><p>an ordinary local note</p>');
  writeFileSync(join(home, '.ssh', 'id_rsa'), '-----BEGIN OPENSSH PRIVATE KEY-----\nPRIVATE-KEY-LINE-9c8d\n');
  const ready = `<script>addEventListener('load', () => { document.title = 'ready'; });</script>`;
  writeFileSync(join(home, 'Downloads', 'text-object.html'), `<!doctype html><title>loading</title><object data="file://${home}/.ssh/id_rsa" type="text/plain" width="400" height="100"></object>${ready}`);
  writeFileSync(join(home, 'Downloads', 'text-embed.html'), `<!doctype html><title>loading</title><embed src="file://${home}/.ssh/id_rsa" type="text/plain" width="400" height="100">${ready}`);
  // A hidden page showing a hidden picture, in an iframe kept hidden (as other extensions keep their menus).
  writeFileSync(join(home, '.ssh', 'pic.html'), `<!doctype html><img src="key.png">`);
  writeFileSync(join(home, 'Downloads', 'hidden-frame.html'), `<!doctype html><title>loading</title><p>a page</p><iframe src="file://${home}/.ssh/pic.html" style="display:none"></iframe>${ready}`);
  // A hidden file that happens to be a valid script, run by a page that shows what it holds.
  mkdirSync(join(home, '.config'));
  writeFileSync(join(home, '.config', 'settings.js'), `var SETTINGS = { token: 'TOKEN-IN-HIDDEN-FILE-7a6b' };`);
  writeFileSync(join(home, 'Downloads', 'script.html'), `<!doctype html><title>loading</title><script src="file://${home}/.config/settings.js"></script><script>document.write('<h1>' + SETTINGS.token + '</h1>'); document.title = 'ready';</script>`);
  for (const [name, body] of Object.entries(pages(`file://${home}/.ssh/key.png`))) writeFileSync(join(home, 'Downloads', `hidden-${name}.html`), `<!doctype html><title>loading</title><body style="margin:0">${body}`);
  for (const [name, body] of Object.entries(pages(`file://${home}/Pictures/ok.png`))) writeFileSync(join(home, 'Downloads', `ok-${name}.html`), `<!doctype html><title>loading</title><body style="margin:0">${body}`);
  h = await startBrowserHarness({ permissions: { browser: { default: 'auto' } } });
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
  await waitUntil(async () => (await page.title()) === 'ready' || null, `${url} to show its picture`);
  return { page, tabId: await h.tabIdOf(page) };
}

describe('a file:// page showing a picture', () => {
  for (const name of Object.keys(pages(''))) {
    test(`from a hidden folder (${name}) is neither shot nor printed`, async () => {
      const { page, tabId } = await opened(`file://${home}/Downloads/hidden-${name}.html`);
      try {
        for (const [tool, args] of CAPTURES) {
          const r = await h.callTool(tool, { tabId, ...args });
          expectPageRefused(r, `${name}: ${tool} ${JSON.stringify(args)}`, /(a picture|a resource \(media\)) from a file tools may not use \(it is a hidden file/);
          expect(JSON.stringify(r.body)).not.toContain('"images"');
          expect(JSON.stringify(r.body)).not.toContain('"resources"');
          expect(String(r.body.error.message)).not.toContain(home);
        }
      } finally {
        await page.close();
      }
    });
  }

  test('holding a hidden file\'s script is neither shot nor printed', async () => {
    const { page, tabId } = await opened(`file://${home}/Downloads/script.html`);
    try {
      expect(await page.textContent('h1')).toBe('TOKEN-IN-HIDDEN-FILE-7a6b');
      for (const [tool, args] of CAPTURES) {
        const r = await h.callTool(tool, { tabId, ...args });
        expectPageRefused(r, `script: ${tool} ${JSON.stringify(args)}`, /a resource \(script\) from a file tools may not use \(it is a hidden file/);
        expect(JSON.stringify(r.body)).not.toContain('"images"');
      }
    } finally {
      await page.close();
    }
  });

  test('with a hidden text file in an <object> or <embed> is neither shot nor printed (they are frames)', async () => {
    for (const tag of ['object', 'embed']) {
      const { page, tabId } = await opened(`file://${home}/Downloads/text-${tag}.html`);
      try {
        expect(page.frames().length).toBe(2);
        for (const [tool, args] of CAPTURES) {
          const r = await h.callTool(tool, { tabId, ...args });
          expectPageRefused(r, `${tag}: ${tool} ${JSON.stringify(args)}`, /in an iframe, which tools may not use \(it is a hidden file/);
        }
      } finally {
        await page.close();
      }
    }
  });

  test('shown only inside a hidden iframe of a refused page: shot and printed (the frame cannot paint)', async () => {
    const { page, tabId } = await opened(`file://${home}/Downloads/hidden-frame.html`);
    try {
      expect(page.frames().some((f) => f.url().endsWith('/.ssh/pic.html'))).toBe(true);
      for (const [tool, args] of CAPTURES) {
        const r = await h.callTool(tool, { tabId, ...args });
        expect([tool, JSON.stringify(args), r.status, r.body?.error?.message]).toEqual([tool, JSON.stringify(args), 200, undefined]);
      }
    } finally {
      await page.close();
    }
  });

  test('from a file the tools may use is shot and printed', async () => {
    for (const name of Object.keys(pages(''))) {
      const { page, tabId } = await opened(`file://${home}/Downloads/ok-${name}.html`);
      try {
        for (const [tool, args] of CAPTURES) {
          const r = await h.callTool(tool, { tabId, ...args });
          expect([name, tool, JSON.stringify(args), r.status]).toEqual([name, tool, JSON.stringify(args), 200]);
        }
      } finally {
        await page.close();
      }
    }
  });
});
