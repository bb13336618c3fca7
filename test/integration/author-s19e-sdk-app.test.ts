/**
 * A plugin for an app with its API on a second host, a session that can expire and a required
 * setting, tested the way its author does: with the SDK's runTool (what the page runs). The
 * app's 401 tells the agent to ask the user to log in, naming where; fake routes can tell the two
 * hosts apart; a required setting the user has not set fails the call by name, with the
 * command that sets it, before the handler reads undefined.
 */
import { expect, test } from 'bun:test';
import * as v from 'valibot';
import { definePlugin, defineTool, fetchJson, setDefaultHeaders, type ConfigOf, type ToolContext } from '../../plugins/sdk/index.ts';
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
