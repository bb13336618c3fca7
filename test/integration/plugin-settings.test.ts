/**
 * POST /plugin-settings with a real plugin folder written by hand (on-disk format of
 * docs/internals.md) and listed in config.json localPlugins before start.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempConfigDir, removeDir, startTestServer, type TestServer } from '../harness/server.ts';
import { writeTestPlugin } from '../harness/fake-extension.ts';

let dir: string;
let srv: TestServer;

const writePlugin = (root: string): string =>
  writeTestPlugin(
    root,
    'demo',
    [
      { name: 'ping', description: 'Ping', inputSchema: { type: 'object', properties: {} } },
      { name: 'echo', description: 'Echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } },
    ],
    { baseUrl: { type: 'url', label: 'Base URL', required: true }, pageSize: { type: 'number', default: 20 } },
    { iconSvg: '<svg xmlns="http://www.w3.org/2000/svg"></svg>' },
  );

beforeAll(async () => {
  dir = makeTempConfigDir();
  const pluginDir = writePlugin(dir);
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ localPlugins: [pluginDir], keepMe: 'yes' }));
  srv = await startTestServer({ configDir: dir, limits: { adminRate: { max: 1000, windowMs: 60_000 } } });
});
afterAll(async () => {
  await srv?.stop();
  removeDir(dir);
});

const post = (body: unknown) =>
  fetch(`${srv.url}/plugin-settings`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('/plugin-settings', () => {
  test('the hand-written plugin is discovered and listed in /health', async () => {
    const h = (await (await fetch(`${srv.url}/health`, { headers: srv.auth })).json()) as any;
    expect(h.plugins).toBe(1);
    expect(h.pluginDetails[0]).toMatchObject({
      name: 'demo',
      displayName: 'Demo',
      toolCount: 2,
      tools: ['demo_ping', 'demo_echo'],
      tabState: 'closed',
      tabs: [],
      source: 'local',
      sdkVersion: '0.1.0',
      logBufferSize: 0,
    });
    expect(h.pluginDetails[0].iconSvg).toContain('<svg');
    expect(h.pluginToolCount).toBe(2);
    expect(h.toolCount).toBe(h.browserToolCount + 2);
  });

  test('valid settings are saved to config.json (unknown keys kept) and pushed to the extension', async () => {
    let syncs = 0;
    const hub = srv.ctx.hub as unknown as { sendSyncFull(): void };
    const orig = hub.sendSyncFull.bind(hub);
    hub.sendSyncFull = () => {
      syncs++;
      orig();
    };
    const versionBefore = srv.ctx.catalog.current().version;
    try {
      const r = await post({ plugin: 'demo', settings: { baseUrl: 'https://demo.example', pageSize: 50 } });
      expect(r.status).toBe(200);
      expect(await r.json()).toEqual({ ok: true, plugin: 'demo' });
    } finally {
      hub.sendSyncFull = orig;
    }
    expect(syncs).toBeGreaterThanOrEqual(1);
    expect(srv.ctx.catalog.current().version).toBeGreaterThan(versionBefore);
    const cfg = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
    expect(cfg.pluginSettings.demo).toEqual({ baseUrl: 'https://demo.example', pageSize: 50 });
    expect(cfg.keepMe).toBe('yes');
    expect(srv.ctx.plugins.resolvedSettings('demo')).toMatchObject({ baseUrl: 'https://demo.example', pageSize: 50 });
  });

  test('unknown plugin: 404', async () => {
    const r = await post({ plugin: 'ghost', settings: {} });
    expect(r.status).toBe(404);
    expect(((await r.json()) as any).error.code).toBe('unknown_plugin');
  });

  test('bad request fields: 400 naming the field', async () => {
    const cases: [unknown, string][] = [
      [[], 'Body'],
      ['str', 'Body'],
      [{ settings: {} }, '"plugin"'],
      [{ plugin: 3, settings: {} }, '"plugin"'],
      [{ plugin: '', settings: {} }, '"plugin"'],
      [{ plugin: 'demo' }, '"settings"'],
      [{ plugin: 'demo', settings: [1] }, '"settings"'],
      [{ plugin: 'demo', settings: null }, '"settings"'],
    ];
    for (const [body, field] of cases) {
      const r = await post(body);
      expect(r.status).toBe(400);
      expect(((await r.json()) as any).error.message).toContain(field);
    }
  });

  test('values that fail the configSchema: 400 naming the setting', async () => {
    const r = await post({ plugin: 'demo', settings: { pageSize: 'lots' } });
    expect(r.status).toBe(400);
    const body = (await r.json()) as any;
    expect(body.error.code).toBe('invalid_settings');
    expect(body.error.message).toContain('pageSize');
  });
});
