/**
 * The laptop sleeps and wakes: the extension's WebSocket is dead but was never closed (no FIN).
 * A TCP proxy between the real extension and the server freezes the connection (it stops
 * forwarding both ways and closes nothing). The agent's call sent to the dead socket fails with an
 * error naming the silent connection instead of waiting out its timeout; the extension notices on
 * its own (a ping nobody answers) when the user is back in the browser, reconnects on a new
 * connection, and the next call works.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';
import { startFreezeProxy, type FreezeProxy } from '../harness/freeze-proxy.ts';

let h: BrowserHarness;
let proxy: FreezeProxy;

const wsThroughProxy = () => proxy.live().filter((c) => c.head.startsWith('GET /ws ')).length;

beforeAll(async () => {
  // A call's own timeout far beyond the liveness timeout: the test tells the two apart by the error.
  h = await startBrowserHarness({ server: { limits: { dispatchTimeoutMs: 100_000 } } });
  proxy = await startFreezeProxy(h.srv.port);
  // The extension connects wherever server.json in its folder says: the proxy from now on.
  const file = join(h.configDir, 'extension', 'server.json');
  writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), port: proxy.port }));
  h.srv.ctx.hub.dropForSecretRotation();
  await waitUntil(async () => (await h.health())?.extensionConnected === true && wsThroughProxy() === 1, 'the extension to connect through the proxy', 30_000);
}, 120_000);

afterAll(async () => {
  proxy?.stop();
  await h?.stop();
});

describe('the socket dies without closing (sleep and wake)', () => {
  test('the call fails naming the dead connection; the extension notices, reconnects, and the next call works', async () => {
    expect((await h.callTool('browser_list_tabs')).status).toBe(200);
    const opened = proxy.opened;

    expect(proxy.freeze()).toBeGreaterThan(0);
    const r = await h.callTool('browser_list_tabs');
    expect(r.status).not.toBe(200);
    // The server finds the socket silent first; when the extension's own keepalive found it first, its new connection replaced it.
    expect(['extension_not_connected', 'extension_replaced']).toContain(r.body.error.code);
    expect(r.body.error.message).toMatch(/stopped answering|replaced by a newer one/);

    // The user is back in the browser: the extension pings its quiet socket, gets no answer, reconnects.
    const page = await h.context.newPage();
    await page.goto(h.fixtureUrl('/pages/index.html'));
    const stateNow = async () => (await h.serviceWorker()).evaluate(() => (globalThis as any).__opentabs.conn.state);
    await waitUntil(async () => (await h.health())?.extensionConnected === true && wsThroughProxy() === 1 && proxy.opened > opened, 'the extension to reconnect on a new connection', 60_000, 250).catch(async (err) => {
      throw new Error(`${(err as Error).message}; the extension says ${JSON.stringify(await stateNow())}; proxy ${JSON.stringify(proxy.live())}`);
    });
    const state = await stateNow();
    expect(state.status).toBe('connected');
    const again = await h.callTool('browser_list_tabs');
    expect(again.status).toBe(200);
    expect(JSON.stringify(again.body.result)).toContain('/pages/index.html');
  }, 120_000);
});
