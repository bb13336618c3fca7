/**
 * Plugin manifests already checked are remembered across runs (cache/checked-manifests.json), so
 * a start with many plugins skips loading Ajv; what is refused does not change: a manifest is
 * remembered only when every schema passed, an edited manifest is checked again, and a corrupt
 * cache file is ignored.
 */
import { afterEach, beforeEach, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadPluginFolder } from '../../server/plugins/load.ts';
import { CheckedManifests, manifestHash } from '../../server/plugins/schema-cache.ts';

let root: string;
let cfg: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'opentabs-schema-cache-'));
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
    JSON.stringify({ name, displayName: name, description: 'd', version: '1.0.0', urlPatterns: ['https://x.example/*'], tools: [{ name: 'go', description: 'Go.', inputSchema }] }),
  );
  writeFileSync(join(dir, 'dist', 'adapter.js'), '(()=>{})();\n');
  return dir;
}
const toolsText = (dir: string) => readFileSync(join(dir, 'dist', 'tools.json'), 'utf8');
const cacheFile = () => join(cfg, 'cache', 'checked-manifests.json');

test('a valid manifest is remembered (and saved) after its check; an invalid one never is', async () => {
  const good = plugin('good', { type: 'object', properties: { id: { type: 'string' } } });
  const bad = plugin('bad', { type: 'object', properties: { id: { type: 'no-such-type' } } });
  const cache = CheckedManifests.open(cfg);
  expect((await loadPluginFolder(good, 'local', cache)).ok).toBe(true);
  const refused = await loadPluginFolder(bad, 'local', cache);
  expect(refused.ok).toBe(false);
  if (!refused.ok) expect(refused.error).toContain('not a valid JSON Schema');
  expect(cache.has(manifestHash(toolsText(good)))).toBe(true);
  expect(cache.has(manifestHash(toolsText(bad)))).toBe(false);
  await cache.save();
  const reopened = CheckedManifests.open(cfg);
  expect(reopened.has(manifestHash(toolsText(good)))).toBe(true);
  expect(JSON.parse(readFileSync(cacheFile(), 'utf8')).hashes).toEqual([manifestHash(toolsText(good))]);
});

test('an edited manifest is checked again: a schema broken after it was remembered is refused', async () => {
  const dir = plugin('edited', { type: 'object' });
  const cache = CheckedManifests.open(cfg);
  expect((await loadPluginFolder(dir, 'local', cache)).ok).toBe(true);
  const text = toolsText(dir).replace('"type":"object"', '"type":"objekt"');
  writeFileSync(join(dir, 'dist', 'tools.json'), text);
  const r = await loadPluginFolder(dir, 'local', cache);
  expect(r.ok).toBe(false);
});

test('a corrupt or foreign cache file is ignored, never trusted', async () => {
  mkdirSync(join(cfg, 'cache'));
  const bad = plugin('bad', { type: 42 });
  for (const content of ['{ not json', JSON.stringify({ ajv: 'other', hashes: [manifestHash(toolsText(bad))] }), JSON.stringify({ hashes: 'nope' })]) {
    writeFileSync(cacheFile(), content);
    const cache = CheckedManifests.open(cfg);
    expect(cache.has(manifestHash(toolsText(bad)))).toBe(false);
    expect((await loadPluginFolder(bad, 'local', cache)).ok).toBe(false);
  }
});
