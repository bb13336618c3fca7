/**
 * Attacks on the permission promise, in real Chromium with the real extension:
 *  - `off` is off: a plugin whose tools are all off has no adapter and no bridge in its pages (a
 *    page cannot talk to it either); turning one tool to ask injects it, turning it off again
 *    disposes it from every open tab.
 *  - broad patterns: `opentabs plugin add` of a plugin matching every site is refused without
 *    --allow-broad-patterns (config.json untouched); with it, the plugin starts with every tool
 *    off, runs in no page, and the side panel warns that it runs on every site.
 *  - approval cards: lead with tool, plugin, tab URL and domain, mark cut arguments; a fourth
 *    pending approval from one caller is refused at once while the first three still wait.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';
import { writeFixturePlugin } from '../fixtures/ext-plugin/plugin.ts';
import { writeTestPlugin } from '../harness/fake-extension.ts';
import { runCli } from '../integration/cli-support.ts';
import { ADAPTER_REGISTRY_KEY, PAGE_TO_BRIDGE_EVENT } from '../../server/protocol/page-channel.ts';
import { MAX_PENDING_APPROVALS_PER_CALLER } from '../../server/limits.ts';

const ARTIFACTS = resolve(import.meta.dir, '../../test-artifacts');

/** An adapter that only registers itself (enough to see whether it runs in a page). */
function registeringAdapter(name: string): string {
  return `(() => {
  const reg = (globalThis[${JSON.stringify(ADAPTER_REGISTRY_KEY)}] ??= {});
  reg[${JSON.stringify(name)}] = { plugin: ${JSON.stringify(name)}, hash: '__OPENTABS_ADAPTER_HASH__', sdkVersion: '0.1.0', isReady: async () => true, dispose() {} };
  document.dispatchEvent(new CustomEvent(${JSON.stringify(PAGE_TO_BRIDGE_EVENT)}, { detail: JSON.stringify({ type: 'registered', plugin: ${JSON.stringify(name)}, hash: '__OPENTABS_ADAPTER_HASH__' }) }));
})();\n`;
}

function writeRegisteringPlugin(parent: string, name: string, urlPatterns: string[]): string {
  const dir = writeTestPlugin(parent, name, [{ name: 'ping' }], undefined, { urlPatterns });
  writeFileSync(join(dir, 'dist', 'adapter.js'), registeringAdapter(name));
  return dir;
}

/** Registry entries of these plugins in the page's MAIN world. */
const inRegistry = (page: Page, name: string) =>
  page.evaluate(([key, n]) => Boolean((globalThis as any)[key as string]?.[n as string]), [ADAPTER_REGISTRY_KEY, name]);

describe('off is off', () => {
  let h: BrowserHarness;
  let parent = '';
  let shared: Page; // plugin-app.html: fixture (off) and control (auto) match it
  let solo: Page; // plugin-app-solo.html: only fixture matches it

  const logsOf = async (name: string) => {
    const r = await fetch(`${h.url}/plugins/${name}/logs`, { headers: h.srv.auth });
    return ((await r.json()) as { logs: { message: string }[] }).logs;
  };
  /** Whether the extension's tab bridge (ISOLATED world) exists in the tab. */
  const bridgeIn = async (page: Page) => {
    const tabId = await h.tabIdOf(page);
    const sw = await h.serviceWorker();
    return sw.evaluate(async (id) => {
      const [r] = await chrome.scripting.executeScript({ target: { tabId: id }, func: () => Boolean((globalThis as any).__opentabs_bridge__?.alive) });
      return r?.result === true;
    }, tabId);
  };
  const pageLog = (page: Page, plugin: string, message: string) =>
    page.evaluate(
      ([ev, p, m]) => document.dispatchEvent(new CustomEvent(ev as string, { detail: JSON.stringify({ type: 'log', plugin: p, level: 'info', message: m, ts: Date.now() }) })),
      [PAGE_TO_BRIDGE_EVENT, plugin, message],
    );

  beforeAll(async () => {
    parent = mkdtempSync(join(tmpdir(), 'opentabs-off-'));
    const fixture = writeFixturePlugin(parent);
    const control = writeRegisteringPlugin(parent, 'control', ['http://127.0.0.1/pages/plugin-app.html']);
    // Listed in config.json with every tool auto, but its patterns cover every site and nobody
    // consented (as after a rebuild that widened them): it must run nowhere.
    const sneaky = writeRegisteringPlugin(parent, 'sneaky', ['*://*/*']);
    h = await startBrowserHarness({
      localPlugins: [fixture, control, sneaky],
      permissions: { fixture: { default: 'off' }, control: { default: 'auto' }, sneaky: { default: 'auto' } },
    });
    solo = await h.context.newPage();
    await solo.goto(h.fixtureUrl('/pages/plugin-app-solo.html'));
    shared = await h.context.newPage();
    await shared.goto(h.fixtureUrl('/pages/plugin-app.html'));
    // The control plugin's adapter ran in the shared page: injection happened for these loads.
    await h.waitForHealth((x) => x.pluginDetails?.find((p: any) => p.name === 'control')?.tabState === 'ready', 'control plugin ready in the shared page');
  }, 90_000);

  afterAll(async () => {
    await h?.stop();
    if (parent) rmSync(parent, { recursive: true, force: true });
  });

  test('a plugin with every tool off has no adapter and no bridge in its pages, and a page cannot reach it', async () => {
    expect(await inRegistry(shared, 'control')).toBe(true);
    expect(await inRegistry(shared, 'fixture')).toBe(false);
    expect(await inRegistry(solo, 'fixture')).toBe(false);
    expect(await inRegistry(shared, 'sneaky')).toBe(false);
    expect(await inRegistry(solo, 'sneaky')).toBe(false);
    // Only fixture (and the unconsented sneaky) match the solo page: nothing of OpenTabs is in it.
    expect(await bridgeIn(solo)).toBe(false);
    // The shared page has the control plugin's bridge; a page message for fixture goes nowhere,
    // while one for control (sent after it, on the same Port) arrives.
    await pageLog(shared, 'fixture', 'fixture-from-page');
    await pageLog(shared, 'control', 'control-from-page');
    await waitUntil(async () => (await logsOf('control')).some((l) => l.message === 'control-from-page'), 'the control log line at the server');
    expect((await logsOf('fixture')).some((l) => l.message === 'fixture-from-page')).toBe(false);
    // And the agent cannot call it.
    const r = await h.callTool('fixture_echo', { text: 'x' });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe('permission_off');
  });

  test('one tool set to ask injects it; every tool off again disposes it from every open tab', async () => {
    const panel = await h.openSidePanel();
    // The disabled plugin is still listed in the side panel, so the user can turn it on.
    const select = panel.locator('[data-testid="perm-fixture_echo"]');
    await select.waitFor({ timeout: 15_000 });
    expect(await panel.locator('[data-testid="disabled-fixture"]').count()).toBe(1);
    expect(await panel.locator('[data-testid="broad-no-consent-sneaky"]').count()).toBe(1);
    await select.selectOption('ask');
    await waitUntil(() => inRegistry(shared, 'fixture'), 'fixture injected into the shared page');
    await waitUntil(() => inRegistry(solo, 'fixture'), 'fixture injected into the solo page');
    expect(await bridgeIn(solo)).toBe(true);

    await panel.locator('[data-testid="perm-fixture_echo"]').selectOption('off');
    await waitUntil(async () => !(await inRegistry(shared, 'fixture')), 'fixture disposed from the shared page');
    await waitUntil(async () => !(await inRegistry(solo, 'fixture')), 'fixture disposed from the solo page');
    expect(await inRegistry(shared, 'control')).toBe(true);
    // A new document of the solo page: nothing is injected again.
    await solo.reload();
    await shared.reload();
    await h.waitForHealth((x) => x.pluginDetails?.find((p: any) => p.name === 'control')?.tabState === 'ready', 'control ready again after reload');
    expect(await inRegistry(shared, 'fixture')).toBe(false);
    expect(await inRegistry(solo, 'fixture')).toBe(false);
    expect(await bridgeIn(solo)).toBe(false);
  });

  test('a broad-pattern plugin: refused without consent, added all off with it, and the side panel warns', async () => {
    const dir = writeRegisteringPlugin(parent, 'everywhere', ['<all_urls>']);
    const configPath = join(h.configDir, 'config.json');
    const before = readFileSync(configPath, 'utf8');
    const refused = await runCli(['plugin', 'add', dir, '--port', String(h.srv.port)], { configDir: h.configDir });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('<all_urls>');
    expect(refused.stderr).toContain('--allow-broad-patterns');
    expect(readFileSync(configPath, 'utf8')).toBe(before);

    const added = await runCli(['plugin', 'add', dir, '--allow-broad-patterns', '--port', String(h.srv.port)], { configDir: h.configDir });
    expect(added.code).toBe(0);
    expect(added.stdout).toContain('start off');
    const cfg = JSON.parse(readFileSync(configPath, 'utf8'));
    expect(cfg.permissions.everywhere).toEqual({ default: 'off' });
    const r = await h.callTool('everywhere_ping');
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe('permission_off');

    const panel = await h.openSidePanel();
    const warning = panel.locator('[data-testid="broad-warning-everywhere"]');
    await warning.waitFor({ timeout: 15_000 });
    expect(await warning.textContent()).toContain('every site');
    mkdirSync(ARTIFACTS, { recursive: true });
    await panel.setViewportSize({ width: 420, height: 900 });
    await warning.scrollIntoViewIfNeeded();
    await panel.screenshot({ path: join(ARTIFACTS, 'broad-plugin-warning.png') });
    expect(await panel.locator('[data-testid="perm-everywhere_ping"]').inputValue()).toBe('off');
    // It runs in no page, even one loaded after it was added.
    const page = await h.context.newPage();
    await page.goto(h.fixtureUrl('/pages/index.html'));
    await shared.reload();
    await h.waitForHealth((x) => x.pluginDetails?.find((p: any) => p.name === 'control')?.tabState === 'ready', 'control ready after reload');
    expect(await inRegistry(shared, 'everywhere')).toBe(false);
    expect(await inRegistry(page, 'everywhere')).toBe(false);
    expect(await inRegistry(page, 'sneaky')).toBe(false);
    await page.close();
  });
});

describe('approval cards', () => {
  let h: BrowserHarness;
  let parent = '';
  let app: Page;
  const aborts: AbortController[] = [];

  beforeAll(async () => {
    parent = mkdtempSync(join(tmpdir(), 'opentabs-approve-'));
    h = await startBrowserHarness({ localPlugins: [writeFixturePlugin(parent)], permissions: { fixture: { default: 'ask' } } });
    app = await h.context.newPage();
    await app.goto(h.fixtureUrl('/pages/plugin-app.html'));
    // The extension reported the tab (the server names its URL on the card from that report).
    await h.waitForHealth((x) => x.pluginDetails?.find((p: any) => p.name === 'fixture')?.tabState === 'ready', 'fixture tab ready');
  }, 90_000);

  afterAll(async () => {
    for (const a of aborts) a.abort();
    await h?.stop();
    if (parent) rmSync(parent, { recursive: true, force: true });
  });

  test('the card leads with tool, plugin, tab URL and domain and marks cut arguments', async () => {
    const tabId = await h.tabIdOf(app);
    const long = 'A'.repeat(5000);
    const ac = new AbortController();
    aborts.push(ac);
    const call = h.callTool('fixture_echo', { text: long }, { tabId, signal: ac.signal }).catch(() => null);
    const panel = await h.openSidePanel();
    const card = panel.locator('[data-testid="confirm-fixture_echo"]');
    await card.waitFor({ timeout: 15_000 });
    expect(await card.locator('[data-testid="approval-tool"]').textContent()).toBe('fixture_echo');
    expect(await card.locator('[data-testid="approval-plugin"]').textContent()).toContain('fixture');
    expect(await card.locator('[data-testid="approval-url"]').textContent()).toBe(app.url());
    expect(await card.locator('[data-testid="approval-domain"]').textContent()).toBe('127.0.0.1');
    expect(await card.locator('[data-testid="approval-tab"]').textContent()).toContain(String(tabId));
    // What the call touches comes before the arguments.
    const targetFirst = await card.evaluate((el) => {
      const target = el.querySelector('[data-testid="approval-target"]')!;
      const args = el.querySelector('[data-testid="approval-args"]')!;
      return Boolean(target.compareDocumentPosition(args) & Node.DOCUMENT_POSITION_FOLLOWING);
    });
    expect(targetFirst).toBe(true);
    const shown = (await card.locator('[data-testid="approval-args"]').textContent()) ?? '';
    const full = JSON.stringify({ text: long }, null, 1);
    const mark = (await card.locator('[data-testid="approval-truncated"]').textContent()) ?? '';
    expect(mark).toContain(`${(full.length - shown.length).toLocaleString('en-US')} more characters`);
    expect(shown.length).toBeLessThan(full.length);
    mkdirSync(ARTIFACTS, { recursive: true });
    await panel.setViewportSize({ width: 420, height: 900 });
    await panel.screenshot({ path: join(ARTIFACTS, 'approval-card.png') });
    await card.locator('[data-testid="deny"]').click();
    const r = await call;
    expect(r?.status).toBe(403);
  });

  test(`a caller's ${MAX_PENDING_APPROVALS_PER_CALLER + 1}th pending approval is refused at once; the first ${MAX_PENDING_APPROVALS_PER_CALLER} still wait`, async () => {
    const panel = await h.openSidePanel();
    const calls: Promise<unknown>[] = [];
    for (let i = 0; i < MAX_PENDING_APPROVALS_PER_CALLER; i++) {
      const ac = new AbortController();
      aborts.push(ac);
      calls.push(h.callTool('fixture_echo', { text: `pending ${i}` }, { signal: ac.signal }).catch(() => null));
    }
    await waitUntil(async () => (await panel.locator('[data-testid="confirm-fixture_echo"]').count()) === MAX_PENDING_APPROVALS_PER_CALLER, `${MAX_PENDING_APPROVALS_PER_CALLER} approval cards`);
    const extra = await h.callTool('fixture_echo', { text: 'one too many' });
    expect(extra.status).toBe(429);
    expect(extra.body.error.code).toBe('too_many_pending_approvals');
    expect(extra.body.error.message).toContain(`limit ${MAX_PENDING_APPROVALS_PER_CALLER}`);
    expect(extra.body.error.message).toContain('side panel');
    // The refused call never reached the panel; the others still wait there.
    expect(await panel.locator('[data-testid="confirm-fixture_echo"]').count()).toBe(MAX_PENDING_APPROVALS_PER_CALLER);
    expect(await panel.locator('[data-testid="confirm-fixture_echo"]', { hasText: 'one too many' }).count()).toBe(0);
    // Answering one frees a place.
    await panel.locator('[data-testid="confirm-fixture_echo"]').first().locator('[data-testid="allow"]').click();
    await waitUntil(async () => (await panel.locator('[data-testid="confirm-fixture_echo"]').count()) === MAX_PENDING_APPROVALS_PER_CALLER - 1, 'one card answered');
    const ac = new AbortController();
    aborts.push(ac);
    calls.push(h.callTool('fixture_echo', { text: 'fits again' }, { signal: ac.signal }).catch(() => null));
    await panel.locator('[data-testid="confirm-fixture_echo"]', { hasText: 'fits again' }).waitFor({ timeout: 15_000 });
    for (const a of aborts) a.abort();
    await Promise.all(calls);
  });
});
