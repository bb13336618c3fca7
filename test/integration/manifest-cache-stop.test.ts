/**
 * The manifest cache (cache/checked-manifests.json: schema checks and parsed forms) is written in
 * the background after discovery; a server stopped right after its tools are listed (SIGTERM, as
 * `opentabs stop` and the bench do) still leaves it complete, so the next start uses it. CLI
 * commands that run discovery without a server either only read it (listing) or wait for the
 * write before exiting (install, remove, configure): no half-written temp file is left behind.
 */
import { afterAll, expect, test } from 'bun:test';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliEnv, collect, MAIN, removeDir, ROOT, tempDir, waitFor } from './cli-support.ts';
import { writeTestPlugin } from '../harness/fake-extension.ts';
import { manifestHash } from '../../server/plugins/schema-cache.ts';

const dir = tempDir('opentabs-manifest-cache-');
afterAll(() => removeDir(dir));

test('SIGTERM right after the tools are listed: the cache file holds every plugin, parsed', async () => {
  const cfg = join(dir, 'state');
  const plugins = Array.from({ length: 40 }, (_, i) =>
    writeTestPlugin(join(dir, 'src'), `cache${i}`, Array.from({ length: 20 }, (_, t) => ({ name: `tool_${t}`, description: `Tool ${t} of plugin ${i}, described in a sentence.` }))),
  );
  mkdirSync(cfg, { recursive: true });
  writeFileSync(join(cfg, 'config.json'), JSON.stringify({ schemaVersion: 1, localPlugins: plugins, permissions: {}, pluginSettings: {} }));
  const proc = Bun.spawn([process.execPath, MAIN, 'start', '--port', '0'], { cwd: ROOT, env: cliEnv(cfg), stdout: 'pipe', stderr: 'pipe' });
  try {
    const out = collect(proc.stdout);
    const m = await out.until(/listening on (http:\/\/127\.0\.0\.1:\d+)/, 30_000);
    expect(m).not.toBeNull();
    const url = m![1]!;
    const secret = (JSON.parse(readFileSync(join(cfg, 'extension', 'auth.json'), 'utf8')) as { secret: string }).secret;
    await waitFor(async () => {
      const h = (await (await fetch(`${url}/health`, { headers: { Authorization: `Bearer ${secret}` } })).json()) as { pluginToolCount?: number };
      return h.pluginToolCount === 800;
    }, 30_000, 'all 800 plugin tools listed');
    proc.kill('SIGTERM');
    expect(await proc.exited).toBe(0);
  } finally {
    if (proc.exitCode === null) proc.kill('SIGKILL');
  }
  const cache = JSON.parse(readFileSync(join(cfg, 'cache', 'checked-manifests.json'), 'utf8')) as { hashes: string[]; same: string[]; parsed: Record<string, string> };
  const hashes = plugins.map((p) => manifestHash(readFileSync(join(p, 'dist', 'tools.json'), 'utf8')));
  expect([...cache.hashes].sort()).toEqual([...hashes].sort());
  // Each one's parsed form is remembered: by hash alone when it is the manifest's own JSON.
  expect([...cache.same, ...Object.keys(cache.parsed)].sort()).toEqual([...hashes].sort());
});

test('CLI commands without a server: `plugin list` only reads the manifest cache; `plugin configure` leaves it whole, no temp files', async () => {
  const cfg = join(dir, 'cli-state');
  mkdirSync(cfg, { recursive: true });
  const plugin = writeTestPlugin(join(dir, 'cli-src'), 'clicache', [{ name: 'go' }], { region: { type: 'string' } });
  writeFileSync(join(cfg, 'config.json'), JSON.stringify({ schemaVersion: 1, localPlugins: [plugin], permissions: {}, pluginSettings: {} }));
  const run = async (args: string[]) => {
    const p = Bun.spawn([process.execPath, MAIN, ...args], { cwd: ROOT, env: cliEnv(cfg), stdout: 'pipe', stderr: 'pipe' });
    const [out, errText, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    return { out, err: errText, code };
  };
  const list = await run(['plugin', 'list', '--port', '1']);
  expect(list.code).toBe(0);
  expect(list.out).toContain('clicache');
  // Read-only: nothing written into the config dir's cache.
  expect(existsSync(join(cfg, 'cache'))).toBe(false);

  const configure = await run(['plugin', 'configure', 'clicache', 'region=eu', '--port', '1']);
  expect(configure.code).toBe(0);
  const files = readdirSync(join(cfg, 'cache'));
  expect(files).toEqual(['checked-manifests.json']);
  const cache = JSON.parse(readFileSync(join(cfg, 'cache', 'checked-manifests.json'), 'utf8')) as { same: string[]; parsed: Record<string, string> };
  expect([...cache.same, ...Object.keys(cache.parsed)]).toEqual([manifestHash(readFileSync(join(plugin, 'dist', 'tools.json'), 'utf8'))]);
});
