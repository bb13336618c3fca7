import { afterEach, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PluginWatcher } from '../../server/plugins/watcher.ts';

const dirs: string[] = [];
const watchers: PluginWatcher[] = [];
afterEach(() => {
  for (const w of watchers.splice(0)) w.stop();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function until(cond: () => boolean, max = 200) {
  for (let i = 0; i < max && !cond(); i++) await Bun.sleep(25);
}

test('a plugin without dist/ is pending; the poller notices the first build and then watches it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'opentabs-watch-'));
  dirs.push(dir);
  const changes: string[] = [];
  const w = new PluginWatcher((d) => changes.push(d), 50);
  watchers.push(w);
  w.setPaths([dir]);
  expect(w.status()).toEqual({ watchedPlugins: 0, pendingPlugins: 0, lastPollAt: null, pollDetections: 0 });
  w.start();
  expect(w.status()).toMatchObject({ watchedPlugins: 0, pendingPlugins: 1, pollDetections: 0 });
  // dist/ appears with its files at once (rename), so only the poller can have seen it.
  mkdirSync(join(dir, 'dist.tmp'));
  writeFileSync(join(dir, 'dist.tmp', 'adapter.js'), '1');
  writeFileSync(join(dir, 'dist.tmp', 'tools.json'), '{}');
  renameSync(join(dir, 'dist.tmp'), join(dir, 'dist'));
  await until(() => changes.length > 0);
  expect(changes).toEqual([dir]);
  expect(w.status().pollDetections).toBe(1);
  expect(w.status().watchedPlugins).toBe(1);
  expect(w.status().lastPollAt).not.toBeNull();

  // Later changes are seen (by fs.watch or the poller), once per settled rebuild.
  writeFileSync(join(dir, 'dist', 'tools.json'), '{"v":2}');
  await until(() => changes.length > 1);
  expect(changes).toEqual([dir, dir]);
});

test('stop() closes watchers and removing a path forgets it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'opentabs-watch-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'dist'));
  const changes: string[] = [];
  const w = new PluginWatcher((d) => changes.push(d), 50);
  watchers.push(w);
  w.setPaths([dir]);
  w.start();
  expect(w.status().watchedPlugins).toBe(1);
  w.setPaths([]);
  expect(w.status()).toMatchObject({ watchedPlugins: 0, pendingPlugins: 0 });
  w.stop();
  writeFileSync(join(dir, 'dist', 'tools.json'), '{}');
  await Bun.sleep(300);
  expect(changes).toEqual([]);
});
