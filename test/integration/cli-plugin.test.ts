/**
 * `opentabs plugin …` without a server: add a local folder, install a packed plugin tarball (its
 * install script must not run), list, configure (typed values, validation), remove — all on the
 * config dir directly. Also `plugin create` + `plugin build` producing a plugin that loads.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';

// Every test spawns CLI processes on a shared machine: room, not a speed assertion.
setDefaultTimeout(120_000);
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MAIN, cliEnv, collect, removeDir, runCli, tempDir, waitFor } from './cli-support.ts';

let root: string;
let cfg: string;
let freePort = 0;

function writePlugin(parent: string, name: string, extraPkg: Record<string, unknown> = {}): string {
  const p = join(parent, `plugin-${name}`);
  mkdirSync(join(p, 'dist'), { recursive: true });
  writeFileSync(join(p, 'package.json'), JSON.stringify({ name: `opentabs-plugin-${name}`, version: '1.0.0', ...extraPkg }));
  writeFileSync(
    join(p, 'dist', 'tools.json'),
    JSON.stringify({
      name, displayName: name.toUpperCase(), description: 'test', version: '1.0.0', sdkVersion: '0.1.0',
      urlPatterns: ['http://127.0.0.1/*'], excludePatterns: [],
      configSchema: { limit: { type: 'number', default: 5 }, token: { type: 'string', required: true } },
      tools: [{ name: 'get', description: 'Get', inputSchema: { type: 'object', properties: {} } }],
    }),
  );
  writeFileSync(join(p, 'dist', 'adapter.js'), '(() => {})();\n');
  return p;
}

const cli = (args: string[], timeoutMs?: number) => runCli([...args], { configDir: cfg, env: { PORT: String(freePort) }, timeoutMs });

beforeAll(() => {
  root = tempDir();
  cfg = join(root, 'state');
  const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') });
  freePort = s.port!;
  s.stop(true);
});
afterAll(() => removeDir(root));

describe('plugin commands without a server', () => {
  test('add a local folder; list shows it from disk', async () => {
    const dir = writePlugin(root, 'alpha');
    const r = await cli(['plugin', 'add', dir]);
    expect(r.code).toBe(0);
    expect(JSON.parse(readFileSync(join(cfg, 'config.json'), 'utf8')).localPlugins).toEqual([dir]);
    const list = await cli(['plugin', 'list', '--json']);
    const j = JSON.parse(list.stdout);
    expect(j.running).toBe(false);
    expect(j.plugins.map((p: { name: string }) => p.name)).toEqual(['alpha']);
  });

  test('configure offline: typed values saved, required/unknown/bad values refused', async () => {
    const bad = await cli(['plugin', 'configure', 'alpha', 'limit=abc']);
    expect(bad.code).toBe(2);
    const missingRequired = await cli(['plugin', 'configure', 'alpha', 'limit=9']);
    expect(missingRequired.code).toBe(1);
    expect(missingRequired.stderr).toContain('token');
    const ok = await cli(['plugin', 'configure', 'alpha', 'limit=9', 'token=abc']);
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    expect(JSON.parse(readFileSync(join(cfg, 'config.json'), 'utf8')).pluginSettings.alpha).toEqual({ limit: 9, token: 'abc' });
    const show = JSON.parse((await cli(['plugin', 'configure', 'alpha', '--json'])).stdout);
    expect(show.settings).toEqual({ limit: 9, token: 'abc' });
    const twice = await cli(['plugin', 'configure', 'alpha', 'limit=1', 'limit=2']);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain('"limit" is given twice');
    expect(JSON.parse(readFileSync(join(cfg, 'config.json'), 'utf8')).pluginSettings.alpha).toEqual({ limit: 9, token: 'abc' });
    const unknown = await cli(['plugin', 'configure', 'nosuch', 'a=b']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('No plugin named "nosuch"');
  });

  test('install a packed tarball: progress on stderr, install script not run, loads', async () => {
    const marker = join(root, 'postinstall-ran');
    const dir = writePlugin(root, 'beta', { scripts: { postinstall: `node -e "require('fs').writeFileSync('${marker}','x')"` } });
    const pack = Bun.spawnSync(['npm', 'pack', '--silent', '--pack-destination', root], { cwd: dir, stdout: 'pipe', stderr: 'pipe' });
    expect(pack.exitCode).toBe(0);
    const tgz = join(root, pack.stdout.toString().trim().split('\n').pop()!);
    expect(existsSync(tgz)).toBe(true);
    const r = await cli(['plugin', 'install', tgz], 120_000);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('plugin "beta"');
    expect(r.stderr).toContain('install scripts disabled');
    expect(existsSync(marker)).toBe(false);
    const j = JSON.parse((await cli(['plugin', 'list', '--json'])).stdout);
    expect(j.plugins.map((p: { name: string; source: string }) => `${p.name}:${p.source}`).sort()).toEqual(['alpha:local', 'beta:npm']);
    // New plugins start at ask.
    expect(JSON.parse(readFileSync(join(cfg, 'config.json'), 'utf8')).permissions.beta.default).toBe('ask');
    expect(r.stdout).toContain('permission ask: each call waits for approval in the side panel');
    // Installed again after the user chose auto: it keeps auto, and says so (not "they start at 'ask'").
    expect((await cli(['config', 'set', 'permission.beta', 'auto'])).code).toBe(0);
    const again = await cli(['plugin', 'install', tgz], 120_000);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('(1 tool; permission auto)');
    expect(again.stdout).not.toContain("'ask'");
  }, 240_000);

  test('install of something that is not a plugin fails clearly', async () => {
    const notPlugin = join(root, 'not-plugin');
    mkdirSync(notPlugin, { recursive: true });
    writeFileSync(join(notPlugin, 'package.json'), JSON.stringify({ name: 'left-pad-ish', version: '1.0.0' }));
    const r = await cli(['plugin', 'install', notPlugin], 120_000);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('is not an OpenTabs plugin');
  }, 150_000);

  test('remove: npm package uninstalled, local folder unlisted (folder kept)', async () => {
    const rb = await cli(['plugin', 'remove', 'beta'], 120_000);
    expect(rb.code).toBe(0);
    expect(rb.stdout).toContain('npm package opentabs-plugin-beta');
    // By path: the message names the plugin the folder held.
    const ra = await cli(['plugin', 'remove', join(root, 'plugin-alpha')]);
    expect(ra.code).toBe(0);
    expect(ra.stdout).toContain('Removed plugin "alpha" (local folder');
    expect(existsSync(join(root, 'plugin-alpha', 'package.json'))).toBe(true);
    const j = JSON.parse((await cli(['plugin', 'list', '--json'])).stdout);
    expect(j.plugins).toEqual([]);
  }, 150_000);
});

describe('plugin create + build', () => {
  test('create scaffolds a project; build writes dist/tools.json and dist/adapter.js that the loader accepts', async () => {
    const dir = join(root, 'made');
    const c = await cli(['plugin', 'create', 'gamma', '--dir', dir]);
    expect(c.stderr).toBe('');
    expect(c.code).toBe(0);
    expect(existsSync(join(dir, 'package.json'))).toBe(true);
    const b = await cli(['plugin', 'build', dir], 120_000);
    expect(b.code).toBe(0);
    expect(b.stdout).toContain('Built plugin "gamma"');
    const tools = JSON.parse(readFileSync(join(dir, 'dist', 'tools.json'), 'utf8'));
    expect(tools.name).toBe('gamma');
    expect(existsSync(join(dir, 'dist', 'adapter.js'))).toBe(true);
    const add = await cli(['plugin', 'add', dir]);
    expect(add.code).toBe(0);
    expect(add.stdout).toContain('Added plugin "gamma"');
    const again = await cli(['plugin', 'create', 'gamma', '--dir', dir]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('not empty');
    const withUrl = await cli(['plugin', 'create', 'epsilon', '--dir', join(root, 'eps'), '--url', 'https://app.example.com/*']);
    expect(withUrl.code).toBe(0);
    expect(readFileSync(join(root, 'eps', 'src', 'index.ts'), 'utf8')).toContain('urlPatterns: ["https://app.example.com/*"]');
    const withPort = await cli(['plugin', 'create', 'eta', '--dir', join(root, 'eta'), '--url', 'http://localhost:3000/*']);
    expect(withPort.code).toBe(0);
    expect(readFileSync(join(root, 'eta', 'src', 'index.ts'), 'utf8')).toContain('urlPatterns: ["http://localhost:3000/*"]');
    expect(withPort.stdout).toMatch(/npm run build && npm test && OPENTABS_CONFIG_DIR=\S+ npm run add\n/);
    const badUrl = await cli(['plugin', 'create', 'zeta', '--dir', join(root, 'zeta'), '--url', 'localhost:3000/*']);
    expect(badUrl.code).toBe(2);
    expect(badUrl.stderr).toContain('is not a Chrome match pattern');
    expect(existsSync(join(root, 'zeta'))).toBe(false);
    const badName = await cli(['plugin', 'create', 'Bad_Name', '--dir', join(root, 'bad')]);
    expect(badName.code).toBe(2);
    expect(badName.stderr).toContain('not a valid plugin name');
  }, 150_000);

  test('build --watch: first build, a source edit rebuilds dist, SIGTERM stops it with exit 0', async () => {
    const dir = join(root, 'watched');
    expect((await cli(['plugin', 'create', 'delta', '--dir', dir])).code).toBe(0);
    const proc = Bun.spawn([process.execPath, MAIN, 'plugin', 'build', dir, '--watch'], {
      cwd: root,
      env: cliEnv(cfg, { PORT: String(freePort) }),
      stdout: 'pipe',
      stderr: 'pipe',
    });
    try {
      const out = collect(proc.stdout);
      expect(await out.until(/Watching .* for changes/, 90_000)).not.toBeNull();
      expect(JSON.parse(readFileSync(join(dir, 'dist', 'tools.json'), 'utf8')).description).not.toContain('edited by the watch test');
      const src = join(dir, 'src', 'index.ts');
      const text = readFileSync(src, 'utf8');
      const edited = text.replace(/description: '([^']*)',\n  urlPatterns/, "description: 'edited by the watch test',\n  urlPatterns");
      expect(edited).not.toBe(text);
      writeFileSync(src, edited);
      await waitFor(
        () => readFileSync(join(dir, 'dist', 'tools.json'), 'utf8').includes('edited by the watch test'),
        90_000,
        'the watcher to rebuild tools.json',
      );
    } finally {
      proc.kill('SIGTERM');
    }
    expect(await proc.exited).toBe(0);
  }, 200_000);
});
