/**
 * A plugin for an app whose pages are strict and whose script rearranges the page's globals, run
 * through the real extension in Chromium: the page sends `script-src 'self'` and Trusted Types
 * (`require-trusted-types-for 'script'; trusted-types 'none'`), and its own script replaces
 * window.fetch with a wrapper that adds the app's header but drops the AbortSignal (and holds some
 * requests until a token refresh that never finishes), and wraps
 * JSON.parse / JSON.stringify dropping their extra arguments, and gives arrays a toJSON as
 * Prototype.js did. The adapter still loads and runs,
 * the SDK's helpers go through the app's wrapper, a request's timeout still ends it, and a DOM
 * element returned by mistake is named instead of reaching the agent as {}.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { buildPlugin, createPlugin } from '../../plugins/tooling/index.ts';
import { startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';
import { connectMcp } from '../harness/fake-extension.ts';
import { makeTempConfigDir } from '../harness/server.ts';

setDefaultTimeout(180_000);

const CSP = "default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none'; require-trusted-types-for 'script'; trusted-types 'none'";
const PAGE = '<!doctype html><html><head><title>Strict app</title><script src="/strict-app.js"></script></head><body>app</body></html>';
const APP_SCRIPT = `(function () {
  var realFetch = window.fetch;
  // The app's own fetch wrapper: adds its header, passes the rest on, but not the signal.
  window.fetch = function (input, init) {
    init = init || {};
    // Requests to /api/hang wait for a token refresh that never finishes, whatever their signal says.
    if (String(input).indexOf('/api/hang') >= 0) return new Promise(function () {});
    var headers = new Headers(init.headers || {});
    headers.set('x-app-wrapper', 'yes');
    return realFetch(input, { method: init.method, headers: headers, body: init.body, credentials: init.credentials });
  };
  var realParse = JSON.parse, realStringify = JSON.stringify;
  JSON.parse = function (text) { return realParse(text); };
  JSON.stringify = function (value) { return realStringify(value); };
  // As older libraries (Prototype.js) do: every array written by JSON.stringify becomes a string.
  Array.prototype.toJSON = function () { return 'array of ' + this.length; };
  // Trusted Types are enforced here: an HTML string assigned to innerHTML throws.
  var typesEnforced = false;
  try { document.createElement('div').innerHTML = '<b>x</b>'; } catch (e) { typesEnforced = true; }
  document.title = typesEnforced ? 'Strict app ready' : 'Strict app without Trusted Types';
})();`;

const root = makeTempConfigDir('opentabs-author-s20h-');
let h: BrowserHarness;
let mcp: Client;
/** What the app's API saw: path and the wrapper's header. */
const seen: { path: string; wrapper: string | null; body?: string }[] = [];

const text = (r: unknown) => (r as { content: { type: string; text: string }[] }).content[0]!.text;

beforeAll(async () => {
  const { dir } = await createPlugin('strict', join(root, 'strict'), { urlPattern: 'http://127.0.0.1/*' });
  writeFileSync(
    join(dir, 'src/index.ts'),
    `import * as v from 'valibot';
import { definePlugin, defineTool, fetchJson, postJson } from '@opentabs/sdk';

export default definePlugin({
  name: 'strict',
  displayName: 'Strict',
  description: 'An app with strict pages',
  urlPatterns: ['http://127.0.0.1/*'],
  isReady: () => document.title === 'Strict app ready',
  tools: [
    defineTool({
      name: 'list', description: 'Items.', input: v.object({}),
      output: v.object({ items: v.array(v.object({ id: v.number(), title: v.string() })) }),
      handle: (_i, ctx) => fetchJson('/api/items', { signal: ctx.signal }),
    }),
    defineTool({
      name: 'save', description: 'Save an item.', input: v.object({ title: v.string() }),
      output: v.object({ saved: v.object({ title: v.string(), tags: v.array(v.string()) }) }),
      handle: (i, ctx) => { ctx.log.info('saving', { title: i.title, tags: ['a', 'b'] }); return postJson('/api/items', { title: i.title, tags: ['a', 'b'] }, { signal: ctx.signal }); },
    }),
    defineTool({
      name: 'hang', description: 'A request the page never sends.', input: v.object({}), output: v.unknown(),
      handle: (_i, ctx) => fetchJson('/api/hang', { signal: ctx.signal, timeoutMs: 1500 }),
    }),
    defineTool({
      name: 'markup', description: 'Assigns HTML, which Trusted Types refuse.', input: v.object({}), output: v.unknown(),
      handle: () => { const el = document.createElement('div'); el.innerHTML = '<b>x</b>'; return { html: el.innerHTML }; },
    }),
    defineTool({
      name: 'element', description: 'Returns an element by mistake.', input: v.object({}), output: v.unknown(),
      handle: () => ({ heading: document.body }),
    }),
  ],
});
`,
  );
  await buildPlugin(dir, { reload: false, log: () => {} });
  h = await startBrowserHarness({
    localPlugins: [dir],
    permissions: { strict: { default: 'auto' } },
    routes: (req) => {
      const path = new URL(req.url).pathname;
      if (path === '/strict') return new Response(PAGE, { headers: { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': CSP } });
      if (path === '/strict-app.js') return new Response(APP_SCRIPT, { headers: { 'content-type': 'text/javascript' } });
      if (path !== '/api/items') return undefined;
      return (async () => {
        const body = req.method === 'POST' ? await req.text() : undefined;
        seen.push({ path, wrapper: req.headers.get('x-app-wrapper'), ...(body !== undefined ? { body } : {}) });
        if (req.method === 'POST') return Response.json({ saved: JSON.parse(body!) });
        return Response.json({ items: [{ id: 1, title: 'first' }] });
      })();
    },
  });
  const page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/strict'));
  await h.waitForHealth((x) => x.pluginDetails?.find((p: { name: string }) => p.name === 'strict')?.tabState === 'ready', 'the strict tab ready', 60_000);
  mcp = await connectMcp(h.url, h.srv.secret);
});

afterAll(async () => {
  await mcp?.close().catch(() => {});
  await h?.stop();
  rmSync(root, { recursive: true, force: true });
});

test('under script-src self and Trusted Types the adapter loads; its requests go through the app\'s fetch wrapper', async () => {
  const r = await mcp.callTool({ name: 'strict_list', arguments: {} });
  expect(r.isError).toBe(false);
  expect(r.structuredContent).toEqual({ items: [{ id: 1, title: 'first' }] });
  expect(seen.find((s) => s.path === '/api/items')?.wrapper).toBe('yes');
});

test('with JSON wrapped and Array.prototype.toJSON set by the page, a body and a result carry their arrays as arrays', async () => {
  const r = await mcp.callTool({ name: 'strict_save', arguments: { title: 'new' } });
  expect(r.isError).toBe(false);
  expect(r.structuredContent).toEqual({ saved: { title: 'new', tags: ['a', 'b'] } });
  expect(JSON.parse(seen.find((s) => s.body !== undefined)!.body!)).toEqual({ title: 'new', tags: ['a', 'b'] });
  // The page's own toJSON is back in place after each write.
  const page = h.context.pages().find((p) => p.url().endsWith('/strict'))!;
  expect(await page.evaluate(() => JSON.stringify([1, 2]))).toBe('"array of 2"');
});

test("a request the page's fetch never answers ends at the helper's timeout, though that fetch drops the signal", async () => {
  const r = await h.callTool('strict_hang', {});
  expect(r.status).toBeGreaterThanOrEqual(400);
  expect(r.body.error).toMatchObject({ category: 'timeout' });
  expect(r.body.error.message).toContain('GET /api/hang timed out after 1500 ms');
  expect(seen.some((s) => s.path === '/api/hang')).toBe(false);
});

test('an element returned by mistake is named with its place, not sent as {}', async () => {
  const r = await mcp.callTool({ name: 'strict_element', arguments: {} });
  expect(r.isError).toBe(true);
  expect(text(r)).toContain('strict_element returned a value that cannot be sent as JSON: a DOM node (<body>) at heading (JSON would send it as {}); return the data it shows');
});

test("a handler assigning HTML on the Trusted Types page fails naming the tool, in the browser's words", async () => {
  const r = await mcp.callTool({ name: 'strict_markup', arguments: {} });
  expect(r.isError).toBe(true);
  expect(text(r)).toStartWith('strict_markup failed: ');
  expect(text(r)).toContain('TrustedHTML');
});
