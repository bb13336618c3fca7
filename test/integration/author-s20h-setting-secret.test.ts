/**
 * A plugin setting holding an API token: saved in the config dir's config.json with mode 0600,
 * and printed only by the commands that show settings (`plugin configure <name>`, `config show`),
 * never by `status`, `plugin list`, `doctor` or `audit`.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { buildPlugin, createPlugin } from '../../plugins/tooling/index.ts';
import { removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(180_000);

const TOKEN = 'tok_s20h_do_not_print_7f3a';
let root: string;
let cfg: string;

beforeAll(async () => {
  root = tempDir();
  cfg = join(root, 'state');
  const { dir } = await createPlugin('vault', join(root, 'opentabs-plugin-vault'), { urlPattern: 'http://127.0.0.1:45061/*' });
  const src = join(dir, 'src', 'index.ts');
  const sample = readFileSync(src, 'utf8');
  await Bun.write(src, sample.replace('  isReady:', "  configSchema: { apiToken: { type: 'string', label: 'API token', required: true } },\n  isReady:"));
  await buildPlugin(dir, { reload: false, log: () => {} });
  expect((await runCli(['plugin', 'add', dir], { configDir: cfg })).code).toBe(0);
  expect((await runCli(['plugin', 'configure', 'vault', `apiToken=${TOKEN}`], { configDir: cfg })).code).toBe(0);
});
afterAll(() => removeDir(root));

test('the token is saved in config.json, readable only by its owner', () => {
  const path = join(cfg, 'config.json');
  expect(readFileSync(path, 'utf8')).toContain(TOKEN);
  expect(statSync(path).mode & 0o777).toBe(0o600);
});

test('status, plugin list, doctor and audit do not print it; the settings commands do', async () => {
  for (const args of [['status'], ['status', '--json'], ['plugin', 'list'], ['plugin', 'list', '--json'], ['doctor'], ['audit']]) {
    const r = await runCli(args, { configDir: cfg, timeoutMs: 60_000 });
    expect({ args, printed: `${r.stdout}${r.stderr}`.includes(TOKEN) }).toEqual({ args, printed: false });
  }
  for (const args of [['plugin', 'configure', 'vault'], ['config', 'show']]) {
    const r = await runCli(args, { configDir: cfg });
    expect({ args, printed: r.stdout.includes(TOKEN) }).toEqual({ args, printed: true });
  }
});
