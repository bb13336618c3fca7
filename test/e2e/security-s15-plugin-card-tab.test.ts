/**
 * An approval card for a plugin call names the plugin's tab it will act in ("Tab 7: …"), or lists
 * the plugin's tabs when there are several. The extension picked the tab only when the call ran,
 * after the approval: the agent could open another tab of the plugin while the card waited (the
 * user's other account or workspace of the same app, or a page of its choosing that the plugin's
 * patterns match) and the approved call ran there. Now it runs in the tab the card named, and only
 * while that tab shows the site the card showed; a card listing several tabs binds the call to
 * those. Real Chromium, the real extension, the fixture plugin.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { writeFixturePlugin } from '../fixtures/ext-plugin/plugin.ts';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
let pluginParent = '';
let first: Page;
let firstTab = 0;

beforeAll(async () => {
  pluginParent = mkdtempSync(join(tmpdir(), 'opentabs-s15-plugin-'));
  h = await startBrowserHarness({
    localPlugins: [writeFixturePlugin(pluginParent)],
    permissions: { browser: { default: 'auto' }, fixture: { default: 'ask' } },
  });
  first = await h.context.newPage();
  await first.goto(h.fixtureUrl('/pages/plugin-app.html?account=work'));
  firstTab = await h.tabIdOf(first);
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (pluginParent) rmSync(pluginParent, { recursive: true, force: true });
});

/** The fixture plugin's tabs as the server knows them, once `n` are ready. */
const readyTabs = (n: number) =>
  waitUntil(() => {
    const tabs = h.srv.ctx.hub.tabsFor('fixture').tabs.filter((t) => t.ready);
    return tabs.length === n ? tabs : null;
  }, `${n} fixture tab(s) ready`);

const pending = () => waitUntil(() => h.srv.ctx.hub.confirmations.list()[0], 'the call to ask');

describe('an approved plugin call runs where the card said', () => {
  test('in the tab the card named, not in one the agent opened while the card waited', async () => {
    await readyTabs(1);
    const call = h.callTool('fixture_echo', { text: 'send the report' });
    const card = await pending();
    expect(card.target).toMatchObject({ tabId: firstTab, url: h.fixtureUrl('/pages/plugin-app.html?account=work') });
    // While the card waits: another tab of the app, in front.
    const opened = await h.callTool('browser_open_tab', { url: h.fixtureUrl('/pages/plugin-app.html?account=other'), active: true });
    expect(opened.status).toBe(200);
    const other = opened.body.result.id as number;
    await readyTabs(2);
    h.srv.ctx.hub.confirmations.respond(card.id, 'allow');
    const r = await call;
    expect(r.status).toBe(200);
    expect(r.body.result.href).toBe(h.fixtureUrl('/pages/plugin-app.html?account=work'));
    await h.callTool('browser_close_tab', { tabId: other });
    await readyTabs(1);
  });

  test('with several tabs on the card, not in a tab opened after it', async () => {
    const second = await h.context.newPage();
    await second.goto(h.fixtureUrl('/pages/plugin-app.html?account=home'));
    await readyTabs(2);
    const call = h.callTool('fixture_echo', { text: 'x' });
    const card = await pending();
    expect((card.target?.candidateTabs ?? []).length).toBe(2);
    const opened = await h.callTool('browser_open_tab', { url: h.fixtureUrl('/pages/plugin-app.html?account=other'), active: true });
    const other = opened.body.result.id as number;
    await readyTabs(3);
    h.srv.ctx.hub.confirmations.respond(card.id, 'allow');
    const r = await call;
    expect(r.status).toBe(200);
    expect(r.body.result.href).not.toContain('account=other');
    await h.callTool('browser_close_tab', { tabId: other });
    await second.close();
    await readyTabs(1);
  });

  test('the named tab gone to another site of the plugin meanwhile: it does not run', async () => {
    // The plugin's pattern names no port: the same app on another port is another site it matches.
    const html = await Bun.file(join(import.meta.dir, '../fixtures/pages/plugin-app.html')).text();
    const other = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response(html, { headers: { 'content-type': 'text/html; charset=utf-8' } }) });
    try {
      const call = h.callTool('fixture_echo', { text: 'y' });
      const card = await pending();
      expect(card.target?.tabId).toBe(firstTab);
      const elsewhere = `http://127.0.0.1:${other.port}/pages/plugin-app.html?account=work`;
      await first.goto(elsewhere);
      await waitUntil(() => h.srv.ctx.hub.tabsFor('fixture').tabs.find((t) => t.tabId === firstTab && t.ready && t.url === elsewhere), 'the tab ready on the other site');
      h.srv.ctx.hub.confirmations.respond(card.id, 'allow');
      const r = await call;
      expect([r.status, r.body.error?.code]).toEqual([409, 'tab_mismatch']);
    } finally {
      await first.goto(h.fixtureUrl('/pages/plugin-app.html?account=work'));
      other.stop(true);
    }
  });
});
