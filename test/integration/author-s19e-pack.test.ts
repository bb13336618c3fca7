/**
 * `npm pack` in a scaffolded plugin ships what the sources say: the scaffold's prepack script
 * builds dist/ first, so a tool renamed since the last build is not packed under its old name.
 */
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(240_000);

const root = tempDir('opentabs-author-s19e-pack-');
afterAll(() => removeDir(root));

test('npm pack builds first: the tarball has the tools of the current sources', async () => {
  const cfg = join(root, 'state');
  const dir = join(root, 'opentabs-plugin-packme');
  expect((await runCli(['plugin', 'create', 'packme', '--dir', dir, '--url', 'http://127.0.0.1:45997/*'], { configDir: cfg })).code).toBe(0);
  const src = join(dir, 'src', 'index.ts');
  writeFileSync(src, readFileSync(src, 'utf8').replace("name: 'get_page_info'", "name: 'page_info'"));
  const pack = Bun.spawnSync(['npm', 'pack', '--silent', '--pack-destination', root], { cwd: dir, stdout: 'pipe', stderr: 'pipe', env: { ...process.env, OPENTABS_CONFIG_DIR: cfg, npm_config_cache: join(root, 'npm-cache') } });
  expect({ code: pack.exitCode, err: pack.stderr.toString() }).toMatchObject({ code: 0 });
  const tarball = join(root, pack.stdout.toString().trim().split('\n').pop()!);
  const tools = Bun.spawnSync(['tar', 'xzf', tarball, '-O', 'package/dist/tools.json'], { stdout: 'pipe' });
  expect(tools.exitCode).toBe(0);
  const manifest = JSON.parse(tools.stdout.toString()) as { tools: { name: string }[] };
  expect(manifest.tools.map((t) => t.name)).toEqual(['page_info']);
});
