/**
 * browser_upload_file: the server checked the user's file, then Chrome was handed the path as
 * written, and Chrome opens the path itself, links followed — at DOM.setFileInputFiles and again
 * whenever the page reads the File (lazily, e.g. at a form's submit). An agent that can write in
 * the allowed folder swapped the checked file for a symbolic link (or a hard link) to a private
 * key of the same size and time after the check, and the page read the key's bytes. Now Chrome is
 * given a copy the server made of the file as checked, in <config dir>/upload-staging (0700
 * folders, 0600 files), which nobody else can write: the page reads what was checked, under the
 * file's own name. The extension takes only such copies from the server; they go when the server
 * stops, and those older than a day when a server starts. Real Chromium, the real extension; performed as an agent would (REST tool calls), the
 * swap made with the file system calls an agent in the folder can make.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, linkSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { UPLOAD_STAGING_DIR } from '../../server/limits.ts';
import { UPLOAD_STAGING_KEEP_MS } from '../../server/tools/upload-staging.ts';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
let page: Page;
let tabId = 0;
let home = '';
let docs = '';
let key = '';

const MARKER = 'PRIVATE-KEY-MARKER-s23b2-';
/** The key's bytes: the marker, padded to a fixed size the innocent files share. */
const KEY_BYTES = `-----BEGIN OPENSSH PRIVATE KEY-----\n${MARKER}${'k'.repeat(64)}\n-----END OPENSSH PRIVATE KEY-----\n`;
/** One modification time for the key and the files it replaces: Chrome's check that a chosen file did not change compares size and time only. */
const SAME_TIME = 1_700_000_000;

const staging = () => join(h.configDir, UPLOAD_STAGING_DIR);

/** What the page reads of its file input's files now (name and text), as a page's submit would. */
const pageReads = () =>
  page.evaluate(async () => {
    const files = [...((document.querySelector('#file') as HTMLInputElement).files ?? [])];
    return Promise.all(files.map(async (f) => ({ name: f.name, text: await f.text().catch((e: Error) => `<unreadable: ${e.name}>`) })));
  });

/** An innocent file of the key's size and time in the allowed folder. */
function innocent(name: string, fill: string): string {
  const p = join(docs, name);
  writeFileSync(p, fill.repeat(KEY_BYTES.length));
  utimesSync(p, SAME_TIME, SAME_TIME);
  return p;
}

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'opentabs-s23b2-upload-'));
  docs = join(home, 'docs');
  mkdirSync(join(home, '.ssh'));
  mkdirSync(docs);
  key = join(home, '.ssh', 'id_ed25519');
  writeFileSync(key, KEY_BYTES);
  utimesSync(key, SAME_TIME, SAME_TIME);
  h = await startBrowserHarness({ permissions: { browser: { tools: { browser_upload_file: 'auto' } } } });
  // The user allowed the home folder for uploads (hidden folders below it stay refused).
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

test('the key itself is refused (a hidden folder): the swap is the only way to it', async () => {
  const r = await h.callTool('browser_upload_file', { tabId, selector: '#file', paths: [key] });
  expect([r.status, r.body?.error?.code]).toEqual([403, 'permission_denied']);
});

test('an ordinary upload: the page reads the file\'s own bytes under its own name; the copy lies in a 0700 folder as a 0600 file', async () => {
  const hello = join(docs, 'hello.txt');
  writeFileSync(hello, 'hello from the allowed folder\n');
  const r = await h.callTool('browser_upload_file', { tabId, selector: '#file', paths: [hello] });
  expect(r.status).toBe(200);
  expect(r.body.result).toEqual({ uploaded: 1, files: [{ name: 'hello.txt', size: 30 }] });
  expect(await pageReads()).toEqual([{ name: 'hello.txt', text: 'hello from the allowed folder\n' }]);
  // The copy: <config dir>/upload-staging/<random>/hello.txt, nobody else's to read or write.
  expect(statSync(staging()).mode & 0o777).toBe(0o700);
  const folders = readdirSync(staging());
  expect(folders.length).toBe(1);
  const folder = join(staging(), folders[0]!);
  expect(lstatSync(folder).isDirectory()).toBe(true);
  expect(statSync(folder).mode & 0o777).toBe(0o700);
  expect(readdirSync(folder)).toEqual(['hello.txt']);
  const copy = join(folder, 'hello.txt');
  expect(lstatSync(copy).isFile()).toBe(true);
  expect(statSync(copy).mode & 0o777).toBe(0o600);
  expect(readFileSync(copy, 'utf8')).toBe('hello from the allowed folder\n');
});

test('the checked files swapped for a symbolic link and a hard link to the key after the check: the page never reads the key', async () => {
  const a = innocent('invoice.txt', 'a');
  const b = innocent('notes.txt', 'b');
  const r = await h.callTool('browser_upload_file', { tabId, selector: '#file', paths: [a, b] });
  expect(r.status).toBe(200);
  expect(r.body.result.files).toEqual([
    { name: 'invoice.txt', size: KEY_BYTES.length },
    { name: 'notes.txt', size: KEY_BYTES.length },
  ]);
  // The page has its File objects (the change handler read their names and sizes) ...
  expect(await waitUntil(() => page.evaluate(() => (window as any).log.files?.length === 2), 'the change event')).toBe(true);
  // ... and the agent swaps the paths now: one for a link to the key, one for a second name of it.
  unlinkSync(a);
  symlinkSync(key, a);
  unlinkSync(b);
  linkSync(key, b);
  expect(readFileSync(a, 'utf8')).toBe(KEY_BYTES);
  expect(readFileSync(b, 'utf8')).toBe(KEY_BYTES);
  // The page reads its files (as it would at submit): the bytes that were checked, not the key's.
  const read = await pageReads();
  expect(JSON.stringify(read)).not.toContain(MARKER);
  expect(read).toEqual([
    { name: 'invoice.txt', text: 'a'.repeat(KEY_BYTES.length) },
    { name: 'notes.txt', text: 'b'.repeat(KEY_BYTES.length) },
  ]);
  // Uploading the swapped paths now is refused: where they lead is checked (a hidden folder, two names).
  for (const p of [a, b]) {
    const again = await h.callTool('browser_upload_file', { tabId, selector: '#file', paths: [p] });
    expect([p, again.status, again.body?.error?.code]).toEqual([p, 403, 'permission_denied']);
  }
  unlinkSync(a);
  unlinkSync(b);
});

test('the extension gives the page only copies the server staged: a user\'s path sent to it as is is refused', async () => {
  const plain = innocent('plain.txt', 'p');
  await page.evaluate(() => ((window as any).log.files = null));
  const sent = h.srv.ctx.hub.dispatch({ plugin: 'browser', wireName: 'browser_upload_file', fullName: 'browser_upload_file', input: { tabId, selector: '#file', paths: [plain] }, tabId });
  const err = await sent.then(
    () => null,
    (e: Error) => e,
  );
  expect(err?.message).toContain(UPLOAD_STAGING_DIR);
  expect(await page.evaluate(() => (window as any).log.files)).toBeNull();
  // Nor a path of the config folder outside the staging folder.
  const auth = join(h.configDir, 'extension', 'auth.json');
  const inConfig = await h.srv.ctx.hub
    .dispatch({ plugin: 'browser', wireName: 'browser_upload_file', fullName: 'browser_upload_file', input: { tabId, selector: '#file', paths: [auth] }, tabId })
    .then(
      () => null,
      (e: Error) => e,
    );
  expect(inConfig?.message).toContain('config folder');
  // Nor one that climbs out of the staging folder.
  const climbing = join(staging(), '0'.repeat(32), '..', '..', 'extension', 'auth.json');
  const out = await h.srv.ctx.hub
    .dispatch({ plugin: 'browser', wireName: 'browser_upload_file', fullName: 'browser_upload_file', input: { tabId, selector: '#file', paths: [climbing] }, tabId })
    .then(
      () => null,
      (e: Error) => e,
    );
  expect(out).not.toBeNull();
  expect(await page.evaluate(() => (window as any).log.files)).toBeNull();
});

test('stopping the server removes every copy', async () => {
  expect(readdirSync(staging()).length).toBeGreaterThan(0);
  await h.stopServer();
  expect(existsSync(staging())).toBe(false);
});

test('a server starting removes copies older than a day and keeps newer ones (a page may still read them)', async () => {
  const old = join(staging(), 'a'.repeat(32));
  const fresh = join(staging(), 'b'.repeat(32));
  for (const d of [old, fresh]) {
    mkdirSync(d, { recursive: true, mode: 0o700 });
    writeFileSync(join(d, 'f.txt'), 'x');
  }
  const dayAndMore = (Date.now() - UPLOAD_STAGING_KEEP_MS - 60_000) / 1000;
  utimesSync(old, dayAndMore, dayAndMore);
  await h.startServer();
  await waitUntil(() => !existsSync(old), 'the old copy removed');
  expect(readFileSync(join(fresh, 'f.txt'), 'utf8')).toBe('x');
});

