/**
 * A plugin author's round with a single-page app, served on 127.0.0.1: the pages on one port and
 * a token API on another (CORS with Access-Control-Allow-Origin: *, no cookies), the login kept as
 * a Bearer token in localStorage, routes changed with pushState, cursor pages with a 429 on the
 * way, a server-sent events feed, a CSV download and a multipart upload. The plugin is made with
 * `opentabs plugin create` and written with the SDK README's helpers (a WebSocket feed too), run through the real
 * extension in Chromium and called over MCP (official SDK client). Checks what the agent gets in
 * each case, including the logged-out app and a choice between two tabs.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Page } from 'playwright-core';
import { CLI_BIN } from '../../plugins/tooling/paths.ts';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';
import { connectMcp } from '../harness/fake-extension.ts';

setDefaultTimeout(240_000);

const MESSAGES = Array.from({ length: 7 }, (_, i) => ({ id: i + 1, subject: `subject ${i + 1}` }));
const tokens = new Map<string, string>();
/** Cursors asked for, and whether the next ask for cursor "3" gets a 429 first. */
const cursorsAsked: string[] = [];
let throttleCursor3 = true;
/** Event feeds open now (each closes when the client goes away). */
let openFeeds = 0;
let feedsOpened = 0;
const uploads: { name: string; type: string; sha: string; auth: string | null }[] = [];

const cors = { 'access-control-allow-origin': '*', 'access-control-allow-headers': 'authorization, content-type', 'access-control-allow-methods': 'GET, POST' };

/** WebSockets open now, and what clients sent on them. */
let openSockets = 0;
const socketSaid: string[] = [];

const api = Bun.serve<{ user: string }, never>({
  hostname: '127.0.0.1',
  port: 0,
  idleTimeout: 60,
  websocket: {
    open() {
      openSockets++;
    },
    message(ws, msg) {
      socketSaid.push(String(msg));
      if (msg === 'subscribe') {
        ws.send(JSON.stringify({ type: 'unread', count: 3, user: ws.data.user }));
        ws.send(JSON.stringify({ type: 'presence', who: 'carol' }));
      }
    },
    close() {
      openSockets--;
    },
  },
  async fetch(req, srv) {
    const u = new URL(req.url);
    if (req.method === 'OPTIONS') return new Response(null, { status: 204, headers: cors });
    if (u.pathname === '/live') {
      // A WebSocket handshake carries no Authorization header: the token comes in the URL.
      const who = tokens.get(u.searchParams.get('token') ?? '');
      if (!who) return new Response('invalid token', { status: 401 });
      return srv.upgrade(req, { data: { user: who } }) ? undefined : new Response('upgrade failed', { status: 400 });
    }
    if (u.pathname === '/auth' && req.method === 'POST') {
      const { user } = (await req.json()) as { user: string };
      const token = `tok-${user}-${tokens.size + 1}`;
      tokens.set(token, user);
      return Response.json({ token }, { headers: cors });
    }
    const auth = req.headers.get('authorization') ?? '';
    const user = tokens.get(auth.replace(/^Bearer /, ''));
    if (!user) return Response.json({ error: { message: 'invalid or expired token' } }, { status: 401, headers: cors });
    if (u.pathname === '/me') return Response.json({ user }, { headers: cors });
    if (u.pathname === '/messages') {
      const cursor = u.searchParams.get('cursor') ?? '';
      cursorsAsked.push(cursor);
      if (cursor === '3' && throttleCursor3) {
        throttleCursor3 = false;
        // Retry-After is not a CORS-safelisted header: without Access-Control-Expose-Headers the page cannot read it.
        return Response.json({ error: 'too many requests' }, { status: 429, headers: { ...cors, 'retry-after': '1' } });
      }
      const start = cursor ? Number(cursor) : 0;
      const next = start + 3 < MESSAGES.length ? String(start + 3) : null;
      return Response.json({ messages: MESSAGES.slice(start, start + 3), nextCursor: next }, { headers: cors });
    }
    if (u.pathname === '/events') {
      openFeeds++;
      feedsOpened++;
      const enc = new TextEncoder();
      let closed = false;
      const close = () => {
        if (closed) return;
        closed = true;
        openFeeds--;
      };
      req.signal.addEventListener('abort', close);
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(enc.encode(': welcome\n\nretry: 5000\n\n'));
          c.enqueue(enc.encode(`event: mail\nid: 41\ndata: {"from":"bob",\ndata: "subject":"hi ${user}"}\n\n`));
          c.enqueue(enc.encode('event: typing\ndata: carol\n\n'));
          c.enqueue(enc.encode('event: mail\nid: 42\ndata: {"from":"dan","subject":"lunch"}\n\n'));
          // …and stays open, as a live feed does.
        },
        cancel: close,
      });
      return new Response(body, { headers: { ...cors, 'content-type': 'text/event-stream', 'cache-control': 'no-store' } });
    }
    if (u.pathname === '/export.csv') {
      return new Response(`id,subject\n${MESSAGES.map((m) => `${m.id},${m.subject}`).join('\n')}\n`, {
        headers: { ...cors, 'content-type': 'text/csv', 'content-disposition': 'attachment; filename="inbox.csv"' },
      });
    }
    if (u.pathname === '/attachments' && req.method === 'POST') {
      const form = await req.formData();
      const file = form.get('file') as File;
      const sha = createHash('sha256').update(Buffer.from(await file.arrayBuffer())).digest('hex');
      uploads.push({ name: file.name, type: file.type, sha, auth: req.headers.get('authorization') });
      return Response.json({ id: `att-${uploads.length}`, name: file.name, bytes: file.size }, { headers: cors });
    }
    return Response.json({ error: 'no such endpoint' }, { status: 404, headers: cors });
  },
});

/** The app: one HTML page for every path; it logs in through the API and changes route with pushState. */
const app = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  fetch(req) {
    const u = new URL(req.url);
    if (u.pathname === '/favicon.ico') return new Response('', { status: 404 });
    const html = `<!doctype html><title>Mail</title><body><main id="view"></main><script>
const API = 'http://127.0.0.1:${api.port}';
function render() { document.getElementById('view').textContent = (localStorage.getItem('token') ? 'inbox ' : 'login ') + location.pathname; }
window.login = async (user) => {
  const r = await fetch(API + '/auth', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ user }) });
  localStorage.setItem('token', (await r.json()).token);
  history.pushState({}, '', '/app/inbox');
  render();
};
window.logout = (route) => { localStorage.removeItem('token'); if (route) history.pushState({}, '', route); render(); };
window.go = (route) => { history.pushState({}, '', route); render(); };
render();
</script></body>`;
    return new Response(html, { headers: { 'content-type': 'text/html' } });
  },
});

const SOURCE = `import * as v from 'valibot';
import { base64ToBytes, defineTool, definePlugin, fetchJson, fetchText, getLocalStorage, readEventStream, readWebSocket, setDefaultHeaders, ToolError, type FetchOptions } from '@opentabs/sdk';

const API = 'http://127.0.0.1:API_PORT';
// Read at each request: the token the app holds now (none when logged out: the API's 401 says to log in).
setDefaultHeaders(() => {
  const token = getLocalStorage('token');
  return { authorization: token ? 'Bearer ' + token : undefined };
}, { origins: [API] });
// The API answers CORS with Access-Control-Allow-Origin: * and takes the token, not cookies.
const api = (signal: AbortSignal, o: FetchOptions = {}): FetchOptions => ({ credentials: 'omit', signal, ...o });

const Message = v.object({ id: v.number(), subject: v.string() });
type Message = v.InferOutput<typeof Message>;

/** Types an author relies on (not listed, only type-checked): the input typed from its schema… */
export const typedInput = defineTool({
  name: 'typed_input',
  description: 'Input types.',
  input: v.object({ n: v.number(), tag: v.optional(v.string(), 'x') }),
  output: v.object({ s: v.string() }),
  handle(input) {
    const n: number = input.n;
    const tag: string = input.tag;
    // @ts-expect-error the input has no such key
    void input.other;
    return { s: tag + n };
  },
});
/** …and the result checked against the output (TypeScript names the handler). */
export const typedOutput = defineTool({
  name: 'typed_output',
  description: 'Output types.',
  input: v.object({ n: v.number() }),
  output: v.object({ s: v.string() }),
  // @ts-expect-error s must be a string
  handle: (input) => ({ s: input.n }),
});

export default definePlugin({
  name: 'mail',
  displayName: 'Mail',
  description: 'Messages in Mail',
  urlPatterns: ['http://127.0.0.1:APP_PORT/app/*'],
  isReady: () => Boolean(getLocalStorage('token')),
  tools: [
    defineTool({
      name: 'whoami',
      description: 'The account logged in.',
      input: v.object({}),
      output: v.object({ user: v.string() }),
      annotations: { readOnlyHint: true },
      handle: (_input, ctx) => fetchJson(API + '/me', api(ctx.signal)),
    }),
    defineTool({
      name: 'whoami_with_cookies',
      description: 'The account, asked as the SDK does by default (with cookies).',
      input: v.object({}),
      output: v.object({ user: v.string() }),
      handle: (_input, ctx) => fetchJson(API + '/me', { signal: ctx.signal }),
    }),
    defineTool({
      name: 'list_messages',
      description: 'Every message, all pages.',
      input: v.object({}),
      output: v.object({ messages: v.array(Message), retries: v.number() }),
      annotations: { readOnlyHint: true },
      async handle(_input, ctx) {
        const messages: Message[] = [];
        let cursor: string | undefined;
        let retries = 0;
        for (let page = 1; page <= 50; page++) {
          const r = await fetchJson<{ messages: Message[]; nextCursor: string | null }>(API + '/messages', api(ctx.signal, {
            query: { cursor },
            retry: { attempts: 2, onRetry: (i) => { retries++; ctx.log.warn('rate limited, retrying in ' + i.waitMs + ' ms'); } },
          }));
          messages.push(...r.messages);
          ctx.reportProgress({ progress: messages.length, message: 'page ' + page });
          if (!r.nextCursor) break;
          cursor = r.nextCursor;
        }
        return { messages, retries };
      },
    }),
    defineTool({
      name: 'get_message',
      description: 'One message by id.',
      input: v.object({ id: v.pipe(v.number(), v.integer()) }),
      output: Message,
      annotations: { readOnlyHint: true },
      async handle(input, ctx) {
        const r = await fetchJson<{ messages: Message[] }>(API + '/messages', api(ctx.signal));
        const found = r.messages.find((m) => m.id === input.id);
        if (!found) throw ToolError.notFound('No message ' + input.id + ' on the first page; list_messages gives every id', { code: 'message_not_found' });
        return found;
      },
    }),
    defineTool({
      name: 'recent_events',
      description: 'Events from the live feed: up to max, or what comes within a second.',
      input: v.object({ max: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 10) }),
      output: v.object({ events: v.array(v.object({ event: v.string(), data: v.string(), id: v.optional(v.string()) })) }),
      annotations: { readOnlyHint: true },
      handle: async (input, ctx) => ({ events: await readEventStream(API + '/events', { ...api(ctx.signal), max: input.max, durationMs: 1000 }) }),
    }),
    defineTool({
      name: 'live_status',
      description: 'Unread count and presence, from the live WebSocket.',
      input: v.object({}),
      output: v.object({ messages: v.array(v.unknown()) }),
      annotations: { readOnlyHint: true },
      async handle(_input, ctx) {
        const url = API.replace('http:', 'ws:') + '/live?token=' + encodeURIComponent(getLocalStorage('token') ?? '');
        const got = await readWebSocket(url, { send: 'subscribe', max: 2, durationMs: 5000, signal: ctx.signal });
        return { messages: got.map((m) => JSON.parse(m.data)) };
      },
    }),
    defineTool({
      name: 'export_csv',
      description: 'The inbox as CSV text.',
      input: v.object({}),
      output: v.object({ csv: v.string() }),
      annotations: { readOnlyHint: true },
      handle: async (_input, ctx) => ({ csv: await fetchText(API + '/export.csv', api(ctx.signal)) }),
    }),
    defineTool({
      name: 'upload_attachment',
      description: 'Upload a file: its name, MIME type and content as base64.',
      input: v.object({ name: v.string(), mimeType: v.string(), contentBase64: v.string() }),
      output: v.object({ id: v.string(), name: v.string(), bytes: v.number() }),
      annotations: { destructiveHint: false },
      handle(input, ctx) {
        const form = new FormData();
        form.append('file', new Blob([base64ToBytes(input.contentBase64, 'contentBase64')], { type: input.mimeType }), input.name);
        return fetchJson(API + '/attachments', api(ctx.signal, { method: 'POST', body: form }));
      },
    }),
    defineTool({
      name: 'where',
      description: 'The address of the tab the call ran in; tabId (from plugin_list_tabs) picks the tab.',
      input: v.object({ tabId: v.optional(v.pipe(v.number(), v.integer())) }),
      output: v.object({ url: v.string() }),
      annotations: { readOnlyHint: true },
      handle: () => ({ url: location.href }),
    }),
  ],
});
`;

const root = mkdtempSync(join(tmpdir(), 'opentabs-author-s21f-'));
const dir = join(root, 'opentabs-plugin-mail');
let h: BrowserHarness;
let mcp: Client;
let tab: Page;
const text = (r: unknown) => (r as { content: { type: string; text: string }[] }).content[0]!.text;
const errorOf = (r: unknown) => (r as { structuredContent: { error: Record<string, unknown> } }).structuredContent.error;
const APP = `http://127.0.0.1:${app.port}`;

beforeAll(async () => {
  const env = { ...process.env, PATH: '/usr/local/bin:/usr/bin:/bin', OPENTABS_CONFIG_DIR: join(root, 'state') };
  const created = spawnSync('node', [CLI_BIN, 'plugin', 'create', 'mail', '--url', `${APP}/app/*`], { cwd: root, env, encoding: 'utf8', timeout: 60_000 });
  expect({ status: created.status, out: `${created.stdout}${created.stderr}` }).toMatchObject({ status: 0 });
  writeFileSync(join(dir, 'src/index.ts'), SOURCE.replace('API_PORT', String(api.port)).replace('APP_PORT', String(app.port)));
  for (const script of ['typecheck', 'build', 'test', 'add']) {
    const r = spawnSync('npm', ['run', '--silent', script], { cwd: dir, env, encoding: 'utf8', timeout: 180_000 });
    expect({ script, status: r.status, out: `${r.stdout}${r.stderr}` }).toMatchObject({ script, status: 0 });
  }
  const localPlugins = JSON.parse(readFileSync(join(root, 'state', 'config.json'), 'utf8')).localPlugins as string[];
  h = await startBrowserHarness({ localPlugins, permissions: { mail: { default: 'auto' } } });
  tab = await h.context.newPage();
  await tab.goto(`${APP}/login`);
  mcp = await connectMcp(h.url, h.srv.secret);
});

afterAll(async () => {
  await mcp?.close().catch(() => {});
  await h?.stop();
  app.stop(true);
  api.stop(true);
  rmSync(root, { recursive: true, force: true });
});

test('on the login route no tab matches: the agent is told the tab is on another path and to have the user log in', async () => {
  const r = await mcp.callTool({ name: 'mail_whoami', arguments: {} });
  expect(r.isError).toBe(true);
  expect(errorOf(r)).toMatchObject({ code: 'no_matching_tab' });
  expect(text(r)).toContain(`is open on 127.0.0.1:${app.port}, a host of the plugin's patterns, but its URL matches none of the plugin's urlPatterns (${APP}/app/*)`);
  expect(text(r)).toContain('if the page asks to log in, ask the user to');
});

test('the app logs in and moves to /app/inbox with pushState: the next call runs there with the new token', async () => {
  await tab.evaluate(() => (window as unknown as { login(u: string): Promise<void> }).login('ann'));
  expect(tab.url()).toBe(`${APP}/app/inbox`);
  // Before any call: the tab shows as the app's, ready (status, side panel, /health).
  await h.waitForHealth((x) => x.pluginDetails?.find((p: { name: string }) => p.name === 'mail')?.tabState === 'ready', 'the mail tab ready after the pushState login', 30_000);
  const r = await waitUntil(async () => {
    const x = await mcp.callTool({ name: 'mail_whoami', arguments: {} });
    return x.isError ? null : x;
  }, 'mail_whoami after the pushState login', 30_000);
  expect(r.structuredContent).toEqual({ user: 'ann' });
});

test("the SDK's default credentials against an Access-Control-Allow-Origin: * API: the error says it is CORS and what to change", async () => {
  const r = await mcp.callTool({ name: 'mail_whoami_with_cookies', arguments: {} });
  expect(r.isError).toBe(true);
  expect(errorOf(r)).toMatchObject({ code: 'network_error' });
  expect(text(r)).toContain(`is another origin than the page ${APP}: if it is up, the browser refused its answer under CORS`);
  expect(text(r)).toContain("needs credentials: 'omit'");
});

test('cursor pages with a 429 on the way: waited out (Retry-After unreadable across origins, so 1 s), every page, progress per page', async () => {
  cursorsAsked.length = 0;
  const progress: { progress: number; message?: string }[] = [];
  const r = await mcp.callTool({ name: 'mail_list_messages', arguments: {} }, undefined, { onprogress: (p) => void progress.push(p) });
  expect(r.isError).toBe(false);
  expect(r.structuredContent).toEqual({ messages: MESSAGES, retries: 1 });
  expect(cursorsAsked).toEqual(['', '3', '3', '6']);
  expect(progress.map((p) => [p.progress, p.message])).toEqual([
    [3, 'page 1'],
    [6, 'page 2'],
    [7, 'page 3'],
  ]);
});

test('a ToolError of the handler reaches the agent with its category and code', async () => {
  const r = await mcp.callTool({ name: 'mail_get_message', arguments: { id: 99 } });
  expect(r.isError).toBe(true);
  expect(text(r)).toContain('No message 99 on the first page');
  expect(errorOf(r)).toMatchObject({ category: 'not_found', code: 'message_not_found', retryable: false });
});

test('the live feed: events parsed, read with the Bearer token, and the connection closed after', async () => {
  const before = feedsOpened;
  const r = await mcp.callTool({ name: 'mail_recent_events', arguments: { max: 2 } });
  expect(r.isError).toBe(false);
  expect(r.structuredContent).toEqual({
    events: [
      { event: 'mail', data: '{"from":"bob",\n"subject":"hi ann"}', id: '41' },
      { event: 'typing', data: 'carol', id: '41' },
    ],
  });
  // Fewer events than max: what came within the second.
  const all = await mcp.callTool({ name: 'mail_recent_events', arguments: {} });
  expect((all.structuredContent as { events: unknown[] }).events).toHaveLength(3);
  expect(feedsOpened).toBe(before + 2);
  await waitUntil(() => openFeeds === 0, 'both feeds closed by the plugin', 30_000);
});

test('the live WebSocket: the token in the URL, the subscribe message sent, two messages, the socket closed after; a refused handshake named', async () => {
  const r = await mcp.callTool({ name: 'mail_live_status', arguments: {} });
  expect(r.isError).toBe(false);
  expect(r.structuredContent).toEqual({ messages: [{ type: 'unread', count: 3, user: 'ann' }, { type: 'presence', who: 'carol' }] });
  expect(socketSaid).toEqual(['subscribe']);
  await waitUntil(() => openSockets === 0, 'the socket closed by the plugin', 30_000);
  const saved = new Map(tokens);
  tokens.clear();
  const refused = await mcp.callTool({ name: 'mail_live_status', arguments: {} });
  for (const [k, val] of saved) tokens.set(k, val);
  expect(refused.isError).toBe(true);
  expect(errorOf(refused)).toMatchObject({ code: 'network_error' });
  expect(text(refused)).toContain('could not open (close code 1006); the browser does not say why: the server may be down or have refused the handshake (not logged in');
});

test('download and upload: CSV as text; a file from base64 as multipart with the token; bad base64 named', async () => {
  const csv = await mcp.callTool({ name: 'mail_export_csv', arguments: {} });
  expect((csv.structuredContent as { csv: string }).csv.split('\n').slice(0, 2)).toEqual(['id,subject', '1,subject 1']);
  const bytes = Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 7) % 256));
  const up = await mcp.callTool({ name: 'mail_upload_attachment', arguments: { name: 'chart.png', mimeType: 'image/png', contentBase64: bytes.toString('base64') } });
  expect(up.isError).toBe(false);
  expect(up.structuredContent).toEqual({ id: 'att-1', name: 'chart.png', bytes: 5000 });
  expect(uploads[0]).toEqual({ name: 'chart.png', type: 'image/png', sha: createHash('sha256').update(bytes).digest('hex'), auth: expect.stringMatching(/^Bearer tok-ann-/) });
  const bad = await mcp.callTool({ name: 'mail_upload_attachment', arguments: { name: 'x', mimeType: 'text/plain', contentBase64: 'not base64!' } });
  expect(bad.isError).toBe(true);
  expect(errorOf(bad)).toMatchObject({ category: 'validation', code: 'invalid_base64' });
  expect(text(bad)).toContain('contentBase64 is not valid base64');
});

test('two tabs of the app: the one in front runs the call; a tabId argument picks the other', async () => {
  const second = await h.context.newPage();
  await second.goto(`${APP}/app/archive`);
  await second.bringToFront();
  const front = await waitUntil(async () => {
    const r = await mcp.callTool({ name: 'mail_where', arguments: {} });
    const url = (r.structuredContent as { url?: string } | undefined)?.url;
    return url === `${APP}/app/archive` ? url : null;
  }, 'the call in the tab in front', 30_000);
  expect(front).toBe(`${APP}/app/archive`);
  const chosen = await mcp.callTool({ name: 'mail_where', arguments: { tabId: await h.tabIdOf(tab) } });
  expect(chosen.structuredContent).toEqual({ url: `${APP}/app/inbox` });
  await second.close();
  await tab.bringToFront();
});

test('the token expires on the server: the API\'s 401 becomes "ask the user to log in" at the app\'s address', async () => {
  tokens.clear();
  const r = await mcp.callTool({ name: 'mail_whoami', arguments: {} });
  expect(r.isError).toBe(true);
  expect(errorOf(r)).toMatchObject({ category: 'auth', code: 'http_401' });
  expect(text(r)).toContain(`returned HTTP 401: invalid or expired token (not logged in: the session in the browser has ended or was never started; ask the user to log in to the app at ${APP} in their browser, then call again)`);
});

test('logged out without a route change: isReady follows and the agent is asked to have the user log in to Mail', async () => {
  await tab.evaluate(() => (window as unknown as { logout(): void }).logout());
  const r = await mcp.callTool({ name: 'mail_whoami', arguments: {} });
  expect(r.isError).toBe(true);
  expect(errorOf(r)).toMatchObject({ category: 'auth', code: 'adapter_not_ready' });
  expect(text(r)).toContain('ask the user to log in to Mail in their browser');
  expect(text(r)).not.toContain('wait a moment and retry');
  // Logged in again (a new token, the page not reloaded): the default headers send the new one.
  await tab.evaluate(() => (window as unknown as { login(u: string): Promise<void> }).login('bea'));
  const again = await mcp.callTool({ name: 'mail_whoami', arguments: {} });
  expect(again.structuredContent).toEqual({ user: 'bea' });
});

test('logged out to the login route with pushState: the call does not run in the login page', async () => {
  await tab.evaluate(() => (window as unknown as { logout(r: string): void }).logout('/login'));
  const r = await mcp.callTool({ name: 'mail_whoami', arguments: {} });
  expect(r.isError).toBe(true);
  expect(errorOf(r)).toMatchObject({ code: 'no_matching_tab' });
  expect(text(r)).toContain('if the page asks to log in, ask the user to');
});
