/**
 * An approval card for a plugin call names the plugin's tab it will act in, or lists its tabs,
 * and the call runs only there. With no tab of the plugin open as the call asked, the card named
 * none, the call was bound to nothing, and the extension picked the tab when it ran: the agent
 * could open a tab of the app while the card waited (the user's other account, another workspace,
 * a page of its choosing that the plugin's patterns match) and the approved call ran there, in a
 * page the user never saw on the card. Now such a call is not asked about (no_matching_tab), and
 * one that was asked is bound to the tabs its card listed.
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

test('a call asked with no tab of its plugin open is not asked, and cannot run in a tab opened meanwhile', async () => {
  expect(h.srv.ctx.hub.tabsFor('fixture').tabs).toEqual([]);
  // Answered at once, with no card (a card listing no tab would approve whichever tab the agent
  // opens while it waits; an asked call would wait here for the approval instead).
  const r = await h.callTool('fixture_echo', { text: 'send the report' });
  expect([r.status, r.body.error?.code, r.body.error?.retryable, r.body.result?.href]).toEqual([409, 'no_matching_tab', true, undefined]);
  expect(r.body.error?.message).toContain('nothing was asked');
  expect(h.srv.ctx.hub.confirmations.list()).toEqual([]);
  // With a tab of the app open, the card names it and the call runs there.
  const opened = await h.callTool('browser_open_tab', { url: h.fixtureUrl('/pages/plugin-app.html?account=other'), active: true });
  expect(opened.status).toBe(200);
  await readyTabs(1);
  const again = h.callTool('fixture_echo', { text: 'send the report' });
  const next = await waitUntil(() => h.srv.ctx.hub.confirmations.list()[0], 'the next call to ask');
  expect(next.target?.tabId).toBe(opened.body.result.id);
  h.srv.ctx.hub.confirmations.respond(next.id, 'allow');
  const ok = await again;
  expect([ok.status, ok.body.result?.href]).toEqual([200, h.fixtureUrl('/pages/plugin-app.html?account=other')]);
});
