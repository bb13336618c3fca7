/**
 * A plugin for an app with its API on a second host, a session that can expire and a required
 * setting, tested the way its author does: with the SDK's runTool (what the page runs). The
 * app's 401 tells the agent to ask the user to log in, naming where; fake routes can tell the two
 * hosts apart; a required setting the user has not set fails the call by name, with the
 * command that sets it, before the handler reads undefined.
 */
import { expect, test } from 'bun:test';
import * as v from 'valibot';
import { definePlugin, defineTool, fetchBase64, fetchJson, graphql, setDefaultHeaders, type ConfigOf, type ToolContext } from '../../plugins/sdk/index.ts';
import { runTool } from '../../plugins/sdk/testing.ts';

const configSchema = {
  apiBase: { type: 'url', label: 'API address', default: 'https://api.shop.test/' },
  region: { type: 'select', label: 'Region', options: ['eu', 'us'], required: true },
} as const;
type Config = ConfigOf<typeof configSchema>;

const plugin = definePlugin({
  name: 'shop',
  displayName: 'Shop',
  description: 'Shop',
  urlPatterns: ['https://app.shop.test/*'],
  configSchema,
  isReady: () => true,
  tools: [
    defineTool({
      name: 'whoami',
      description: 'The account, from the API host.',
      input: v.object({}),
      output: v.object({ user: v.string(), region: v.string() }),
      async handle(_input, ctx: ToolContext<Config>) {
        setDefaultHeaders({ 'x-app': 'shop' }, { origins: [ctx.config.apiBase] });
        const me = await fetchJson<{ user: string }>(new URL('/me', ctx.config.apiBase).toString(), { signal: ctx.signal });
        return { user: me.user, region: ctx.config.region };
      },
    }),
    defineTool({
      name: 'orders',
      description: 'Orders, from the page host.',
      input: v.object({}),
      output: v.object({ orders: v.array(v.number()) }),
      handle: (_input, ctx) => fetchJson('/me', { signal: ctx.signal }),
    }),
  ],
});

const page = { url: 'https://app.shop.test/orders' };
const config = { region: 'eu' };

test('routes with an origin answer only that host; a route without one answers the page', async () => {
  const requests: Request[] = [];
  const routes = { 'GET https://api.shop.test/me': () => ({ user: 'ann' }), 'GET /me': () => ({ orders: [1, 2] }) };
  const api = await runTool(plugin, 'whoami', {}, { page, config, routes, requests });
  expect(api.outcome).toEqual({ ok: true, value: { user: 'ann', region: 'eu' } });
  expect(requests[0]!.headers.get('x-app')).toBe('shop');
  const own = await runTool(plugin, 'orders', {}, { page, config, routes });
  expect(own.outcome).toEqual({ ok: true, value: { orders: [1, 2] } });
  // A host with no route of its own is not answered by another host's route.
  const elsewhere = await runTool(plugin, 'whoami', {}, { page, config: { ...config, apiBase: 'https://other.shop.test/' }, routes: { 'GET https://api.shop.test/me': () => ({ user: 'ann' }) } });
  expect(elsewhere.outcome).toMatchObject({ ok: false, error: { category: 'not_found' } });
  expect(JSON.stringify(elsewhere.outcome)).toContain('no fake route for GET https://other.shop.test/me');
});

test("a 401 from the API host: the agent is told to ask the user to log in, at the app's own address", async () => {
  const routes = { 'GET https://api.shop.test/me': () => Response.json({ error: 'session expired' }, { status: 401 }) };
  const { outcome } = await runTool(plugin, 'whoami', {}, { page, config, routes });
  expect(outcome.ok).toBe(false);
  if (outcome.ok) return;
  expect(outcome.error).toMatchObject({ category: 'auth', code: 'http_401' });
  expect(outcome.error.message).toContain('returned HTTP 401: session expired');
  expect(outcome.error.message).toContain('ask the user to log in to the app at https://app.shop.test in their browser, then call again');
});

test('a required setting that is not set fails the call by name, with the command that sets it', async () => {
  let reached = false;
  const routes = { 'GET https://api.shop.test/me': () => ((reached = true), { user: 'ann' }) };
  const { outcome } = await runTool(plugin, 'whoami', {}, { page, routes });
  expect(reached).toBe(false);
  expect(outcome).toEqual({
    ok: false,
    error: {
      message:
        'shop_whoami did not run: the shop plugin\'s setting "region" (Region) is required and not set, one of eu, us. ' +
        'Ask the user to set it in the OpenTabs side panel (the plugin\'s settings) or with `opentabs plugin configure shop region=eu`, then call again.',
      code: 'setting_required',
      category: 'validation',
      retryable: false,
    },
  });
  // Set (as the server sends it with each call): the handler runs.
  expect((await runTool(plugin, 'whoami', {}, { page, config, routes })).outcome.ok).toBe(true);
});

const gql = definePlugin({
  name: 'shop',
  displayName: 'Shop',
  description: 'Shop',
  urlPatterns: ['https://app.shop.test/*'],
  isReady: () => true,
  tools: [
    defineTool({
      name: 'search',
      description: 'Search products (GraphQL).',
      input: v.object({ q: v.string() }),
      output: v.object({ products: v.array(v.object({ id: v.string() })) }),
      handle: (input, ctx) => graphql('/graphql', 'query Search($q: String!) { products(q: $q) { id } }', { q: input.q }, { operationName: 'Search', signal: ctx.signal }),
    }),
    defineTool({
      name: 'picture',
      description: 'A product picture.',
      input: v.object({ id: v.string() }),
      output: v.object({ mimeType: v.string(), base64: v.string(), bytes: v.number() }),
      handle: (input, ctx) => fetchBase64(`/img/${input.id}`, { signal: ctx.signal, maxBytes: 100_000 }),
    }),
  ],
});

test('graphql(): data on success; errors sent with HTTP 200 become ToolErrors with their category and words', async () => {
  const answers: Record<string, unknown> = {
    shoe: { data: { products: [{ id: 'p1' }] } },
    expired: { data: null, errors: [{ message: 'session expired', extensions: { code: 'UNAUTHENTICATED' } }] },
    bad: { data: null, errors: [{ message: 'q is too short', path: ['products'], extensions: { code: 'BAD_USER_INPUT' } }] },
    slow: { errors: [{ message: 'throttled', extensions: { code: 'RATE_LIMITED' } }] },
  };
  const sent: Request[] = [];
  const routes = { 'POST /graphql': async (req: Request) => answers[((await req.json()) as { variables: { q: string } }).variables.q] };
  const ok = await runTool(gql, 'search', { q: 'shoe' }, { page, routes, requests: sent });
  expect(ok.outcome).toEqual({ ok: true, value: { products: [{ id: 'p1' }] } });
  expect(await sent[0]!.json()).toEqual({ query: 'query Search($q: String!) { products(q: $q) { id } }', variables: { q: 'shoe' }, operationName: 'Search' });

  const expired = (await runTool(gql, 'search', { q: 'expired' }, { page, routes })).outcome;
  expect(expired).toMatchObject({ ok: false, error: { category: 'auth', code: 'graphql_unauthenticated' } });
  expect(JSON.stringify(expired)).toContain('GraphQL Search at /graphql failed: session expired (not logged in');
  expect(JSON.stringify(expired)).toContain('ask the user to log in to the app at https://app.shop.test in their browser');
  const bad = (await runTool(gql, 'search', { q: 'bad' }, { page, routes })).outcome;
  expect(bad).toMatchObject({ ok: false, error: { category: 'validation', code: 'graphql_bad_user_input', message: 'GraphQL Search at /graphql failed: q is too short (at products)' } });
  expect((await runTool(gql, 'search', { q: 'slow' }, { page, routes })).outcome).toMatchObject({ ok: false, error: { category: 'rate_limited', retryable: true } });
});

test('fetchBase64(): a picture as base64 with its type; a file over maxBytes is refused by size', async () => {
  const png = new Uint8Array(70_000).map((_, i) => (i * 7) % 256);
  png.set([0x89, 0x50, 0x4e, 0x47], 0);
  const routes = {
    '/img/p1': () => new Response(png, { headers: { 'content-type': 'image/png' } }),
    '/img/big': () => new Response(new Uint8Array(200_000), { headers: { 'content-type': 'image/png' } }),
  };
  const { outcome } = await runTool(gql, 'picture', { id: 'p1' }, { page, routes });
  expect(outcome.ok).toBe(true);
  if (!outcome.ok) return;
  const value = outcome.value as { mimeType: string; base64: string; bytes: number };
  expect(value.mimeType).toBe('image/png');
  expect(value.bytes).toBe(70_000);
  expect(Buffer.from(value.base64, 'base64').equals(Buffer.from(png))).toBe(true);
  const big = (await runTool(gql, 'picture', { id: 'big' }, { page, routes })).outcome;
  expect(big).toMatchObject({ ok: false, error: { category: 'validation', code: 'file_too_large' } });
  expect(JSON.stringify(big)).toContain('/img/big is 200000 bytes, over the 100000-byte limit');
});
