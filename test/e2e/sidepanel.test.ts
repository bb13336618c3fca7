/**
 * The real side panel (h.openSidePanel(); sidepanel.html in a tab is refused as a panel): it shows the
 * connection, plugins with their tab state, failed plugins and tools; a permission changed there
 * is enforced by the server; pending approvals can be allowed, denied or always allowed (with a
 * badge on the action icon while any wait). Saves test-artifacts/sidepanel.png.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';
import { writeFixturePlugin } from '../fixtures/ext-plugin/plugin.ts';

const ARTIFACTS = resolve(import.meta.dir, '../../test-artifacts');
let h: BrowserHarness;
let pluginParent = '';
let app: Page;
let panel: Page;

const config = () => JSON.parse(readFileSync(join(h.configDir, 'config.json'), 'utf8'));
/** fixture_echo's permission set in the panel, once config.json has it. */
/**
 * fixture_echo's permission saved in config.json and in effect: the file is written before the
 * server swaps in the new catalog, and a call made in between still runs under the old permission.
 */
const echoPermissionSaved = async (permission: 'ask' | 'auto') => {
  await waitUntil(() => config().permissions.fixture?.tools?.echo === permission, `fixture_echo saved as ${permission}`);
  await waitUntil(() => h.srv.ctx.catalog.current().get('fixture_echo')?.permission === permission, `fixture_echo's permission ${permission} in effect`);
};
/**
 * A select raised to auto counts only once it has stayed in place a moment (the activity list above
 * it moves with every call): chosen again until it is saved.
 */
const choose = async (testid: string, value: string, saved: () => boolean) =>
  waitUntil(
    async () => {
      if (saved()) return true;
      await panel.selectOption(`[data-testid="${testid}"]`, value);
      return saved() || null;
    },
    `${testid} saved as ${value}`,
    15_000,
    400,
  );
const setEchoPermission = async (permission: 'ask' | 'auto') => {
  await choose('perm-fixture_echo', permission, () => config().permissions.fixture?.tools?.echo === permission);
  await echoPermissionSaved(permission);
};
const badge = async () => (await h.serviceWorker()).evaluate(() => chrome.action.getBadgeText({}));

beforeAll(async () => {
  pluginParent = mkdtempSync(join(tmpdir(), 'opentabs-sidepanel-'));
  const good = writeFixturePlugin(pluginParent);
  // A plugin that cannot load: the panel lists it with its error.
  const broken = join(pluginParent, 'opentabs-plugin-broken');
  mkdirSync(join(broken, 'dist'), { recursive: true });
  writeFileSync(join(broken, 'package.json'), JSON.stringify({ name: 'opentabs-plugin-broken', version: '1.0.0' }));
  writeFileSync(join(broken, 'dist', 'tools.json'), '{ this is not json');
  h = await startBrowserHarness({ localPlugins: [good, broken], permissions: { fixture: { default: 'auto' } } });
  app = await h.context.newPage();
  await app.goto(h.fixtureUrl('/pages/plugin-app.html'));
  await h.waitForHealth((x) => x.pluginDetails?.find((p: any) => p.name === 'fixture')?.tabState === 'ready', 'fixture tab ready');
  panel = await h.openSidePanel();
  await panel.setViewportSize({ width: 420, height: 900 });
}, 60_000);

afterAll(async () => {
  await h?.stop();
  if (pluginParent) rmSync(pluginParent, { recursive: true, force: true });
});

describe('side panel', () => {
  test('shows the connection, the plugin with its tab state, failed plugins and browser tools', async () => {
    await panel.waitForSelector('[data-testid="connection"][data-state="connected"]', { timeout: 15_000 });
    await panel.waitForSelector('[data-testid="tab-state-fixture"][data-state="ready"]', { timeout: 15_000 });
    const card = panel.locator('[data-testid="plugin-fixture"]');
    expect(await card.textContent()).toContain('Fixture App');
    for (const tool of ['echo', 'wait', 'fail']) expect(await panel.locator(`[data-testid="perm-fixture_${tool}"]`).inputValue()).toBe('auto');
    const failed = panel.locator('[data-testid="failed-plugin"]');
    await failed.first().waitFor({ timeout: 10_000 });
    expect(await failed.first().textContent()).toMatch(/broken|tools\.json/);
    expect(await panel.locator('[data-testid="perm-browser_list_tabs"]').inputValue()).toBe('auto');
  });

  test('a permission set to off in the panel is enforced by the server', async () => {
    await panel.selectOption('[data-testid="perm-browser_list_tabs"]', 'off');
    const off = await waitUntil(async () => {
      const r = await h.callTool('browser_list_tabs');
      return r.status === 403 ? r : null;
    }, 'browser_list_tabs to be refused');
    expect(off.body.error.code).toBe('permission_off');
    expect(config().permissions.browser.tools.browser_list_tabs).toBe('off');
    await panel.selectOption('[data-testid="perm-fixture_fail"]', 'off');
    await waitUntil(async () => (await h.callTool('fixture_fail')).status === 403, 'fixture_fail to be refused');
    expect(config().permissions.fixture.tools.fail).toBe('off');
    // And back on.
    await choose('perm-browser_list_tabs', 'auto', () => config().permissions.browser.tools.browser_list_tabs === 'auto');
    await waitUntil(async () => (await h.callTool('browser_list_tabs')).status === 200, 'browser_list_tabs allowed again');
  });

  test('ask: the call waits for Allow in the panel (badge while pending)', async () => {
    await setEchoPermission('ask');
    const call = h.callTool('fixture_echo', { text: 'approved' });
    const card = panel.locator('[data-testid="confirm-fixture_echo"]');
    await card.waitFor({ timeout: 15_000 });
    expect(await card.textContent()).toContain('approved');
    expect(await waitUntil(async () => ((await badge()) === '1' ? '1' : null), 'badge 1')).toBe('1');
    mkdirSync(ARTIFACTS, { recursive: true });
    await panel.screenshot({ path: join(ARTIFACTS, 'sidepanel.png'), fullPage: true });
    await card.locator('[data-testid="allow"]').click();
    const r = await call;
    expect(r.status).toBe(200);
    expect(r.body.result.input).toEqual({ text: 'approved' });
    await card.waitFor({ state: 'detached', timeout: 10_000 });
    expect(await waitUntil(async () => ((await badge()) === '' ? 'cleared' : null), 'badge cleared')).toBe('cleared');
  });

  test('Deny refuses the call', async () => {
    const call = h.callTool('fixture_echo', { text: 'denied' });
    const card = panel.locator('[data-testid="confirm-fixture_echo"]');
    await card.waitFor({ timeout: 15_000 });
    await card.locator('[data-testid="deny"]').click();
    const r = await call;
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe('permission_denied');
  });

  test('Always allow runs the call and stops asking', async () => {
    const call = h.callTool('fixture_echo', { text: 'always' });
    const card = panel.locator('[data-testid="confirm-fixture_echo"]');
    await card.waitFor({ timeout: 15_000 });
    await card.locator('[data-testid="always-allow"]').click();
    expect((await call).status).toBe(200);
    await echoPermissionSaved('auto');
    // The next call needs no approval.
    const next = await h.callTool('fixture_echo', { text: 'no prompt' });
    expect(next.status).toBe(200);
    await waitUntil(async () => (await panel.locator('[data-testid="perm-fixture_echo"]').inputValue()) === 'auto', 'panel shows auto');
  });

  test('plugin settings saved from the generated form reach the adapter as config', async () => {
    const form = panel.locator('form[data-settings="fixture"]');
    await form.locator('input[name="greeting"]').fill('hi from the panel');
    await form.locator('button[type="submit"]').click();
    await waitUntil(() => config().pluginSettings?.fixture?.greeting === 'hi from the panel', 'greeting saved in config.json');
    const r = await waitUntil(async () => {
      const x = await h.callTool('fixture_echo', {});
      return x.body?.result?.config?.greeting === 'hi from the panel' ? x : null;
    }, 'the adapter to see the new greeting');
    expect(r.status).toBe(200);
  });

  test('a settings form in use survives panel updates: the typed text stays and Save still saves', async () => {
    const form = panel.locator('form[data-settings="fixture"]');
    const input = form.locator('input[name="greeting"]');
    await input.fill('typed while calls run');
    // Calls finishing now update the panel (activity) while the field has focus.
    const done = await panel.locator('[data-testid="activity-done"]').count();
    for (let i = 0; i < 3; i++) expect((await h.callTool('fixture_echo', { text: `busy ${i}` })).status).toBe(200);
    await waitUntil(async () => ((await panel.locator('[data-testid="activity-done"]').count()) >= done + 3 ? true : null), 'the panel to show the three calls');
    // The form was not rebuilt under the user: the text is still there, and one click saves it.
    expect(await input.inputValue()).toBe('typed while calls run');
    await form.locator('button[type="submit"]').click();
    await waitUntil(() => config().pluginSettings?.fixture?.greeting === 'typed while calls run', 'greeting saved by the one click');
    // Once focus leaves the form, the plugins section is current again (the saved value shown).
    await panel.locator('#tool-filter').focus();
    await waitUntil(async () => ((await panel.locator('form[data-settings="fixture"] input[name="greeting"]').inputValue()) === 'typed while calls run' ? true : null), 'the rebuilt form to show the saved value');
  });

  test('a click on Allow is not lost when the panel updates between its press and its release', async () => {
    await setEchoPermission('ask');
    const call = h.callTool('fixture_echo', { text: 'pressed' });
    const allow = panel.locator('[data-testid="confirm-fixture_echo"] [data-testid="allow"]');
    await allow.waitFor({ timeout: 15_000 });
    // A card's buttons work once it has stayed in place a moment (a press before that does nothing).
    await waitUntil(async () => (await allow.isEnabled()) || null, 'the card\'s buttons to work');
    const box = (await allow.boundingBox())!;
    await panel.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await panel.mouse.down();
    // Another call finishes while the button is held down: the panel gets a new state to show.
    const done = await panel.locator('[data-testid="activity-done"]').count();
    expect((await h.callTool('browser_list_tabs')).status).toBe(200);
    await waitUntil(async () => ((await panel.locator('[data-testid="activity-done"]').count()) > done ? true : null), 'the panel to show the other call');
    await panel.mouse.up();
    // Bounded: a lost click would leave the call waiting for its approval timeout.
    const r = await Promise.race([call, Bun.sleep(15_000).then(() => null)]);
    expect(r?.status).toBe(200);
    expect(r?.body.result.input).toEqual({ text: 'pressed' });
    await setEchoPermission('auto');
  });

  test('shows "authentication failed" when the server refuses the secret, and recovers', async () => {
    const real = h.srv.ctx.secret;
    // As if the extension were loaded from a folder with another secret: the server no longer accepts it.
    h.srv.ctx.secret = 'f'.repeat(64);
    h.srv.ctx.hub.closeAll('test: secret changed');
    try {
      await panel.waitForSelector('[data-testid="connection"][data-state="server_unverified"]', { timeout: 20_000 });
    } finally {
      h.srv.ctx.secret = real;
    }
    await panel.waitForSelector('[data-testid="connection"][data-state="connected"]', { timeout: 20_000 });
  }, 45_000);

  test('shows "server not running" when the server stops, and recovers when it is back', async () => {
    await h.stopServer();
    await panel.waitForSelector('[data-testid="connection"][data-state="server_not_running"]', { timeout: 20_000 });
    await h.startServer();
    await panel.waitForSelector('[data-testid="connection"][data-state="connected"]', { timeout: 20_000 });
    await h.waitForHealth((x) => x.extensionConnected === true, 'extension reconnected');
  }, 45_000);
});
