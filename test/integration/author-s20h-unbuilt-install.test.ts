/**
 * An author installs their plugin folder before building it (`opentabs plugin install ./folder`:
 * npm copies the folder as it is). The refusal speaks to them, not to a package's publisher: the
 * folder is not built, with the build to run there; run as printed, the install then succeeds.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { join } from 'node:path';
import { cliEnv, removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(240_000);

let root: string;
let cfg: string;
let dir: string;

beforeAll(async () => {
  root = tempDir();
  cfg = join(root, 'state');
  dir = join(root, 'opentabs-plugin-unbuilt');
  expect((await runCli(['plugin', 'create', 'unbuilt', '--dir', dir, '--url', 'http://127.0.0.1:45051/*'], { configDir: cfg })).code).toBe(0);
});
afterAll(() => removeDir(root));

test('install of a folder not built names the build to run; run as printed, the install succeeds', async () => {
  const refused = await runCli(['plugin', 'install', './opentabs-plugin-unbuilt'], { configDir: cfg, cwd: root, timeoutMs: 180_000 });
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain(`opentabs-plugin-unbuilt cannot be loaded, so it was not kept: ${dir} has no dist/tools.json: the folder is not built. Run \``);
  expect(refused.stderr).not.toContain('published without its build output');
  const command = /Run `([^`]+)`, then install it again/.exec(refused.stderr)?.[1];
  expect(command).toEndWith(`plugin build ${dir}`);
  const proc = Bun.spawn(['sh', '-c', `${command} --no-typecheck`], { cwd: root, env: cliEnv(cfg, { OPENTABS_CONFIG_DIR: undefined }), stdout: 'pipe', stderr: 'pipe' });
  expect(await proc.exited).toBe(0);
  const installed = await runCli(['plugin', 'install', './opentabs-plugin-unbuilt'], { configDir: cfg, cwd: root, timeoutMs: 180_000 });
  expect({ code: installed.code, err: installed.stderr }).toMatchObject({ code: 0 });
});
