/**
 * A handler that throws something other than an Error: the agent gets what was thrown and the
 * author what to throw instead, never "[object Object]" or a bare "undefined". runTool runs the
 * same executeTool as the page runtime.
 */
import { describe, expect, test } from 'bun:test';
import * as v from 'valibot';
import { definePlugin, defineTool } from '../../plugins/sdk/index.ts';
import { runTool } from '../../plugins/sdk/testing.ts';

const thrown: Record<string, () => unknown> = {
  object: () => ({ code: 'E_QUOTA', status: 500 }),
  withMessage: () => ({ message: 'quota exceeded', code: 'E_QUOTA' }),
  empty: () => ({}),
  nul: () => null,
  undef: () => undefined,
  num: () => 42,
  emptyError: () => new Error(),
  typeError: () => new TypeError('x is not a function'),
  response: () => new Response('nope', { status: 503, statusText: 'Service Unavailable' }),
  huge: () => ({ detail: 'z'.repeat(5000) }),
  str: () => 'plain words',
};

const plugin = definePlugin({
  name: 'thrower',
  displayName: 'Thrower',
  description: 'Throws things',
  urlPatterns: ['http://127.0.0.1/*'],
  isReady: () => true,
  tools: [
    defineTool({
      name: 'go',
      description: 'Throw one kind of value.',
      input: v.object({ kind: v.string() }),
      output: v.object({}),
      handle(input) {
        throw thrown[input.kind]!();
      },
    }),
  ],
});

async function messageFor(kind: string): Promise<string> {
  const { outcome } = await runTool(plugin, 'go', { kind });
  expect(outcome.ok).toBe(false);
  if (outcome.ok) throw new Error('unreachable');
  expect(outcome.error.category).toBe('internal');
  expect(outcome.error.message.startsWith('thrower_go failed: ')).toBe(true);
  return outcome.error.message;
}

describe('a handler that throws a non-Error', () => {
  test('a plain object is shown as JSON with what to throw instead', async () => {
    const m = await messageFor('object');
    expect(m).not.toContain('[object Object]');
    expect(m).toBe('thrower_go failed: {"code":"E_QUOTA","status":500} was thrown, not an Error (throw an Error or a ToolError with a message instead)');
  });

  test('an object with a message gives that message', async () => {
    expect(await messageFor('withMessage')).toBe('thrower_go failed: quota exceeded');
  });

  test('an empty object, null, undefined and a number say what was thrown', async () => {
    expect(await messageFor('empty')).toBe('thrower_go failed: [object Object] was thrown, not an Error (throw an Error or a ToolError with a message instead)');
    expect(await messageFor('nul')).toBe('thrower_go failed: null was thrown, not an Error (throw an Error or a ToolError with a message instead)');
    expect(await messageFor('undef')).toBe('thrower_go failed: undefined was thrown, not an Error (throw an Error or a ToolError with a message instead)');
    expect(await messageFor('num')).toBe('thrower_go failed: 42 was thrown, not an Error (throw an Error or a ToolError with a message instead)');
  });

  test('an Error without a message names its kind; one with a message keeps it', async () => {
    expect(await messageFor('emptyError')).toBe('thrower_go failed: Error with no message');
    expect(await messageFor('typeError')).toBe('thrower_go failed: x is not a function');
  });

  test('a thrown fetch Response gives its status and points at the SDK helpers', async () => {
    const m = await messageFor('response');
    expect(m).toContain('a fetch Response was thrown: HTTP 503 Service Unavailable');
    expect(m).toContain('fetchJson');
  });

  test('a huge thrown object is cut; a string is kept as it is', async () => {
    const m = await messageFor('huge');
    expect(m.length).toBeLessThan(700);
    expect(m).toContain('…');
    expect(await messageFor('str')).toBe('thrower_go failed: plain words');
  });
});

describe('in the page: an isReady() or a module that throws a non-Error', () => {
  const g = globalThis as Record<string, unknown>;

  test("isReady() throwing a plain object: the console and the not-ready reason show it, without advice to throw", async () => {
    const { startAdapter } = await import('../../plugins/sdk/runtime.ts');
    const { ADAPTER_REGISTRY_KEY } = await import('../../server/protocol/page-channel.ts');
    g.document = new EventTarget();
    const warnings: string[] = [];
    const original = console.warn;
    console.warn = (...a: unknown[]) => void warnings.push(String(a[0]));
    try {
      const p = definePlugin({ ...plugin, isReady: () => { throw { reason: 'no session' }; } });
      const { handle } = startAdapter(p, 'h') as { handle: { isReady(): Promise<boolean>; notReadyReason?: string } };
      expect(await handle.isReady()).toBe(false);
      expect(handle.notReadyReason).toContain('threw: {"reason":"no session"} was thrown, not an Error');
      expect(handle.notReadyReason).not.toContain('throw an Error');
    } finally {
      console.warn = original;
      delete g.document;
      delete g[ADAPTER_REGISTRY_KEY];
    }
    expect(warnings[0]).toContain('isReady() threw ({"reason":"no session"} was thrown, not an Error)');
    expect(warnings[0]).not.toContain('[object Object]');
  });

  test('a module that throws a plain object while loading: every call says what it threw', async () => {
    const { startFailedAdapter } = await import('../../plugins/sdk/runtime.ts');
    const { ADAPTER_REGISTRY_KEY, BRIDGE_TO_PAGE_EVENT, PAGE_TO_BRIDGE_EVENT } = await import('../../server/protocol/page-channel.ts');
    const doc = new EventTarget();
    g.document = doc;
    const messages: { type: string; id?: string; ok?: boolean; error?: { message: string; code: string } }[] = [];
    doc.addEventListener(PAGE_TO_BRIDGE_EVENT, (e) => messages.push(JSON.parse((e as CustomEvent).detail as string)));
    const original = console.error;
    console.error = () => {};
    try {
      startFailedAdapter('thrower', { code: 'E_WIDGET' }, 'h');
      doc.dispatchEvent(new CustomEvent(BRIDGE_TO_PAGE_EVENT, { detail: JSON.stringify({ type: 'call', id: 'c1', plugin: 'thrower', tool: 'go', input: {}, config: {} }) }));
      let r: (typeof messages)[number] | undefined;
      for (let i = 0; i < 400 && !r; i++) {
        r = messages.find((m) => m.type === 'result' && m.id === 'c1');
        if (!r) await Bun.sleep(5);
      }
      expect(r?.ok).toBe(false);
      expect(r?.error?.code).toBe('adapter_load_failed');
      expect(r?.error?.message).toContain('failed to load in this page ({"code":"E_WIDGET"} was thrown, not an Error)');
    } finally {
      console.error = original;
      delete g.document;
      delete g[ADAPTER_REGISTRY_KEY];
    }
  });
});

test('a thrown value whose message getter and toString throw still gets an answer', async () => {
  const hostile = definePlugin({
    name: 'thrower', displayName: 'Thrower', description: 'Throws things', urlPatterns: ['http://127.0.0.1/*'], isReady: () => true,
    tools: [
      defineTool({
        name: 'go', description: 'Throw a hostile value.', input: v.object({}), output: v.object({}),
        handle() {
          throw { get message(): string { throw new Error('no'); }, toString() { throw new Error('no'); } };
        },
      }),
    ],
  });
  const { outcome } = await runTool(hostile, 'go', {});
  expect(outcome.ok).toBe(false);
  if (!outcome.ok) expect(outcome.error.message).toBe('thrower_go failed: a value that cannot be read was thrown (throw an Error or a ToolError with a message instead)');
});
