/**
 * folder.open (extension → server) shows a folder in the desktop's file manager by running the
 * system's opener on the path it names. That opener does more than show folders: macOS `open`
 * runs an .app bundle, which is a folder, and desktop openers act on what a folder holds. The
 * server ran it on any folder the request named, so whatever could make the extension's
 * connection send one (the extension handles every page's content) turned it into running a
 * program on the machine. It now opens only the config folder, the folders in it and plugin
 * folders, where the path really leads (links followed), and never an .app bundle.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeExtension, startPluginServer } from '../harness/fake-extension.ts';
import type { TestServer } from '../harness/server.ts';

let srv: TestServer;
let ext: FakeExtension;
let outside = '';
const savedPath = process.env.PATH;

beforeAll(async () => {
  // No opener on PATH: a request that passes the check answers not_available instead of running one.
  process.env.PATH = join(tmpdir(), 'opentabs-no-such-bin');
  srv = await startPluginServer({ plugins: [{ name: 'notes', tools: [{ name: 'count' }] }] });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  outside = mkdtempSync(join(tmpdir(), 'opentabs-folder-open-'));
  mkdirSync(join(outside, 'Installer.app'));
  mkdirSync(join(srv.configDir, 'drafts', 'Evil.app'), { recursive: true });
  symlinkSync(outside, join(srv.configDir, 'drafts', 'link-out'));
});
afterAll(async () => {
  process.env.PATH = savedPath;
  await ext?.close();
  await srv?.stop();
  if (outside) rmSync(outside, { recursive: true, force: true });
});

const open = async (path: string) => {
  const m = await ext.request('folder.open', { path });
  return (m.error?.data as { code?: string } | undefined)?.code ?? 'ok';
};

test('folders outside the config folder and plugin folders are refused', async () => {
  for (const path of [outside, join(outside, 'Installer.app'), '/', join(srv.configDir, 'drafts', 'link-out'), join(srv.configDir, 'drafts', 'Evil.app'), join(srv.configDir, '..')]) {
    expect({ path, code: await open(path) }).toEqual({ path, code: 'invalid_arguments' });
  }
});

test('the config folder, a folder in it and a plugin folder pass the check', async () => {
  const plugin = srv.ctx.plugins.get('notes')!.path;
  for (const path of [srv.configDir, join(srv.configDir, 'drafts'), plugin]) {
    expect({ path, code: await open(path) }).toEqual({ path, code: 'not_available' });
  }
  expect(await open('/definitely/not/here')).toBe('not_found');
});
