/**
 * The loaded-plugin-folders cache (server/plugins/folder-cache.ts) through discovery itself: an
 * unchanged folder is found without being read, and nothing else is ever served from it: a file
 * changed in any way (even with its mtime set back, even to the same size), a file changed too
 * recently to be told apart, a manifest that no longer passes the checks, an adapter missing from
 * the extension folder, a cache written by other loading code, a corrupt cache file.
 */
import { afterEach, beforeAll, beforeEach, expect, test } from 'bun:test';
import { mkdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { discoverPlugins } from '../../server/plugins/discover.ts';
import { FRESH_MS, folderIdentity, LoadedFolders } from '../../server/plugins/folder-cache.ts';
import { LOADER_FILES, loaderKey } from '../../server/plugins/loader-key.ts';
import { manifestCacheWritten } from '../../server/plugins/schema-cache.ts';
import { adapterPath, writeAdapter } from '../../server/plugins/adapters.ts';
import { writeTestPlugin } from '../harness/fake-extension.ts';
import { makeTempConfigDir, removeDir } from '../harness/server.ts';

let root: string;
let cfg: string;
beforeEach(() => {
  root = makeTempConfigDir('opentabs-folder-cache-');
  cfg = join(root, 'state');
  mkdirSync(cfg);
});
afterEach(() => removeDir(root));

/** A plugin folder with one tool `go`, written (or rewritten) in place. */
const plugin = (name: string, description = 'Go there', inputSchema?: Record<string, unknown>): string =>
  writeTestPlugin(root, name, [{ name: 'go', description, ...(inputSchema ? { inputSchema } : {}) }]);

/** What the server does after a discovery: write the adapters it has the source of. */
async function discover(dirs: string[]) {
  const found = await discoverPlugins(cfg, dirs);
  for (const { plugin: p, adapterSource } of found.plugins) if (adapterSource !== undefined) await writeAdapter(cfg, p.adapterFile, adapterSource, p.adapterHash);
  await manifestCacheWritten();
  return found;
}

/** Files written just now are too fresh to be remembered: wait until they are not. */
const settle = () => Bun.sleep(FRESH_MS + 200);

/** The cache file's entry for a folder, as the next discovery would find it. */
const remembered = (dir: string) => LoadedFolders.open(cfg).lookup(dir, 'local', folderIdentity(dir));

beforeAll(() => {
  // From source the key is computed from the loader's files; the cache is not used without one.
  expect(loaderKey()).toMatch(/^[0-9a-f]{64}$/);
});

test('an unchanged folder is found without being read: same plugin, and no adapter source to write', async () => {
  const dir = plugin('steady');
  await settle();
  const first = await discover([dir]);
  expect(first.plugins[0]!.adapterSource).toBeString();
  expect(remembered(dir)?.name).toBe('steady');

  const second = await discover([dir]);
  expect(second.failed).toEqual([]);
  expect(second.plugins[0]!.adapterSource).toBeUndefined();
  expect(second.plugins[0]!.plugin).toEqual(first.plugins[0]!.plugin);
});

test('the cache file is ASCII: text past ASCII is written escaped and read back the same', async () => {
  const description = 'Go there — fast ≈ 2× (née “here”) 😀';
  const dir = plugin('wordy', description);
  await settle();
  const first = await discover([dir]);
  expect(first.plugins[0]!.plugin.tools[0]!.description).toBe(description);
  const text = readFileSync(join(cfg, 'cache', 'loaded-plugins.json'), 'utf8');
  expect(text).toContain('\\u2014');
  expect(/[^\x00-\x7e]/.test(text)).toBe(false);
  expect(remembered(dir)?.tools[0]!.description).toBe(description);
  const second = await discover([dir]);
  expect(second.plugins[0]!.adapterSource).toBeUndefined();
  expect(second.plugins[0]!.plugin).toEqual(first.plugins[0]!.plugin);
});

test('a file rewritten to the same size with its mtime set back is loaded afresh (its ctime moved)', async () => {
  const dir = plugin('edited', 'Go there');
  await settle();
  await discover([dir]);
  expect(remembered(dir)).toBeDefined();

  const file = join(dir, 'dist', 'tools.json');
  const before = statSync(file);
  plugin('edited', 'Go where');
  utimesSync(file, before.atimeMs / 1000, before.mtimeMs / 1000);
  expect(statSync(file).size).toBe(before.size);
  expect(statSync(file).mtimeMs).toBe(before.mtimeMs);
  expect(statSync(file).ctimeMs).toBeGreaterThan(before.ctimeMs);

  const r = await discover([dir]);
  expect(r.plugins[0]!.plugin.tools[0]!.description).toBe('Go where');
});

test('a cached plugin whose manifest stops passing the checks is refused, not served from the cache', async () => {
  const dir = plugin('turned');
  await settle();
  expect((await discover([dir])).plugins).toHaveLength(1);
  plugin('turned', 'Go.', { type: 'object', properties: { id: { type: 'no-such-type' } } });
  const r = await discover([dir]);
  expect(r.plugins).toEqual([]);
  expect(r.failed[0]!.error).toContain('not a valid JSON Schema');
});

test('files changed within FRESH_MS are not remembered (two writes in one clock tick look alike)', async () => {
  const dir = plugin('fresh');
  await discover([dir]);
  expect(folderIdentity(dir)!.fresh).toBe(true);
  expect(remembered(dir)).toBeUndefined();
  await settle();
  await discover([dir]);
  expect(remembered(dir)?.name).toBe('fresh');
});

test('an adapter missing from the extension folder is read and written again', async () => {
  const dir = plugin('lost');
  await settle();
  const first = await discover([dir]);
  const target = adapterPath(cfg, first.plugins[0]!.plugin.adapterFile);
  rmSync(target);
  const second = await discover([dir]);
  expect(second.plugins[0]!.adapterSource).toBeString();
  expect(readFileSync(target, 'utf8')).toContain('lost test adapter');
});

test('a removed plugin folder leaves the cache file; a missing file is that plugin failing, as always', async () => {
  const a = plugin('kept');
  const b = plugin('dropped');
  await settle();
  await discover([a, b]);
  const file = join(cfg, 'cache', 'loaded-plugins.json');
  expect(Object.keys(JSON.parse(readFileSync(file, 'utf8')).entries)).toHaveLength(2);

  await discover([a]);
  expect(Object.keys(JSON.parse(readFileSync(file, 'utf8')).entries)).toEqual([`local:${a}`]);

  rmSync(join(a, 'dist', 'adapter.js'));
  const r = await discover([a]);
  expect(r.plugins).toEqual([]);
  expect(r.failed[0]!.error).toContain('dist/adapter.js is missing');
});

test('a cache file from other loading code, or a corrupt one, is not used', async () => {
  const dir = plugin('keyed');
  await settle();
  await discover([dir]);
  const file = join(cfg, 'cache', 'loaded-plugins.json');
  const data = JSON.parse(readFileSync(file, 'utf8'));

  writeFileSync(file, JSON.stringify({ ...data, key: '0'.repeat(64) }));
  expect(remembered(dir)).toBeUndefined();
  expect((await discover([dir])).plugins[0]!.adapterSource).toBeString();

  for (const corrupt of ['{"key":', 'null', JSON.stringify({ key: data.key, entries: { [`local:${dir}`]: { ids: ['x'], plugin: {} } } })]) {
    writeFileSync(file, corrupt);
    expect(remembered(dir)).toBeUndefined();
    const r = await discover([dir]);
    expect(r.failed).toEqual([]);
    expect(r.plugins[0]!.plugin.name).toBe('keyed');
  }
});

test('the key covers plugins/load.ts, folder-cache.ts, types.ts and every module they import', () => {
  const serverDir = join(import.meta.dir, '..', '..', 'server');
  const seen = new Set<string>();
  const visit = (rel: string) => {
    if (seen.has(rel)) return;
    seen.add(rel);
    const text = readFileSync(join(serverDir, rel), 'utf8');
    for (const m of text.matchAll(/^import\s+(?!type\b)[^'"]*['"](\.[^'"]+)['"]/gm)) visit(join(rel, '..', m[1]!));
  };
  for (const f of ['plugins/load.ts', 'plugins/folder-cache.ts', 'plugins/types.ts']) visit(f);
  expect([...seen].sort()).toEqual([...LOADER_FILES].sort());
});
