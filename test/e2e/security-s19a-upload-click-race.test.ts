/**
 * browser_upload_file given a button that opens a file chooser clicks it: it found the button's
 * point (not covered there), then pressed, with no refused-frame guard. A page whose timer keeps
 * moving an iframe of a refused page (a hidden file framed by a file:// page, file:// allowed)
 * over and away from the button got some presses into that frame. Now the click is guarded as
 * browser_click_element's: not at such an iframe, which is pinned pointer-events:none until the
 * press was sent. Performed as an agent would (REST tool calls); the page is loaded with
 * Playwright, which also reads the refused frame's count of presses.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allowFileUrls, startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(240_000);

let h: BrowserHarness;
let home = '';
const ROUNDS = 20;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'opentabs-s19a-upload-'));
  mkdirSync(join(home, '.ssh'));
  mkdirSync(join(home, 'site'));
  writeFileSync(
    join(home, '.ssh', 'key.html'),
    `<!doctype html><body style="margin:0;background:#f00;height:100px"><h1>PRIVATE-KEY-LINE-19u</h1><script>window.presses = 0; for (const t of ['mousedown', 'mouseup']) addEventListener(t, () => { window.presses++; });</script>`,
  );
  writeFileSync(join(home, 'site', 'report.txt'), 'a report to upload');
  writeFileSync(join(home, 'site', 'plain.html'), '<!doctype html><p>note</p>');
  writeFileSync(
    join(home, 'site', 'race.html'),
    `<!doctype html><title>race</title><body style="margin:0">
    <input type="file" id="file" style="display:none">
    <button id="b" style="position:absolute;left:0;top:0;width:200px;height:100px">Attach</button>
    <iframe id="k" src="file://${home}/.ssh/key.html" style="position:absolute;left:400px;top:0;width:200px;height:100px;border:0"></iframe>
    <script>
      document.getElementById('b').addEventListener('click', () => document.getElementById('file').click());
      const k = document.getElementById('k');
      let over = false;
      setInterval(() => { over = !over; k.style.left = over ? '0px' : '400px'; }, 2);
    </script>`,
  );
  h = await startBrowserHarness({ permissions: { browser: { default: 'auto' } } });
  // The user allowed uploads from the site folder.
  await h.srv.ctx.config.update((d) => {
    d.uploadFolders = [join(home, 'site')];
  });
  await allowFileUrls(h, `file://${home}/site/plain.html`);
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

describe('upload through a button while the page moves a refused frame over it', () => {
  test('no press reaches the refused frame', async () => {
    const page = await h.context.newPage();
    try {
      await page.goto(`file://${home}/site/race.html`);
      const key = await waitUntil(async () => page.frames().find((f) => f.url().endsWith('/.ssh/key.html')) ?? null, 'the key frame');
      await waitUntil(async () => ((await key.evaluate(() => typeof (window as unknown as { presses?: number }).presses)) === 'number' ? true : null), 'the key frame to count');
      const tabId = await h.tabIdOf(page);
      const outcomes: Record<string, number> = {};
      for (let i = 0; i < ROUNDS; i++) {
        const r = await h.callTool('browser_upload_file', { tabId, selector: '#b', paths: [join(home, 'site', 'report.txt')] });
        const what = r.status === 200 ? 'uploaded' : /is covered by/.test(String(r.body?.error?.message)) ? 'covered' : String(r.body?.error?.code);
        outcomes[what] = (outcomes[what] ?? 0) + 1;
      }
      console.log(`upload beside a moving refused frame: ${JSON.stringify(outcomes)}`);
      expect(await key.evaluate(() => (window as unknown as { presses: number }).presses)).toBe(0);
      // Refused or covered when the frame was there, uploaded when it was not: nothing else.
      expect(Object.keys(outcomes).filter((k) => !['uploaded', 'covered', 'page_not_allowed'].includes(k))).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
