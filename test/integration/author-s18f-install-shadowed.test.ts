/**
 * An author who added their plugin folder and then installs the packed plugin of the same name:
 * the install says the local folder is used instead (not "The running server loaded it") and
 * gives the command that switches to the package; that command, run as printed, does so, and
 * says which plugin of that name is loaded now.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../harness/server.ts';
import { cliEnv, removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(180_000);

let root: string;
let cfg: string;
let srv: TestServer;
let registry: ReturnType<typeof Bun.serve>;

beforeAll(async () => {
  root = tempDir('opentabs-author-s18f-shadow-');
  cfg = join(root, 'state');
  // npm never reaches a real registry: a local one that has nothing.
  registry = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => Response.json({ error: 'Not found' }, { status: 404 }) });
  srv = await startTestServer({ configDir: cfg });
});
afterAll(async () => {
  await srv?.stop();
  registry?.stop(true);
  removeDir(root);
});

const npmEnv = () => ({ npm_config_registry: `http://127.0.0.1:${registry.port}/`, npm_config_cache: join(root, 'npm-cache') });

/** A built plugin folder (dist/ written directly: this test is about install, not the build). */
function pluginFolder(dir: string): void {
  mkdirSync(join(dir, 'dist'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'opentabs-plugin-shady', version: '1.0.0', files: ['dist'] }));
  writeFileSync(
    join(dir, 'dist', 'tools.json'),
    JSON.stringify({
      name: 'shady', displayName: 'Shady', description: 'test', version: '1.0.0', sdkVersion: '0.1.0',
      urlPatterns: ['http://127.0.0.1:45999/*'], excludePatterns: [],
      tools: [{ name: 'get', description: 'Get', inputSchema: { type: 'object', properties: {} } }],
    }),
  );
  writeFileSync(join(dir, 'dist', 'adapter.js'), '(() => {})();\n');
}

test('install under a local folder of the same name: says so, and the printed remove switches to the package', async () => {
  const folder = join(root, 'opentabs-plugin-shady');
  pluginFolder(folder);
  expect((await runCli(['plugin', 'add', folder], { configDir: cfg })).code).toBe(0);
  const pack = Bun.spawnSync(['npm', 'pack', '--silent', '--ignore-scripts', '--pack-destination', root], { cwd: folder, stdout: 'pipe', stderr: 'pipe' });
  expect(pack.exitCode).toBe(0);
  const tarball = join(root, pack.stdout.toString().trim().split('\n').pop()!);

  const installed = await runCli(['plugin', 'install', tarball], { configDir: cfg, timeoutMs: 150_000, env: npmEnv() });
  expect(installed.code).toBe(0);
  expect(installed.stdout).toContain('Installed opentabs-plugin-shady → plugin "shady"');
  expect(installed.stdout).not.toContain('The running server loaded it');
  expect(installed.stdout).toContain("The running server keeps the local folder's plugin.");
  expect(installed.stdout).toContain(`note: the local folder ${folder} also provides plugin "shady" and is used instead`);
  const command = /To use the installed package: `([^`]+)`/.exec(installed.stdout)?.[1];
  expect(command).toBeDefined();
  expect(command).toContain(`plugin remove ${folder}`);

  // Run it as printed, from a shell without OPENTABS_CONFIG_DIR (the command carries it).
  const proc = Bun.spawn(['sh', '-c', command!], { cwd: root, env: cliEnv(cfg, { OPENTABS_CONFIG_DIR: undefined }), stdout: 'pipe', stderr: 'pipe' });
  const [out, errText, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  expect(errText).toBe('');
  expect(code).toBe(0);
  expect(out).toContain('Removed plugin "shady" (local folder');
  expect(out).toContain(`Plugin "shady" is now the installed package at ${join(cfg, 'plugins', 'node_modules', 'opentabs-plugin-shady')}, which the running server loaded.`);

  const list = await runCli(['plugin', 'list', '--json'], { configDir: cfg });
  const plugins = JSON.parse(list.stdout).plugins ?? JSON.parse(list.stdout);
  expect(JSON.stringify(plugins)).toContain('"npm"');
  const health = await (await fetch(`${srv.url}/health`, { headers: { authorization: `Bearer ${srv.secret}` } })).json() as any;
  expect(JSON.stringify(health)).toContain('shady');
});
