/**
 * An approval card for a plugin call that names no tab lists the plugin's open tabs with the page
 * each shows ("Runs in one of these tabs: Tab 7: https://app…"), and the approved call runs only
 * in one of those tabs. It ran in such a tab whatever site it showed by then: a listed tab that
 * went, while the card waited, to another site the plugin's patterns match (another workspace or
 * account of the app, a page of someone else's on the same platform) got the call, with its
 * arguments and the plugin's settings. A card naming one tab already bound the call to that
 * tab's site; now each listed tab is bound to the site the card showed for it. Real Chromium, the
 * real extension, the fixture plugin (its pattern names no port, so the same app on another port
 * is another site it matches).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFixturePlugin } from '../fixtures/ext-plugin/plugin.ts';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);

const APP = readFileSync(join(import.meta.dir, '../fixtures/pages/plugin-app.html'), 'utf8');

let h: BrowserHarness;
let pluginParent = '';
let otherSite: ReturnType<typeof Bun.serve>;

beforeAll(async () => {
  pluginParent = mkdtempSync(join(tmpdir(), 'opentabs-s23c-tabs-'));
  otherSite = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response(APP, { headers: { 'content-type': 'text/html; charset=utf-8' } }) });
  h = await startBrowserHarness({
    localPlugins: [writeFixturePlugin(pluginParent)],
    permissions: { browser: { default: 'auto' }, fixture: { default: 'ask' } },
  });
}, 120_000);

afterAll(async () => {
  await h?.stop();
  otherSite?.stop(true);
  if (pluginParent) rmSync(pluginParent, { recursive: true, force: true });
});

const readyTabs = (n: number) =>
  waitUntil(() => {
    const tabs = h.srv.ctx.hub.tabsFor('fixture').tabs.filter((t) => t.ready);
    return tabs.length === n ? tabs : null;
  }, `${n} fixture tab(s) ready`);

describe('a card listing several tabs binds each to the site it showed', () => {
  test('a listed tab gone to another site of the plugin meanwhile does not get the call', async () => {
    const work = await h.context.newPage();
    await work.goto(h.fixtureUrl('/pages/plugin-app.html?account=work'));
    const home = await h.context.newPage();
    await home.goto(h.fixtureUrl('/pages/plugin-app.html?account=home'));
    const workTab = await h.tabIdOf(work);
    await readyTabs(2);
    const call = h.callTool('fixture_echo', { text: 'the quarterly numbers' });
    const card = await waitUntil(() => h.srv.ctx.hub.confirmations.list()[0], 'the call to ask');
    const listed = card.target?.candidateTabs ?? [];
    expect(listed.map((c) => c.url).sort()).toEqual([h.fixtureUrl('/pages/plugin-app.html?account=home'), h.fixtureUrl('/pages/plugin-app.html?account=work')]);
    // While the card waits: one listed tab goes to another site the plugin matches, the other closes.
    const elsewhere = `http://127.0.0.1:${otherSite.port}/pages/plugin-app.html?account=someone-else`;
    await work.goto(elsewhere);
    await home.close();
    await waitUntil(() => h.srv.ctx.hub.tabsFor('fixture').tabs.find((t) => t.tabId === workTab && t.ready && t.url === elsewhere), 'the listed tab ready on the other site');
    h.srv.ctx.hub.confirmations.respond(card.id, 'allow');
    const r = await call;
    expect([r.status, r.body.error?.code], JSON.stringify(r.body)).toEqual([409, 'tab_mismatch']);
    await work.close();
  });

  test('a listed tab still on its site gets the call', async () => {
    const work = await h.context.newPage();
    await work.goto(h.fixtureUrl('/pages/plugin-app.html?account=work'));
    const home = await h.context.newPage();
    await home.goto(h.fixtureUrl('/pages/plugin-app.html?account=home'));
    await readyTabs(2);
    const call = h.callTool('fixture_echo', { text: 'x' });
    const card = await waitUntil(() => h.srv.ctx.hub.confirmations.list()[0], 'the call to ask');
    expect((card.target?.candidateTabs ?? []).length).toBe(2);
    // A listed tab moves within its site: still the page the card showed for it.
    await home.goto(h.fixtureUrl('/pages/plugin-app.html?account=home&page=2'));
    await work.close();
    await readyTabs(1);
    h.srv.ctx.hub.confirmations.respond(card.id, 'allow');
    const r = await call;
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.result.href).toBe(h.fixtureUrl('/pages/plugin-app.html?account=home&page=2'));
    await home.close();
  });
});
