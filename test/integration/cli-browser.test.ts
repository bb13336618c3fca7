/**
 * CLI mode end to end with a real plugin in real Chromium: `opentabs tool list --plugin testapp`
 * and `opentabs tool call testapp_…` go CLI → REST → server → WebSocket → the testapp adapter
 * running in the fixture app's page (logged in, strict CSP) → back, printed as JSON.
 *
 * The extension's part (WebSocket ↔ page channel) is played by a page-backed FakeExtension that
 * forwards tool.dispatch into the page as BridgeToPage events and relays the PageToBridge result —
 * the contract the real extension bridge implements.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startFixtureApp, FIXTURE_USER, type FixtureApp } from '../fixtures/app/server.ts';
import { buildTestapp, TESTAPP_DIR } from '../fixtures/app/testapp.ts';
import { BRIDGE_TO_PAGE_EVENT, PAGE_TO_BRIDGE_EVENT, type PageToBridge } from '../../server/protocol/page-channel.ts';
import { startTestServer, makeTempConfigDir, removeDir, type TestServer } from '../harness/server.ts';
import { FakeExtension, FakeToolError, writeTestConfig, type DispatchApi, type DispatchParams } from '../harness/fake-extension.ts';
import { runCli } from './cli-support.ts';

setDefaultTimeout(120_000);

const CHROMIUM = process.env.OPENTABS_CHROMIUM ?? '/usr/bin/chromium';
let app: FixtureApp;
let browser: Browser;
let page: Page;
let srv: TestServer;
let configDir = '';
let ext: FakeExtension;
const pending = new Map<string, { api: DispatchApi; resolve: (v: { value: unknown }) => void; reject: (e: unknown) => void }>();

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

function forwardToPage(params: DispatchParams, api: DispatchApi): Promise<{ value: unknown }> {
  const id = params.dispatchId;
  const done = new Promise<{ value: unknown }>((resolve, reject) => pending.set(id, { api, resolve, reject }));
  const detail = JSON.stringify({ type: 'call', id, plugin: params.plugin, tool: params.tool, input: params.input, config: params.settings ?? {} });
  void page.evaluate(([ev, d]) => document.dispatchEvent(new CustomEvent(ev!, { detail: d })), [BRIDGE_TO_PAGE_EVENT, detail] as const);
  return done;
}

beforeAll(async () => {
  await buildTestapp();
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

  configDir = makeTempConfigDir('opentabs-cli-browser-');
  writeTestConfig(configDir, { localPlugins: [TESTAPP_DIR], permissions: { testapp: { default: 'auto' } } });
  srv = await startTestServer({ configDir });
  // Inject exactly the adapter file the server wrote, from the app's own origin (strict CSP).
  const info = srv.ctx.plugins.get('testapp')!;
  const adapter = readFileSync(`${configDir}/extension/${info.adapterFile}`, 'utf8');
  await page.route('**/__adapter.js', (route) => route.fulfill({ contentType: 'text/javascript', body: adapter }));
  await page.addScriptTag({ url: '/__adapter.js' });

  ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.defaultHandler = (p, api) => (p.plugin === 'testapp' ? forwardToPage(p, api) : Promise.reject(new FakeToolError('not_available', 'not in this test')));
  ext.notify('tab.syncAll', { plugins: { testapp: { state: 'ready', tabs: [{ tabId: 1, url: `${app.url}/app`, title: 'Fixture App', ready: true }] } } });
}, 120_000);

afterAll(async () => {
  await ext?.close().catch(() => {});
  await srv?.stop();
  if (configDir) removeDir(configDir);
  await browser?.close();
  await app?.stop();
});

const cli = (args: string[], stdin?: string) => runCli(args, { configDir, stdin });

describe('CLI mode with a plugin in Chromium', () => {
  test('tool list --plugin testapp and tool schema', async () => {
    const list = JSON.parse((await cli(['tool', 'list', '--plugin', 'testapp', '--json'])).stdout) as Array<{ name: string; permission: string }>;
    expect(list.map((t) => t.name)).toContain('testapp_whoami');
    expect(list.find((t) => t.name === 'testapp_get_item')?.permission).toBe('auto');
    const schema = JSON.parse((await cli(['tool', 'schema', 'testapp_get_item'])).stdout);
    expect(schema).toMatchObject({ type: 'object', required: ['id'] });
  });

  test('tool call runs in the logged-in page and prints the result as JSON', async () => {
    const who = await cli(['tool', 'call', 'testapp_whoami']);
    expect(who.stderr).toBe('');
    expect(who.code).toBe(0);
    expect(JSON.parse(who.stdout)).toMatchObject({ username: 'alice', pageUser: 'alice', cookieUser: 'alice' });

    const created = await cli(['tool', 'call', 'testapp_create_item', '{"title":"from the CLI"}']);
    expect(created.code).toBe(0);
    const id = (JSON.parse(created.stdout) as { id: number }).id;
    expect(app.items.find((i) => i.id === id)?.title).toBe('from the CLI');
    const got = await cli(['tool', 'call', 'testapp_get_item', '-', '--tab-id', '1'], JSON.stringify({ id }));
    expect(got.code).toBe(0);
    expect(JSON.stringify(JSON.parse(got.stdout))).toContain('from the CLI');
  });

  test('bad arguments and app errors: message on stderr, exit 1', async () => {
    const invalid = await cli(['tool', 'call', 'testapp_get_item', '{"id":"x"}']);
    expect(invalid.code).toBe(1);
    expect(invalid.stdout).toBe('');
    expect(invalid.stderr).toContain('/id');
    const missing = await cli(['tool', 'call', 'testapp_get_item', '{"id":999999}']);
    expect(missing.code).toBe(1);
    expect(missing.stderr.length).toBeGreaterThan(0);
  });

  test('the calls are in the audit log', async () => {
    const entries = JSON.parse((await cli(['audit', '--json', '--plugin', 'testapp'])).stdout) as Array<{ tool: string; success: boolean }>;
    expect(entries.some((e) => e.tool === 'testapp_whoami' && e.success)).toBe(true);
    expect(entries.some((e) => e.tool === 'testapp_get_item' && !e.success)).toBe(true);
  });
});
