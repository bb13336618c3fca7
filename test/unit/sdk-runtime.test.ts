/**
 * The MAIN-world adapter runtime against the page-channel contract, with `document` as a plain
 * EventTarget (the real thing runs in Chromium in test/e2e/plugin-runtime.test.ts).
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import * as v from 'valibot';
import { definePlugin, defineTool, ToolError } from '../../plugins/sdk/index.ts';
import { startAdapter, startAdapterFromModule } from '../../plugins/sdk/runtime.ts';
import { runTool } from '../../plugins/sdk/testing.ts';
import {
  ADAPTER_REGISTRY_KEY,
  BRIDGE_TO_PAGE_EVENT,
  PAGE_TO_BRIDGE_EVENT,
  type AdapterHandle,
  type BridgeToPage,
  type PageToBridge,
} from '../../server/protocol/page-channel.ts';

const g = globalThis as Record<string, unknown>;
let messages: PageToBridge[] = [];
let doc: EventTarget;

beforeEach(() => {
  doc = new EventTarget();
  g.document = doc;
  delete g[ADAPTER_REGISTRY_KEY];
  messages = [];
  doc.addEventListener(PAGE_TO_BRIDGE_EVENT, (e) => messages.push(JSON.parse((e as CustomEvent).detail as string)));
});
afterEach(() => {
  delete g.document;
  delete g[ADAPTER_REGISTRY_KEY];
});

const send = (msg: BridgeToPage) => doc.dispatchEvent(new CustomEvent(BRIDGE_TO_PAGE_EVENT, { detail: JSON.stringify(msg) }));

async function resultFor(id: string, maxWaits = 200): Promise<Extract<PageToBridge, { type: 'result' }>> {
  for (let i = 0; i < maxWaits; i++) {
    const r = messages.find((m) => m.type === 'result' && m.id === id);
    if (r) return r as Extract<PageToBridge, { type: 'result' }>;
    await Bun.sleep(5);
  }
  throw new Error(`no result for ${id}`);
}

let releaseSlow: (() => void) | null = null;
const plugin = definePlugin({
  name: 'demo',
  displayName: 'Demo',
  description: 'demo',
  urlPatterns: ['http://127.0.0.1/*'],
  configSchema: { greeting: { type: 'string', default: 'Hello' } },
  isReady: () => (g.__demoReady as boolean) ?? true,
  tools: [
    defineTool({
      name: 'greet',
      description: 'greet',
      input: v.object({ name: v.pipe(v.string(), v.minLength(2, 'name is too short')) }),
      output: v.object({ text: v.string() }),
      async handle(input, ctx) {
        ctx.log.info('greeting', { name: input.name });
        ctx.reportProgress({ progress: 1, total: 2, message: 'half' });
        return { text: `${ctx.config.greeting}, ${input.name}` };
      },
    }),
    defineTool({
      name: 'fail',
      description: 'fail',
      input: v.object({ how: v.picklist(['tool', 'rate', 'throw']) }),
      output: v.object({}),
      async handle(input) {
        if (input.how === 'tool') throw ToolError.notFound('No such widget');
        if (input.how === 'rate') throw ToolError.rateLimited('Too fast', { retryAfterMs: 1500 });
        throw new TypeError('x is undefined');
      },
    }),
    defineTool({
      name: 'wrong',
      description: 'wrong output',
      input: v.object({}),
      output: v.object({ items: v.array(v.object({ id: v.number() })) }),
      handle: async () => ({ items: [{ id: 1 }, { id: 'two' }] }) as never,
    }),
    defineTool({
      name: 'slow',
      description: 'waits for cancel',
      input: v.object({}),
      output: v.object({ done: v.boolean() }),
      handle: (_i, ctx) =>
        new Promise((resolve, reject) => {
          releaseSlow = () => resolve({ done: true });
          ctx.signal.addEventListener('abort', () => reject(new Error('aborted')));
        }),
    }),
  ],
});

describe('adapter runtime (page channel)', () => {
  test('registers a handle and announces itself with the hash', async () => {
    const { handle } = startAdapter(plugin, 'abc123');
    const registry = g[ADAPTER_REGISTRY_KEY] as Record<string, AdapterHandle>;
    expect(registry.demo).toBe(handle);
    expect(handle.hash).toBe('abc123');
    expect(handle.sdkVersion).toMatch(/^\d+\.\d+\.\d+/);
    expect(messages[0]).toEqual({ type: 'registered', plugin: 'demo', hash: 'abc123' });
    expect(await handle.isReady()).toBe(true);
    g.__demoReady = false;
    expect(await handle.isReady()).toBe(false);
    delete g.__demoReady;
  });

  test('call → progress, log, result (config reaches ctx.config)', async () => {
    startAdapter(plugin, 'h');
    send({ type: 'call', id: 'c1', plugin: 'demo', tool: 'greet', input: { name: 'Ann' }, config: { greeting: 'Hi' } });
    const r = await resultFor('c1');
    expect(r).toEqual({ type: 'result', id: 'c1', plugin: 'demo', ok: true, value: { text: 'Hi, Ann' } });
    const progress = messages.find((m) => m.type === 'progress');
    expect(progress).toEqual({ type: 'progress', id: 'c1', plugin: 'demo', progress: 1, total: 2, message: 'half' });
    const log = messages.find((m) => m.type === 'log') as Extract<PageToBridge, { type: 'log' }>;
    expect(log).toMatchObject({ type: 'log', plugin: 'demo', id: 'c1', level: 'info', message: 'greeting', data: { name: 'Ann' } });
    expect(typeof log.ts).toBe('number');
  });

  test('messages for another plugin are ignored', async () => {
    startAdapter(plugin, 'h');
    send({ type: 'call', id: 'x1', plugin: 'other', tool: 'greet', input: { name: 'Ann' }, config: {} });
    await Bun.sleep(20);
    expect(messages.filter((m) => m.type === 'result')).toEqual([]);
  });

  test('invalid input is a validation error naming the field', async () => {
    startAdapter(plugin, 'h');
    send({ type: 'call', id: 'c2', plugin: 'demo', tool: 'greet', input: { name: 'A' }, config: {} });
    const r = await resultFor('c2');
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error).toMatchObject({ code: 'invalid_arguments', category: 'validation', retryable: false });
      expect(r.error.message).toBe('Invalid arguments for demo_greet: name: name is too short');
    }
  });

  test('ToolError keeps its category, retryability and retryAfterMs; other throws are internal', async () => {
    startAdapter(plugin, 'h');
    send({ type: 'call', id: 'e1', plugin: 'demo', tool: 'fail', input: { how: 'tool' }, config: {} });
    send({ type: 'call', id: 'e2', plugin: 'demo', tool: 'fail', input: { how: 'rate' }, config: {} });
    send({ type: 'call', id: 'e3', plugin: 'demo', tool: 'fail', input: { how: 'throw' }, config: {} });
    const [a, b, c] = await Promise.all([resultFor('e1'), resultFor('e2'), resultFor('e3')]);
    expect(a.ok || a.error).toEqual({ message: 'No such widget', code: 'tool_error', category: 'not_found', retryable: false });
    expect(b.ok || b.error).toEqual({ message: 'Too fast', code: 'tool_error', category: 'rate_limited', retryable: true, retryAfterMs: 1500 });
    expect(c.ok || c.error).toEqual({ message: 'demo_fail failed: x is undefined', code: 'internal', category: 'internal', retryable: false });
  });

  test('output that breaks the output schema is an internal error naming the field', async () => {
    startAdapter(plugin, 'h');
    send({ type: 'call', id: 'o1', plugin: 'demo', tool: 'wrong', input: {}, config: {} });
    const r = await resultFor('o1');
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.category).toBe('internal');
      expect(r.error.message).toMatch(/^demo_wrong returned output that does not match its output schema: items\.1\.id: /);
    }
  });

  test('unknown tool is reported, not ignored', async () => {
    startAdapter(plugin, 'h');
    send({ type: 'call', id: 'u1', plugin: 'demo', tool: 'nope', input: {}, config: {} });
    const r = await resultFor('u1');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.message).toMatch(/has no tool "nope" \(known: greet, fail, wrong, slow\)/);
  });

  test('cancel aborts ctx.signal and answers cancelled', async () => {
    startAdapter(plugin, 'h');
    send({ type: 'call', id: 's1', plugin: 'demo', tool: 'slow', input: {}, config: {} });
    await Bun.sleep(10);
    send({ type: 'cancel', id: 's1', plugin: 'demo', reason: 'client cancelled' });
    const r = await resultFor('s1');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatchObject({ code: 'cancelled', message: 'demo_slow was cancelled: client cancelled' });
  });

  test('a re-injected adapter disposes the old one (hot reload): one answer per call', async () => {
    const first = startAdapter(plugin, 'old');
    send({ type: 'call', id: 'r0', plugin: 'demo', tool: 'slow', input: {}, config: {} });
    await Bun.sleep(10);
    const second = startAdapter(plugin, 'new');
    // The in-flight call on the old adapter was aborted by dispose().
    const r0 = await resultFor('r0');
    expect(r0.ok).toBe(false);
    expect((g[ADAPTER_REGISTRY_KEY] as Record<string, AdapterHandle>).demo).toBe(second.handle);
    expect(await first.handle.isReady()).toBe(false);
    send({ type: 'call', id: 'r1', plugin: 'demo', tool: 'greet', input: { name: 'Bo' }, config: { greeting: 'Yo' } });
    await resultFor('r1');
    expect(messages.filter((m) => m.type === 'result' && m.id === 'r1')).toHaveLength(1);
    releaseSlow = null;
  });

  test('startAdapterFromModule finds the definition among exports', () => {
    const { handle } = startAdapterFromModule({ helper: 1, plugin });
    expect(handle.plugin).toBe('demo');
    expect(() => startAdapterFromModule({ nothing: true })).toThrow(/exports no definePlugin/);
  });
});

describe('runTool (testing helper)', () => {
  test('uses configSchema defaults and captures progress and logs', async () => {
    const r = await runTool(plugin, 'greet', { name: 'Cy' });
    expect(r.outcome).toEqual({ ok: true, value: { text: 'Hello, Cy' } });
    expect(r.progress).toEqual([{ progress: 1, total: 2, message: 'half' }]);
    expect(r.logs).toEqual([{ level: 'info', message: 'greeting', data: { name: 'Cy' } }]);
  });
});
