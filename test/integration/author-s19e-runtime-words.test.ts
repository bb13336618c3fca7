/**
 * The page runtime (what the extension injects) says what the user has to do: a tab whose
 * isReady() turned false (logged out) tells the agent to ask the user to log in to the app by its
 * name, at the page's address; a required setting missing from a call's settings is named before
 * the handler runs.
 */
import { afterEach, beforeEach, expect, test } from 'bun:test';
import * as v from 'valibot';
import { definePlugin, defineTool } from '../../plugins/sdk/index.ts';
import { startAdapter } from '../../plugins/sdk/runtime.ts';
import { ADAPTER_REGISTRY_KEY, BRIDGE_TO_PAGE_EVENT, PAGE_TO_BRIDGE_EVENT, type BridgeToPage, type PageToBridge } from '../../server/protocol/page-channel.ts';

const g = globalThis as Record<string, unknown>;
let messages: PageToBridge[] = [];
let doc: EventTarget;
let ready = true;
let ran = 0;

beforeEach(() => {
  doc = new EventTarget();
  g.document = doc;
  g.location = new URL('https://app.shop.test/orders');
  delete g[ADAPTER_REGISTRY_KEY];
  messages = [];
  ready = true;
  ran = 0;
  doc.addEventListener(PAGE_TO_BRIDGE_EVENT, (e) => messages.push(JSON.parse((e as CustomEvent).detail as string)));
});
afterEach(() => {
  delete g.document;
  delete g.location;
  delete g[ADAPTER_REGISTRY_KEY];
});

const plugin = definePlugin({
  name: 'shop',
  displayName: 'Shop',
  description: 'shop',
  urlPatterns: ['https://app.shop.test/*'],
  configSchema: { region: { type: 'select', options: ['eu', 'us'], required: true } },
  isReady: () => ready,
  tools: [defineTool({ name: 'touch', description: 'touch', input: v.object({}), output: v.object({ n: v.number() }), handle: () => ({ n: ++ran }) })],
});

const send = (msg: BridgeToPage) => doc.dispatchEvent(new CustomEvent(BRIDGE_TO_PAGE_EVENT, { detail: JSON.stringify(msg) }));
async function resultFor(id: string) {
  for (let i = 0; i < 400; i++) {
    const r = messages.find((m) => m.type === 'result' && m.id === id);
    if (r) return r as Extract<PageToBridge, { type: 'result' }>;
    await Bun.sleep(5);
  }
  throw new Error(`no result for ${id}`);
}

test('logged out (isReady false): ask the user to log in to the app, by name and address', async () => {
  startAdapter(plugin, 'h1');
  ready = false;
  send({ type: 'call', id: 'a', plugin: 'shop', tool: 'touch', input: {}, config: { region: 'eu' } });
  const r = await resultFor('a');
  expect(r).toMatchObject({ ok: false, error: { code: 'adapter_not_ready', category: 'auth', retryable: true } });
  if (!r.ok) expect(r.error.message).toBe('shop is not ready in this tab (https://app.shop.test): its isReady() check is false now, so the user is probably logged out; ask the user to log in to Shop in their browser (or wait for the page to finish loading), then call again');
  expect(ran).toBe(0);
});

test('a required setting missing from the call: named, and the handler does not run', async () => {
  startAdapter(plugin, 'h2');
  send({ type: 'call', id: 'b', plugin: 'shop', tool: 'touch', input: {}, config: {} });
  const r = await resultFor('b');
  expect(r).toMatchObject({ ok: false, error: { code: 'setting_required', category: 'validation' } });
  if (!r.ok) expect(r.error.message).toContain('`opentabs plugin configure shop region=eu`');
  expect(ran).toBe(0);
  send({ type: 'call', id: 'c', plugin: 'shop', tool: 'touch', input: {}, config: { region: 'us' } });
  expect(await resultFor('c')).toMatchObject({ ok: true, value: { n: 1 } });
});
