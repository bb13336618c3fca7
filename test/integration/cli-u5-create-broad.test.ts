/**
 * `opentabs plugin create x --url 'https://*\/*'`: the scaffold's next steps end in `npm run add`,
 * which `plugin add` refuses for a pattern on every site. The printed next step carries
 * --allow-broad-patterns (through npm's `--`), and a note says what that means; a pattern for one
 * site prints the plain steps.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { join } from 'node:path';
import { removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(120_000);

let root: string;
let cfg: string;

beforeAll(() => {
  root = tempDir();
  cfg = join(root, 'config');
});
afterAll(() => removeDir(root));

test('a pattern on every site: the next step adds it with --allow-broad-patterns, and a note says why', async () => {
  const r = await runCli(['plugin', 'create', 'everywhere', '--url', 'https://*/*'], { configDir: cfg, cwd: root });
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(/Next: cd .* && OPENTABS_CONFIG_DIR=\S+ npm run build && npm test && OPENTABS_CONFIG_DIR=\S+ npm run add -- --allow-broad-patterns\n/);
  expect(r.stdout).toContain('note: https://*/* matches every site or file');
  expect(r.stdout).toContain(`OPENTABS_CONFIG_DIR=${cfg} `);
});

test('a pattern for one site: the plain next steps, no note', async () => {
  const r = await runCli(['plugin', 'create', 'one-site', '--url', 'http://127.0.0.1:9745/*'], { configDir: cfg, cwd: root });
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(/ npm run add\n/);
  expect(r.stdout).not.toContain('allow-broad-patterns');
  expect(r.stdout).not.toContain('note:');
});

test('plugin build outside a plugin folder says so, not an ENOENT', async () => {
  const r = await runCli(['plugin', 'build'], { configDir: cfg, cwd: root });
  expect(r.code).toBe(1);
  expect(r.stderr).toContain(`${root} is not a plugin folder: it has no package.json`);
  expect(r.stderr).toContain('plugin build <folder>`');
  expect(r.stderr).not.toContain('ENOENT');
});
