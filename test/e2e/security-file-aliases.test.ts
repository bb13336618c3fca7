/**
 * With file:// pages allowed, the config folder stays refused — also under the names Linux gives
 * every file in /proc (/proc/self/root/<path>, /proc/thread-self/root/<path>), which a check of
 * the path as written would let through to auth.json. Performed as an agent would: REST tool calls
 * only; the tab a user might have opened there is opened with Playwright.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectPageRefused, startBrowserHarness, waitUntil, type BrowserHarness, type ToolCallResult } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
let fileDir = '';
const responses: ToolCallResult[] = [];

async function call(name: string, args: Record<string, unknown> = {}): Promise<ToolCallResult> {
  const r = await h.callTool(name, args);
  responses.push(r);
  return r;
}

const expectRefused = (r: ToolCallResult, what: string): void => expectPageRefused(r, what, /Tools may not (open|use)/);

const aliases = () => {
  const auth = join(h.configDir, 'extension', 'auth.json');
  return [`file:///proc/self/root${auth}`, `file:///proc/thread-self/root${auth}`, `file:///proc/self/root${h.configDir}/config.json`, `file:///proc/self/root${h.configDir}/`];
};

beforeAll(async () => {
  fileDir = mkdtempSync(join(tmpdir(), 'opentabs-file-alias-'));
  writeFileSync(join(fileDir, 'note.html'), '<!doctype html><title>note</title><p>a local note</p>');
  h = await startBrowserHarness({ permissions: { browser: { default: 'auto' } } });
  // The user turned file:// pages on (side panel or `opentabs config set allowFileUrls true`).
  await h.srv.ctx.config.update((d) => {
    d.allowFileUrls = true;
  });
  h.srv.ctx.hub.sendSyncFull();
  await waitUntil(async () => {
    const r = await h.callTool('browser_open_tab', { url: `file://${join(fileDir, 'note.html')}` });
    if (r.status !== 200) return null;
    await h.callTool('browser_close_tab', { tabId: r.body.result.id });
    return true;
  }, 'file:// pages allowed');
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (fileDir) rmSync(fileDir, { recursive: true, force: true });
});

describe('/proc names of the config folder', () => {
  test('cannot be opened, navigated to or downloaded', async () => {
    const note = await call('browser_open_tab', { url: `file://${join(fileDir, 'note.html')}` });
    expect(note.status).toBe(200);
    const tabId = note.body.result.id as number;
    for (const url of aliases()) {
      for (const r of [await call('browser_open_tab', { url }), await call('browser_create_window', { url }), await call('browser_navigate_tab', { tabId, url }), await call('browser_download', { url })]) {
        expectRefused(r, url);
        expect(r.body.error.message).toContain('/proc and /dev');
      }
    }
    // The allowed file page is still readable, and stayed where it was.
    const content = await call('browser_get_tab_content', { tabId });
    expect(content.status).toBe(200);
    expect(content.body.result.content).toContain('a local note');
    const listed = await call('browser_list_downloads', {});
    expect(listed.body.result.downloads).toEqual([]);
    await call('browser_close_tab', { tabId });
  });

  test('a tab showing auth.json under a /proc name cannot be read', async () => {
    const page = await h.context.newPage();
    try {
      const url = aliases()[0];
      await page.goto(url);
      const tabId = await waitUntil(async () => {
        const r = await call('browser_list_tabs');
        return (r.body.result.tabs as { id: number; url: string; restricted?: string }[]).find((t) => t.restricted && t.url === 'file:')?.id;
      }, 'the /proc tab listed as restricted');
      for (const [tool, args] of [
        ['browser_get_tab_content', {}],
        ['browser_get_page_html', {}],
        ['browser_snapshot', {}],
        ['browser_screenshot_tab', {}],
        ['browser_print_pdf', {}],
        ['browser_execute_script', { code: 'document.body.innerText' }],
      ] as const) {
        expectRefused(await call(tool, { tabId, ...args }), `${tool} on ${url}`);
      }
    } finally {
      await page.close();
    }
  });

  test('the secret appears in no response of this file', () => {
    expect(responses.length).toBeGreaterThan(20);
    for (const r of responses) expect(JSON.stringify(r.body)).not.toContain(h.srv.secret);
  });
});
