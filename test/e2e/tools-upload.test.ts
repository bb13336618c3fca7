/**
 * browser_upload_file in Chromium with the real extension: the page's <input type=file> gets the
 * file (name and size, as its change handler reads them); relative paths, missing files, folders,
 * the OpenTabs config folder (also through a symlink) and elements that are not file inputs are
 * refused before the page sees anything. Files come only from folders the user allowed with the
 * CLI: before that, every upload is refused.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { BROWSER_TOOLS } from '../../server/tools/browser-catalog.ts';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

let h: BrowserHarness;
let page: Page;
let tabId = 0;
let dir = '';
const files = () => page.evaluate(() => (window as any).log.files);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'opentabs-upload-'));
  writeFileSync(join(dir, 'report.txt'), 'x'.repeat(1234));
  writeFileSync(join(dir, 'b.csv'), 'a,b\n1,2\n');
  h = await startBrowserHarness({ permissions: { browser: { tools: { browser_upload_file: 'auto' } } } });
  page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/pages/input-page.html'));
  tabId = await h.tabIdOf(page);
}, 60_000);

afterAll(async () => {
  await h?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('declared ask, with a risk note', () => {
  const t = BROWSER_TOOLS.find((x) => x.name === 'browser_upload_file')!;
  expect(t.defaultPermission).toBe('ask');
  expect(t.risk).toBeTruthy();
});

test('no folder allowed yet: the upload is refused naming the command, and the page gets nothing; the user allows the folder with the CLI', async () => {
  const r = await h.callTool('browser_upload_file', { tabId, selector: '#file', paths: [join(dir, 'report.txt')] });
  expect(r.status).toBe(403);
  expect(r.body.error.code).toBe('permission_denied');
  expect(r.body.error.message).toContain('config set uploadFolders');
  expect(await page.evaluate(() => (document.querySelector('#file') as HTMLInputElement).files?.length ?? 0)).toBe(0);
  // Only the user can allow a folder: the CLI writes config.json and reloads the running server.
  const cli = spawnSync(process.execPath, [join(import.meta.dir, '../../cli/main.ts'), 'config', 'set', 'uploadFolders', dir], {
    env: { ...process.env, OPENTABS_CONFIG_DIR: h.configDir },
    encoding: 'utf8',
  });
  expect(cli.stdout).toContain(`may take files from ${dir}`);
  expect(cli.status).toBe(0);
  // This test server has no pid file for the CLI to find it by, so it reloads here (as POST /reload would).
  await h.srv.ctx.reload();
});

test('the page sees the files chosen, with their names and sizes', async () => {
  const r = await h.callTool('browser_upload_file', { tabId, selector: '#file', paths: [join(dir, 'report.txt'), join(dir, 'b.csv')] });
  expect(r.status).toBe(200);
  expect(r.body.result).toEqual({ uploaded: 2, files: [{ name: 'report.txt', size: 1234 }, { name: 'b.csv', size: 8 }] });
  expect(await waitUntil(files, 'the change event')).toEqual([{ name: 'report.txt', size: 1234 }, { name: 'b.csv', size: 8 }]);
  expect(await page.evaluate(() => document.querySelector('[data-opentabs-node]'))).toBeNull();
}, 60_000);

test('a button that opens a file chooser: clicked with the chooser intercepted, its input gets the file', async () => {
  const r = await h.callTool('browser_upload_file', { tabId, selector: '#pick', paths: [join(dir, 'b.csv')] });
  expect(r.status).toBe(200);
  expect(r.body.result).toEqual({ uploaded: 1, files: [{ name: 'b.csv', size: 8 }] });
  expect(await waitUntil(() => page.evaluate(() => (window as any).log.hiddenFiles), 'the hidden input change')).toEqual([{ name: 'b.csv', size: 8 }]);
  // Its chooser takes one file.
  const two = await h.callTool('browser_upload_file', { tabId, selector: '#pick', paths: [join(dir, 'b.csv'), join(dir, 'report.txt')] });
  expect(two.status).toBe(400);
  expect(two.body.error.message).toContain('one file');
}, 60_000);

test('refused: a relative path, a missing file, a folder, the config folder, not a file input', async () => {
  await page.evaluate(() => ((window as any).log.files = null));
  const rel = await h.callTool('browser_upload_file', { tabId, selector: '#file', paths: ['report.txt'] });
  expect(rel.status).toBe(400);
  expect(rel.body.error.message).toContain('absolute');

  const missing = await h.callTool('browser_upload_file', { tabId, selector: '#file', paths: [join(dir, 'nope.txt')] });
  expect(missing.status).toBe(404);
  expect(missing.body.error.message).toContain('nope.txt');

  const folder = await h.callTool('browser_upload_file', { tabId, selector: '#file', paths: [dir] });
  expect(folder.status).toBe(404);

  const secret = await h.callTool('browser_upload_file', { tabId, selector: '#file', paths: [join(h.configDir, 'config.json')] });
  expect(secret.status).toBe(403);
  expect(secret.body.error.message).toContain('config folder');
  const sneaky = await h.callTool('browser_upload_file', { tabId, selector: '#file', paths: [`${dir}/../..${h.configDir}/./config.json`] });
  expect(sneaky.status).toBe(403);

  // A link elsewhere that leads into the config folder: the server resolves it.
  symlinkSync(join(h.configDir, 'config.json'), join(dir, 'innocent.txt'));
  const linked = await h.callTool('browser_upload_file', { tabId, selector: '#file', paths: [join(dir, 'innocent.txt')] });
  expect(linked.status).toBe(403);
  expect(linked.body.error.message).toContain('config folder');

  const notFile = await h.callTool('browser_upload_file', { tabId, selector: '#pad', paths: [join(dir, 'report.txt')] });
  expect(notFile.status).toBe(400);
  expect(notFile.body.error.message).toContain('opened no file chooser');
  // None of these reached the page.
  expect(await files()).toBeNull();
  expect(await page.evaluate(() => document.querySelector('[data-opentabs-node]'))).toBeNull();
}, 60_000);
