/**
 * README's plugin walkthrough followed in a fresh folder, through the real extension in Chromium:
 * scaffold → own tool (cookie session + CSRF header) → npm run build / test → add → call → result.
 * The plugin's pattern names the app's port, so a page on another port gets no adapter; and a tab
 * whose isReady() turns false answers adapter_not_ready instead of running the tool.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { CLI_BIN } from '../../plugins/tooling/paths.ts';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(180_000);

const PAGE = `<!doctype html><html><head><title>Shop</title><meta name="csrf-token" content="tok-1"></head><body>shop</body></html>`;
function appServer() {
  return Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      const u = new URL(req.url);
      if (u.pathname === '/api/items') {
        if (req.headers.get('x-csrf-token') !== 'tok-1') return Response.json({ error: 'bad csrf' }, { status: 403 });
        return Response.json({ items: [{ id: 1, title: 'first' }], port: Number(u.port) });
      }
      return new Response(PAGE, { headers: { 'content-type': 'text/html; charset=utf-8' } });
    },
  });
}

const root = mkdtempSync(join(tmpdir(), 'opentabs-walkthrough-'));
const app = appServer();
const other = appServer();
let h: BrowserHarness;
let page: Page;
let otherPage: Page;

beforeAll(async () => {
  const env = { ...process.env, PATH: '/usr/local/bin:/usr/bin:/bin', OPENTABS_CONFIG_DIR: join(root, 'state') };
  // README: `opentabs plugin create my-app --url …` scaffolds into ./opentabs-plugin-my-app.
  const created = spawnSync('node', [CLI_BIN, 'plugin', 'create', 'shop', '--url', `http://127.0.0.1:${app.port}/*`], { cwd: root, env, encoding: 'utf8', timeout: 60_000 });
  expect({ status: created.status, out: `${created.stdout}${created.stderr}` }).toMatchObject({ status: 0 });
  const dir = join(root, 'opentabs-plugin-shop');
  // The config dir is not the default: the steps that reach a server carry it.
  const assign = `OPENTABS_CONFIG_DIR=${join(root, 'state')} `;
  expect(created.stdout).toContain(`Next: cd ${dir} && ${assign}npm run build && npm test && ${assign}npm run add`);
  writeFileSync(
    join(dir, 'src/index.ts'),
    `import * as v from 'valibot';
import { csrfHeaders, definePlugin, defineTool, fetchJson } from '@opentabs/sdk';

export default definePlugin({
  name: 'shop',
  displayName: 'Shop',
  description: 'Items in Shop',
  urlPatterns: ['http://127.0.0.1:${app.port}/*'],
  isReady: () => (globalThis as { __shopReady?: boolean }).__shopReady !== false,
  tools: [
    defineTool({
      name: 'list_items',
      description: 'List items.',
      input: v.object({ limit: v.optional(v.number(), 20) }),
      output: v.object({ items: v.array(v.object({ id: v.number(), title: v.string() })), port: v.number() }),
      handle: (input, ctx) => fetchJson('/api/items', { query: { limit: input.limit }, headers: csrfHeaders(), signal: ctx.signal }),
    }),
  ],
});
`,
  );
  for (const script of ['build', 'test', 'add']) {
    const r = spawnSync('npm', ['run', '--silent', script], { cwd: dir, env, encoding: 'utf8', timeout: 120_000 });
    expect({ script, status: r.status, out: `${r.stdout}${r.stderr}` }).toMatchObject({ script, status: 0 });
  }
  // `npm run add` listed the folder in config.json; the harness starts with that same list.
  const localPlugins = JSON.parse(readFileSync(join(root, 'state', 'config.json'), 'utf8')).localPlugins as string[];
  expect(localPlugins).toEqual([dir]);
  h = await startBrowserHarness({ localPlugins, permissions: { shop: { default: 'auto' } } });
  otherPage = await h.context.newPage();
  await otherPage.goto(`http://127.0.0.1:${other.port}/`);
  page = await h.context.newPage();
  await page.goto(`http://127.0.0.1:${app.port}/`);
}, 180_000);

afterAll(async () => {
  await h?.stop();
  app.stop(true);
  other.stop(true);
  rmSync(root, { recursive: true, force: true });
});

describe('README plugin walkthrough', () => {
  test('the call reaches the app through the real extension and returns its data', async () => {
    await h.waitForHealth((x) => x.pluginDetails?.find((p: any) => p.name === 'shop')?.tabState === 'ready', 'shop tab ready');
    const r = await h.callTool('shop_list_items', {});
    expect(r.status).toBe(200);
    expect(r.body.result).toEqual({ items: [{ id: 1, title: 'first' }], port: app.port });
  });

  test('a misspelled argument is rejected naming the key and the allowed keys', async () => {
    const r = await h.callTool('shop_list_items', { limt: 5 });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body)).toContain('limt');
    expect(JSON.stringify(r.body)).toContain('allowed: limit');
  });

  test('the port in the pattern is honoured: no adapter on the same host at another port', async () => {
    const health = await h.waitForHealth((x) => x.pluginDetails?.find((p: any) => p.name === 'shop')?.tabs?.length >= 1, 'shop tab listed');
    const tabs = health.pluginDetails.find((p: any) => p.name === 'shop').tabs as { url: string }[];
    expect(tabs.map((t) => new URL(t.url).port)).toEqual([String(app.port)]);
    await waitUntil(() => page.evaluate(() => Object.keys((window as any).__opentabs_adapters__ ?? {}).includes('shop')), 'adapter in the app tab');
    expect(await otherPage.evaluate(() => Object.keys((window as any).__opentabs_adapters__ ?? {}))).toEqual([]);
  });

  test('a tab that stops being ready answers adapter_not_ready, and runs again once ready', async () => {
    await page.evaluate(() => ((globalThis as any).__shopReady = false));
    const r = await h.callTool('shop_list_items', {});
    expect(r.status).toBe(503);
    expect(r.body.error).toMatchObject({ code: 'adapter_not_ready', retryable: true });
    expect(r.body.error.message).toContain('not ready');
    await page.evaluate(() => ((globalThis as any).__shopReady = true));
    const again = await h.callTool('shop_list_items', {});
    expect(again.status).toBe(200);
  });
});
