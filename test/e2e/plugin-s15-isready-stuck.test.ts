/**
 * A plugin whose isReady() never settles, through the real extension in Chromium: the tab counts as
 * not ready after 5 s and the call fails with adapter_not_ready (it waited for the 30 s timeout,
 * "the page may be slow or stuck"); the adapter's handle in the page says why (never settled, or
 * threw with its message).
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildPlugin, createPlugin } from '../../plugins/tooling/index.ts';
import { startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';
import { makeTempConfigDir } from '../harness/server.ts';
import { ADAPTER_REGISTRY_KEY } from '../../server/protocol/page-channel.ts';
import type { Page } from 'playwright-core';

setDefaultTimeout(120_000);

const APP = '<!doctype html><html><head><title>Stuck app</title></head><body>app</body></html>';
const root = makeTempConfigDir('opentabs-isready-e2e-');
let h: BrowserHarness;
let page: Page;

async function plugin(name: string, isReady: string): Promise<string> {
  const { dir } = await createPlugin(name, join(root, name), { urlPattern: 'http://127.0.0.1/*' });
  writeFileSync(
    join(dir, 'src/index.ts'),
    `import * as v from 'valibot';
import { definePlugin, defineTool } from '@opentabs/sdk';
export default definePlugin({
  name: '${name}',
  displayName: '${name}',
  description: 'isReady mistakes',
  urlPatterns: ['http://127.0.0.1/*'],
  isReady: ${isReady},
  tools: [defineTool({ name: 'ping', description: 'ping', input: v.object({}), output: v.unknown(), handle: () => 'pong' })],
});
`,
  );
  await buildPlugin(dir, { reload: false, log: () => {} });
  return dir;
}

beforeAll(async () => {
  const stuck = await plugin('stuck', '() => new Promise<boolean>(() => {})');
  const thrower = await plugin('thrower', "() => { throw new Error('no session cookie'); }");
  h = await startBrowserHarness({
    localPlugins: [stuck, thrower],
    permissions: { stuck: { default: 'auto' }, thrower: { default: 'auto' } },
    routes: (req) => (new URL(req.url).pathname === '/app' ? new Response(APP, { headers: { 'content-type': 'text/html; charset=utf-8' } }) : undefined),
  });
  page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/app'));
  await h.waitForHealth((x) => (x.pluginDetails?.find((p: any) => p.name === 'stuck')?.tabs?.length ?? 0) >= 1, 'stuck tab listed');
}, 180_000);

afterAll(async () => {
  await h?.stop();
  rmSync(root, { recursive: true, force: true });
});

const reasonInPage = (plugin: string) =>
  page.evaluate(({ key, plugin }) => (window as any)[key]?.[plugin]?.notReadyReason as string | undefined, { key: ADAPTER_REGISTRY_KEY, plugin });

test('isReady() that never settles: the tab counts as not ready within 5 s, the call is adapter_not_ready (not the 30 s timeout)', async () => {
  const r = await h.callTool('stuck_ping');
  expect(r.status).toBe(503);
  expect(r.body.error.code).toBe('adapter_not_ready');
  expect(r.body.error.message).not.toContain('timed out');
  // The call's error says why (not a guess at "signed out or still loading").
  expect(r.body.error.message).toContain("stuck's isReady() did not settle within 5 s");
  expect(r.body.error.message).not.toContain('signed out');
  const health = await h.waitForHealth((x) => x.pluginDetails?.find((p: any) => p.name === 'stuck')?.tabState === 'unavailable', 'stuck tab not ready');
  expect(health.pluginDetails.find((p: any) => p.name === 'stuck').tabState).toBe('unavailable');
  // Why is on the adapter's handle in the page, where the extension's check reads isReady().
  expect(await reasonInPage('stuck')).toContain("stuck's isReady() did not settle within 5 s");
});

test('isReady() that throws: adapter_not_ready, and the handle says it threw, with the message', async () => {
  const r = await h.callTool('thrower_ping');
  expect(r.body.error.code).toBe('adapter_not_ready');
  expect(r.body.error.message).toContain("thrower's isReady() threw: no session cookie");
  expect(await reasonInPage('thrower')).toContain("thrower's isReady() threw: no session cookie");
});
