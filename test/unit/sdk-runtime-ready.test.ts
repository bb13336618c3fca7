/** The page runtime re-checks isReady() before every call: a tab that stopped being ready does not run tools. */
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
  delete g[ADAPTER_REGISTRY_KEY];
  messages = [];
  ready = true;
  ran = 0;
  doc.addEventListener(PAGE_TO_BRIDGE_EVENT, (e) => messages.push(JSON.parse((e as CustomEvent).detail as string)));
});
afterEach(() => {
  delete g.document;
  delete g[ADAPTER_REGISTRY_KEY];
});

const plugin = definePlugin({
  name: 'flip',
  displayName: 'Flip',
  description: 'flip',
  urlPatterns: ['http://127.0.0.1/*'],
  isReady: () => ready,
  tools: [
    defineTool({
      name: 'touch',
      description: 'touch',
      input: v.object({}),
      output: v.object({ n: v.number() }),
      handle: () => ({ n: ++ran }),
    }),
  ],
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

test('ready → the tool runs; not ready any more → adapter_not_ready and the handler never runs', async () => {
  startAdapter(plugin, 'h1');
  send({ type: 'call', id: 'a', plugin: 'flip', tool: 'touch', input: {}, config: {} });
  expect(await resultFor('a')).toMatchObject({ ok: true, value: { n: 1 } });
  ready = false;
  send({ type: 'call', id: 'b', plugin: 'flip', tool: 'touch', input: {}, config: {} });
  const r = await resultFor('b');
  expect(r.ok).toBe(false);
  if (!r.ok) {
    expect(r.error.code).toBe('adapter_not_ready');
    expect(r.error.retryable).toBe(true);
    expect(r.error.message).toContain('not ready');
  }
  expect(ran).toBe(1);
  ready = true;
  send({ type: 'call', id: 'c', plugin: 'flip', tool: 'touch', input: {}, config: {} });
  expect(await resultFor('c')).toMatchObject({ ok: true, value: { n: 2 } });
});

test('an isReady() that throws counts as not ready', async () => {
  const throwing = definePlugin({ ...plugin, isReady: () => { throw new Error('boom'); } });
  startAdapter(throwing, 'h2');
  send({ type: 'call', id: 'd', plugin: 'flip', tool: 'touch', input: {}, config: {} });
  const r = await resultFor('d');
  expect(r.ok).toBe(false);
  if (!r.ok) expect(r.error.code).toBe('adapter_not_ready');
  expect(ran).toBe(0);
});

test('a synchronous isReady() is taken as it answers, with no timer per call; a promise is still bounded by one', async () => {
  const realSetTimeout = globalThis.setTimeout;
  let timers = 0;
  globalThis.setTimeout = ((fn: () => void, ms?: number) => {
    timers++;
    return realSetTimeout(fn, ms);
  }) as typeof setTimeout;
  try {
    startAdapter(plugin, 'h3');
    send({ type: 'call', id: 'e', plugin: 'flip', tool: 'touch', input: {}, config: {} });
    expect(await resultFor('e')).toMatchObject({ ok: true, value: { n: 1 } });
    // resultFor polls with Bun.sleep, which is not setTimeout: every timer counted is the runtime's.
    expect(timers).toBe(0);
    const later = definePlugin({ ...plugin, isReady: async () => ready });
    startAdapter(later, 'h4');
    send({ type: 'call', id: 'f', plugin: 'flip', tool: 'touch', input: {}, config: {} });
    expect(await resultFor('f')).toMatchObject({ ok: true, value: { n: 2 } });
    expect(timers).toBe(1);
  } finally {
    globalThis.setTimeout = realSetTimeout;
  }
});

test('an isReady() whose answer throws when read as a promise counts as not ready, as before', async () => {
  const odd = definePlugin({
    ...plugin,
    isReady: () =>
      ({
        get then() {
          throw new Error('no then');
        },
      }) as unknown as boolean,
  });
  startAdapter(odd, 'h5');
  send({ type: 'call', id: 'g', plugin: 'flip', tool: 'touch', input: {}, config: {} });
  const r = await resultFor('g');
  expect(r.ok).toBe(false);
  if (!r.ok) {
    expect(r.error.code).toBe('adapter_not_ready');
    expect(r.error.message).toContain('no then');
  }
});
