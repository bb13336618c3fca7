/**
 * Every call an adapter receives gets one clear answer, whatever the plugin does:
 * a result JSON cannot carry (cycle, BigInt) or over the size limit, an adapter disposed while a
 * handler that ignores its signal still runs, and a plugin module that throws while loading in the page (the built
 * adapter then answers every call with that error instead of looking "not ready"). runTool (the
 * SDK's testing helper) reports the same errors, and its fake page serves `meta` to getMetaContent.
 */
import { afterAll, afterEach, beforeEach, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as v from 'valibot';
import { definePlugin, defineTool, getMetaContent } from '../../plugins/sdk/index.ts';
import { startAdapter, startFailedAdapter } from '../../plugins/sdk/runtime.ts';
import { runTool } from '../../plugins/sdk/testing.ts';
import { buildPlugin, createPlugin } from '../../plugins/tooling/index.ts';
import { PLUGIN_RESULT_MAX_BYTES } from '../../server/protocol/limits.ts';
import { ADAPTER_REGISTRY_KEY, BRIDGE_TO_PAGE_EVENT, PAGE_TO_BRIDGE_EVENT, type AdapterHandle, type BridgeToPage, type PageToBridge } from '../../server/protocol/page-channel.ts';

setDefaultTimeout(60_000);

const g = globalThis as Record<string, unknown>;
let messages: PageToBridge[] = [];
let doc: EventTarget;
const root = mkdtempSync(join(tmpdir(), 'opentabs-answers-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

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
const results = (id: string) => messages.filter((m) => m.type === 'result' && m.id === id) as Extract<PageToBridge, { type: 'result' }>[];

async function resultFor(id: string): Promise<Extract<PageToBridge, { type: 'result' }>> {
  for (let i = 0; i < 400; i++) {
    const r = results(id)[0];
    if (r) return r;
    await Bun.sleep(5);
  }
  throw new Error(`no result for ${id}`);
}

const plugin = definePlugin({
  name: 'odd',
  displayName: 'Odd',
  description: 'misbehaving tools',
  urlPatterns: ['http://127.0.0.1/*'],
  isReady: () => true,
  tools: [
    defineTool({
      name: 'cycle',
      description: 'returns a cycle',
      input: v.object({}),
      output: v.unknown(),
      handle: () => {
        const o: Record<string, unknown> = { a: 1 };
        o.self = o;
        return o;
      },
    }),
    defineTool({ name: 'big', description: 'returns a BigInt', input: v.object({}), output: v.unknown(), handle: () => ({ n: 10n }) }),
    defineTool({ name: 'fine', description: 'plain data', input: v.object({}), output: v.unknown(), handle: () => ({ a: [1, 'two', null], s: 'é"\\' }) }),
    defineTool({ name: 'huge', description: 'returns 9 MB', input: v.object({}), output: v.unknown(), handle: () => ({ s: 'x'.repeat(9 * 1024 * 1024) }) }),
    defineTool({ name: 'stuck', description: 'never settles, ignores its signal', input: v.object({}), output: v.unknown(), handle: () => new Promise(() => {}) }),
    defineTool({ name: 'meta', description: 'reads a meta tag', input: v.object({}), output: v.unknown(), handle: () => ({ token: getMetaContent('csrf-token') ?? null }) }),
  ],
});

describe('results JSON cannot carry', () => {
  for (const tool of ['cycle', 'big']) {
    test(`${tool}: the page answers at once with an error naming the tool (no hang until the timeout)`, async () => {
      startAdapter(plugin, 'h');
      send({ type: 'call', id: `c-${tool}`, plugin: 'odd', tool, input: {}, config: {} });
      const r = await resultFor(`c-${tool}`);
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.error).toMatchObject({ code: 'unserializable_result', category: 'internal', retryable: false });
        expect(r.error.message).toContain(`odd_${tool} returned a value that cannot be sent as JSON`);
      }
    });

    test(`${tool}: runTool reports the same error`, async () => {
      const { outcome } = await runTool(plugin, tool, {});
      expect(outcome.ok).toBe(false);
      if (!outcome.ok) expect(outcome.error).toMatchObject({ code: 'unserializable_result', category: 'internal' });
    });
  }
});

describe('a result over the size limit', () => {
  test('the page answers result_too_large naming the tool (the extension alone could not name it)', async () => {
    startAdapter(plugin, 'h');
    send({ type: 'call', id: 'c-huge', plugin: 'odd', tool: 'huge', input: {}, config: {} });
    const r = await resultFor('c-huge');
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error).toMatchObject({ code: 'result_too_large', category: 'validation', retryable: false });
      expect(r.error.message).toStartWith(`odd_huge returned ${9 * 1024 * 1024 + 8} bytes of JSON, over the ${PLUGIN_RESULT_MAX_BYTES}-byte limit`);
    }
  });

  test('runTool reports the same error', async () => {
    const { outcome } = await runTool(plugin, 'huge', {});
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.error.code).toBe('result_too_large');
  });

  test('a result under the limit arrives whole', async () => {
    startAdapter(plugin, 'h');
    send({ type: 'call', id: 'c-fine', plugin: 'odd', tool: 'fine', input: {}, config: {} });
    expect(await resultFor('c-fine')).toEqual({ type: 'result', id: 'c-fine', plugin: 'odd', ok: true, value: { a: [1, 'two', null], s: 'é"\\' } });
  });
});

describe('disposing the adapter during a call', () => {
  test('a handler that ignores its signal still gets one answer, naming the plugin and the tool', async () => {
    const { handle } = startAdapter(plugin, 'h');
    send({ type: 'call', id: 'c-stuck', plugin: 'odd', tool: 'stuck', input: {}, config: {} });
    await Bun.sleep(20);
    expect(results('c-stuck')).toEqual([]);
    handle.dispose();
    const r = await resultFor('c-stuck');
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error).toMatchObject({ code: 'adapter_unloaded', retryable: true });
      expect(r.error.message).toContain('odd_stuck was stopped: the odd adapter was unloaded from this page');
    }
    await Bun.sleep(20);
    expect(results('c-stuck')).toHaveLength(1);
  });
});

describe('a plugin module that throws while loading', () => {
  test('startFailedAdapter: a ready handle whose calls fail with the load error', async () => {
    const original = console.error;
    console.error = () => {};
    try {
      startFailedAdapter('odd', new Error('boom at load'), 'h');
    } finally {
      console.error = original;
    }
    const handle = (g[ADAPTER_REGISTRY_KEY] as Record<string, AdapterHandle>).odd!;
    expect(await handle.isReady()).toBe(true);
    send({ type: 'call', id: 'c-load', plugin: 'odd', tool: 'cycle', input: {}, config: {} });
    const r = await resultFor('c-load');
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe('adapter_load_failed');
      expect(r.error.message).toContain('odd_cycle cannot run: the odd adapter failed to load in this page (boom at load)');
    }
  });

  test('the built adapter.js registers that handle when the module throws only in the page', async () => {
    const { dir } = await createPlugin('loadfail', join(root, 'loadfail'));
    const src = join(dir, 'src/index.ts');
    // Loads fine where the build reads the definition (no window), throws in a page.
    writeFileSync(src, `if ((globalThis as { window?: unknown }).window) throw new Error('no widget on this page');\n${readFileSync(src, 'utf8')}`);
    const built = await buildPlugin(dir, { reload: false, log: () => {} });
    const code = readFileSync(built.adapterPath, 'utf8');
    g.window = g;
    const original = console.error;
    const consoleLines: string[] = [];
    console.error = (...a: unknown[]) => void consoleLines.push(String(a[0]));
    try {
      writeFileSync(join(root, 'adapter-copy.js'), code);
      await import(join(root, 'adapter-copy.js'));
      for (let i = 0; i < 100 && !(g[ADAPTER_REGISTRY_KEY] as Record<string, unknown> | undefined)?.loadfail; i++) await Bun.sleep(5);
    } finally {
      console.error = original;
      delete g.window;
    }
    expect(consoleLines.join('\n')).toContain('the loadfail adapter failed to load: no widget on this page');
    send({ type: 'call', id: 'c-built', plugin: 'loadfail', tool: 'get_page_info', input: {}, config: {} });
    const r = await resultFor('c-built');
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe('adapter_load_failed');
      expect(r.error.message).toContain('loadfail_get_page_info cannot run: the loadfail adapter failed to load in this page (no widget on this page)');
    }
  });
});

describe('a handler that returns nothing', () => {
  test('the output mismatch says handle returned undefined and asks about a missing return', async () => {
    const p = definePlugin({
      ...plugin,
      tools: [defineTool({ name: 'forgot', description: 'no return', input: v.object({}), output: v.object({ id: v.number() }), handle: (async () => {}) as never })],
    });
    const { outcome } = await runTool(p, 'forgot', {});
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) {
      expect(outcome.error.message).toStartWith('odd_forgot returned output that does not match its output schema: ');
      expect(outcome.error.message).toEndWith('(handle returned undefined: is a `return` missing?)');
    }
  });
});

describe('an isReady() that throws', () => {
  test('counts as not ready and is said once in the console, with the error', async () => {
    const p = definePlugin({ ...plugin, isReady: () => (g.__app as { user: { id: number } }).user.id > 0 });
    const warnings: string[] = [];
    const original = console.warn;
    console.warn = (...a: unknown[]) => void warnings.push(String(a[0]));
    try {
      const { handle } = startAdapter(p, 'h');
      expect(await handle.isReady()).toBe(false);
      expect(await handle.isReady()).toBe(false);
    } finally {
      console.warn = original;
    }
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toStartWith('[OpenTabs] odd: isReady() threw (');
    expect(warnings[0]).toContain('the tab counts as not ready. Return false instead of throwing');
  });
});

describe("runTool's fake page", () => {
  test('getMetaContent reads the meta tags given in page.meta', async () => {
    const { outcome } = await runTool(plugin, 'meta', {}, { page: { url: 'https://a.example.com/', meta: { description: 'd', 'csrf-token': 'tok' } } });
    expect(outcome).toEqual({ ok: true, value: { token: 'tok' } });
  });
});
