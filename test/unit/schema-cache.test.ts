/**
 * Plugin manifests already checked are remembered across runs (cache/checked-manifests.json), so
 * a start with many plugins skips loading Ajv and re-parsing each manifest; what is refused does
 * not change: a manifest is remembered only when it parsed and every schema passed, an edited
 * manifest is checked again, a parsed form made under other rules (or malformed) is never used,
 * and a corrupt cache file is ignored.
 */
import { afterEach, beforeEach, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadPluginFolder } from '../../server/plugins/load.ts';
import { CheckedManifests, manifestHash, RULE_FILES } from '../../server/plugins/schema-cache.ts';

let root: string;
let cfg: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'opentabs-schema-cache-'));
  cfg = join(root, 'state');
  mkdirSync(cfg);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function plugin(name: string, inputSchema: unknown, extra: Record<string, unknown> = {}): string {
  const dir = join(root, name);
  mkdirSync(join(dir, 'dist'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `opentabs-plugin-${name}`, version: '1.0.0' }));
  writeFileSync(
    join(dir, 'dist', 'tools.json'),
    JSON.stringify({ name, displayName: name, description: 'd', version: '1.0.0', urlPatterns: ['https://x.example/*'], tools: [{ name: 'go', description: 'Go.', inputSchema }], ...extra }),
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

// ---- the parsed form (valibot's output) is remembered too, under the same rules only

test('a manifest that passed is loaded from its remembered parsed form, with the same result as a fresh parse', async () => {
  const dir = plugin('parsed', { type: 'object', properties: { id: { type: 'string', description: 'Item id' } } });
  const fresh = await loadPluginFolder(dir, 'local');
  const cache = CheckedManifests.open(cfg);
  const first = await loadPluginFolder(dir, 'local', cache);
  await cache.save();
  const saved = JSON.parse(readFileSync(cacheFile(), 'utf8'));
  expect(typeof saved.rules).toBe('string');
  expect(Object.keys(saved.parsed)).toEqual([manifestHash(toolsText(dir))]);
  const reopened = CheckedManifests.open(cfg);
  const hit = reopened.parsed(manifestHash(toolsText(dir)), toolsText(dir));
  expect(hit?.name).toBe('parsed');
  const second = await loadPluginFolder(dir, 'local', reopened);
  expect(second).toEqual(fresh);
  expect(first).toEqual(fresh);
  // Each hit is its own copy: changing one never reaches the next.
  (reopened.parsed(manifestHash(toolsText(dir)), toolsText(dir))!.tools[0] as { description: string }).description = 'changed';
  expect(reopened.parsed(manifestHash(toolsText(dir)), toolsText(dir))!.tools[0]!.description).toBe('Go.');
});

test('a manifest that parses to exactly its own JSON (as the plugin tooling writes them) is remembered by its hash alone', async () => {
  // excludePatterns present: nothing for the parser to add (the manifest above gets its default).
  const dir = plugin('same', { type: 'object', properties: { id: { type: 'string' } } }, { excludePatterns: [] });
  const hash = manifestHash(toolsText(dir));
  const fresh = await loadPluginFolder(dir, 'local');
  const cache = CheckedManifests.open(cfg);
  expect(await loadPluginFolder(dir, 'local', cache)).toEqual(fresh);
  await cache.save();
  const saved = JSON.parse(readFileSync(cacheFile(), 'utf8'));
  expect(saved.same).toEqual([hash]);
  expect(saved.parsed).toEqual({});
  const reopened = CheckedManifests.open(cfg);
  expect(await loadPluginFolder(dir, 'local', reopened)).toEqual(fresh);
  const hit = reopened.parsed(hash, toolsText(dir))!;
  hit.tools[0]!.description = 'changed';
  expect(reopened.parsed(hash, toolsText(dir))!.tools[0]!.description).toBe('Go.');
  // Listed under other rules, a malformed list, or no longer recorded as schema-checked: not used.
  for (const bad of [{ rules: 'other-rules' }, { same: [hash, 'not-a-hash'] }, { same: hash }, { hashes: [] }]) {
    writeFileSync(cacheFile(), JSON.stringify({ ...saved, ...bad }));
    expect(CheckedManifests.open(cfg).parsed(hash, toolsText(dir))).toBeUndefined();
  }
  // An edited manifest has another hash: parsed and checked again, never taken from the list.
  writeFileSync(cacheFile(), JSON.stringify(saved));
  writeFileSync(join(dir, 'dist', 'tools.json'), toolsText(dir).replace('"name":"same"', '"name":"browser"'));
  const edited = await loadPluginFolder(dir, 'local', CheckedManifests.open(cfg));
  expect(edited.ok).toBe(false);
});

test('parsed forms made under other rules, or malformed, are never used; refused manifests are never remembered', async () => {
  const dir = plugin('rules', { type: 'object' });
  const hash = manifestHash(toolsText(dir));
  const cache = CheckedManifests.open(cfg);
  expect((await loadPluginFolder(dir, 'local', cache)).ok).toBe(true);
  await cache.save();
  const saved = JSON.parse(readFileSync(cacheFile(), 'utf8'));
  // A forged entry (a reserved plugin name the parser refuses) under other rules: ignored.
  const forged = JSON.stringify({ ...JSON.parse(saved.parsed[hash]), name: 'browser' });
  writeFileSync(cacheFile(), JSON.stringify({ ...saved, rules: 'other-rules', parsed: { [hash]: forged } }));
  expect(CheckedManifests.open(cfg).parsed(hash, toolsText(dir))).toBeUndefined();
  // Malformed parsed entries: the file's parsed part is ignored, the entry that is not JSON too.
  for (const parsed of [[1, 2], { [hash]: 42 }, { 'not-a-hash': '{}' }]) {
    writeFileSync(cacheFile(), JSON.stringify({ ...saved, parsed }));
    expect(CheckedManifests.open(cfg).parsed(hash, toolsText(dir))).toBeUndefined();
  }
  writeFileSync(cacheFile(), JSON.stringify({ ...saved, parsed: { [hash]: '{ truncated' } }));
  const broken = CheckedManifests.open(cfg);
  expect(broken.parsed(hash, toolsText(dir))).toBeUndefined();
  expect((await loadPluginFolder(dir, 'local', broken)).ok).toBe(true);

  // A manifest the parser refuses, or whose schema is invalid, gets no parsed entry.
  const reserved = join(root, 'reserved');
  mkdirSync(join(reserved, 'dist'), { recursive: true });
  writeFileSync(join(reserved, 'package.json'), JSON.stringify({ name: 'opentabs-plugin-browser', version: '1.0.0' }));
  writeFileSync(join(reserved, 'dist', 'tools.json'), JSON.stringify({ name: 'browser', displayName: 'b', description: 'd', version: '1', urlPatterns: ['https://x.example/*'], tools: [{ name: 'go', description: 'Go.', inputSchema: { type: 'object' } }] }));
  writeFileSync(join(reserved, 'dist', 'adapter.js'), '(()=>{})();\n');
  const bad = plugin('badschema', { type: 'object', properties: { id: { type: 'no-such-type' } } });
  const c2 = CheckedManifests.open(cfg);
  expect((await loadPluginFolder(reserved, 'local', c2)).ok).toBe(false);
  expect((await loadPluginFolder(bad, 'local', c2)).ok).toBe(false);
  expect(c2.parsed(manifestHash(toolsText(reserved)), toolsText(reserved))).toBeUndefined();
  expect(c2.parsed(manifestHash(toolsText(bad)), toolsText(bad))).toBeUndefined();
});

test('a remembered manifest whose package was renamed is still refused for the name mismatch', async () => {
  const dir = plugin('renamed', { type: 'object' });
  const cache = CheckedManifests.open(cfg);
  expect((await loadPluginFolder(dir, 'local', cache)).ok).toBe(true);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'opentabs-plugin-other', version: '1.0.0' }));
  const r = await loadPluginFolder(dir, 'local', cache);
  expect(r.ok).toBe(false);
  if (!r.ok) expect(r.error).toContain('does not match package name');
});

test('the rules key covers plugin-manifest.ts and every module it imports, so no rule can change unseen', () => {
  const serverDir = join(import.meta.dir, '..', '..', 'server');
  const seen = new Set<string>();
  const visit = (rel: string) => {
    if (seen.has(rel)) return;
    seen.add(rel);
    const text = readFileSync(join(serverDir, rel), 'utf8');
    for (const m of text.matchAll(/^import\s+(?!type\b)[^'"]*['"](\.[^'"]+)['"]/gm)) visit(join(rel, '..', m[1]!));
  };
  visit('protocol/plugin-manifest.ts');
  expect([...seen].sort()).toEqual([...RULE_FILES].sort());
});
