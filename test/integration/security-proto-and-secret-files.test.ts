/**
 * Attacks on settings and config files:
 *  - prototype pollution through POST /plugin-settings (`__proto__`, `constructor`, `prototype`
 *    keys): refused with a 400 naming the key, config.json unchanged, Object.prototype clean;
 *  - the same names in config.json (permissions, tool overrides) and as plugin/tool/setting names
 *    in a manifest: ignored or refused, never read through the prototype chain;
 *  - `opentabs setup opencode` on an existing 0644 opencode.json: the file that now holds the
 *    secret ends up 0600, and the command says so.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, readFileSync, statSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempConfigDir, removeDir, startTestServer, type TestServer } from '../harness/server.ts';
import { writeTestPlugin } from '../harness/fake-extension.ts';
import { ConfigStore } from '../../server/state/config.ts';
import { parseToolsJson } from '../../server/protocol/plugin-manifest.ts';
import { runCli } from './cli-support.ts';

setDefaultTimeout(60_000);

let dir: string;
let srv: TestServer;
const configPath = () => join(dir, 'config.json');

beforeAll(async () => {
  dir = makeTempConfigDir();
  const pluginDir = writeTestPlugin(dir, 'demo', [{ name: 'ping' }], { baseUrl: { type: 'url' }, pageSize: { type: 'number', default: 20 } });
  writeFileSync(configPath(), JSON.stringify({ localPlugins: [pluginDir], pluginSettings: { demo: { pageSize: 5 } } }));
  srv = await startTestServer({ configDir: dir, limits: { adminRate: { max: 1000, windowMs: 60_000 } } });
});
afterAll(async () => {
  await srv?.stop();
  removeDir(dir);
});

/** Raw JSON text: JSON.parse makes "__proto__" an own key, as a hostile client's body would. */
const postRaw = (text: string) =>
  fetch(`${srv.url}/plugin-settings`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: text });

const clean = () => {
  const probe: Record<string, unknown> = {};
  return probe.polluted === undefined && (Object.prototype as Record<string, unknown>).polluted === undefined && (Object as unknown as Record<string, unknown>).polluted === undefined;
};

describe('prototype keys in /plugin-settings', () => {
  for (const [key, body] of [
    ['__proto__', '{"plugin":"demo","settings":{"__proto__":{"polluted":"yes"}}}'],
    ['constructor', '{"plugin":"demo","settings":{"constructor":{"prototype":{"polluted":"yes"}}}}'],
    ['prototype', '{"plugin":"demo","settings":{"pageSize":7,"prototype":{"polluted":"yes"}}}'],
  ] as const) {
    test(`"${key}" is refused with a 400 naming it; config.json and Object.prototype untouched`, async () => {
      const before = readFileSync(configPath(), 'utf8');
      const r = await postRaw(body);
      expect(r.status).toBe(400);
      const err = ((await r.json()) as { error: { code: string; message: string; path?: string } }).error;
      expect(err.code).toBe('invalid_settings');
      expect(err.message).toContain(`"${key}"`);
      expect(err.path).toBe(`/settings/${key}`);
      expect(readFileSync(configPath(), 'utf8')).toBe(before);
      expect(clean()).toBe(true);
    });
  }

  test('ordinary settings still save', async () => {
    const r = await postRaw('{"plugin":"demo","settings":{"pageSize":9}}');
    expect(r.status).toBe(200);
    expect(JSON.parse(readFileSync(configPath(), 'utf8')).pluginSettings.demo).toEqual({ pageSize: 9 });
  });

  test('`opentabs plugin configure` with a prototype key is refused naming it', async () => {
    const r = await runCli(['plugin', 'configure', 'demo', '__proto__=x', '--port', String(srv.port)], { configDir: dir });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('"__proto__" cannot be a setting name');
    const c = await runCli(['config', 'set', 'plugin.demo.constructor', 'x', '--port', String(srv.port)], { configDir: dir });
    expect(c.code).not.toBe(0);
    expect(c.stderr).toContain('"constructor" cannot be a setting name');
    const p = await runCli(['config', 'set', 'permission.demo.constructor', 'auto', '--port', String(srv.port)], { configDir: dir });
    expect(p.code).not.toBe(0);
    expect(p.stderr).toContain('constructor');
    expect(clean()).toBe(true);
  });
});

describe('prototype keys in config.json and manifests', () => {
  test('config.json: "__proto__" permissions are ignored, not inherited; tool lookups use own keys only', async () => {
    const d = makeTempConfigDir();
    try {
      writeFileSync(
        join(d, 'config.json'),
        '{"permissions":{"__proto__":{"demo":{"default":"auto"}},"demo":{"tools":{}},"other":{"tools":{"__proto__":"auto","ping":"off"}}},"pluginSettings":{"__proto__":{"polluted":"yes"}}}',
      );
      const store = await ConfigStore.open(d);
      const perms = store.get().permissions;
      expect(Object.getPrototypeOf(perms)).toBe(Object.prototype);
      expect(Object.hasOwn(perms, '__proto__')).toBe(false);
      // demo has an empty tools map: "constructor" must not answer with Object's constructor.
      expect(store.permissionFor('demo', 'constructor', 'ask')).toBe('ask');
      expect(store.permissionFor('demo', 'toString', 'ask')).toBe('ask');
      expect(store.permissionFor('other', 'ping', 'ask')).toBe('off');
      expect(store.permissionFor('nope', 'ping', 'ask')).toBe('ask');
      expect((store.get().pluginSettings as Record<string, unknown>).polluted).toBeUndefined();
      await expect(store.setToolPermission('demo', 'constructor', 'auto')).rejects.toThrow('"constructor" cannot be a tool name');
      await expect(store.setPluginPermission('__proto__', 'auto')).rejects.toThrow('"__proto__" cannot be a plugin name');
      expect(clean()).toBe(true);
    } finally {
      removeDir(d);
    }
  });

  test('a manifest cannot name a plugin, tool or setting "constructor" / "prototype"', () => {
    const base = { name: 'demo', displayName: 'Demo', description: 'd', version: '1.0.0', urlPatterns: ['https://a.example/*'], tools: [{ name: 'ping', description: 'p', inputSchema: { type: 'object' } }] };
    const tool = parseToolsJson({ ...base, tools: [{ name: 'constructor', description: 'p', inputSchema: { type: 'object' } }] });
    expect(tool.ok).toBe(false);
    if (!tool.ok) expect(tool.error).toContain('"constructor" cannot be a tool name');
    const plugin = parseToolsJson({ ...base, name: 'prototype' });
    expect(plugin.ok).toBe(false);
    if (!plugin.ok) expect(plugin.error).toContain('"prototype" cannot be a plugin name');
    // A "constructor" setting is refused or dropped, never kept as a field.
    const setting = parseToolsJson({ ...base, configSchema: JSON.parse('{"constructor":{"type":"string"},"__proto__":{"type":"string"}}') });
    if (setting.ok) {
      expect(Object.hasOwn(setting.value.configSchema ?? {}, 'constructor')).toBe(false);
      expect(Object.hasOwn(setting.value.configSchema ?? {}, '__proto__')).toBe(false);
    }
  });
});

describe('setup opencode and the client token', () => {
  test('an existing 0644 opencode.json that now holds the client token becomes 0600, and the output says so', async () => {
    const proj = join(dir, 'proj');
    mkdirSync(proj, { recursive: true });
    const file = join(proj, 'opencode.json');
    writeFileSync(file, JSON.stringify({ theme: 'x' }));
    chmodSync(file, 0o644);
    const r = await runCli(['setup', 'opencode', '--dir', proj, '--port', String(srv.port)], { configDir: dir });
    expect(r.code).toBe(0);
    expect(readFileSync(file, 'utf8')).toContain(srv.clientToken);
    expect(readFileSync(file, 'utf8')).not.toContain(srv.secret);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(r.stdout).toContain('from mode 0644 to 0600');
    // Run again: it stays 0600 and says so.
    const again = await runCli(['setup', 'opencode', '--dir', proj, '--port', String(srv.port)], { configDir: dir });
    expect(again.code).toBe(0);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(again.stdout).toContain('is mode 0600');
  });
});
