/** `opentabs config set uploadFolders`: only real absolute folders are stored; "" allows none; config show lists them. */
import { expect, test } from 'bun:test';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const cli = (configDir: string, ...args: string[]) =>
  spawnSync(process.execPath, [join(import.meta.dir, '../../cli/main.ts'), ...args], { env: { ...process.env, OPENTABS_CONFIG_DIR: configDir, NO_COLOR: '1' }, encoding: 'utf8' });

test('uploadFolders: absolute existing folders only, listed by config show, cleared with ""', () => {
  const dir = mkdtempSync(join(tmpdir(), 'opentabs-cli-upload-'));
  const folder = mkdtempSync(join(tmpdir(), 'opentabs-cli-upload-folder-'));
  const rel = cli(dir, 'config', 'set', 'uploadFolders', 'Documents');
  expect(rel.status).toBe(2);
  expect(rel.stderr).toContain('expected an absolute folder path');
  const missing = cli(dir, 'config', 'set', 'uploadFolders', join(folder, 'nope'));
  expect(missing.status).toBe(2);
  expect(missing.stderr).toContain('no folder there');
  // The printed mkdir creates it, and the same set then works.
  const mkdir = /`(mkdir -p [^`]+)`/.exec(missing.stderr)?.[1];
  expect(mkdir).toBe(`mkdir -p ${join(folder, 'nope')}`);
  expect(Bun.spawnSync(['sh', '-c', mkdir!]).exitCode).toBe(0);
  expect(cli(dir, 'config', 'set', 'uploadFolders', join(folder, 'nope')).status).toBe(0);
  const ok = cli(dir, 'config', 'set', 'uploadFolders', folder);
  expect(ok.status).toBe(0);
  expect(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).uploadFolders).toEqual([folder]);
  expect(cli(dir, 'config', 'show').stdout).toContain(`uploadFolders    ${folder}`);
  expect(cli(dir, 'config', 'set', 'uploadFolders', '').status).toBe(0);
  expect(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).uploadFolders).toEqual([]);
  expect(cli(dir, 'config', 'show').stdout).toContain('none (uploads refused)');
});
