/**
 * The checked-manifests cache through discovery itself (discoverPlugins, as the server and the
 * CLI run it): a start with the cache file present still refuses a broken schema, a corrupt cache
 * file is ignored (and rewritten), and only valid manifests ever land in it.
 */
import { afterEach, beforeEach, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { discoverPlugins } from '../../server/plugins/discover.ts';
import { manifestHash } from '../../server/plugins/schema-cache.ts';

let root: string;
let cfg: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'opentabs-schema-cache-disc-'));
  cfg = join(root, 'state');
  mkdirSync(cfg);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function plugin(name: string, inputSchema: unknown): string {
  const dir = join(root, name);
  mkdirSync(join(dir, 'dist'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `opentabs-plugin-${name}`, version: '1.0.0' }));
  writeFileSync(
    join(dir, 'dist', 'tools.json'),
    JSON.stringify({ name, displayName: name, description: 'd', version: '1.0.0', urlPatterns: [`https://${name}.example/*`], tools: [{ name: 'go', description: 'Go.', inputSchema }] }),
  );
  writeFileSync(join(dir, 'dist', 'adapter.js'), '(()=>{})();\n');
  return dir;
}
const cacheFile = () => join(cfg, 'cache', 'checked-manifests.json');
const hashOf = (dir: string) => manifestHash(readFileSync(join(dir, 'dist', 'tools.json'), 'utf8'));

/** The cache file is saved in the background after a discovery: wait until it holds `n` hashes. */
async function savedHashes(n: number): Promise<string[]> {
  for (let i = 0; i < 200; i++) {
    try {
      const hashes = JSON.parse(readFileSync(cacheFile(), 'utf8')).hashes as string[];
      if (hashes.length >= n) return hashes;
    } catch {}
    await Bun.sleep(10);
  }
  throw new Error('cache file not written');
}

test('with the cache file present, a broken schema is still refused at every discovery', async () => {
  const good = plugin('good', { type: 'object', properties: { id: { type: 'string' } } });
  const bad = plugin('bad', { type: 'object', properties: { id: { type: 'no-such-type' } } });
  const first = await discoverPlugins(cfg, [good, bad]);
  expect(first.plugins.map((p) => p.plugin.name)).toEqual(['good']);
  expect(first.failed.map((f) => f.name)).toEqual(['bad']);
  expect(await savedHashes(1)).toEqual([hashOf(good)]);

  const second = await discoverPlugins(cfg, [good, bad]);
  expect(second.plugins.map((p) => p.plugin.name)).toEqual(['good']);
  expect(second.failed[0]?.error).toContain('not a valid JSON Schema');
  expect(JSON.parse(readFileSync(cacheFile(), 'utf8')).hashes).not.toContain(hashOf(bad));
});

test('a corrupt cache file is ignored: discovery checks every schema and still refuses the broken one', async () => {
  // A different config dir than the test above (discovery keeps one cache per dir per process).
  cfg = join(root, 'state-corrupt');
  mkdirSync(join(cfg, 'cache'), { recursive: true });
  const bad = plugin('bad', { type: 42 });
  const good = plugin('good', { type: 'object' });
  writeFileSync(cacheFile(), '{ "ajv": "8", "hashes": [ truncated');
  const r = await discoverPlugins(cfg, [bad, good]);
  expect(r.plugins.map((p) => p.plugin.name)).toEqual(['good']);
  expect(r.failed.map((f) => f.name)).toEqual(['bad']);
  expect(await savedHashes(1)).toEqual([hashOf(good)]);
});
