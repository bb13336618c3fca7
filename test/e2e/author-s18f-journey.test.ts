/**
 * A plugin author's journey against a small app on 127.0.0.1 (login cookie, a JSON API that wants
 * a CSRF header, list and create, a slow export, a rate limit), through the real extension in
 * Chromium: `opentabs plugin create`, the SDK README's helpers, `npm run build` and `npm run add`,
 * then calls over MCP (official SDK client) and `opentabs tool call`. Checks what the agent gets:
 * annotations, typed results, progress, the SDK's error categories, and a handler that throws a
 * plain object answered with what it threw (not "[object Object]").
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CLI_BIN } from '../../plugins/tooling/paths.ts';
import { startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';
import { connectMcp } from '../harness/fake-extension.ts';
import { runCli } from '../integration/cli-support.ts';

setDefaultTimeout(240_000);

const CSRF = 'csrf-s18f';
const items: { id: number; title: string }[] = [{ id: 1, title: 'first' }];
// The export answers once the test has seen its first progress notification: no timing involved.
let releaseExport!: () => void;
const exportReleased = new Promise<void>((resolve) => (releaseExport = resolve));
const app = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  async fetch(req) {
    const u = new URL(req.url);
    const logged = (req.headers.get('cookie') ?? '').includes('sid=ok');
    if (u.pathname === '/login') return new Response('', { status: 302, headers: { location: '/', 'set-cookie': 'sid=ok; Path=/; HttpOnly' } });
    if (u.pathname === '/') {
      return new Response(`<!doctype html><title>Todo</title>${logged ? `<meta name="csrf-token" content="${CSRF}">` : ''}<body>todo</body>`, { headers: { 'content-type': 'text/html' } });
    }
    if (!logged) return Response.json({ error: 'login required' }, { status: 401 });
    if (u.pathname === '/api/items' && req.method === 'GET') return Response.json({ items });
    if (u.pathname === '/api/items' && req.method === 'POST') {
      if (req.headers.get('x-csrf-token') !== CSRF) return Response.json({ error: 'bad csrf' }, { status: 403 });
      const body = (await req.json()) as { title: string };
      if (body.title === 'flood') return Response.json({ error: 'slow down' }, { status: 429, headers: { 'retry-after': '7' } });
      const it = { id: items.length + 1, title: body.title };
      items.push(it);
      return Response.json(it, { status: 201 });
    }
    if (u.pathname === '/api/export') {
      await exportReleased;
      return Response.json({ items });
    }
    return new Response('not found', { status: 404 });
  },
});

const SOURCE = `import * as v from 'valibot';
import { csrfHeaders, definePlugin, defineTool, fetchJson, getMetaContent, postJson } from '@opentabs/sdk';

const Item = v.object({ id: v.number(), title: v.string() });

export default definePlugin({
  name: 'todo',
  displayName: 'Todo',
  description: 'Todo items',
  urlPatterns: ['http://127.0.0.1:${app.port}/*'],
  isReady: () => Boolean(getMetaContent('csrf-token')),
  tools: [
    defineTool({
      name: 'list_items',
      description: 'List todo items.',
      input: v.object({}),
      output: v.object({ items: v.array(Item) }),
      annotations: { readOnlyHint: true },
      handle: (_input, ctx) => fetchJson('/api/items', { signal: ctx.signal }),
    }),
    defineTool({
      name: 'create_item',
      description: 'Create a todo item.',
      input: v.object({ title: v.pipe(v.string(), v.minLength(1)) }),
      output: Item,
      annotations: { destructiveHint: true },
      handle: (input, ctx) => postJson('/api/items', { title: input.title }, { headers: csrfHeaders(), signal: ctx.signal }),
    }),
    defineTool({
      name: 'export_items',
      description: 'Export every item (slow).',
      input: v.object({}),
      output: v.object({ count: v.number() }),
      annotations: { readOnlyHint: true },
      async handle(_input, ctx) {
        ctx.reportProgress({ progress: 0, total: 1, message: 'exporting' });
        const r = await fetchJson<{ items: unknown[] }>('/api/export', { signal: ctx.signal });
        return { count: r.items.length };
      },
    }),
    defineTool({
      name: 'broken',
      description: 'Throws a plain object, as a careless handler does.',
      input: v.object({}),
      output: v.object({}),
      handle: () => {
        throw { status: 500, detail: 'quota' };
      },
    }),
  ],
});
`;

const root = mkdtempSync(join(tmpdir(), 'opentabs-author-s18f-'));
let h: BrowserHarness;
let mcp: Client;

beforeAll(async () => {
  const env = { ...process.env, PATH: '/usr/local/bin:/usr/bin:/bin', OPENTABS_CONFIG_DIR: join(root, 'state') };
  const created = spawnSync('node', [CLI_BIN, 'plugin', 'create', 'todo', '--url', `http://127.0.0.1:${app.port}/*`], { cwd: root, env, encoding: 'utf8', timeout: 60_000 });
  expect({ status: created.status, out: `${created.stdout}${created.stderr}` }).toMatchObject({ status: 0 });
  const dir = join(root, 'opentabs-plugin-todo');
  writeFileSync(join(dir, 'src/index.ts'), SOURCE);
  for (const script of ['build', 'test', 'add']) {
    const r = spawnSync('npm', ['run', '--silent', script], { cwd: dir, env, encoding: 'utf8', timeout: 180_000 });
    expect({ script, status: r.status, out: `${r.stdout}${r.stderr}` }).toMatchObject({ script, status: 0 });
  }
  const localPlugins = JSON.parse(readFileSync(join(root, 'state', 'config.json'), 'utf8')).localPlugins as string[];
  h = await startBrowserHarness({ localPlugins, permissions: { todo: { default: 'auto' } } });
  const page = await h.context.newPage();
  await page.goto(`http://127.0.0.1:${app.port}/login`);
  await h.waitForHealth((x) => x.pluginDetails?.find((p: { name: string }) => p.name === 'todo')?.tabState === 'ready', 'the todo tab ready', 60_000);
  mcp = await connectMcp(h.url, h.srv.secret);
});

afterAll(async () => {
  await mcp?.close().catch(() => {});
  await h?.stop();
  app.stop(true);
  rmSync(root, { recursive: true, force: true });
});

test('tools/list carries the annotations and input schemas', async () => {
  const { tools } = await mcp.listTools();
  const byName = new Map(tools.map((t) => [t.name, t]));
  expect(byName.get('todo_list_items')?.annotations).toEqual({ readOnlyHint: true });
  expect(byName.get('todo_create_item')?.annotations).toEqual({ destructiveHint: true });
  expect(byName.get('todo_create_item')?.inputSchema).toMatchObject({ type: 'object', properties: { title: { type: 'string' } }, required: ['title'] });
});

test('read and write over MCP: cookie session and CSRF header as the app wants', async () => {
  const created = await mcp.callTool({ name: 'todo_create_item', arguments: { title: 'second' } });
  expect(created.isError).toBe(false);
  expect(created.structuredContent).toEqual({ id: 2, title: 'second' });
  const listed = await mcp.callTool({ name: 'todo_list_items', arguments: {} });
  expect(listed.structuredContent).toEqual({ items: [{ id: 1, title: 'first' }, { id: 2, title: 'second' }] });
});

test('validation, rate limit and a thrown plain object reach the agent with their category and words', async () => {
  const empty = await mcp.callTool({ name: 'todo_create_item', arguments: { title: '' } });
  expect(empty.isError).toBe(true);
  expect(JSON.stringify(empty.content)).toContain('todo_create_item');
  const flood = await mcp.callTool({ name: 'todo_create_item', arguments: { title: 'flood' } });
  expect(flood.isError).toBe(true);
  expect((flood.structuredContent as { error: Record<string, unknown> }).error).toMatchObject({ category: 'rate_limited', retryable: true, retryAfterMs: 7000 });
  const broken = await mcp.callTool({ name: 'todo_broken', arguments: {} });
  expect(broken.isError).toBe(true);
  const text = (broken.content as { text: string }[])[0]!.text;
  expect(text).toContain('todo_broken failed: {"status":500,"detail":"quota"} was thrown, not an Error (throw an Error or a ToolError with a message instead)');
  expect(text).not.toContain('[object Object]');
});

test('a slow tool reports progress over MCP before its result', async () => {
  const progress: unknown[] = [];
  const r = await mcp.callTool({ name: 'todo_export_items', arguments: {} }, undefined, {
    onprogress: (p) => {
      progress.push(p);
      releaseExport();
    },
  });
  expect(progress[0]).toMatchObject({ progress: 0, total: 1, message: 'exporting' });
  expect(r.structuredContent).toEqual({ count: 2 });
});

test('`opentabs tool call` prints the result, and a tool error exits 1 with its message', async () => {
  const opts = { configDir: h.configDir, env: { PORT: new URL(h.url).port }, timeoutMs: 60_000 };
  const ok = await runCli(['tool', 'call', 'todo_list_items', '{}'], opts);
  expect(ok.code).toBe(0);
  expect(JSON.parse(ok.stdout).items.length).toBe(2);
  const bad = await runCli(['tool', 'call', 'todo_broken', '{}'], opts);
  expect(bad.code).toBe(1);
  expect(bad.stderr).toContain('todo_broken failed: {"status":500,"detail":"quota"} was thrown, not an Error');
});
