/**
 * The real extension in headless Chromium against the real server: connection and /health,
 * reconnect after a server restart on the same port and config dir, and replacement by a newer
 * connection (the extension waits, then takes over again when the newer one leaves).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';
import { FakeExtension } from '../harness/fake-extension.ts';
import { BROWSER_TOOLS } from '../../server/tools/browser-catalog.ts';

let h: BrowserHarness;

beforeAll(async () => {
  h = await startBrowserHarness();
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

describe('extension connection', () => {
  test('install wrote the built extension, auth.json and server.json {port}', () => {
    const dir = join(h.configDir, 'extension');
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
    expect(manifest.manifest_version).toBe(3);
    expect(manifest.side_panel.default_path).toBe('sidepanel.html');
    expect(JSON.parse(readFileSync(join(dir, 'server.json'), 'utf8'))).toMatchObject({ port: h.srv.port });
    expect(JSON.parse(readFileSync(join(dir, 'auth.json'), 'utf8')).secret).toBe(h.srv.secret);
    for (const f of ['background.js', 'tab-bridge.js', 'sidepanel.html', 'sidepanel.js']) expect(existsSync(join(dir, f))).toBe(true);
    expect(h.extensionId).toMatch(/^[a-p]{32}$/);
  });

  test('/health reports the connected extension and every built-in tool', async () => {
    const health = await h.health();
    expect(health.extensionConnected).toBe(true);
    expect(health.extensionConnections).toBe(1);
    expect(health.browserToolNames).toEqual(expect.arrayContaining(BROWSER_TOOLS.map((t) => t.name)));
    const anon = await (await fetch(`${h.url}/health`)).json();
    expect(anon).toEqual({ status: 'ok' });
  });

  test('extension_get_state answers from the extension itself', async () => {
    const r = await h.callTool('extension_get_state');
    expect(r.status).toBe(200);
    const text = JSON.stringify(r.body.result);
    expect(text).toContain('connected');
  });

  test('reconnects after the server restarts on the same port and config dir', async () => {
    const port = h.srv.port;
    await h.stopServer();
    expect(await h.health()).toBeNull();
    await h.startServer();
    expect(h.srv.port).toBe(port);
    const health = await h.waitForHealth((x) => x.extensionConnected === true, 'the extension to reconnect', 20_000);
    expect(health.extensionConnections).toBe(1);
    const r = await h.callTool('browser_list_tabs');
    expect(r.status).toBe(200);
    expect(Array.isArray(r.body.result.tabs)).toBe(true);
  }, 40_000);

  test('a newer connection replaces the extension; the extension takes over again when it leaves', async () => {
    const fake = await FakeExtension.connect(h.url, h.srv.secret);
    try {
      fake.onDispatch('browser_list_tabs', () => ({ value: { tabs: [], from: 'fake' } }));
      const viaFake = await h.callTool('browser_list_tabs');
      expect(viaFake.status).toBe(200);
      expect(viaFake.body.result.from).toBe('fake');
      expect((await h.health()).extensionConnections).toBe(1);
      // The replaced extension must not fight back while the newer connection is alive.
      await new Promise((r) => setTimeout(r, 1500));
      expect(fake.ws.readyState).toBe(WebSocket.OPEN);
      expect((await h.callTool('browser_list_tabs')).body.result.from).toBe('fake');
    } finally {
      await fake.close();
    }
    await h.waitForHealth((x) => x.extensionConnected === true, 'the extension to take over again', 20_000);
    const real = await waitUntil(async () => {
      const r = await h.callTool('browser_list_tabs');
      return r.status === 200 && r.body.result.from === undefined ? r : null;
    }, 'browser_list_tabs answered by the real extension');
    expect(Array.isArray(real.body.result.tabs)).toBe(true);
  }, 40_000);
});
