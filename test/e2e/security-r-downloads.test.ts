/**
 * Downloads, attacked as an agent would (REST tool calls only), in real Chromium with the real
 * extension:
 *  - browser_download with a file name that climbs out of the download folder (`..`, an absolute
 *    path, backslashes) or writes a hidden file or into a hidden folder (`.bashrc`,
 *    `.ssh/authorized_keys`, `.config/autostart/…`): Chrome refuses each, nothing is downloaded;
 *  - an allowed URL that redirects to a file, the extension, a data: URL or chrome://: Chrome
 *    ends the download with nothing received;
 *  - browser_list_downloads (set to auto here) lists the user's downloads: one a page made
 *    from a data: URL carries the whole file in its URL (a wallet's seed phrase, an exported key),
 *    so such URLs are shown as list tools show a refused page: scheme only, marked restricted.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;

beforeAll(async () => {
  h = await startBrowserHarness({
    permissions: { browser: { default: 'auto' } },
    routes: (req) => {
      const u = new URL(req.url);
      if (u.pathname === '/payload.txt') return new Response('payload\n', { headers: { 'content-type': 'text/plain' } });
      if (u.pathname === '/redirect') return new Response(null, { status: 302, headers: { location: u.searchParams.get('to') ?? '/' } });
      return undefined;
    },
  });
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

type Listed = { downloadId: number; url: string; state: string; restricted?: string };
const listed = async (): Promise<Listed[]> => (await h.callTool('browser_list_downloads', { limit: 100 })).body.result.downloads;

describe('downloads', () => {
  test('a file name outside the download folder or hidden is refused, nothing is downloaded', async () => {
    const names = ['../escape.txt', 'sub/../../escape.txt', '/tmp/escape.txt', '..\\escape.txt', '.bashrc', '.ssh/authorized_keys', '.config/autostart/x.desktop', 'ok/.hidden/x', ' .hidden'];
    for (const filename of names) {
      const r = await h.callTool('browser_download', { url: h.fixtureUrl('/payload.txt'), filename });
      expect([filename, r.status, r.body.error?.code]).toEqual([filename, 400, 'invalid_arguments']);
    }
    expect(await listed()).toEqual([]);
  });

  test("a page's data: download is listed without its content", async () => {
    const marker = 'SEED-PHRASE-abandon-ability-able';
    const page = await h.context.newPage();
    await page.goto(h.fixtureUrl('/pages/index.html'));
    await page.evaluate((m) => {
      const a = document.createElement('a');
      a.href = `data:text/plain,${m}`;
      a.download = 'backup.txt';
      document.body.append(a);
      a.click();
    }, marker);
    const d = await waitUntil(async () => (await listed()).find((x) => x.state === 'complete'), 'the page download to complete');
    expect(d.url).toBe('data:');
    expect(d.restricted).toContain('data:');
    const one = await h.callTool('browser_list_downloads', { downloadId: d.downloadId });
    expect(JSON.stringify(one.body)).not.toContain(marker);
    expect(JSON.stringify(await listed())).not.toContain(marker);
    // An ordinary download still shows its URL.
    const ok = await h.callTool('browser_download', { url: h.fixtureUrl('/payload.txt') });
    expect(ok.status).toBe(200);
    const mine = await waitUntil(async () => (await listed()).find((x) => x.downloadId === ok.body.result.downloadId), 'the download to be listed');
    expect(mine.url).toBe(h.fixtureUrl('/payload.txt'));
    expect(mine.restricted).toBeUndefined();
    await page.close();
  });
});

test('a download redirected to a page the tools refuse receives nothing', async () => {
  for (const to of ['file:///etc/hostname', `chrome-extension://${h.extensionId}/manifest.json`, 'data:text/plain,agent-written', 'chrome://version/']) {
    const r = await h.callTool('browser_download', { url: h.fixtureUrl(`/redirect?to=${encodeURIComponent(to)}`) });
    expect(r.status).toBe(200);
    const id = r.body.result.downloadId as number;
    const d = await waitUntil(async () => (await listed()).find((x) => x.downloadId === id && x.state !== 'in_progress'), `the download redirected to ${to} to end`);
    expect([to, d.state, (d as Listed & { bytesReceived: number }).bytesReceived]).toEqual([to, 'interrupted', 0]);
    expect(JSON.stringify(d)).not.toContain('agent-written');
  }
});
