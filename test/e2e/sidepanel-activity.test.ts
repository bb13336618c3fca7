/**
 * The side panel shows what the agent is doing and makes permissions manageable, in real
 * Chromium with the real extension and the real side panel: a running call appears with its tab
 * and progress (its tab marked, the badge counting it) and moves into the history with its status;
 * Stop cancels it (the tool's signal fires in the page, the caller gets `cancelled`); a
 * group-level change sets every tool of the group (checked through GET /tools); the filter finds
 * a tool; risky tools are marked; the header names the server and its MCP clients. Screenshots of
 * four states go to test-artifacts/.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';
import { connectMcp } from '../harness/fake-extension.ts';
import { writeFixturePlugin } from '../fixtures/ext-plugin/plugin.ts';

const ARTIFACTS = resolve(import.meta.dir, '../../test-artifacts');
let h: BrowserHarness;
let pluginParent = '';
let app: Page;
let panel: Page;

const badge = async () => (await h.serviceWorker()).evaluate(() => chrome.action.getBadgeText({}));
const shot = async (name: string) => {
  mkdirSync(ARTIFACTS, { recursive: true });
  await panel.screenshot({ path: join(ARTIFACTS, `sidepanel-${name}.png`), fullPage: true });
};
const toolsList = async () => ((await (await fetch(`${h.url}/tools`, { headers: h.srv.auth })).json()) as { tools: { name: string; permission: string }[] }).tools;

beforeAll(async () => {
  pluginParent = mkdtempSync(join(tmpdir(), 'opentabs-activity-'));
  h = await startBrowserHarness({ localPlugins: [writeFixturePlugin(pluginParent)], permissions: { fixture: { default: 'auto' }, browser: { tools: { browser_enable_network_capture: 'auto' } } } });
  app = await h.context.newPage();
  await app.goto(h.fixtureUrl('/pages/plugin-app.html'));
  await h.waitForHealth((x) => x.pluginDetails?.find((p: any) => p.name === 'fixture')?.tabState === 'ready', 'fixture tab ready');
  panel = await h.openSidePanel();
  await panel.setViewportSize({ width: 420, height: 1000 });
  await panel.waitForSelector('[data-testid="connection"][data-state="connected"]', { timeout: 15_000 });
}, 90_000);

afterAll(async () => {
  await h?.stop();
  if (pluginParent) rmSync(pluginParent, { recursive: true, force: true });
});

describe('activity', () => {
  test('idle: the header names the server, the panel says no calls yet', async () => {
    await panel.waitForSelector('[data-testid="activity-idle"]', { timeout: 10_000 });
    const info = await panel.locator('[data-testid="server-info"]').textContent();
    expect(info).toContain(`port ${h.srv.port}`);
    expect(info).toMatch(/server \d+\.\d+\.\d+/);
    expect(info).toContain('0 MCP clients');
    await panel.waitForSelector('[data-testid="tab-state-fixture"][data-state="ready"]', { timeout: 10_000 });
    await shot('idle');
  });

  test('the header counts MCP clients', async () => {
    const client = await connectMcp(h.url, h.srv.secret, '/mcp', 'panel-header');
    try {
      await panel.waitForFunction(() => document.querySelector('[data-testid="server-info"]')?.textContent?.includes('1 MCP client'), undefined, { timeout: 15_000 });
    } finally {
      await client.close();
    }
  }, 30_000);

  test('a running call shows its tab and progress, marks the tab, and Stop cancels it in the page', async () => {
    const tabId = await h.tabIdOf(app);
    const call = h.callTool('fixture_wait', { ms: 60_000 });
    const running = panel.locator('[data-testid="activity-running"][data-tool="fixture_wait"]');
    await running.waitFor({ timeout: 15_000 });
    await panel.waitForFunction(() => document.querySelector('[data-testid="activity-progress"]')?.textContent?.includes('waiting'), undefined, { timeout: 10_000 });
    const text = await running.textContent();
    expect(text).toContain('plugin fixture');
    expect(text).toContain('http://127.0.0.1');
    expect(await panel.locator('[data-testid="activity-progress"]').textContent()).toContain('0%');
    await panel.waitForSelector(`[data-testid="plugin-tab-${tabId}"][data-busy]`, { timeout: 10_000 });
    expect(await waitUntil(async () => ((await badge()) === '1' ? '1' : null), 'badge counts the running call')).toBe('1');
    await shot('running');

    await running.locator('[data-testid="activity-stop"]').click();
    const r = await call;
    expect(r.status).toBe(499);
    expect(r.body.error.code).toBe('cancelled');
    expect(r.body.error.message).toContain('side panel');
    // The tool's own signal fired in the page.
    expect(await waitUntil(() => app.evaluate(() => (window as any).__fixtureCancelled as number | undefined), 'the abort in the page')).toBe(1);
    const done = panel.locator('[data-testid="activity-done"][data-status="cancelled"]').first();
    await done.waitFor({ timeout: 10_000 });
    expect(await done.textContent()).toContain('fixture_wait');
    await running.waitFor({ state: 'detached', timeout: 10_000 });
    expect(await waitUntil(async () => ((await badge()) === '' ? 'clear' : null), 'badge cleared')).toBe('clear');
  }, 60_000);

  test('finished calls keep status, duration, error and a masked arguments summary', async () => {
    expect((await h.callTool('fixture_echo', { text: 'hello' })).status).toBe(200);
    // A long opaque value (a token, most likely) is masked in the summary.
    expect((await h.callTool('fixture_echo', { text: 'abcdefghijklmnopqrstuvwxyz0123456789ABCD' })).status).toBe(200);
    expect((await h.callTool('fixture_fail')).status).toBe(502);
    const failed = panel.locator('[data-testid="activity-done"][data-status="error"]').first();
    await failed.waitFor({ timeout: 10_000 });
    await failed.locator('summary').click();
    expect(await failed.locator('[data-testid="activity-error"]').textContent()).toContain('The fixture app said no');
    const [masked, plain] = [panel.locator('[data-testid="activity-done"][data-status="ok"]').nth(0), panel.locator('[data-testid="activity-done"][data-status="ok"]').nth(1)];
    await masked.locator('summary').click();
    await plain.locator('summary').click();
    expect(await plain.locator('[data-testid="activity-args"]').textContent()).toContain('hello');
    const hidden = await masked.locator('[data-testid="activity-args"]').textContent();
    expect(hidden).toContain('•••');
    expect(hidden).not.toContain('abcdefghijklmnopqrstuvwxyz');
  });
});

describe('permissions', () => {
  test('a group-level change sets every tool of the group', async () => {
    const storage = (await toolsList()).filter((t) => ['browser_get_storage', 'browser_get_cookies', 'browser_set_cookie', 'browser_delete_cookies'].includes(t.name));
    expect(new Set(storage.map((t) => t.permission)).size).toBeGreaterThan(1);
    expect(await panel.locator('[data-testid="perm-group-storage"]').inputValue()).toBe('mixed');
    await panel.selectOption('[data-testid="perm-group-storage"]', 'ask');
    await waitUntil(async () => (await toolsList()).filter((t) => storage.some((s) => s.name === t.name)).every((t) => t.permission === 'ask'), 'every storage tool at ask');
    await waitUntil(async () => (await panel.locator('[data-testid="perm-group-storage"]').inputValue()) === 'ask', 'the group shows ask');
    // A plugin's group is the plugin's permission.
    await panel.selectOption('[data-testid="perm-plugin-fixture"]', 'ask');
    await waitUntil(async () => (await toolsList()).filter((t) => t.name.startsWith('fixture_')).every((t) => t.permission === 'ask'), 'every fixture tool at ask');
  });

  test('an approval waiting shows in the panel', async () => {
    const call = h.callTool('fixture_echo', { text: 'please' });
    const card = panel.locator('[data-testid="confirm-fixture_echo"]');
    await card.waitFor({ timeout: 15_000 });
    await shot('approval');
    await card.locator('[data-testid="deny"]').click();
    expect((await call).status).toBe(403);
    // Raised to auto, a select counts once it has stayed in place a moment: chosen again until it is.
    await waitUntil(
      async () => {
        if ((await toolsList()).filter((t) => t.name.startsWith('fixture_')).every((t) => t.permission === 'auto')) return true;
        await panel.selectOption('[data-testid="perm-plugin-fixture"]', 'auto');
        return null;
      },
      'every fixture tool at auto',
      15_000,
      400,
    );
  });

  test('the filter finds a tool; risky tools are marked; a description opens on click', async () => {
    await panel.fill('[data-testid="tool-filter"]', 'cookie');
    await panel.waitForSelector('[data-testid="tool-row-browser_get_cookies"]', { timeout: 5_000 });
    expect(await panel.locator('[data-testid="tool-row-browser_list_tabs"]').count()).toBe(0);
    expect(await panel.locator('[data-testid="risk-browser_get_cookies"]').textContent()).toContain('cookies');
    const row = panel.locator('[data-testid="tool-row-browser_get_cookies"]');
    expect(await panel.locator('[data-testid="tool-description-browser_get_cookies"]').isVisible()).toBe(false);
    await row.locator('button.link').click();
    expect(await panel.locator('[data-testid="tool-description-browser_get_cookies"]').isVisible()).toBe(true);
    await panel.fill('[data-testid="tool-filter"]', 'no such tool at all');
    await panel.waitForSelector('[data-testid="tool-filter-empty"]', { timeout: 5_000 });
    await panel.fill('[data-testid="tool-filter"]', '');
    await panel.waitForSelector('[data-testid="tool-row-browser_list_tabs"]', { timeout: 5_000 });
    expect(await panel.locator('[data-testid="risk-browser_execute_script"]').count()).toBe(1);
  });
});

describe('draft a plugin', () => {
  test('Record captures the active tab with bodies and shows the command that drafts a plugin; Stop ends it', async () => {
    await app.bringToFront();
    const tabId = await h.tabIdOf(app);
    await panel.click('[data-testid="record-start"]');
    await panel.waitForSelector(`[data-testid="recording-${tabId}"]`, { timeout: 10_000 });
    const command = await panel.locator('[data-testid="record-command"]').textContent();
    expect(command).toMatch(new RegExp(` plugin create [a-z0-9-]+ --from-capture tab:${tabId}$`));
    // The capture runs, with bodies.
    const on = await h.callTool('browser_enable_network_capture', { tabId, captureBodies: true });
    expect(on.body.result).toMatchObject({ alreadyCapturing: true, captureBodies: true });
    await panel.click('[data-testid="record-stop"]');
    await panel.waitForSelector('[data-testid="record-start"]', { timeout: 10_000 });
    expect((await h.callTool('browser_get_network_requests', { tabId })).body.error.code).toBe('not_available');
  });
});

describe('disconnected', () => {
  test('the header says the server is not running and what to run, with the CLI that works here', async () => {
    await h.stopServer();
    await panel.waitForSelector('[data-testid="connection"][data-state="server_not_running"]', { timeout: 20_000 });
    const detail = await panel.locator('[data-testid="connection-detail"]').textContent();
    expect(detail).toContain('Start it in a terminal:');
    expect(detail).toMatch(/(opentabs|cli\/bin\.mjs|--config=\S+ \S+cli\/main\.ts) start/);
    await shot('disconnected');
    await h.startServer();
    await panel.waitForSelector('[data-testid="connection"][data-state="connected"]', { timeout: 30_000 });
  }, 60_000);
});
