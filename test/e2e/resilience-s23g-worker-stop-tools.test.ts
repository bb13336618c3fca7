/**
 * Chrome stops the extension's service worker (for real: CDP Target.closeTarget on its target)
 * while a plugin call and a page tool (WebMCP) call run, and while idle. Each running call ends at
 * once with extension_not_connected, not at the dispatch timeout; the next browser event starts
 * the worker, which reconnects; the page's tools are listed again for the MCP client (they went
 * with the old connection) and answer, and the plugin's tab is reported ready again and answers.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Page } from 'playwright-core';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';
import { connectMcp } from '../harness/fake-extension.ts';
import { writeFixturePlugin } from '../fixtures/ext-plugin/plugin.ts';

let h: BrowserHarness;
let mcp: Client;
let pluginParent = '';
let app: Page;
let shim: Page;
let shimTab = 0;

type CallResult = { isError?: boolean; content: { type: string; text?: string }[] };

async function stopWorker(): Promise<void> {
  const cdp = await h.context.browser()!.newBrowserCDPSession();
  try {
    const { targetInfos } = (await cdp.send('Target.getTargets')) as { targetInfos: { targetId: string; type: string; url: string }[] };
    const sw = targetInfos.find((t) => t.type === 'service_worker' && t.url.startsWith(`chrome-extension://${h.extensionId}/`));
    if (!sw) throw new Error('no extension service worker target');
    await cdp.send('Target.closeTarget', { targetId: sw.targetId });
  } finally {
    await cdp.detach().catch(() => {});
  }
}

/** Any extension event starts a stopped worker; a navigation in another tab is one. */
async function wakeWorker(): Promise<void> {
  const other = await h.context.newPage();
  await other.goto(h.fixtureUrl(`/pages/index.html?wake=${Date.now()}`));
  await h.waitForHealth((x) => x.extensionConnected === true, 'the restarted worker to reconnect', 60_000);
  await other.close();
}

const toolNames = async () => (await mcp.listTools()).tools.map((t) => t.name);
const fixtureReady = (x: any) => x.pluginDetails?.find((p: any) => p.name === 'fixture')?.tabState === 'ready';

beforeAll(async () => {
  pluginParent = mkdtempSync(join(tmpdir(), 'opentabs-worker-tools-'));
  h = await startBrowserHarness({
    localPlugins: [writeFixturePlugin(pluginParent)],
    permissions: { fixture: { default: 'auto' } },
    // Far beyond any wait here: a call that ended at its timeout would say timeout, which the tests tell apart.
    server: { limits: { dispatchTimeoutMs: 100_000 } },
  });
  await h.srv.ctx.config.setOriginPermission(new URL(h.fixtureBase).origin, 'auto');
  h.srv.ctx.catalog.rebuild();
  mcp = await connectMcp(h.url, h.srv.secret);
  app = await h.context.newPage();
  await app.goto(h.fixtureUrl('/pages/plugin-app.html'));
  shim = await h.context.newPage();
  await shim.goto(h.fixtureUrl('/pages/page-tools-shim.html'));
  shimTab = await h.tabIdOf(shim);
  await h.waitForHealth(fixtureReady, 'fixture tab ready', 30_000);
  await waitUntil(async () => (await toolNames()).includes(`tab${shimTab}_slow`), 'the page tools listed', 30_000);
}, 120_000);

afterAll(async () => {
  await mcp?.close().catch(() => {});
  await h?.stop();
  if (pluginParent) rmSync(pluginParent, { recursive: true, force: true });
});

describe('the service worker is stopped with plugin and page tool calls running, and while idle', () => {
  test('the running calls end with extension_not_connected; after the restart both kinds of tools are back and answer', async () => {
    const plugin = h.callTool('fixture_wait', { ms: 90_000 });
    const page = mcp.callTool({ name: `tab${shimTab}_slow`, arguments: { ms: 90_000 } }, undefined, { timeout: 150_000 }) as Promise<CallResult>;
    // Both calls running in the extension (no assertion rests on this).
    await Bun.sleep(1_000);
    await stopWorker();

    const [p, q] = await Promise.all([plugin, page]);
    expect(p.status).toBe(503);
    expect(p.body.error.code).toBe('extension_not_connected');
    expect(q.isError).toBe(true);
    expect(q.content[0]!.text).toContain('extension_not_connected');

    await wakeWorker();
    await waitUntil(async () => (await toolNames()).includes(`tab${shimTab}_createTodo`), 'the page tools listed again', 60_000);
    const made = (await mcp.callTool({ name: `tab${shimTab}_createTodo`, arguments: { title: 'after-restart' } })) as CallResult;
    expect(made.isError).toBeFalsy();
    expect(made.content.map((c) => c.text ?? '').join('\n')).toContain('after-restart');
    await h.waitForHealth(fixtureReady, 'the plugin tab reported ready again', 30_000);
    const echoed = await h.callTool('fixture_echo', { text: 'after' });
    expect(echoed.status).toBe(200);
  }, 240_000);

  test('stopped while idle: the page tools go from the list with the connection and come back with the worker', async () => {
    await stopWorker();
    await h.waitForHealth((x) => x.extensionConnected === false, 'the server to see the extension go', 30_000);
    expect(await toolNames()).not.toContain(`tab${shimTab}_createTodo`);
    await wakeWorker();
    await waitUntil(async () => (await toolNames()).includes(`tab${shimTab}_createTodo`), 'the page tools listed again', 60_000);
    const made = (await mcp.callTool({ name: `tab${shimTab}_listTodos`, arguments: {} })) as CallResult;
    expect(made.isError).toBeFalsy();
    expect(made.content.map((c) => c.text ?? '').join('\n')).toContain('after-restart');
    const echoed = await waitUntil(async () => {
      const r = await h.callTool('fixture_echo', { text: 'idle' });
      return r.status === 200 ? r : null;
    }, 'a plugin call after the idle restart', 30_000);
    expect(echoed.body.result.input).toEqual({ text: 'idle' });
  }, 240_000);
});
