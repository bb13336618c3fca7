/**
 * A plugin's page sets document.title 3,000 times in a few seconds, in real Chromium with the real
 * extension: every change is a tabs.onUpdated event, and the worker looked at every tab and sent
 * tab.stateChanged for each. Title and URL changes are now reported at most every 200 ms (the
 * last title goes out), counted as the tab.stateChanged requests the server gets; the plugin's
 * calls and the built-in tools still answer.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFixturePlugin } from '../fixtures/ext-plugin/plugin.ts';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);
let h: BrowserHarness;
let parent = '';
/** The worker's minimum time between reports of title and URL changes. */
const TITLE_REPORT_MIN_MS = 200;

beforeAll(async () => {
  parent = mkdtempSync(join(tmpdir(), 'opentabs-title-storm-'));
  h = await startBrowserHarness({ localPlugins: [writeFixturePlugin(parent)], permissions: { fixture: { default: 'auto' } } });
}, 60_000);

afterAll(async () => {
  await h?.stop();
  if (parent) rmSync(parent, { recursive: true, force: true });
});

test('a title storm is reported at a bounded rate, the last title last', async () => {
  const hub = h.srv.ctx.hub;
  let reports = 0;
  const setTabs = hub.setTabs.bind(hub);
  hub.setTabs = (...a: Parameters<typeof setTabs>) => {
    reports++;
    return setTabs(...a);
  };
  const app = await h.context.newPage();
  await app.goto(h.fixtureUrl('/pages/plugin-app.html'));
  await h.waitForHealth((x) => x.pluginDetails?.find((p: any) => p.name === 'fixture')?.tabState === 'ready', 'fixture tab state ready');
  const before = reports;
  const started = Date.now();
  const CHANGES = 3000;
  await app.evaluate(async (n) => {
    for (let i = 0; i < n; i++) {
      document.title = `storm ${i}`;
      if (i % 10 === 0) await new Promise((done) => setTimeout(done, 0));
    }
  }, CHANGES);
  await h.waitForHealth((x) => x.pluginDetails?.find((p: any) => p.name === 'fixture')?.tabs?.[0]?.title === `storm ${CHANGES - 1}`, 'the last title reported', 30_000);
  const seconds = (Date.now() - started) / 1000;
  const sent = reports - before;
  console.log(`${CHANGES} title changes in ${seconds.toFixed(1)} s: ${sent} tab.stateChanged`);
  expect(sent).toBeLessThanOrEqual(Math.ceil((seconds * 1000) / TITLE_REPORT_MIN_MS) + 2);
  const echo = await h.callTool('fixture_echo', { text: 'after the storm' });
  expect(echo.status).toBe(200);
  expect(echo.body.result.title).toBe(`storm ${CHANGES - 1}`);
  expect((await h.callTool('browser_list_tabs')).status).toBe(200);
  await waitUntil(async () => (await h.health())?.extensionConnected, 'still connected');
  await app.close();
});
