/**
 * The built testapp adapter in real Chromium on the fixture app (strict CSP, no extension):
 * injected as a same-origin script, driven over the page channel exactly as the extension's
 * bridge does. Proves the adapter needs no eval, uses the page's session cookie, the CSRF meta
 * tag, page globals, storage and cookies, and maps every error category.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { readFileSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startFixtureApp, FIXTURE_USER, type FixtureApp } from '../fixtures/app/server.ts';
import { buildTestapp } from '../fixtures/app/testapp.ts';
import { BRIDGE_TO_PAGE_EVENT, PAGE_TO_BRIDGE_EVENT, ADAPTER_REGISTRY_KEY, type PageToBridge } from '../../server/protocol/page-channel.ts';

// npm, Chromium and child processes on a shared 2-core machine: generous per-test limit.
setDefaultTimeout(60_000);

const CHROMIUM = process.env.OPENTABS_CHROMIUM ?? '/usr/bin/chromium';
let app: FixtureApp;
let browser: Browser;
let page: Page;
let adapter = '';
const cspViolations: string[] = [];

beforeAll(async () => {
  const built = await buildTestapp();
  adapter = readFileSync(built.adapterPath, 'utf8').split('__OPENTABS_ADAPTER_HASH__').join('testhash');
  app = await startFixtureApp();
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
  page = await browser.newPage();
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
  });
  // Serve the adapter from the app's own origin so `script-src 'self'` allows the file itself.
  await page.route('**/__adapter.js', (route) => route.fulfill({ contentType: 'text/javascript', body: adapter }));
  await page.goto(`${app.url}/app`);
  expect(new URL(page.url()).pathname).toBe('/login');
  await page.fill('#username', FIXTURE_USER.username);
  await page.fill('#password', FIXTURE_USER.password);
  await Promise.all([page.waitForURL(`${app.url}/app`), page.click('#login')]);
  await page.waitForFunction(() => (globalThis as Record<string, unknown>).__APP__ !== undefined);
  await page.evaluate(
    ([toBridge]) => {
      const w = globalThis as unknown as { __msgs: unknown[] };
      w.__msgs = [];
      document.addEventListener(toBridge!, (e) => w.__msgs.push(JSON.parse((e as CustomEvent).detail)));
    },
    [PAGE_TO_BRIDGE_EVENT],
  );
  await page.addScriptTag({ url: '/__adapter.js' });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

let seq = 0;
async function call(tool: string, input: Record<string, unknown> = {}, config: Record<string, unknown> = {}): Promise<{ result: Extract<PageToBridge, { type: 'result' }>; events: PageToBridge[] }> {
  const id = `call-${++seq}`;
  await page.evaluate(
    ([ev, detail]) => document.dispatchEvent(new CustomEvent(ev!, { detail })),
    [BRIDGE_TO_PAGE_EVENT, JSON.stringify({ type: 'call', id, plugin: 'testapp', tool, input, config })],
  );
  await page.waitForFunction((id) => (globalThis as unknown as { __msgs: { type: string; id?: string }[] }).__msgs.some((m) => m.type === 'result' && m.id === id), id, { timeout: 20_000 });
  const events = (await page.evaluate((id) => (globalThis as unknown as { __msgs: { id?: string }[] }).__msgs.filter((m) => m.id === id), id)) as PageToBridge[];
  return { result: events.find((e) => e.type === 'result') as Extract<PageToBridge, { type: 'result' }>, events };
}

function errorOf(r: Extract<PageToBridge, { type: 'result' }>) {
  expect(r.ok).toBe(false);
  return (r as Extract<PageToBridge, { ok: false }>).error;
}

describe('testapp adapter in Chromium under a strict CSP', () => {
  test('registers, reports ready (logged in) and announces its hash', async () => {
    const state = await page.evaluate(async (key) => {
      const h = (globalThis as Record<string, any>)[key].testapp;
      return { hash: h.hash, ready: await h.isReady(), sdk: h.sdkVersion };
    }, ADAPTER_REGISTRY_KEY);
    expect(state).toEqual({ hash: 'testhash', ready: true, sdk: '0.1.0' });
    const registered = await page.evaluate(() => (globalThis as unknown as { __msgs: Record<string, unknown>[] }).__msgs.filter((m) => m.type === 'registered'));
    expect(registered).toEqual([{ type: 'registered', plugin: 'testapp', hash: 'testhash' }]);
  });

  test('whoami: API with session cookie, page global, cookie, local and session storage', async () => {
    const { result } = await call('whoami');
    expect(result).toMatchObject({
      ok: true,
      value: { username: 'alice', displayName: 'Alice Liddell', pageUser: 'alice', cookieUser: 'alice', theme: 'dark', tabId: 'tab-alice', appVersion: '1.4.2', servedTitle: 'Fixture App' },
    });
  });

  test('settings change behaviour: page size, sort order, archived items', async () => {
    const asc = (await call('list_items', {}, { pageSize: 3, sortOrder: 'asc', includeArchived: false })).result;
    expect(asc.ok && (asc.value as { items: { id: number }[] }).items.map((i) => i.id)).toEqual([1, 2, 3]);
    const desc = (await call('list_items', {}, { pageSize: 3, sortOrder: 'desc', includeArchived: true })).result;
    expect(desc.ok && (desc.value as { items: { id: number }[] }).items.map((i) => i.id)).toEqual([12, 11, 10]);
    const descNoArchived = (await call('list_items', {}, { pageSize: 3, sortOrder: 'desc', includeArchived: false })).result;
    expect(descNoArchived.ok && (descNoArchived.value as { items: { id: number }[] }).items.map((i) => i.id)).toEqual([11, 10, 9]);
  });

  test('create (CSRF from the meta tag, titlePrefix setting), get, delete', async () => {
    const created = (await call('create_item', { title: 'from test' }, { titlePrefix: 'AI: ' })).result;
    expect(created.ok).toBe(true);
    const item = (created as { value: { id: number; title: string } }).value;
    expect(item.title).toBe('AI: from test');
    expect(app.items.some((i) => i.id === item.id)).toBe(true);
    const got = (await call('get_item', { id: item.id })).result;
    expect(got.ok && got.value).toMatchObject({ id: item.id, title: 'AI: from test' });
    const del = (await call('delete_item', { id: item.id })).result;
    expect(del.ok && del.value).toEqual({ deleted: true, id: item.id });
    expect(errorOf((await call('get_item', { id: item.id })).result)).toMatchObject({ category: 'not_found', retryable: false });
  });

  test('export_items: progress per step and logs at each level', async () => {
    const { result, events } = await call('export_items', { steps: 3, delayMs: 10 });
    expect(result.ok && result.value).toEqual({ steps: 3, exported: 3 });
    const progress = events.filter((e) => e.type === 'progress').map((e) => (e as { progress: number; total: number; message: string }));
    expect(progress.map((p) => [p.progress, p.total, p.message])).toEqual([
      [1, 3, 'step 1 of 3'],
      [2, 3, 'step 2 of 3'],
      [3, 3, 'step 3 of 3'],
    ]);
    const levels = events.filter((e) => e.type === 'log').map((e) => (e as { level: string }).level);
    expect(levels).toEqual(['info', 'debug', 'debug', 'debug', 'warning']);
  });

  test('cancel aborts the in-flight request', async () => {
    const id = `call-${++seq}`;
    const completedBefore = app.stats.slowCompleted;
    await page.evaluate(
      ([ev, detail]) => document.dispatchEvent(new CustomEvent(ev!, { detail })),
      [BRIDGE_TO_PAGE_EVENT, JSON.stringify({ type: 'call', id, plugin: 'testapp', tool: 'export_items', input: { steps: 5, delayMs: 5000 }, config: {} })],
    );
    // Wait until the first slow request is in flight at the app.
    for (let i = 0; i < 200 && (app.stats.requests['/api/slow'] ?? 0) <= completedBefore + app.stats.slowAborted; i++) await Bun.sleep(25);
    await page.evaluate(
      ([ev, detail]) => document.dispatchEvent(new CustomEvent(ev!, { detail })),
      [BRIDGE_TO_PAGE_EVENT, JSON.stringify({ type: 'cancel', id, plugin: 'testapp', reason: 'user pressed stop' })],
    );
    await page.waitForFunction((id) => (globalThis as unknown as { __msgs: { type: string; id?: string }[] }).__msgs.some((m) => m.type === 'result' && m.id === id), id);
    const r = (await page.evaluate((id) => (globalThis as unknown as { __msgs: { type: string; id?: string }[] }).__msgs.find((m) => m.type === 'result' && m.id === id), id)) as Extract<PageToBridge, { type: 'result' }>;
    expect(errorOf(r)).toMatchObject({ code: 'cancelled', retryable: false });
    expect(app.stats.slowCompleted).toBe(completedBefore);
    for (let i = 0; i < 200 && app.stats.slowAborted === 0; i++) await Bun.sleep(25);
    expect(app.stats.slowAborted).toBeGreaterThanOrEqual(1);
  });

  const categories: [string, Record<string, unknown>][] = [
    ['auth', { category: 'auth', retryable: false, code: 'http_401' }],
    ['forbidden', { category: 'auth', retryable: false, code: 'http_403' }],
    ['not_found', { category: 'not_found', retryable: false, code: 'http_404' }],
    ['rate_limited', { category: 'rate_limited', retryable: true, retryAfterMs: 7000, code: 'http_429' }],
    ['validation', { category: 'validation', retryable: false, code: 'http_422' }],
    ['internal', { category: 'internal', retryable: true, code: 'http_500' }],
    ['timeout', { category: 'timeout', retryable: true, code: 'timeout' }],
    ['thrown', { category: 'internal', retryable: false, code: 'internal' }],
    ['tool_error', { category: 'validation', retryable: false, code: 'custom_code' }],
  ];
  for (const [kind, expected] of categories) {
    test(`error category: ${kind}`, async () => {
      const { result, events } = await call('trigger_error', { kind, timeoutMs: 300 });
      const err = errorOf(result);
      expect(err).toMatchObject(expected);
      expect(err.message.length).toBeGreaterThan(10);
      expect(events.some((e) => e.type === 'log' && (e as { level: string }).level === 'error')).toBe(true);
    });
  }

  test('error messages carry the app’s own explanation', async () => {
    expect(errorOf((await call('trigger_error', { kind: 'validation' })).result).message).toBe('GET /api/errors/validation returned HTTP 422: name must be at least 3 characters');
    expect(errorOf((await call('trigger_error', { kind: 'thrown' })).result).message).toBe('testapp_trigger_error failed: something unexpected broke');
  });

  test('bad input and bad output are named', async () => {
    expect(errorOf((await call('get_item', { id: 'x' })).result)).toMatchObject({ code: 'invalid_arguments', category: 'validation', message: expect.stringMatching(/^Invalid arguments for testapp_get_item: id: /) });
    expect(errorOf((await call('bad_output')).result).message).toMatch(/^testapp_bad_output returned output that does not match its output schema: count: /);
  });

  test('waitForSelector finds a late element, times out on a missing one', async () => {
    const late = (await call('wait_for_element', { selector: '#late' })).result;
    expect(late.ok && late.value).toEqual({ text: 'late content' });
    expect(errorOf((await call('wait_for_element', { selector: '#never', timeoutMs: 100 })).result)).toMatchObject({ category: 'timeout' });
  });

  test('waitUntil polls text that changes in place; times out naming the condition', async () => {
    const status = (await call('wait_for_element', { selector: '#status', text: 'Logged in as' })).result;
    expect(status.ok && status.value).toEqual({ text: `Logged in as ${FIXTURE_USER.displayName}` });
    expect(errorOf((await call('wait_for_element', { selector: '#status', text: 'never there', timeoutMs: 100 })).result)).toMatchObject({
      category: 'timeout',
      message: expect.stringContaining('Condition not met within 100 ms'),
    });
  });

  test('no CSP violations were reported (no eval needed), and the CSP does block eval on this page', async () => {
    expect(cspViolations).toEqual([]);
    await page.route('**/__eval-probe.js', (route) =>
      route.fulfill({ contentType: 'text/javascript', body: "window.__evalProbe = (() => { try { return eval('1 + 1'); } catch (e) { return 'blocked'; } })();" }),
    );
    await page.addScriptTag({ url: '/__eval-probe.js' });
    expect(await page.evaluate(() => (globalThis as Record<string, unknown>).__evalProbe)).toBe('blocked');
    cspViolations.length = 0;
  });

  test('logged out → isReady false', async () => {
    const ctx = await browser.newContext();
    try {
      const p = await ctx.newPage();
      await p.route('**/__adapter.js', (route) => route.fulfill({ contentType: 'text/javascript', body: adapter }));
      await p.goto(`${app.url}/other`);
      await p.addScriptTag({ url: '/__adapter.js' });
      const ready = await p.evaluate((key) => (globalThis as Record<string, any>)[key].testapp.isReady(), ADAPTER_REGISTRY_KEY);
      expect(ready).toBe(false);
    } finally {
      await ctx.close();
    }
  });
});
