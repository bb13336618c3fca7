/** CLI-side plugin operations on a config dir with no server running. */
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildTestapp, TESTAPP_DIR } from '../fixtures/app/testapp.ts';
import { addLocalPlugin } from '../../server/plugins/local.ts';
import { configurePlugin, installPlugin, listPlugins, uninstallPlugin } from '../../server/plugins/offline.ts';

// npm, Chromium and child processes on a shared 2-core machine: generous per-test limit.
setDefaultTimeout(120_000);

const work = mkdtempSync(join(tmpdir(), 'opentabs-offline-'));
let tarball = '';
beforeAll(async () => {
  await buildTestapp();
  const r = spawnSync('npm', ['pack', '--pack-destination', work, '--ignore-scripts'], { cwd: TESTAPP_DIR, encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`npm pack failed: ${r.stderr}`);
  tarball = join(work, readdirSync(work).find((f) => f.endsWith('.tgz'))!);
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

test('install → list → configure → uninstall, without a server and without install scripts', async () => {
  const configDir = join(work, 'cfg');
  mkdirSync(configDir);
  const marker = join(work, 'marker.txt');
  process.env.OPENTABS_POSTINSTALL_MARKER = marker;
  try {
    const lines: string[] = [];
    const r = await installPlugin(configDir, tarball, (l) => lines.push(l));
    expect(r).toEqual({ name: 'testapp', packageName: 'opentabs-plugin-testapp', tools: 9 });
    expect(lines.at(-1)).toBe('Plugin "testapp" installed (9 tools; permission: ask)');
    expect(existsSync(marker)).toBe(false);

    const listing = await listPlugins(configDir);
    expect(listing.plugins.map((p) => [p.name, p.source])).toEqual([['testapp', 'npm']]);

    await expect(configurePlugin(configDir, 'testapp', { pageSize: 'x' })).rejects.toThrow('Invalid settings for testapp: pageSize: must be a number');
    await expect(configurePlugin(configDir, 'nope', {})).rejects.toThrow(/No plugin named "nope"/);
    expect(await configurePlugin(configDir, 'testapp', { pageSize: 20, sortOrder: 'desc' })).toEqual({ pageSize: 20, sortOrder: 'desc', includeArchived: false });
    expect(JSON.parse(readFileSync(join(configDir, 'config.json'), 'utf8')).pluginSettings.testapp).toEqual({ pageSize: 20, sortOrder: 'desc' });

    // A local copy of the same plugin wins; listing reports the shadowed one.
    await addLocalPlugin(configDir, TESTAPP_DIR);
    const both = await listPlugins(configDir);
    expect(both.plugins.map((p) => p.source)).toEqual(['local']);
    expect(both.discoveryErrors[0]).toMatch(/is shadowed by the local plugin/);

    expect(await uninstallPlugin(configDir, 'opentabs-plugin-testapp')).toEqual(['opentabs-plugin-testapp']);
    // A relative tarball path is relative to the caller's cwd, not to the install prefix.
    const cwd = process.cwd();
    process.chdir(work);
    try {
      expect((await installPlugin(configDir, `./${tarball.split('/').pop()}`)).name).toBe('testapp');
    } finally {
      process.chdir(cwd);
    }
    expect(await uninstallPlugin(configDir, 'testapp')).toEqual(['opentabs-plugin-testapp']);
    await expect(uninstallPlugin(configDir, 'testapp')).rejects.toThrow(/No npm-installed plugin "testapp"/);
  } finally {
    delete process.env.OPENTABS_POSTINSTALL_MARKER;
  }
});
