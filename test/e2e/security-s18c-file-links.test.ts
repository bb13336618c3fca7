/**
 * file:// pages allowed by the user still keep hidden files, MCP client configs and the OpenTabs
 * config folder out of reach — also behind a symbolic link. Chrome follows links when it opens a
 * file:// URL, and a visible path can lead anywhere: a cloned repository or an unpacked archive
 * may carry `notes.txt -> ../.ssh/id_rsa` or a folder link to `~/.ssh`. Performed as an agent
 * would (REST tool calls), in real Chromium with the real extension: opening the link, navigating
 * to it, a folder link, a visible page framing the link, a tab the user opened on it; a link to a
 * visible file still opens.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allowFileUrls, expectPageRefused, startBrowserHarness, waitUntil, type BrowserHarness, type ToolCallResult } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
let home = '';
const responses: ToolCallResult[] = [];
const KEY = 'PRIVATE-KEY-7d2e41';
const VISIBLE = 'visible-readme-text';

async function call(name: string, args: Record<string, unknown> = {}): Promise<ToolCallResult> {
  const r = await h.callTool(name, args);
  responses.push(r);
  return r;
}

const fileUrl = (...parts: string[]) => `file://${join(home, ...parts)}`;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'opentabs-links-'));
  mkdirSync(join(home, '.ssh'));
  writeFileSync(join(home, '.ssh', 'id_rsa'), `-----BEGIN KEY-----\n${KEY}\n-----END KEY-----\n`);
  writeFileSync(join(home, '.ssh', 'index.html'), `<p>${KEY}</p>`);
  mkdirSync(join(home, 'docs'));
  writeFileSync(join(home, 'docs', 'readme.txt'), VISIBLE);
  const project = join(home, 'project');
  mkdirSync(project);
  writeFileSync(join(project, 'plain.html'), '<p>a plain page</p>');
  // What a cloned repository can carry: relative links out of it.
  symlinkSync('../.ssh/id_rsa', join(project, 'notes.txt'));
  symlinkSync('../.ssh', join(project, 'keys'));
  symlinkSync('../docs/readme.txt', join(project, 'readme.txt'));
  // A 1×1 PNG in the hidden folder, shown by a visible page through the folder link.
  writeFileSync(join(home, '.ssh', 'pic.png'), Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==', 'base64'));
  writeFileSync(join(project, 'pic.html'), '<p>picture page</p><img src="keys/pic.png" width="50" height="50">');
  writeFileSync(join(project, 'page.html'), '<p>project page</p><iframe src="notes.txt" style="width:400px;height:100px"></iframe>');
  h = await startBrowserHarness({ permissions: { browser: { default: 'auto' } } });
  // The link to the config folder needs the harness's config dir.
  symlinkSync(join(h.configDir, 'extension', 'auth.json'), join(project, 'auth-copy.json'));
  await allowFileUrls(h, fileUrl('project', 'plain.html'));
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

const expectLinkRefused = (r: ToolCallResult, what: string) => expectPageRefused(r, what, /symbolic link|hidden|config folder/);

describe('file:// through symbolic links', () => {
  test('a visible link to a hidden file, a link to a hidden folder, a link into the config folder: not opened', async () => {
    for (const url of [fileUrl('project', 'notes.txt'), fileUrl('project', 'keys', 'index.html'), fileUrl('project', 'keys', 'id_rsa'), fileUrl('project', 'auth-copy.json')]) {
      expectLinkRefused(await call('browser_open_tab', { url }), `open_tab ${url}`);
      expectLinkRefused(await call('browser_create_window', { url }), `create_window ${url}`);
    }
    const opened = await call('browser_open_tab', { url: fileUrl('project', 'plain.html') });
    expect(opened.status).toBe(200);
    const tabId = opened.body.result.id as number;
    expectLinkRefused(await call('browser_navigate_tab', { tabId, url: fileUrl('project', 'notes.txt') }), 'navigate to the link');
    await call('browser_close_tab', { tabId });
  });

  test('a link to a visible file opens and reads as before', async () => {
    const opened = await call('browser_open_tab', { url: fileUrl('project', 'readme.txt') });
    expect(opened.status).toBe(200);
    const tabId = opened.body.result.id as number;
    const text = await waitUntil(async () => {
      const r = await call('browser_get_tab_content', { tabId });
      return r.status === 200 && String(r.body.result.content).includes(VISIBLE) ? r : null;
    }, 'the linked visible file read');
    expect(text.body.result.content).toContain(VISIBLE);
    await call('browser_close_tab', { tabId });
  });

  test('a visible page framing the link: the frame is not read, no capture', async () => {
    const opened = await call('browser_open_tab', { url: fileUrl('project', 'page.html') });
    expect(opened.status).toBe(200);
    const tabId = opened.body.result.id as number;
    const r = await waitUntil(async () => {
      const c = await call('browser_get_tab_content', { tabId });
      return c.status === 200 && String(c.body.result.content).includes('project page') && /iframe/.test(String(c.body.result.content)) ? c : null;
    }, 'the page and its iframe line');
    expect(String(r.body.result.content)).toContain('not read');
    expect(JSON.stringify(r.body)).not.toContain(KEY);
    const shot = await call('browser_screenshot_tab', { tabId });
    expect(shot.status).toBe(403);
    await call('browser_close_tab', { tabId });
  });

  test('a visible page showing a picture through a folder link to a hidden folder: no screenshot or PDF', async () => {
    const opened = await call('browser_open_tab', { url: fileUrl('project', 'pic.html') });
    expect(opened.status).toBe(200);
    const tabId = opened.body.result.id as number;
    await waitUntil(async () => (await call('browser_execute_script', { tabId, code: 'document.images[0]?.complete && document.images[0].naturalWidth > 0' })).body?.result?.value === true, 'the picture loaded');
    for (const tool of ['browser_screenshot_tab', 'browser_print_pdf']) {
      const r = await call(tool, { tabId });
      expect([tool, r.status, r.body.error?.code]).toEqual([tool, 403, 'page_not_allowed']);
    }
    await call('browser_close_tab', { tabId });
  });

  test('a tab the user opened on the link cannot be read, and is listed without its path', async () => {
    const page = await h.context.newPage();
    try {
      await page.goto(fileUrl('project', 'notes.txt'));
      const tabs = (await call('browser_list_tabs')).body.result.tabs as { id: number; url: string; restricted?: string }[];
      const mine = tabs.find((t) => t.restricted && t.url === 'file:');
      expect(mine).toBeDefined();
      expect(JSON.stringify(tabs)).not.toContain('notes.txt');
      for (const tool of ['browser_get_tab_content', 'browser_get_page_html', 'browser_execute_script', 'browser_screenshot_tab']) {
        const r = await call(tool, { tabId: mine!.id, ...(tool === 'browser_execute_script' ? { code: 'document.body.innerText' } : {}) });
        expectLinkRefused(r, `${tool} on the user's tab`);
      }
    } finally {
      await page.close();
    }
  });

  test('history: back to the link is refused, back from a visible page is not; history search leaves the link out', async () => {
    const page = await h.context.newPage();
    try {
      await page.goto(fileUrl('project', 'notes.txt'));
      const tabs = (await call('browser_list_tabs')).body.result.tabs as { id: number; url: string; restricted?: string }[];
      const tabId = tabs.find((t) => t.restricted && t.url === 'file:')!.id;
      // A refused tab may be navigated away; its history then leads back to the link.
      expect((await call('browser_navigate_tab', { tabId, url: fileUrl('project', 'plain.html') })).status).toBe(200);
      expectPageRefused(await call('browser_go_back', { tabId }), 'go_back to the link', /previous page is not allowed \(it leads through a symbolic link/);
      expect((await call('browser_navigate_tab', { tabId, url: fileUrl('project', 'readme.txt') })).status).toBe(200);
      // Back from the visible link's page: an allowed entry, not refused.
      const back = await call('browser_go_back', { tabId });
      expect(back.status).toBe(200);
      expect(back.body.result.restricted).toBeUndefined();
      const history = await call('browser_search_history', { query: 'notes', days: 1 });
      expect(history.status).toBe(200);
      expect(JSON.stringify(history.body)).not.toContain('notes.txt');
    } finally {
      await page.close();
    }
  });

  test('after a worker restart, a visible file:// tab is still known where it leads (the card of an asked call names it)', async () => {
    const opened = await call('browser_open_tab', { url: fileUrl('project', 'plain.html') });
    expect(opened.status).toBe(200);
    const tabId = opened.body.result.id as number;
    const cdp = await h.context.browser()!.newBrowserCDPSession();
    try {
      const { targetInfos } = (await cdp.send('Target.getTargets')) as { targetInfos: { targetId: string; type: string; url: string }[] };
      const sw = targetInfos.find((t) => t.type === 'service_worker' && t.url.startsWith(`chrome-extension://${h.extensionId}/`));
      await cdp.send('Target.closeTarget', { targetId: sw!.targetId });
    } finally {
      await cdp.detach().catch(() => {});
    }
    await h.waitForHealth((x) => x.extensionConnected === false, 'the server to see the extension go', 15_000);
    const wake = await h.context.newPage();
    await wake.goto(h.fixtureUrl('/pages/index.html?wake'));
    await h.waitForHealth((x) => x.extensionConnected === true, 'the restarted worker to reconnect', 20_000);
    // What the server asks before showing an approval card, before any tool call resolved the tab.
    const shown = await h.srv.ctx.hub.request('tab.page', { tabId });
    expect(shown.url).toBe(fileUrl('project', 'plain.html'));
    await wake.close();
    await call('browser_close_tab', { tabId });
  });

  test('no response of this file holds the linked file', () => {
    expect(responses.length).toBeGreaterThan(15);
    for (const r of responses) expect(JSON.stringify(r.body)).not.toContain(KEY);
  });
});
