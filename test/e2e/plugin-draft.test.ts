/**
 * A plugin drafted from what an app's own frontend does, end to end in Chromium with the real
 * extension: capture on, a scripted session of clicks in the app, `opentabs plugin create
 * --from-capture tab:<id>`, the draft's own build (type check included) and test, `plugin add`,
 * then every generated tool called through MCP with its effect checked in the app. Two apps unlike
 * each other: REST with a cookie session, a CSRF meta tag and ids in paths; one GraphQL endpoint
 * with a CSRF cookie echoed in a header. No recorded cookie or token value may appear in any
 * generated file; a capture without API traffic gives a clear message.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';
import { connectMcp } from '../harness/fake-extension.ts';
import { runCli } from '../integration/cli-support.ts';

setDefaultTimeout(240_000);
const SESSION = 'sess-9f8e7d6c5b4a39281706f5e4d3c2b1a0';
const CSRF = 'csrf-4b3a29181706f5e4d3c2b1a09f8e7d6c';
const GQL_CSRF = 'gqlcsrf-0a1b2c3d4e5f60718293a4b5c6d7e8f9';

function kanbanApp() {
  const state = { cards: new Map<number, { id: number; title: string; column: string }>([[1, { id: 1, title: 'Seed', column: 'todo' }]]), next: 2 };
  const authed = (req: Request) => (req.headers.get('cookie') ?? '').includes(`session=${SESSION}`);
  const page = `<!doctype html><html><head><title>Kanban</title><meta name="csrf-token" content="${CSRF}"></head><body>
<button id="list" onclick="fetch('/api/boards/1/cards?column=todo').then(r => r.json())">List</button>
<button id="add" onclick="send('POST', '/api/boards/1/cards', { title: 'Write tests', column: 'todo' })">Add</button>
<button id="move" onclick="send('POST', '/api/cards/1/move', { column: 'done' })">Move</button>
<button id="del" onclick="send('DELETE', '/api/cards/2')">Delete</button>
<script>
function send(method, url, body) {
  return fetch(url, { method, headers: { 'content-type': 'application/json', 'x-csrf-token': document.querySelector('meta[name=csrf-token]').content }, body: body ? JSON.stringify(body) : undefined }).then(r => r.json());
}
</script></body></html>`;
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const u = new URL(req.url);
      if (!u.pathname.startsWith('/api/')) return new Response(page, { headers: { 'content-type': 'text/html', 'set-cookie': `session=${SESSION}; Path=/; HttpOnly` } });
      if (!authed(req)) return Response.json({ error: 'login' }, { status: 401 });
      if (req.method !== 'GET' && req.headers.get('x-csrf-token') !== CSRF) return Response.json({ error: 'csrf' }, { status: 403 });
      const body = req.method === 'GET' || req.method === 'DELETE' ? {} : ((await req.json()) as Record<string, string>);
      let m: RegExpExecArray | null;
      if (req.method === 'GET' && u.pathname === '/api/boards/1/cards') {
        const col = u.searchParams.get('column');
        return Response.json({ cards: [...state.cards.values()].filter((c) => !col || c.column === col) });
      }
      if (req.method === 'POST' && u.pathname === '/api/boards/1/cards') {
        const card = { id: state.next++, title: body.title!, column: body.column ?? 'todo' };
        state.cards.set(card.id, card);
        return Response.json(card, { status: 201 });
      }
      if (req.method === 'POST' && (m = /^\/api\/cards\/(\d+)\/move$/.exec(u.pathname))) {
        const card = state.cards.get(Number(m[1]));
        if (!card) return Response.json({ error: 'no card' }, { status: 404 });
        card.column = body.column!;
        return Response.json(card);
      }
      if (req.method === 'DELETE' && (m = /^\/api\/cards\/(\d+)$/.exec(u.pathname))) return Response.json({ deleted: state.cards.delete(Number(m[1])) });
      return Response.json({ error: 'not found' }, { status: 404 });
    },
  });
  return { server, state };
}

function graphqlApp() {
  const items: { id: string; name: string }[] = [{ id: 'i1', name: 'Apples' }];
  const page = `<!doctype html><html><head><title>Shop</title></head><body>
<button id="get" onclick="gql('GetItems', 'query GetItems { items { id name } }', {})">Get</button>
<button id="add" onclick="gql('AddItem', 'mutation AddItem($name: String!) { addItem(name: $name) { id name } }', { name: 'Pears' })">Add</button>
<script>
function gql(operationName, query, variables) {
  const token = document.cookie.split('; ').find(c => c.startsWith('csrftoken=')).split('=')[1];
  return fetch('/graphql', { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrftoken': token }, body: JSON.stringify({ operationName, query, variables }) }).then(r => r.json());
}
</script></body></html>`;
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const u = new URL(req.url);
      if (u.pathname !== '/graphql') return new Response(page, { headers: { 'content-type': 'text/html', 'set-cookie': `csrftoken=${GQL_CSRF}; Path=/` } });
      if (req.headers.get('x-csrftoken') !== GQL_CSRF || !(req.headers.get('cookie') ?? '').includes(GQL_CSRF)) return Response.json({ errors: [{ message: 'csrf' }] }, { status: 403 });
      const { operationName, variables } = (await req.json()) as { operationName: string; variables: { name?: string } };
      if (operationName === 'GetItems') return Response.json({ data: { items } });
      if (operationName === 'AddItem') {
        const item = { id: `i${items.length + 1}`, name: variables.name ?? '' };
        items.push(item);
        return Response.json({ data: { addItem: item } });
      }
      return Response.json({ errors: [{ message: `unknown operation ${operationName}` }] });
    },
  });
  return { server, items };
}

const root = mkdtempSync(join(tmpdir(), 'opentabs-draft-'));
const kanban = kanbanApp();
const shop = graphqlApp();
const env = { ...process.env, PATH: '/usr/local/bin:/usr/bin:/bin' };
let h: BrowserHarness;
let mcp: Client;

beforeAll(async () => {
  h = await startBrowserHarness({ permissions: { browser: { tools: { browser_enable_network_capture: 'auto' } } }, server: { limits: { mcpSessionRate: { max: 100, windowMs: 60_000 } } as never } });
  mcp = await connectMcp(h.url, h.srv.secret, '/mcp', 'draft-test');
}, 90_000);

afterAll(async () => {
  await mcp?.close().catch(() => {});
  await h?.stop();
  kanban.server.stop(true);
  shop.server.stop(true);
  rmSync(root, { recursive: true, force: true });
});

/** Record a scripted session: capture on (with bodies), click the buttons, wait for the calls. */
async function record(url: string, buttons: string[], expectRequests: number): Promise<number> {
  const page = await h.context.newPage();
  await page.goto(url);
  const tabId = await h.tabIdOf(page);
  expect((await h.callTool('browser_enable_network_capture', { tabId, captureBodies: true })).status).toBe(200);
  for (const b of buttons) {
    await page.click(b);
    await page.waitForTimeout(150);
  }
  await waitUntil(async () => {
    const r = await h.callTool('browser_get_network_requests', { tabId, urlFilter: new URL(url).origin });
    const reqs = (r.body.result?.requests ?? []) as { state: string; url: string }[];
    const api = reqs.filter((q) => !q.url.endsWith('/'));
    return api.length >= expectRequests && api.every((q) => q.state !== 'pending');
  }, 'the recorded calls');
  return tabId;
}

/** Draft, build (with its type check) and test the project, add it, allow its tools; returns its folder. */
async function draftAndAdd(name: string, tabId: number): Promise<string> {
  const dir = join(root, `opentabs-plugin-${name}`);
  const created = await runCli(['plugin', 'create', name, '--from-capture', `tab:${tabId}`, '--dir', dir, '--port', String(h.srv.port)], { configDir: h.configDir, timeoutMs: 60_000 });
  expect({ code: created.code, out: created.stdout + created.stderr }).toMatchObject({ code: 0 });
  for (const script of ['build', 'test']) {
    const r = spawnSync('npm', ['run', '--silent', script], { cwd: dir, env: { ...env, OPENTABS_CONFIG_DIR: h.configDir }, encoding: 'utf8', timeout: 120_000 });
    expect({ script, status: r.status, out: `${r.stdout}${r.stderr}` }).toMatchObject({ script, status: 0 });
  }
  expect((await runCli(['plugin', 'add', dir, '--port', String(h.srv.port)], { configDir: h.configDir })).code).toBe(0);
  expect((await runCli(['config', 'set', `permission.${name}`, 'auto', '--port', String(h.srv.port)], { configDir: h.configDir })).code).toBe(0);
  return dir;
}

function generatedText(dir: string): string {
  let all = '';
  const walk = (d: string) => {
    for (const e of readdirSync(d)) {
      if (e === 'node_modules') continue;
      const p = join(d, e);
      if (statSync(p).isDirectory()) walk(p);
      else all += readFileSync(p, 'utf8');
    }
  };
  walk(dir);
  return all;
}

async function call(name: string, args: Record<string, unknown>) {
  const r = (await mcp.callTool({ name, arguments: args })) as { isError?: boolean; structuredContent?: any; content: { text?: string }[] };
  expect({ name, isError: r.isError, text: r.isError ? r.content[0]?.text : undefined }).toEqual({ name, isError: false, text: undefined });
  return r.structuredContent;
}

describe('REST app with a cookie session, a CSRF meta tag and ids in paths', () => {
  test('record, draft, build, add, then every tool works through MCP', async () => {
    const tabId = await record(`http://127.0.0.1:${kanban.server.port}/`, ['#list', '#add', '#move', '#del'], 4);
    const dir = await draftAndAdd('kanban', tabId);
    const text = generatedText(dir);
    for (const secret of [SESSION, CSRF]) expect(text.includes(secret)).toBe(false);
    // A fresh page gets the adapter of the new plugin.
    const page = await h.context.newPage();
    await page.goto(`http://127.0.0.1:${kanban.server.port}/`);
    await h.waitForHealth((x) => x.pluginDetails?.find((p: any) => p.name === 'kanban')?.tabState === 'ready', 'kanban tab ready');
    const names = (await mcp.listTools()).tools.map((t) => t.name).filter((n) => n.startsWith('kanban_')).sort();
    expect(names).toEqual(['kanban_create_card', 'kanban_delete_card', 'kanban_list_cards', 'kanban_move_card']);

    const created = await call('kanban_create_card', { boardId: '1', title: 'From the agent', column: 'todo' });
    expect(kanban.state.cards.get(created.id)?.title).toBe('From the agent');
    await call('kanban_move_card', { cardId: String(created.id), column: 'done' });
    expect(kanban.state.cards.get(created.id)?.column).toBe('done');
    const listed = await call('kanban_list_cards', { boardId: '1', column: 'done' });
    expect(listed.cards.map((c: { id: number }) => c.id)).toContain(created.id);
    await call('kanban_delete_card', { cardId: String(created.id) });
    expect(kanban.state.cards.has(created.id)).toBe(false);
  });
});

describe('GraphQL app with a CSRF cookie echoed in a header', () => {
  test('record, draft, build, add, then every operation works through MCP', async () => {
    const tabId = await record(`http://127.0.0.1:${shop.server.port}/`, ['#get', '#add'], 2);
    const dir = await draftAndAdd('shop', tabId);
    expect(generatedText(dir).includes(GQL_CSRF)).toBe(false);
    const page = await h.context.newPage();
    await page.goto(`http://127.0.0.1:${shop.server.port}/`);
    await h.waitForHealth((x) => x.pluginDetails?.find((p: any) => p.name === 'shop')?.tabState === 'ready', 'shop tab ready');
    const added = await call('shop_add_item', { name: 'Plums' });
    expect(added.addItem.name).toBe('Plums');
    expect(shop.items.map((i) => i.name)).toContain('Plums');
    const got = await call('shop_get_items', {});
    expect(got.items.map((i: { name: string }) => i.name)).toContain('Plums');
  });
});

test('a capture with no API traffic gives a clear message, and no project', async () => {
  const page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/pages/index.html?static'));
  const tabId = await h.tabIdOf(page);
  await h.callTool('browser_enable_network_capture', { tabId, captureBodies: true });
  await page.reload();
  const dir = join(root, 'opentabs-plugin-empty');
  const r = await runCli(['plugin', 'create', 'empty', '--from-capture', `tab:${tabId}`, '--dir', dir, '--port', String(h.srv.port)], { configDir: h.configDir });
  expect(r.code).not.toBe(0);
  expect(r.stderr).toContain('No API calls to draft from');
  expect(r.stderr).toMatch(/\d+ requests? captured/);
  expect(() => statSync(dir)).toThrow();
});
