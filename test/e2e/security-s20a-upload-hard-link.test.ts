/**
 * browser_upload_file takes files only from folders the user allowed, never hidden ones below
 * them, judged by where the path really leads (symbolic links followed). A hard link is the same
 * file under a second name that no path says: ~/docs/notes.txt hard-linked to ~/.ssh/id_ed25519
 * passed every check and the page got the key. Now a file with more than one name is refused (as
 * file:// pages refuse it), before anything is asked or reaches the page. Real Chromium, the real
 * extension; performed as an agent would (REST tool calls).
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { linkSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
let page: Page;
let tabId = 0;
let home = '';

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'opentabs-s20a-upload-'));
  mkdirSync(join(home, '.ssh'));
  mkdirSync(join(home, 'docs'));
  writeFileSync(join(home, '.ssh', 'id_ed25519'), '-----BEGIN OPENSSH PRIVATE KEY-----\nkey\n');
  linkSync(join(home, '.ssh', 'id_ed25519'), join(home, 'docs', 'notes.txt'));
  writeFileSync(join(home, 'docs', 'report.txt'), 'quarterly numbers');
  h = await startBrowserHarness({ permissions: { browser: { tools: { browser_upload_file: 'auto' } } } });
  // The user allowed the home folder for uploads.
  await h.srv.ctx.config.update((d) => {
    d.uploadFolders = [home];
  });
  await h.srv.ctx.reload();
  page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/pages/input-page.html'));
  tabId = await h.tabIdOf(page);
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

const chosen = () => page.evaluate(() => (document.querySelector('#file') as HTMLInputElement).files?.length ?? 0);

test('a hard link to a hidden file in an allowed folder is not uploaded', async () => {
  const r = await h.callTool('browser_upload_file', { tabId, selector: '#file', paths: [join(home, 'docs', 'notes.txt')] });
  expect([r.status, r.body?.error?.code]).toEqual([403, 'permission_denied']);
  expect(String(r.body?.error?.message)).toContain('hard links');
  expect(await chosen()).toBe(0);
});

test('a file of its own in the same folder still is', async () => {
  const r = await h.callTool('browser_upload_file', { tabId, selector: '#file', paths: [join(home, 'docs', 'report.txt')] });
  expect(r.status).toBe(200);
  expect(await chosen()).toBe(1);
});
