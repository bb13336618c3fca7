/**
 * A plugin author's mistakes, through the real extension in Chromium, each answered with an error
 * naming the plugin, the tool and the problem (never the 30 s timeout or a "sign in" hint):
 * a result JSON cannot carry (over REST and MCP) or too large for the channel, a module that
 * throws only once it runs in the page, and a plugin removed while one of its calls (whose handler
 * ignores the signal) runs.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { buildPlugin, createPlugin } from '../../plugins/tooling/index.ts';
import { startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';
import { connectMcp } from '../harness/fake-extension.ts';
import { makeTempConfigDir } from '../harness/server.ts';
import { runCli } from '../integration/cli-support.ts';

setDefaultTimeout(120_000);

const APP = '<!doctype html><html><head><title>Author app</title></head><body>app</body></html>';
const root = makeTempConfigDir('opentabs-author-e2e-');
let h: BrowserHarness;
let mcp: Client;

/** A scaffold whose tools are replaced by `tools` (source text of defineTool calls). */
async function plugin(name: string, tools: string, prelude = ''): Promise<string> {
  const { dir } = await createPlugin(name, join(root, name), { urlPattern: 'http://127.0.0.1/*' });
  writeFileSync(
    join(dir, 'src/index.ts'),
    `import * as v from 'valibot';
import { definePlugin, defineTool } from '@opentabs/sdk';
${prelude}
export default definePlugin({
  name: '${name}',
  displayName: '${name}',
  description: 'Author mistakes',
  urlPatterns: ['http://127.0.0.1/*'],
  isReady: () => true,
  tools: [${tools}],
});
`,
  );
  await buildPlugin(dir, { reload: false, log: () => {} });
  return dir;
}

beforeAll(async () => {
  const odd = await plugin(
    'odd',
    `defineTool({ name: 'cycle', description: 'a cycle', input: v.object({}), output: v.unknown(), handle: () => { const o: Record<string, unknown> = {}; o.self = o; return o; } }),
     defineTool({ name: 'huge', description: '9 MB', input: v.object({}), output: v.unknown(), handle: () => ({ s: 'x'.repeat(9 * 1024 * 1024) }) }),
     defineTool({ name: 'leak', description: 'returns what the page serves', input: v.object({ fail: v.boolean() }), output: v.unknown(), handle: async (i) => { const t = await (await fetch('/shows-secret')).text(); if (i.fail) throw new Error('the page said ' + t); return { t }; } }),
     defineTool({ name: 'stuck', description: 'ignores its signal', input: v.object({}), output: v.unknown(), handle: (_i, ctx) => { ctx.log.info('stuck started'); return new Promise(() => {}); } })`,
  );
  // Loads where the build reads it; throws in a page (e.g. top-level code reading the page).
  const broken = await plugin(
    'broken',
    `defineTool({ name: 'ping', description: 'ping', input: v.object({}), output: v.unknown(), handle: () => 'pong' })`,
    `if (typeof window !== 'undefined') throw new Error('widget root missing at load');`,
  );
  expect(readFileSync(join(broken, 'dist/adapter.js'), 'utf8')).toContain('widget root missing at load');
  h = await startBrowserHarness({
    localPlugins: [odd, broken],
    permissions: { odd: { default: 'auto' }, broken: { default: 'auto' } },
    routes: (req) => {
      const path = new URL(req.url).pathname;
      if (path === '/app') return new Response(APP, { headers: { 'content-type': 'text/html; charset=utf-8' } });
      // A page of the app that shows the OpenTabs secret (pasted into a ticket, a config viewer …).
      if (path === '/shows-secret') return new Response(`token: ${h.srv.secret}`);
      return undefined;
    },
  });
  const page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/app'));
  await h.waitForHealth((x) => x.pluginDetails?.find((p: any) => p.name === 'odd')?.tabState === 'ready', 'odd ready in the app tab');
  mcp = await connectMcp(h.url, h.srv.secret);
}, 180_000);

afterAll(async () => {
  await mcp?.close().catch(() => {});
  await h?.stop();
  rmSync(root, { recursive: true, force: true });
});

describe('plugin author mistakes, through the real extension', () => {
  test('a cyclic result: REST gets unserializable_result naming the tool', async () => {
    const r = await h.callTool('odd_cycle');
    expect(r.body.error).toMatchObject({ code: 'unserializable_result', category: 'internal' });
    expect(r.body.error.message).toContain('odd_cycle returned a value that cannot be sent as JSON');
  });

  test('a cyclic result: MCP gets an isError result with the same message', async () => {
    const r = (await mcp.callTool({ name: 'odd_cycle', arguments: {} })) as { isError?: boolean; content: { type: string; text: string }[] };
    expect(r.isError).toBe(true);
    expect(r.content[0]!.text).toContain('odd_cycle returned a value that cannot be sent as JSON');
  });

  test('a result over the size limit: result_too_large naming the tool', async () => {
    const r = await h.callTool('odd_huge');
    expect(r.body.error).toMatchObject({ code: 'result_too_large' });
    expect(r.body.error.message).toContain('odd_huge returned 9437192 bytes of JSON, over the');
  });

  test('a module that throws in the page: every call says the adapter failed to load, and why', async () => {
    const r = await h.callTool('broken_ping');
    expect(r.body.error).toMatchObject({ code: 'adapter_load_failed', retryable: false });
    expect(r.body.error.message).toContain('broken_ping cannot run: the broken adapter failed to load in this page (widget root missing at load)');
    expect(r.body.error.message).not.toMatch(/sign in|log in/);
  });

  test('a module that throws in the page: /health and `opentabs status` show the tab as failed to load, not ready', async () => {
    const health = await h.waitForHealth((x) => x.pluginDetails?.find((p: any) => p.name === 'broken')?.tabs?.[0]?.loadError !== undefined, 'the broken plugin reported as failed to load');
    const broken = health.pluginDetails.find((p: any) => p.name === 'broken');
    expect(broken.tabState).toBe('unavailable');
    expect(broken.tabs[0]).toMatchObject({ ready: false, loadError: 'widget root missing at load' });
    const status = await runCli(['status', '--port', String(h.srv.port)], { configDir: h.configDir });
    expect(status.stdout).toContain('failed to load: widget root missing at load');
    const panel = await h.openSidePanel();
    try {
      const line = panel.locator(`[data-testid="load-error-broken-${broken.tabs[0].tabId}"]`);
      await line.waitFor({ timeout: 15_000 });
      expect(await line.textContent()).toContain('widget root missing at load');
    } finally {
      await panel.close().catch(() => {});
    }
  });

  test('a plugin result or error carrying the OpenTabs secret reaches the agent with it redacted', async () => {
    const ok = await h.callTool('odd_leak', { fail: false });
    expect(ok.status).toBe(200);
    expect(ok.body.result).toEqual({ t: 'token: [redacted: opentabs secret]' });
    const failed = await h.callTool('odd_leak', { fail: true });
    expect(failed.body.error.message).toContain('the page said token: [redacted: opentabs secret]');
    expect(JSON.stringify([ok.body, failed.body])).not.toContain(h.srv.secret);
  });

  test('a plugin removed while its call runs: the call ends with adapter_unloaded, not the timeout', async () => {
    const pending = h.callTool('odd_stuck');
    // The handler has started in the page (its log line reached the server) before the plugin goes.
    await h.waitForHealth((x) => x.pluginDetails?.find((p: any) => p.name === 'odd')?.logBufferSize > 0, 'the stuck call running in the page');
    const removed = await runCli(['plugin', 'remove', 'odd', '--port', String(h.srv.port)], { configDir: h.configDir });
    expect({ code: removed.code, stderr: removed.stderr }).toMatchObject({ code: 0 });
    const r = await pending;
    expect(r.body.error).toMatchObject({ code: 'adapter_unloaded' });
    expect(r.body.error.message).toContain('odd_stuck was stopped: the odd adapter was unloaded from this page');
  });
});
