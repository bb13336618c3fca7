/**
 * Installing a plugin that runs on every site (`<all_urls>`) from npm (a packed tarball, no
 * server): refused and not kept without --allow-broad-patterns, config.json untouched; with it,
 * every tool starts off and the consent is remembered for updates; uninstalling forgets it.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeTestPlugin } from '../harness/fake-extension.ts';
import { installPlugin, uninstallPlugin } from '../../server/plugins/offline.ts';
import { ConfigStore } from '../../server/state/config.ts';
import { runCli } from './cli-support.ts';

// npm and child processes on a shared 2-core machine: room, not a speed assertion.
setDefaultTimeout(120_000);

const work = mkdtempSync(join(tmpdir(), 'opentabs-broad-'));
let tarball = '';
beforeAll(() => {
  const dir = writeTestPlugin(work, 'wide', [{ name: 'ping' }], undefined, { urlPatterns: ['<all_urls>'] });
  const packs = join(work, 'packs');
  mkdirSync(packs);
  const r = spawnSync('npm', ['pack', '--pack-destination', packs, '--ignore-scripts'], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`npm pack failed: ${r.stderr}`);
  tarball = join(packs, readdirSync(packs).find((f) => f.endsWith('.tgz'))!);
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

test('install of an <all_urls> plugin: refused without consent, all off with it, consent kept for updates and forgotten on uninstall', async () => {
  const configDir = join(work, 'cfg');
  mkdirSync(configDir);
  const cfgPath = join(configDir, 'config.json');
  const installed = () => existsSync(join(configDir, 'plugins', 'node_modules', 'opentabs-plugin-wide'));

  const cli = await runCli(['plugin', 'install', tarball], { configDir });
  expect(cli.code).not.toBe(0);
  expect(cli.stderr).toContain('<all_urls>');
  expect(cli.stderr).toContain('--allow-broad-patterns');
  expect(installed()).toBe(false);
  expect(existsSync(cfgPath) ? JSON.parse(readFileSync(cfgPath, 'utf8')).permissions?.wide : undefined).toBeUndefined();

  await expect(installPlugin(configDir, tarball)).rejects.toThrow('every site or every file (<all_urls>)');
  expect(installed()).toBe(false);

  const ok = await runCli(['plugin', 'install', tarball, '--allow-broad-patterns'], { configDir });
  expect(ok.code).toBe(0);
  expect(ok.stdout).toContain('start off');
  expect(installed()).toBe(true);
  let cfg = JSON.parse(readFileSync(cfgPath, 'utf8'));
  expect(cfg.permissions.wide).toEqual({ default: 'off' });
  expect(cfg.broadPatternConsent).toEqual(['wide']);

  // The user turns a tool on; an update (same package again) keeps that choice and needs no flag.
  const store = await ConfigStore.open(configDir);
  await store.setToolPermission('wide', 'ping', 'ask');
  const again = await installPlugin(configDir, tarball);
  expect(again.broadPatterns).toEqual(['<all_urls>']);
  cfg = JSON.parse(readFileSync(cfgPath, 'utf8'));
  expect(cfg.permissions.wide).toEqual({ default: 'off', tools: { ping: 'ask' } });

  // Uninstalled: a later install asks again.
  expect(await uninstallPlugin(configDir, 'wide')).toEqual(['opentabs-plugin-wide']);
  expect(JSON.parse(readFileSync(cfgPath, 'utf8')).broadPatternConsent).toEqual([]);
  await expect(installPlugin(configDir, tarball)).rejects.toThrow('--allow-broad-patterns');
  expect(installed()).toBe(false);
});
