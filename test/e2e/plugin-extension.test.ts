/**
 * The testapp plugin through the REAL extension in headless Chromium (the harness in
 * test/harness/browser.ts): adapter injection into the fixture app's tab, every tool over REST,
 * progress/logs/errors/cancel over MCP, settings, a tab navigating away (→ closed), hot reload in
 * dev mode, a broken plugin beside a good one, and install from an npm tarball without scripts.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';
import { startFixtureApp, FIXTURE_USER, type FixtureApp } from '../fixtures/app/server.ts';
import { buildTestapp, TESTAPP_DIR } from '../fixtures/app/testapp.ts';
import { connectMcp } from '../harness/fake-extension.ts';
import { buildPlugin, createPlugin } from '../../plugins/tooling/index.ts';

// npm, Chromium and child processes on a shared 2-core machine: generous per-test limit.
setDefaultTimeout(120_000);

const work = mkdtempSync(join(tmpdir(), 'opentabs-plugin-ext-'));
let app: FixtureApp;
afterAll(async () => {
  await app?.stop();
  rmSync(work, { recursive: true, force: true });
});
beforeAll(async () => {
  await buildTestapp();
  app = await startFixtureApp();
});

const health = (h: BrowserHarness): Promise<Record<string, any>> => h.health();

/** Poll /health until the plugin's tab state is `state` (bounded). */
async function waitTabState(h: BrowserHarness, plugin: string, state: string): Promise<Record<string, any>> {
  let detail: Record<string, any> | undefined;
  for (let i = 0; i < 300; i++) {
    detail = (await health(h)).pluginDetails?.find((p: { name: string }) => p.name === plugin);
    if (detail?.tabState === state) return detail;
    await Bun.sleep(50);
  }
  throw new Error(`${plugin} never reached tab state ${state} (last: ${JSON.stringify(detail)})`);
}

async function login(context: BrowserContext): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${app.url}/login`);
  await page.fill('#username', FIXTURE_USER.username);
  await page.fill('#password', FIXTURE_USER.password);
  await Promise.all([page.waitForURL(`${app.url}/app`), page.click('#login')]);
  return page;
}

/** REST call through the harness: the JSON body as text (result or error). */
const text = (r: { body: unknown } | string) => (typeof r === 'string' ? r : JSON.stringify(r.body));

describe('testapp through the real extension', () => {
  let h: BrowserHarness;
  let page: Page;
  let mcp: Client;
  const broken = join(work, 'broken');

  beforeAll(async () => {
    mkdirSync(join(broken, 'dist'), { recursive: true });
    writeFileSync(join(broken, 'package.json'), JSON.stringify({ name: 'opentabs-plugin-broken', version: '1.0.0' }));
    writeFileSync(join(broken, 'dist', 'tools.json'), '{"name":"broken"');
    h = await startBrowserHarness({ localPlugins: [TESTAPP_DIR, broken], permissions: { testapp: { default: 'auto' } } });
    page = await login(h.context);
    await waitTabState(h, 'testapp', 'ready');
    mcp = await connectMcp(h.srv.url, h.srv.secret);
    await mcp.setLoggingLevel('debug');
  }, 120_000);
  afterAll(async () => {
    await mcp?.close().catch(() => {});
    await h?.stop();
  });

  test('a broken plugin beside the good one: reported in /health, the good one works', async () => {
    const hl = await health(h);
    expect(hl.failedPlugins).toEqual([{ path: broken, name: 'broken', error: expect.stringMatching(/dist\/tools.json .*not valid JSON/) }]);
    expect(text(await h.callTool('testapp_whoami'))).toContain('"pageUser":"alice"');
  });

  test('REST results and errors have the documented shapes', async () => {
    const ok = await h.callTool('testapp_get_item', { id: 2 });
    expect(ok.status).toBe(200);
    expect(ok.body.result).toMatchObject({ id: 2, title: 'Item 02' });
    const rate = await h.callTool('testapp_trigger_error', { kind: 'rate_limited' });
    expect(rate.status).toBeGreaterThanOrEqual(400);
    expect(rate.body.error).toMatchObject({ category: 'rate_limited', retryable: true, retryAfterMs: 7000 });
    expect(rate.body.error.message).toContain('Slow down');
    const bad = await h.callTool('testapp_get_item', { id: 0 });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_arguments');
  });

  test('every tool over REST', async () => {
    expect(text(await h.callTool('testapp_list_items', { limit: 2 }))).toContain('Item 02');
    expect(text(await h.callTool('testapp_get_item', { id: 3 }))).toContain('Item 03');
    const created = text(await h.callTool('testapp_create_item', { title: 'from extension' }));
    const id = Number(/"id":(\d+)/.exec(created)![1]);
    expect(app.items.some((i) => i.id === id && i.title === 'from extension')).toBe(true);
    expect(text(await h.callTool('testapp_delete_item', { id }))).toContain('"deleted":true');
    expect(text(await h.callTool('testapp_export_items', { steps: 2, delayMs: 10 }))).toContain('"exported":2');
    expect(text(await h.callTool('testapp_wait_for_element', { selector: '#late' }))).toContain('late content');
    expect(text(await h.callTool('testapp_trigger_error', { kind: 'not_found' }))).toContain('not_found');
    expect(text(await h.callTool('testapp_bad_output'))).toContain('does not match its output schema');
    expect(text(await h.callTool('testapp_whoami'))).toContain('"theme":"dark"');
  });

  test('progress and logs reach the MCP client', async () => {
    const logs: string[] = [];
    mcp.setNotificationHandler(LoggingMessageNotificationSchema, async (n) => {
      logs.push(n.params.level);
    });
    const progress: number[] = [];
    const r = await mcp.callTool({ name: 'testapp_export_items', arguments: { steps: 3, delayMs: 20 } }, undefined, { onprogress: (p) => progress.push(p.progress) });
    expect(r.isError).toBe(false);
    expect(progress).toEqual([1, 2, 3]);
    for (let i = 0; i < 100 && logs.length < 5; i++) await Bun.sleep(20);
    expect(logs).toContain('info');
    expect(logs).toContain('warning');
  });

  test('each error category arrives as a useful tool error', async () => {
    for (const [kind, category] of [['auth', 'auth'], ['not_found', 'not_found'], ['rate_limited', 'rate_limited'], ['validation', 'validation'], ['internal', 'internal'], ['timeout', 'timeout']]) {
      const r = (await mcp.callTool({ name: 'testapp_trigger_error', arguments: { kind, timeoutMs: 300 } })) as { isError?: boolean; structuredContent?: any };
      expect(r.isError).toBe(true);
      expect(r.structuredContent.error.category).toBe(category);
    }
  });

  test('cancelling an MCP call aborts the request in the page', async () => {
    const before = app.stats.slowAborted;
    const ac = new AbortController();
    const seen = app.stats.requests['/api/slow'] ?? 0;
    const call = mcp.callTool({ name: 'testapp_export_items', arguments: { steps: 5, delayMs: 5000 } }, undefined, { signal: ac.signal }).catch((e) => e);
    for (let i = 0; i < 200 && (app.stats.requests['/api/slow'] ?? 0) === seen; i++) await Bun.sleep(25);
    ac.abort('stop');
    expect(await call).toBeInstanceOf(Error);
    for (let i = 0; i < 200 && app.stats.slowAborted === before; i++) await Bun.sleep(25);
    expect(app.stats.slowAborted).toBe(before + 1);
  });

  test('settings change behaviour', async () => {
    await fetch(`${h.srv.url}/plugin-settings`, {
      method: 'POST',
      headers: { ...h.srv.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ plugin: 'testapp', settings: { sortOrder: 'desc', pageSize: 2, includeArchived: true } }),
    });
    const r = text(await h.callTool('testapp_list_items'));
    expect(r.indexOf('Item 12')).toBeGreaterThanOrEqual(0);
    expect(r).not.toContain('Item 01');
  });

  test('a tab navigating away → closed; back → ready', async () => {
    await page.goto('about:blank');
    await waitTabState(h, 'testapp', 'closed');
    await page.goto(`${app.url}/app`);
    await waitTabState(h, 'testapp', 'ready');
  });
});

describe('dev mode and install', () => {
  test('hot reload: a rebuilt plugin is live in the browser and in tools/list without a restart', async () => {
    const { dir } = await createPlugin('hotapp', join(work, 'hotapp'), { urlPattern: 'http://127.0.0.1/*' });
    await buildPlugin(dir, { reload: false, log: () => {} });
    const h = await startBrowserHarness({ server: { dev: true }, localPlugins: [dir], permissions: { hotapp: { default: 'auto' } } });
    try {
      await login(h.context);
      await waitTabState(h, 'hotapp', 'ready');
      expect(text(await h.callTool('hotapp_get_page_info'))).toContain('Fixture App');
      const src = join(dir, 'src', 'index.ts');
      writeFileSync(src, readFileSync(src, 'utf8').replace("name: 'get_page_info'", "name: 'get_info'").replace('title: document.title', "title: 'v2 ' + document.title"));
      await buildPlugin(dir, { reload: false, log: () => {} });
      let r = '';
      for (let i = 0; i < 100 && !r.includes('v2 Fixture App'); i++) {
        await Bun.sleep(50);
        r = text(await h.callTool('hotapp_get_info'));
      }
      expect(r).toContain('v2 Fixture App');
      const mcp = await connectMcp(h.srv.url, h.srv.secret);
      try {
        expect((await mcp.listTools()).tools.map((t) => t.name)).toContain('hotapp_get_info');
      } finally {
        await mcp.close();
      }
    } finally {
      await h.stop();
    }
  });

  test('install from an npm tarball: scripts never run, tools start at ask, then work when allowed', async () => {
    const packDir = join(work, 'pack');
    mkdirSync(packDir, { recursive: true });
    const p = spawnSync('npm', ['pack', '--pack-destination', packDir, '--ignore-scripts'], { cwd: TESTAPP_DIR, encoding: 'utf8', timeout: 60_000 });
    expect(p.status).toBe(0);
    const tarball = join(packDir, readdirSync(packDir).find((f) => f.endsWith('.tgz'))!);
    const marker = join(work, 'postinstall-marker');
    process.env.OPENTABS_POSTINSTALL_MARKER = marker;
    const h = await startBrowserHarness({});
    try {
      await h.srv.ctx.plugins.install(tarball);
      expect(existsSync(marker)).toBe(false);
      expect(h.srv.ctx.plugins.get('testapp')?.source).toBe('npm');
      const tools = (await (await fetch(`${h.srv.url}/tools?plugin=testapp`, { headers: h.srv.auth })).json()) as { tools: { permission: string }[] };
      expect(tools.tools.every((t) => t.permission === 'ask')).toBe(true);
      await h.srv.ctx.config.setPluginPermission('testapp', 'auto');
      await h.srv.ctx.reload();
      await login(h.context);
      await waitTabState(h, 'testapp', 'ready');
      expect(text(await h.callTool('testapp_whoami'))).toContain('"username":"alice"');
    } finally {
      delete process.env.OPENTABS_POSTINSTALL_MARKER;
      await h.stop();
    }
  });
});
