/**
 * `opentabs plugin install` output: a package the registry does not have is one clear error (not
 * npm's 404 text streamed as progress and then repeated in the error), and an install's result
 * line is printed once, on stdout. The registry is a local server answering 404 to everything.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir, runCli, tempDir } from './cli-support.ts';

// npm runs as a child process on a shared machine: room, not a speed assertion.
setDefaultTimeout(120_000);

let root: string;
let registry: ReturnType<typeof Bun.serve>;

beforeAll(() => {
  root = tempDir('opentabs-cli-w5-install-');
  registry = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => Response.json({ error: 'Not found' }, { status: 404 }) });
});
afterAll(() => {
  registry.stop(true);
  removeDir(root);
});

const cli = (args: string[], configDir: string) =>
  runCli(args, { configDir, timeoutMs: 110_000, env: { npm_config_registry: `http://127.0.0.1:${registry.port}/`, npm_config_cache: join(root, 'npm-cache') } });

function count(text: string, part: string): number {
  return text.split(part).length - 1;
}

function packPlugin(name: string, extraPkg: Record<string, unknown> = {}): string {
  const dir = join(root, `plugin-${name}`);
  mkdirSync(join(dir, 'dist'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `opentabs-plugin-${name}`, version: '1.0.0', ...extraPkg }));
  writeFileSync(
    join(dir, 'dist', 'tools.json'),
    JSON.stringify({
      name, displayName: name, description: 'test', version: '1.0.0', sdkVersion: '0.1.0',
      urlPatterns: ['http://127.0.0.1/*'], excludePatterns: [],
      tools: [{ name: 'get', description: 'Get', inputSchema: { type: 'object', properties: {} } }],
    }),
  );
  writeFileSync(join(dir, 'dist', 'adapter.js'), '(() => {})();\n');
  const pack = Bun.spawnSync(['npm', 'pack', '--silent', '--ignore-scripts', '--pack-destination', root], { cwd: dir, stdout: 'pipe', stderr: 'pipe' });
  expect(pack.exitCode).toBe(0);
  return join(root, pack.stdout.toString().trim().split('\n').pop()!);
}

test('a package npm does not have: one error naming it, no npm 404 text twice', async () => {
  const r = await cli(['plugin', 'install', 'opentabs-plugin-nosuch'], join(root, 'cfg-missing'));
  expect(r.code).toBe(1);
  expect(r.stdout).toBe('');
  expect(count(r.stderr, 'error: ')).toBe(1);
  expect(r.stderr).toContain(`error: npm has no package named "opentabs-plugin-nosuch" in its registry (http://127.0.0.1:${registry.port})`);
  expect(r.stderr).not.toContain('npm error');
  expect(r.stderr).not.toContain('404');
});

test('a plugin whose dependency npm does not have: the error names the dependency', async () => {
  const tgz = packPlugin('needy', { dependencies: { 'opentabs-w5-missing-dep': '^1.0.0' } });
  const r = await cli(['plugin', 'install', tgz], join(root, 'cfg-dep'));
  expect(r.code).toBe(1);
  expect(count(r.stderr, 'error: ')).toBe(1);
  expect(r.stderr).toContain('it depends on "opentabs-w5-missing-dep", which npm has no package of');
  expect(r.stderr).not.toContain('npm error');
});

test('an install that works prints its result once, on stdout; progress stays on stderr', async () => {
  const tgz = packPlugin('once');
  const r = await cli(['plugin', 'install', tgz], join(root, 'cfg-ok'));
  expect(r.code).toBe(0);
  expect(r.stderr).toContain('install scripts disabled');
  expect(count(r.stdout, 'plugin "once"')).toBe(1);
  expect(r.stdout).toContain('Installed opentabs-plugin-once → plugin "once" (1 tool; permission ask');
  expect(r.stderr).not.toContain('plugin "once"');
  expect(r.stderr).not.toContain('installed (');
});
