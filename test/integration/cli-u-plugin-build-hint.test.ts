/**
 * `opentabs plugin build` of a folder OpenTabs does not load yet (created, never added) says so and
 * names the command that adds it, instead of "the running server reloaded it"; that command, run
 * as printed, adds it, and the next build says nothing more about adding.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { join } from 'node:path';
import { cliEnv, removeDir, runCli, tempDir } from './cli-support.ts';
import { readConfigSnapshot } from '../../cli/config-snapshot.ts';

setDefaultTimeout(180_000);

let root: string;
let cfg: string;

beforeAll(() => {
  root = tempDir();
  cfg = join(root, 'config');
});

afterAll(() => removeDir(root));

test('a build of a folder not yet added names the add command, which works as printed', async () => {
  const dir = join(root, 'opentabs-plugin-hint');
  const created = await runCli(['plugin', 'create', 'hint', '--dir', dir], { configDir: cfg });
  expect(created.code).toBe(0);
  const first = await runCli(['plugin', 'build', dir, '--no-typecheck'], { configDir: cfg, timeoutMs: 120_000 });
  expect(first.code).toBe(0);
  expect(first.stdout).toContain('does not load it yet');
  expect(first.stdout).not.toContain('reloaded it');
  const add = /`([^`]*plugin add [^`]*)`/.exec(first.stdout)?.[1];
  expect(add).toBeDefined();
  const r = Bun.spawnSync(['sh', '-c', add!], { env: cliEnv(cfg, { OPENTABS_CONFIG_DIR: undefined }), stdout: 'pipe', stderr: 'pipe' });
  expect({ code: r.exitCode, err: r.stderr.toString() }).toEqual({ code: 0, err: '' });
  expect(readConfigSnapshot(cfg).localPlugins).toContain(dir);
  const second = await runCli(['plugin', 'build', dir, '--no-typecheck'], { configDir: cfg, timeoutMs: 120_000 });
  expect(second.code).toBe(0);
  expect(second.stdout).toContain('Built plugin "hint"');
  expect(second.stdout).not.toContain('does not load it yet');
});
