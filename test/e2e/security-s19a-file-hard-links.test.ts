/**
 * file:// pages allowed by the user keep hidden files and the OpenTabs config folder out of reach
 * behind a hard link too. A hard link is the same file under a second name: a visible
 * file:///home/u/project/notes.txt that is a hard link to ~/.ssh/id_rsa shows the key, and no path
 * (symbolic links followed or not) says so. A regular file with more than one name is refused.
 * Performed as an agent would (REST tool calls), in real Chromium with the real extension: opening
 * the link, navigating to it, a visible page framing it, a tab the user opened on it; a file of one
 * name still opens.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { linkSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allowFileUrls, expectPageRefused, startBrowserHarness, waitUntil, type BrowserHarness, type ToolCallResult } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
let home = '';
const KEY = 'PRIVATE-KEY-91c3aa';
const VISIBLE = 'one-name-readme-text';

const fileUrl = (...parts: string[]) => `file://${join(home, ...parts)}`;
const call = (name: string, args: Record<string, unknown> = {}) => h.callTool(name, args);
const expectLinkRefused = (r: ToolCallResult, what: string) => expectPageRefused(r, what, /hard link/);

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'opentabs-hardlinks-'));
  mkdirSync(join(home, '.ssh'));
  writeFileSync(join(home, '.ssh', 'id_rsa'), `-----BEGIN KEY-----\n${KEY}\n-----END KEY-----\n`);
  const project = join(home, 'project');
  mkdirSync(project);
  writeFileSync(join(project, 'plain.html'), '<p>a plain page</p>');
  writeFileSync(join(project, 'readme.txt'), VISIBLE);
  linkSync(join(home, '.ssh', 'id_rsa'), join(project, 'notes.txt'));
  writeFileSync(join(project, 'page.html'), '<p>project page</p><iframe src="notes.txt" style="width:400px;height:100px"></iframe>');
  h = await startBrowserHarness({ permissions: { browser: { default: 'auto' } } });
  // auth.json (the secret) under a second, visible name: the harness's config dir and the
  // project are on one file system (both under the temp folder) when the link can be made.
  try {
    linkSync(join(h.configDir, 'extension', 'auth.json'), join(project, 'auth-copy.json'));
  } catch {}
  await allowFileUrls(h, fileUrl('project', 'plain.html'));
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

describe('file:// through hard links', () => {
  test('a visible hard link to a hidden file or to auth.json: not opened, not navigated to', async () => {
    const urls = [fileUrl('project', 'notes.txt')];
    try {
      if (statSync(join(home, 'project', 'auth-copy.json')).nlink > 1) urls.push(fileUrl('project', 'auth-copy.json'));
    } catch {}
    for (const url of urls) {
      expectLinkRefused(await call('browser_open_tab', { url }), `open_tab ${url}`);
      expectLinkRefused(await call('browser_create_window', { url }), `create_window ${url}`);
      // A copy in Downloads would be a file of one name, at a visible path.
      expectLinkRefused(await call('browser_download', { url, filename: 's19a-copy.txt' }), `download ${url}`);
    }
    const opened = await call('browser_open_tab', { url: fileUrl('project', 'plain.html') });
    expect(opened.status).toBe(200);
    const tabId = opened.body.result.id as number;
    expectLinkRefused(await call('browser_navigate_tab', { tabId, url: fileUrl('project', 'notes.txt') }), 'navigate to the link');
    await call('browser_close_tab', { tabId });
  });

  test('a file of one name opens and reads as before', async () => {
    const opened = await call('browser_open_tab', { url: fileUrl('project', 'readme.txt') });
    expect(opened.status).toBe(200);
    const tabId = opened.body.result.id as number;
    const text = await waitUntil(async () => {
      const r = await call('browser_get_tab_content', { tabId });
      return r.status === 200 && String(r.body.result.content).includes(VISIBLE) ? r : null;
    }, 'the visible file read');
    expect(text.body.result.content).toContain(VISIBLE);
    await call('browser_close_tab', { tabId });
  });

  test('a visible page framing the hard link: the frame is not read, no screenshot', async () => {
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
    expect([shot.status, shot.body.error?.code]).toEqual([403, 'page_not_allowed']);
    await call('browser_close_tab', { tabId });
  });

  test('a tab the user opened on the hard link cannot be read', async () => {
    const page = await h.context.newPage();
    try {
      await page.goto(fileUrl('project', 'notes.txt'));
      const tabs = (await call('browser_list_tabs')).body.result.tabs as { id: number; url: string; restricted?: string }[];
      const mine = tabs.find((t) => t.restricted && t.url === 'file:');
      expect(mine).toBeDefined();
      expect(JSON.stringify(tabs)).not.toContain('notes.txt');
      const read = await call('browser_get_tab_content', { tabId: mine!.id });
      expectLinkRefused(read, 'read the tab');
      expect(JSON.stringify(read.body)).not.toContain(KEY);
    } finally {
      await page.close();
    }
  });
});
