/**
 * runTool (plugin unit tests) ends a handler that never settles as a `timeout` outcome naming the
 * tool, with ctx.signal aborted, instead of the test runner's own timeout; the caller's signal still
 * cancels; a wrong tool name lists the plugin's tools.
 */
import { expect, test } from 'bun:test';
import * as v from 'valibot';
import { definePlugin, defineTool } from '../../plugins/sdk/index.ts';
import { RUN_TOOL_TIMEOUT_MS, runTool } from '../../plugins/sdk/testing.ts';

let aborted: unknown = null;
const plugin = definePlugin({
  name: 'slowpoke',
  displayName: 'Slowpoke',
  description: 'slow',
  urlPatterns: ['http://127.0.0.1/*'],
  isReady: () => true,
  tools: [
    defineTool({
      name: 'hang',
      description: 'never answers',
      input: v.object({}),
      output: v.object({}),
      handle: (_i, ctx) =>
        new Promise(() => {
          ctx.signal.addEventListener('abort', () => (aborted = ctx.signal.reason));
        }),
    }),
    defineTool({
      name: 'waits',
      description: 'waits for its signal',
      input: v.object({}),
      output: v.object({}),
      handle: (_i, ctx) =>
        new Promise((_res, rej) => {
          if (ctx.signal.aborted) rej(ctx.signal.reason);
          ctx.signal.addEventListener('abort', () => rej(ctx.signal.reason));
        }),
    }),
  ],
});

test('the default is under bun test’s 5 s per test', () => {
  expect(RUN_TOOL_TIMEOUT_MS).toBeLessThan(5000);
});

test('a handler that never settles: timeout outcome naming the tool, signal aborted', async () => {
  aborted = null;
  const { outcome } = await runTool(plugin, 'hang', {}, { timeoutMs: 50 });
  expect(outcome.ok).toBe(false);
  if (!outcome.ok) {
    expect(outcome.error).toMatchObject({ code: 'timeout', category: 'timeout' });
    expect(outcome.error.message).toContain('slowpoke_hang did not settle within 50 ms');
  }
  expect(String(aborted)).toContain('timed out');
});

test("the caller's own signal still cancels (reported as cancelled, not as a timeout)", async () => {
  const c = new AbortController();
  const running = runTool(plugin, 'waits', {}, { signal: c.signal, timeoutMs: 0 });
  c.abort(new Error('stop'));
  const { outcome } = await running;
  expect(outcome.ok).toBe(false);
  if (!outcome.ok) expect(outcome.error).toMatchObject({ code: 'cancelled', message: 'slowpoke_waits was cancelled: stop' });
});

test('a wrong tool name lists the tools and says the prefix is not part of it', async () => {
  await expect(runTool(plugin, 'slowpoke_hang', {})).rejects.toThrow('its tools: hang, waits; runTool takes the name without the "slowpoke_" prefix');
});
