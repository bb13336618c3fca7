import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigStore, configPath, normalizeConfig } from '../../server/state/config.ts';
import { STATE_SCHEMA_VERSION } from '../../server/version.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'opentabs-config-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const onDisk = () => JSON.parse(readFileSync(configPath(dir), 'utf8'));

describe('ConfigStore', () => {
  test('first open writes defaults (0600)', async () => {
    const store = await ConfigStore.open(dir);
    expect(store.get()).toEqual({ schemaVersion: STATE_SCHEMA_VERSION, localPlugins: [], permissions: {}, pluginSettings: {} });
    expect(onDisk()).toEqual(store.get());
    expect(statSync(configPath(dir)).mode & 0o777).toBe(0o600);
  });

  test('unknown keys (top level and nested) survive updates', async () => {
    writeFileSync(
      configPath(dir),
      JSON.stringify({ futureFeature: { x: [1, 2] }, permissions: { slack: { default: 'auto', note: 'keep me' } }, localPlugins: ['/a'] }),
    );
    const store = await ConfigStore.open(dir);
    await store.setToolPermission('slack', 'send', 'off');
    const d = onDisk();
    expect(d.futureFeature).toEqual({ x: [1, 2] });
    expect(d.permissions.slack).toEqual({ default: 'auto', note: 'keep me', tools: { send: 'off' } });
    expect(d.localPlugins).toEqual(['/a']);
  });

  test('permissionFor: tool override > plugin default > fallback', async () => {
    const store = await ConfigStore.open(dir);
    expect(store.permissionFor('p', 't', 'ask')).toBe('ask');
    await store.setPluginPermission('p', 'auto');
    expect(store.permissionFor('p', 't', 'ask')).toBe('auto');
    await store.setToolPermission('p', 't', 'off');
    expect(store.permissionFor('p', 't', 'ask')).toBe('off');
    expect(store.permissionFor('p', 'other', 'ask')).toBe('auto');
  });

  test('invalid permissions are refused with a clear error and nothing is written', async () => {
    const store = await ConfigStore.open(dir);
    const before = readFileSync(configPath(dir), 'utf8');
    await expect(store.setToolPermission('p', 't', 'yes' as never)).rejects.toThrow(/off, ask, auto/);
    expect(readFileSync(configPath(dir), 'utf8')).toBe(before);
  });

  test('concurrent updates are serialized; none is lost', async () => {
    const store = await ConfigStore.open(dir);
    await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        store.update((d) => {
          d.localPlugins.push(`/p${i}`);
        }),
      ),
    );
    expect(onDisk().localPlugins.length).toBe(25);
    expect(store.get().localPlugins.length).toBe(25);
    expect(readdirSync(dir)).toEqual(['config.json']);
  });

  test('update starts from the file on disk (edits by the CLI are not clobbered)', async () => {
    const store = await ConfigStore.open(dir);
    writeFileSync(configPath(dir), JSON.stringify({ ...onDisk(), localPlugins: ['/from-cli'] }));
    await store.setPluginPermission('x', 'auto');
    expect(onDisk().localPlugins).toEqual(['/from-cli']);
    expect(onDisk().permissions.x.default).toBe('auto');
  });

  test('a throwing mutator rejects and leaves the file unchanged; later updates still work', async () => {
    const store = await ConfigStore.open(dir);
    const before = readFileSync(configPath(dir), 'utf8');
    await expect(
      store.update(() => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(readFileSync(configPath(dir), 'utf8')).toBe(before);
    await store.update((d) => {
      d.skipPermissions = true;
    });
    expect(onDisk().skipPermissions).toBe(true);
  });

  test('a corrupt config.json is moved aside and defaults are used', async () => {
    writeFileSync(configPath(dir), '{"permissions": ');
    const store = await ConfigStore.open(dir);
    expect(store.lastLoadError).toContain('not valid JSON');
    expect(store.get().localPlugins).toEqual([]);
    const names = readdirSync(dir).sort();
    expect(names.length).toBe(2);
    expect(names[1]).toMatch(/^config\.json\.corrupt-\d+$/);
    expect(readFileSync(join(dir, names[1]), 'utf8')).toBe('{"permissions": ');
  });

  test('reload picks up changes made on disk', async () => {
    const store = await ConfigStore.open(dir);
    writeFileSync(configPath(dir), JSON.stringify({ skipPermissions: true, pluginSettings: { a: { url: 'x' } } }));
    await store.reload();
    expect(store.get().skipPermissions).toBe(true);
    expect(store.get().pluginSettings).toEqual({ a: { url: 'x' } });
  });
});

describe('normalizeConfig', () => {
  test('wrong shapes for known keys are coerced, not fatal', () => {
    const c = normalizeConfig({
      schemaVersion: 'x',
      localPlugins: ['/ok', 3, ''],
      permissions: { a: 'nope', b: { default: 'maybe', tools: { t: 'auto', u: 7 } } },
      pluginSettings: [],
      skipPermissions: 'yes',
      extra: 1,
    });
    expect(c).toEqual({
      schemaVersion: STATE_SCHEMA_VERSION,
      localPlugins: ['/ok'],
      permissions: { b: { tools: { t: 'auto' } } },
      pluginSettings: {},
      extra: 1,
    });
    expect(normalizeConfig(null).localPlugins).toEqual([]);
    expect(normalizeConfig([1, 2]).permissions).toEqual({});
  });
});
