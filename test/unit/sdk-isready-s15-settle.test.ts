/**
 * An isReady() that never settles, or throws, fails the call at once saying so (naming the tool and
 * isReady), instead of holding it until the call's 30 s timeout with "the page may be slow".
 */
import { afterEach, beforeEach, expect, test } from 'bun:test';
import * as v from 'valibot';
import { definePlugin, defineTool } from '../../plugins/sdk/index.ts';
import { IS_READY_TIMEOUT_MS, startAdapter } from '../../plugins/sdk/runtime.ts';
import { ADAPTER_REGISTRY_KEY, BRIDGE_TO_PAGE_EVENT, PAGE_TO_BRIDGE_EVENT, type AdapterHandle, type BridgeToPage, type PageToBridge } from '../../server/protocol/page-channel.ts';

const g = globalThis as Record<string, unknown>;
let messages: PageToBridge[] = [];
let doc: EventTarget;
let ran = 0;
const warnings: string[] = [];
const realWarn = console.warn;

beforeEach(() => {
  doc = new EventTarget();
  g.document = doc;
  delete g[ADAPTER_REGISTRY_KEY];
  messages = [];
  ran = 0;
  warnings.length = 0;
  console.warn = (...a: unknown[]) => void warnings.push(a.map(String).join(' '));
  doc.addEventListener(PAGE_TO_BRIDGE_EVENT, (e) => messages.push(JSON.parse((e as CustomEvent).detail as string)));
});
afterEach(() => {
  console.warn = realWarn;
  delete g.document;
  delete g[ADAPTER_REGISTRY_KEY];
});

const tool = defineTool({ name: 'touch', description: 'touch', input: v.object({}), output: v.object({ n: v.number() }), handle: () => ({ n: ++ran }) });
const base = { name: 'stuck', displayName: 'Stuck', description: 'stuck', urlPatterns: ['http://127.0.0.1/*'], tools: [tool] };

const send = (msg: BridgeToPage) => doc.dispatchEvent(new CustomEvent(BRIDGE_TO_PAGE_EVENT, { detail: JSON.stringify(msg) }));
async function resultFor(id: string) {
  for (let i = 0; i < 1000; i++) {
    const r = messages.find((m) => m.type === 'result' && m.id === id);
    if (r) return r as Extract<PageToBridge, { type: 'result' }>;
    await Bun.sleep(5);
  }
  throw new Error(`no result for ${id}`);
}

test('the default bound is a few seconds, well under the call timeout', () => {
  expect(IS_READY_TIMEOUT_MS).toBeGreaterThan(0);
  expect(IS_READY_TIMEOUT_MS).toBeLessThan(30_000);
});

test('isReady() that never settles: the call fails naming the tool and isReady, and the handler never runs', async () => {
  startAdapter(definePlugin({ ...base, isReady: () => new Promise<boolean>(() => {}) }), 'h1', undefined, { readyTimeoutMs: 50 });
  send({ type: 'call', id: 'a', plugin: 'stuck', tool: 'touch', input: {}, config: {} });
  const r = await resultFor('a');
  expect(r.ok).toBe(false);
  if (!r.ok) {
    expect(r.error).toMatchObject({ code: 'adapter_not_ready', retryable: false });
    expect(r.error.message).toContain('stuck_touch did not run');
    expect(r.error.message).toContain("isReady() did not settle within 0.05 s");
    expect(r.error.message).toContain('return true or false promptly');
    expect(r.error.message).toContain('retrying will not help');
  }
  expect(ran).toBe(0);
  expect(warnings.some((w) => w.includes('isReady() did not settle'))).toBe(true);
});

test("the extension's readiness check gets false, not a promise that never settles", async () => {
  startAdapter(definePlugin({ ...base, isReady: () => new Promise<boolean>(() => {}) }), 'h2', undefined, { readyTimeoutMs: 50 });
  const handle = (g[ADAPTER_REGISTRY_KEY] as Record<string, AdapterHandle & { notReadyReason?: string }>).stuck!;
  expect(await handle.isReady()).toBe(false);
  // The reason stays on the handle for the extension's not-ready answer.
  expect(handle.notReadyReason).toContain("stuck's isReady() did not settle within 0.05 s");
});

test('isReady() that throws: the call says it threw, with the error', async () => {
  startAdapter(definePlugin({ ...base, isReady: () => { throw new Error('no session cookie'); } }), 'h3');
  send({ type: 'call', id: 'b', plugin: 'stuck', tool: 'touch', input: {}, config: {} });
  const r = await resultFor('b');
  expect(r.ok).toBe(false);
  if (!r.ok) {
    expect(r.error).toMatchObject({ code: 'adapter_not_ready', retryable: true });
    expect(r.error.message).toContain("stuck's isReady() threw: no session cookie. Retry once the page has loaded");
  }
  expect(ran).toBe(0);
});

test('a slow isReady() that settles in time still runs the tool', async () => {
  startAdapter(definePlugin({ ...base, isReady: () => new Promise<boolean>((res) => setTimeout(() => res(true), 5)) }), 'h4', undefined, { readyTimeoutMs: 5000 });
  send({ type: 'call', id: 'c', plugin: 'stuck', tool: 'touch', input: {}, config: {} });
  expect(await resultFor('c')).toMatchObject({ ok: true, value: { n: 1 } });
});
