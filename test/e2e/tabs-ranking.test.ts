/**
 * Which tab a plugin call runs in: the active tab of the focused window first, then other active
 * tabs, then the focused window, then the rest; exclude patterns never match; the choice follows
 * focus changes (the worker's ranking cache is dropped on every tab/window event).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';
import { writeFixturePlugin, FIXTURE_PLUGIN } from '../fixtures/ext-plugin/plugin.ts';

let h: BrowserHarness;
const pluginParent = mkdtempSync(join(tmpdir(), 'opentabs-ranking-'));

beforeAll(async () => {
  h = await startBrowserHarness({ localPlugins: [writeFixturePlugin(pluginParent)], permissions: { [FIXTURE_PLUGIN]: { default: 'auto' } } });
}, 60_000);

afterAll(async () => {
  await h?.stop();
  rmSync(pluginParent, { recursive: true, force: true });
});

const echoHref = async () => {
  const r = await h.callTool(`${FIXTURE_PLUGIN}_echo`, { text: 'where' });
  expect(r.status).toBe(200);
  return r.body.result.href as string;
};

describe('tab ranking', () => {
  test('the active tab wins, and the choice follows focus', async () => {
    const one = await h.context.newPage();
    await one.goto(h.fixtureUrl('/pages/plugin-app.html?one'));
    const two = await h.context.newPage();
    await two.goto(h.fixtureUrl('/pages/plugin-app.html?two'));
    const oneId = await h.tabIdOf(one);
    const twoId = await h.tabIdOf(two);
    await h.waitForHealth((x) => x.pluginDetails?.find((p: { name: string }) => p.name === FIXTURE_PLUGIN)?.tabs.filter((t: { ready: boolean }) => t.ready).length === 2, 'both fixture tabs ready');

    expect((await h.callTool('browser_focus_tab', { tabId: twoId })).status).toBe(200);
    expect(await echoHref()).toBe(two.url());
    expect((await h.callTool('browser_focus_tab', { tabId: oneId })).status).toBe(200);
    expect(await echoHref()).toBe(one.url());
    // An explicit tabId overrides the ranking.
    const explicit = await h.callTool(`${FIXTURE_PLUGIN}_echo`, { text: 'x' }, { tabId: twoId });
    expect(explicit.body.result.href).toBe(two.url());

    // The best tab closes: the next call moves to the other one.
    await h.callTool('browser_close_tab', { tabId: oneId });
    expect(await waitUntil(async () => ((await echoHref()) === two.url() ? true : null), 'the call to move to the remaining tab')).toBe(true);
    await two.close();
  }, 40_000);

  test('a tab matching an exclude pattern is never used', async () => {
    const excluded = await h.context.newPage();
    await excluded.goto(h.fixtureUrl('/pages/plugin-app-excluded.html'));
    expect(await excluded.title()).toBe('Fixture Plugin App'); // same app, excluded URL
    const excludedId = await h.tabIdOf(excluded);
    const r = await h.callTool(`${FIXTURE_PLUGIN}_echo`, { text: 'x' });
    expect(r.body.error.code).toBe('no_matching_tab');
    const explicit = await h.callTool(`${FIXTURE_PLUGIN}_echo`, { text: 'x' }, { tabId: excludedId });
    expect(explicit.body.error.code).toBe('tab_mismatch');
    const state = await h.callTool('extension_check_adapter', { plugin: FIXTURE_PLUGIN });
    expect(state.body.result.tabs).toEqual([]);
    await excluded.close();
  }, 30_000);
});
