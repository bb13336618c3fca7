/**
 * `opentabs plugin create` into a folder whose name a shell would expand inside double quotes
 * (`$`, a backtick, a quote): the "Next:" line it prints, pasted into a shell as printed, builds,
 * tests and adds that folder, not another one.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliEnv, removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(180_000);

let root: string;
beforeAll(() => {
  root = tempDir('opentabs-journey-s23f-next-');
});
afterAll(() => removeDir(root));

test('the Next line runs as printed for a folder named with $, a backtick and a quote', async () => {
  const cfg = join(root, 'cfg');
  const work = join(root, 'work');
  mkdirSync(work);
  const dir = join(work, "my $HOME `x` it's");
  // A port nothing listens on: `npm run add` only writes config.json.
  const env = { PORT: '1' };
  const created = await runCli(['plugin', 'create', 'odd-app', '--dir', dir, '--url', 'http://127.0.0.1:9847/*'], { configDir: cfg, env, cwd: work });
  expect(created.code).toBe(0);
  const next = /^Next: (.+)$/m.exec(created.stdout)?.[1];
  expect(next).toBeDefined();
  const r = Bun.spawnSync(['sh', '-c', next!], { cwd: work, env: cliEnv(cfg, { ...env, OPENTABS_CONFIG_DIR: undefined, ...(next!.includes('OPENTABS_CONFIG_DIR=') ? {} : { OPENTABS_CONFIG_DIR: cfg }) }), stdout: 'pipe', stderr: 'pipe' });
  expect({ code: r.exitCode, err: r.exitCode === 0 ? '' : r.stderr.toString() + r.stdout.toString() }).toEqual({ code: 0, err: '' });
  expect(existsSync(join(dir, 'dist', 'tools.json'))).toBe(true);
  expect((JSON.parse(readFileSync(join(cfg, 'config.json'), 'utf8')) as { localPlugins?: string[] }).localPlugins).toEqual([dir]);
});
