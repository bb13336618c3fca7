/**
 * The testapp plugin end to end through the real server over MCP and REST, with the real adapter
 * running in Chromium on the fixture app. The extension's part (WebSocket ↔ page channel) is
 * played by a page-backed FakeExtension that forwards tool.dispatch / tool.cancel into the page
 * as BridgeToPage events and relays PageToBridge progress/log/result back — the same contract
 * the real extension bridge implements (its own e2e tests live in test/e2e/plugin-extension.test.ts).
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { readFileSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startFixtureApp, FIXTURE_USER, type FixtureApp } from '../fixtures/app/server.ts';
import { buildTestapp, TESTAPP_DIR } from '../fixtures/app/testapp.ts';
import { BRIDGE_TO_PAGE_EVENT, PAGE_TO_BRIDGE_EVENT, type PageToBridge } from '../../server/protocol/page-channel.ts';
import { startTestServer, makeTempConfigDir, removeDir, type TestServer } from '../harness/server.ts';
import { FakeExtension, FakeToolError, connectMcp, writeTestConfig, type DispatchApi, type DispatchParams } from '../harness/fake-extension.ts';

// npm, Chromium and child processes on a shared 2-core machine: generous per-test limit.
setDefaultTimeout(90_000);

const CHROMIUM = process.env.OPENTABS_CHROMIUM ?? '/usr/bin/chromium';
let app: FixtureApp;
let browser: Browser;
let page: Page;
let srv: TestServer;
let configDir = '';
let ext: FakeExtension;
let mcp: Client;
const logs: { level: string; data: unknown }[] = [];

type Pending = { api: DispatchApi; resolve: (v: { value: unknown }) => void; reject: (e: unknown) => void };
const pending = new Map<string, Pending>();

function fromPage(msg: PageToBridge): void {
  if (msg.type === 'registered') return;
  const p = msg.id ? pending.get(msg.id) : undefined;
  if (!p) return;
  if (msg.type === 'progress') p.api.progress(msg.progress, msg.total, msg.message);
  else if (msg.type === 'log') p.api.log(msg.level, msg.message, msg.data);
  else if (msg.type === 'result') {
    pending.delete(msg.id);
    if (msg.ok) p.resolve({ value: msg.value });
    else {
      const { code, message, ...rest } = msg.error;
      p.reject(new FakeToolError(code, message, rest));
    }
  }
}

const toPage = (detail: unknown) =>
  page.evaluate(([ev, d]) => document.dispatchEvent(new CustomEvent(ev!, { detail: d })), [BRIDGE_TO_PAGE_EVENT, JSON.stringify(detail)] as const);

/** What the extension's bridge does for one plugin dispatch. */
function forwardToPage(params: DispatchParams, api: DispatchApi): Promise<{ value: unknown }> {
  const id = params.dispatchId;
  const done = new Promise<{ value: unknown }>((resolve, reject) => pending.set(id, { api, resolve, reject }));
  void api.cancelled.then((reason) => toPage({ type: 'cancel', id, plugin: params.plugin, reason }));
  void toPage({ type: 'call', id, plugin: params.plugin, tool: params.tool, input: params.input, config: params.settings ?? {} });
  return done;
}

beforeAll(async () => {
  const built = await buildTestapp();
  app = await startFixtureApp();
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
  page = await browser.newPage();
  await page.goto(`${app.url}/login`);
  await page.fill('#username', FIXTURE_USER.username);
  await page.fill('#password', FIXTURE_USER.password);
  await Promise.all([page.waitForURL(`${app.url}/app`), page.click('#login')]);
  await page.waitForFunction(() => (globalThis as Record<string, unknown>).__APP__ !== undefined);
  await page.exposeBinding('__toTest', (_src, detail: string) => fromPage(JSON.parse(detail)));
  await page.evaluate((ev) => document.addEventListener(ev, (e) => (globalThis as unknown as { __toTest(d: string): void }).__toTest((e as CustomEvent).detail)), PAGE_TO_BRIDGE_EVENT);

  configDir = makeTempConfigDir('opentabs-plugin-mcp-');
  writeTestConfig(configDir, { localPlugins: [TESTAPP_DIR], permissions: { testapp: { default: 'auto' } } });
  srv = await startTestServer({ configDir });
  // Inject exactly the adapter file the server wrote (hash filled in), from the app's origin.
  const info = srv.ctx.plugins.get('testapp')!;
  const adapter = readFileSync(`${srv.configDir}/extension/${info.adapterFile}`, 'utf8');
  await page.route('**/__adapter.js', (route) => route.fulfill({ contentType: 'text/javascript', body: adapter }));
  await page.addScriptTag({ url: '/__adapter.js' });
  expect(built.tools).toContain('testapp_whoami');

  ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.defaultHandler = (p, api) => (p.plugin === 'testapp' ? forwardToPage(p, api) : Promise.reject(new FakeToolError('not_available', 'not in this test')));
  ext.notify('tab.syncAll', { plugins: { testapp: { state: 'ready', tabs: [{ tabId: 1, url: `${app.url}/app`, title: 'Fixture App', ready: true }] } } });
  mcp = await connectMcp(srv.url, srv.secret);
  await mcp.setLoggingLevel('debug');
  mcp.setNotificationHandler(LoggingMessageNotificationSchema, async (n) => {
    logs.push({ level: n.params.level, data: n.params.data });
  });
}, 90_000);

afterAll(async () => {
  await mcp?.close().catch(() => {});
  await ext?.close().catch(() => {});
  await srv?.stop();
  if (configDir) removeDir(configDir);
  await browser?.close();
  await app?.stop();
});

type CallResult = { isError?: boolean; structuredContent?: Record<string, any>; content: { type: string; text?: string }[] };
const callMcp = async (name: string, args: Record<string, unknown> = {}, opts: Parameters<Client['callTool']>[2] = {}) =>
  (await mcp.callTool({ name, arguments: args }, undefined, opts)) as CallResult;

const callRest = async (name: string, args: Record<string, unknown> = {}) => {
  const r = await fetch(`${srv.url}/tools/${name}/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: args }) });
  return { status: r.status, body: (await r.json()) as Record<string, any> };
};

describe('testapp through MCP and REST', () => {
  test('tools/list has every testapp tool with its JSON Schema', async () => {
    const { tools } = await mcp.listTools();
    const mine = tools.filter((t) => t.name.startsWith('testapp_')).map((t) => t.name).sort();
    expect(mine).toEqual(['bad_output', 'create_item', 'delete_item', 'export_items', 'get_item', 'list_items', 'trigger_error', 'wait_for_element', 'whoami'].map((n) => `testapp_${n}`));
    const get = tools.find((t) => t.name === 'testapp_get_item')!;
    expect(get.inputSchema).toMatchObject({ type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] });
    // The listing leaves out the trivial `minimum: 1`; the full schema still validates calls.
    const zero = await callRest('testapp_get_item', { id: 0 });
    expect(zero.status).toBe(400);
    expect(zero.body.error.path).toBe('/id');
  });

  test('whoami (MCP) and list/get/create/delete items (REST and MCP)', async () => {
    const who = await callMcp('testapp_whoami');
    expect(who.isError).toBe(false);
    expect(who.structuredContent).toMatchObject({ username: 'alice', pageUser: 'alice', cookieUser: 'alice', theme: 'dark', tabId: 'tab-alice', servedTitle: 'Fixture App' });

    const list = await callRest('testapp_list_items', { limit: 2 });
    expect(list.status).toBe(200);
    expect(JSON.stringify(list.body)).toContain('"Item 01"');

    const created = await callMcp('testapp_create_item', { title: 'via MCP' });
    expect(created.isError).toBe(false);
    const id = created.structuredContent!.id as number;
    expect(app.items.find((i) => i.id === id)?.title).toBe('via MCP');
    const got = await callRest('testapp_get_item', { id });
    expect(JSON.stringify(got.body)).toContain('"via MCP"');
    expect((await callMcp('testapp_delete_item', { id })).structuredContent).toEqual({ deleted: true, id });
    expect(app.items.find((i) => i.id === id)).toBeUndefined();
    const el = await callMcp('testapp_wait_for_element', { selector: '#late' });
    expect(el.structuredContent).toEqual({ text: 'late content' });
  });

  test('progress reaches the MCP client; logs reach it as notifications/message', async () => {
    logs.length = 0;
    const progress: { progress: number; total?: number; message?: string }[] = [];
    const r = await callMcp('testapp_export_items', { steps: 3, delayMs: 20 }, { onprogress: (p) => progress.push(p) });
    expect(r.structuredContent).toEqual({ steps: 3, exported: 3 });
    expect(progress.map((p) => [p.progress, p.total])).toEqual([
      [1, 3],
      [2, 3],
      [3, 3],
    ]);
    expect(progress[0]!.message).toBe('step 1 of 3');
    for (let i = 0; i < 100 && logs.length < 5; i++) await Bun.sleep(20);
    expect(logs.map((l) => l.level)).toEqual(['info', 'debug', 'debug', 'debug', 'warning']);
    expect(JSON.stringify(logs[0]!.data)).toContain('export started');
    expect(srv.ctx.plugins.logBufferSize('testapp')).toBeGreaterThanOrEqual(5);
  });

  const categories: [string, string, boolean][] = [
    ['auth', 'auth', false],
    ['forbidden', 'auth', false],
    ['not_found', 'not_found', false],
    ['rate_limited', 'rate_limited', true],
    ['validation', 'validation', false],
    ['internal', 'internal', true],
    ['timeout', 'timeout', true],
    ['thrown', 'internal', false],
  ];
  for (const [kind, category, retryable] of categories) {
    test(`error ${kind} arrives as a useful tool error (${category})`, async () => {
      const r = await callMcp('testapp_trigger_error', { kind, timeoutMs: 300 });
      expect(r.isError).toBe(true);
      const err = r.structuredContent!.error;
      expect(err.category).toBe(category);
      expect(err.retryable).toBe(retryable);
      expect(r.content[0]!.text!.length).toBeGreaterThan(20);
      if (kind === 'rate_limited') expect(err.retryAfterMs).toBe(7000);
    });
  }

  test('errors over REST carry the same fields', async () => {
    const r = await callRest('testapp_trigger_error', { kind: 'not_found' });
    expect(JSON.stringify(r.body)).toContain('not_found');
    expect(JSON.stringify(r.body)).toContain('No such thing');
  });

  test('bad arguments are refused by the server with the field named; bad output is internal', async () => {
    const bad = await callMcp('testapp_get_item', { id: 'seven' });
    expect(bad.isError).toBe(true);
    expect(bad.content[0]!.text).toMatch(/id/);
    const out = await callMcp('testapp_bad_output');
    expect(out.isError).toBe(true);
    expect(out.content[0]!.text).toMatch(/does not match its output schema: count/);
  });

  test('cancelling the MCP call aborts the request in the page', async () => {
    const abortedBefore = app.stats.slowAborted;
    const completedBefore = app.stats.slowCompleted;
    const ac = new AbortController();
    const call = mcp.callTool({ name: 'testapp_export_items', arguments: { steps: 5, delayMs: 5000 } }, undefined, { signal: ac.signal }).catch((e) => e);
    const seenBefore = app.stats.requests['/api/slow'] ?? 0;
    for (let i = 0; i < 200 && (app.stats.requests['/api/slow'] ?? 0) === seenBefore; i++) await Bun.sleep(25);
    ac.abort('user cancelled');
    expect(await call).toBeInstanceOf(Error);
    for (let i = 0; i < 200 && app.stats.slowAborted === abortedBefore; i++) await Bun.sleep(25);
    expect(app.stats.slowAborted).toBe(abortedBefore + 1);
    expect(app.stats.slowCompleted).toBe(completedBefore);
    expect(ext.cancels.length).toBeGreaterThanOrEqual(1);
  });

  test('settings change behaviour (POST /plugin-settings → next call)', async () => {
    const ids = async () => ((await callMcp('testapp_list_items')).structuredContent!.items as { id: number }[]).map((i) => i.id);
    expect(await ids()).toEqual([1, 2, 3, 5, 6]);
    const post = await fetch(`${srv.url}/plugin-settings`, {
      method: 'POST',
      headers: { ...srv.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ plugin: 'testapp', settings: { sortOrder: 'desc', pageSize: 3, includeArchived: true } }),
    });
    expect(post.status).toBe(200);
    expect(await ids()).toEqual([12, 11, 10]);
    const created = await callMcp('testapp_create_item', { title: 'x' });
    expect(created.structuredContent!.title).toBe('x');
    await fetch(`${srv.url}/plugin-settings`, {
      method: 'POST',
      headers: { ...srv.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ plugin: 'testapp', settings: { titlePrefix: '[bot] ' } }),
    });
    expect((await callMcp('testapp_create_item', { title: 'y' })).structuredContent!.title).toBe('[bot] y');
  });

  test('the gateway lists and calls plugin tools with the same result', async () => {
    const gw = await connectMcp(srv.url, srv.secret, '/mcp/gateway', 'gateway-client');
    try {
      const listed = (await gw.callTool({ name: 'opentabs_list_tools', arguments: { plugin: 'testapp' } })) as CallResult;
      expect(listed.isError).toBe(false);
      expect(listed.content[0]!.text).toContain('testapp_export_items');
      const direct = await callMcp('testapp_get_item', { id: 4 });
      const viaGateway = (await gw.callTool({ name: 'opentabs_call', arguments: { tool: 'testapp_get_item', arguments: { id: 4 } } })) as CallResult;
      expect(viaGateway.structuredContent).toEqual(direct.structuredContent!);
      expect(viaGateway.structuredContent).toMatchObject({ id: 4, title: 'Item 04' });
    } finally {
      await gw.close();
    }
  });

  test('audit log records plugin calls with error categories', async () => {
    const r = await fetch(`${srv.url}/audit?plugin=testapp&success=false&limit=100`, { headers: srv.auth });
    const entries = (await r.json()) as { tool: string; error?: { category?: string } }[];
    const cats = new Set(entries.map((e) => e.error?.category));
    for (const c of ['auth', 'not_found', 'rate_limited', 'validation', 'timeout', 'internal']) expect(cats.has(c)).toBe(true);
  });
});
