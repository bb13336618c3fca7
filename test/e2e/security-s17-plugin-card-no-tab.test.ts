/**
 * An approval card for a plugin call names the plugin's tab it will act in, or lists its tabs,
 * and the call runs only there. With no tab of the plugin open as the call asked, the card named
 * none, the call was bound to nothing, and the extension picked the tab when it ran: the agent
 * could open a tab of the app while the card waited (the user's other account, another workspace,
 * a page of its choosing that the plugin's patterns match) and the approved call ran there, in a
 * page the user never saw on the card. Now such a call is bound to no tab and does not run.
 * Real Chromium, the real extension, the fixture plugin.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFixturePlugin } from '../fixtures/ext-plugin/plugin.ts';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
let pluginParent = '';

beforeAll(async () => {
  pluginParent = mkdtempSync(join(tmpdir(), 'opentabs-s17-plugin-'));
  h = await startBrowserHarness({
    localPlugins: [writeFixturePlugin(pluginParent)],
    permissions: { browser: { default: 'auto' }, fixture: { default: 'ask' } },
  });
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (pluginParent) rmSync(pluginParent, { recursive: true, force: true });
});

const readyTabs = (n: number) =>
  waitUntil(() => {
    const tabs = h.srv.ctx.hub.tabsFor('fixture').tabs.filter((t) => t.ready);
    return tabs.length === n ? tabs : null;
  }, `${n} fixture tab(s) ready`);

test('a call asked with no tab of its plugin open does not run in a tab opened while the card waited', async () => {
  expect(h.srv.ctx.hub.tabsFor('fixture').tabs).toEqual([]);
  const call = h.callTool('fixture_echo', { text: 'send the report' });
  const card = await waitUntil(() => h.srv.ctx.hub.confirmations.list()[0], 'the call to ask');
  expect(card.target?.tabId).toBeUndefined();
  expect(card.target?.candidateTabs ?? []).toEqual([]);
  // While the card waits: a tab of the app, of the agent's choosing.
  const opened = await h.callTool('browser_open_tab', { url: h.fixtureUrl('/pages/plugin-app.html?account=other'), active: true });
  expect(opened.status).toBe(200);
  await readyTabs(1);
  h.srv.ctx.hub.confirmations.respond(card.id, 'allow');
  const r = await call;
  expect([r.status, r.body.error?.code, r.body.result?.href]).toEqual([409, 'tab_mismatch', undefined]);
  // With that tab on the card, the next call runs in it.
  const again = h.callTool('fixture_echo', { text: 'send the report' });
  const next = await waitUntil(() => h.srv.ctx.hub.confirmations.list()[0], 'the next call to ask');
  expect(next.target?.tabId).toBe(opened.body.result.id);
  h.srv.ctx.hub.confirmations.respond(next.id, 'allow');
  const ok = await again;
  expect([ok.status, ok.body.result?.href]).toEqual([200, h.fixtureUrl('/pages/plugin-app.html?account=other')]);
});
