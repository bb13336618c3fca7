/**
 * The CLI against the real thing: real server, the installed extension in headless Chromium
 * (test/harness/browser.ts), and the testapp plugin (built with the SDK) running in the logged-in
 * fixture app. `opentabs tool call` of a plugin tool goes CLI → REST → server → extension →
 * tab → page adapter and back; status and doctor see the connected extension.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';
import { startFixtureApp, FIXTURE_USER, type FixtureApp } from '../fixtures/app/server.ts';
import { buildTestapp, TESTAPP_DIR } from '../fixtures/app/testapp.ts';
import { runCli } from './cli-support.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
let app: FixtureApp;
let page: Page;

beforeAll(async () => {
  await buildTestapp();
  app = await startFixtureApp();
  h = await startBrowserHarness({ localPlugins: [TESTAPP_DIR], permissions: { testapp: { default: 'auto' } } });
  page = await h.context.newPage();
  await page.goto(`${app.url}/login`);
  await page.fill('#username', FIXTURE_USER.username);
  await page.fill('#password', FIXTURE_USER.password);
  await Promise.all([page.waitForURL(`${app.url}/app`), page.click('#login')]);
  await h.waitForHealth((x) => x.pluginDetails?.find((p: { name: string }) => p.name === 'testapp')?.tabState === 'ready', 'testapp tab ready', 30_000);
}, 120_000);

afterAll(async () => {
  await h?.stop();
  await app?.stop();
});

const cli = (args: string[]) => runCli(args, { configDir: h.configDir });

describe('CLI with the real extension', () => {
  test('status shows the extension connected and the plugin tab; doctor passes', async () => {
    const s = JSON.parse((await cli(['status', '--json'])).stdout);
    expect(s).toMatchObject({ running: true, extensionConnected: true });
    const testapp = s.pluginDetails.find((p: { name: string }) => p.name === 'testapp');
    expect(testapp.tabState).toBe('ready');
    expect(testapp.tabs[0].url).toBe(`${app.url}/app`);
    const text = await cli(['status']);
    expect(text.stdout).toContain('connected');
    expect(text.stdout).toContain(`${app.url}/app`);
    const doctor = await cli(['doctor']);
    expect(doctor.stdout).toContain('✓ extension: connected');
    expect(doctor.code).toBe(0);
  });

  test('tool call of a built-in tool and of a plugin tool, printed as JSON', async () => {
    const tabs = await cli(['tool', 'call', 'browser_list_tabs']);
    expect(tabs.code).toBe(0);
    const appTab = (JSON.parse(tabs.stdout).tabs as Array<{ id: number; url: string }>).find((t) => t.url === `${app.url}/app`);
    expect(appTab).toBeDefined();

    const who = await cli(['tool', 'call', 'testapp_whoami', '{}', '--tab-id', String(appTab!.id)]);
    expect(who.stderr).toBe('');
    expect(who.code).toBe(0);
    expect(JSON.parse(who.stdout)).toMatchObject({ username: 'alice', pageUser: 'alice', cookieUser: 'alice' });

    const created = await cli(['tool', 'call', 'testapp_create_item', '{"title":"made by opentabs tool call"}']);
    expect(created.code).toBe(0);
    const id = (JSON.parse(created.stdout) as { id: number }).id;
    expect(app.items.find((i) => i.id === id)?.title).toBe('made by opentabs tool call');
  });

  test('a tool error in the page: message on stderr, exit 1', async () => {
    const r = await cli(['tool', 'call', 'testapp_get_item', '{"id":987654}']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.length).toBeGreaterThan(0);
  });

  // Last: it changes the secret under the harness.
  test('config rotate-secret: the running server takes the new secret and the extension reconnects with it', async () => {
    const hub = h.srv.ctx.hub as unknown as { active: { data: { connId: number } } | null };
    const before = hub.active!.data.connId;
    const rotated = await cli(['config', 'rotate-secret']);
    expect(rotated.code).toBe(0);
    expect(rotated.stdout).toContain('The running server now uses it');
    // The open socket was authenticated once, at the upgrade. Stop the service worker (as Chrome
    // does when idle) and wake it with a navigation: it connects again, re-reading auth.json from
    // the extension folder — which must now hold the new secret, or the server refuses it.
    const cdp = await h.context.browser()!.newBrowserCDPSession();
    try {
      const { targetInfos } = (await cdp.send('Target.getTargets')) as { targetInfos: { targetId: string; type: string; url: string }[] };
      const sw = targetInfos.find((t) => t.type === 'service_worker' && t.url.startsWith(`chrome-extension://${h.extensionId}/`));
      expect(sw).toBeDefined();
      await cdp.send('Target.closeTarget', { targetId: sw!.targetId });
    } finally {
      await cdp.detach().catch(() => {});
    }
    const wake = await h.context.newPage();
    let reconnected = false;
    try {
      await wake.goto(`${app.url}/other`);
      for (let i = 0; i < 300 && !reconnected; i++) {
        reconnected = (hub.active?.data.connId ?? 0) > before;
        if (!reconnected) await Bun.sleep(100);
      }
    } finally {
      await wake.close();
    }
    expect(reconnected).toBe(true);
    const tabs = await cli(['tool', 'call', 'browser_list_tabs']);
    expect(tabs.stderr).toBe('');
    expect(tabs.code).toBe(0);
    expect(JSON.stringify(JSON.parse(tabs.stdout).tabs)).toContain(`${app.url}/app`);
  });
});
