/**
 * The worker's and tab bridge's side of the page channel: checkPageMessage
 * (extension/shared/page-message.ts), their check of page messages with a fast path for results,
 * answers exactly what parsePageMessage (the valibot schema, then the caps) answers, accepted or
 * refused; and what the worker posts to the bridge is the JSON text the page gets.
 */
import { describe, expect, test } from 'bun:test';
import { parsePageMessage } from '../../server/protocol/page-channel-schema.ts';
import { PAGE_MESSAGE_ID_MAX_CHARS, PLUGIN_RESULT_MAX_BYTES } from '../../server/protocol/limits.ts';
import { checkPageMessage } from '../../extension/shared/page-message.ts';
import { TAB_PORT_NAME } from '../../server/protocol/page-channel.ts';
import type { PluginInfo } from '../../server/protocol/methods.ts';
import { TabPorts } from '../../extension/background/plugin-ports.ts';

const long = 'x'.repeat(PAGE_MESSAGE_ID_MAX_CHARS);
const ids: unknown[] = ['d1', '', long, `${long}y`, 7, null, undefined, ['d1'], { id: 'd1' }, '😀'];
const oks: unknown[] = [true, false, 'true', 1, null, undefined];
const values: unknown[] = [undefined, null, { text: 'hi' }, 'x'.repeat(PLUGIN_RESULT_MAX_BYTES + 10), [1, 2], 0, { nested: { deep: [null] } }];
const errors: unknown[] = [undefined, null, 'boom', { message: 'no', code: 'not_found', category: 'not_found', retryable: true, retryAfterMs: 5 }, { message: 'm'.repeat(100_000), code: 'Bad Code', category: 'nope', retryable: 'yes', retryAfterMs: -1 }, {}];

describe('checkPageMessage', () => {
  test('every result shape gets the same answer as parsePageMessage', () => {
    let n = 0;
    for (const id of ids)
      for (const plugin of ids)
        for (const ok of oks)
          for (const value of values)
            for (const error of errors) {
              const raw: Record<string, unknown> = { type: 'result', id, plugin, ok };
              if (value !== undefined) raw.value = value;
              if (error !== undefined) raw.error = error;
              expect(checkPageMessage(raw)).toEqual(parsePageMessage(raw));
              n++;
            }
    expect(n).toBeGreaterThan(10_000);
  });

  test('missing keys, extra keys, other types and non-objects get the same answer', () => {
    const cases: unknown[] = [
      null,
      undefined,
      'result',
      42,
      [],
      ['result'],
      {},
      { type: 'result' },
      { type: 'result', plugin: 'p', ok: true },
      { type: 'result', id: 'd', ok: true },
      { type: 'result', id: 'd', plugin: 'p' },
      { type: 'result', id: 'd', plugin: 'p', ok: true, value: undefined },
      { type: 'result', id: 'd', plugin: 'p', ok: true, extra: 'dropped', value: { a: 1 } },
      { type: 'RESULT', id: 'd', plugin: 'p', ok: true },
      { type: 'progress', id: 'd', plugin: 'p', progress: 0.5, total: 1, message: 'half' },
      { type: 'progress', id: 'd', plugin: 'p', progress: 'half' },
      { type: 'log', plugin: 'p', id: 'd', level: 'info', message: 'hi', data: { a: 1 }, ts: 1 },
      { type: 'log', plugin: 'p', level: 'shout', message: { not: 'a string' } },
      { type: 'registered', plugin: 'p', hash: 'abc' },
      { type: 'registered', plugin: 'p' },
      { type: 'call', id: 'd', plugin: 'p', tool: 't', input: {}, config: {} },
      Object.assign(Object.create(null), { type: 'result', id: 'd', plugin: 'p', ok: false, error: { message: 'x' } }),
      JSON.parse('{"type":"result","id":"d","plugin":"p","ok":true,"__proto__":{"x":1},"value":{"__proto__":1}}'),
    ];
    // A log line without `ts` is stamped with Date.now() on each path: one clock for both, so a
    // millisecond passing between the two calls is not a difference.
    const now = Date.now;
    Date.now = () => 1_795_000_000_000;
    try {
      for (const raw of cases) expect(checkPageMessage(raw)).toEqual(parsePageMessage(raw));
    } finally {
      Date.now = now;
    }
  });

  test('a result too large becomes result_too_large on either path', () => {
    const r = checkPageMessage({ type: 'result', id: 'd', plugin: 'p', ok: true, value: 'x'.repeat(PLUGIN_RESULT_MAX_BYTES) });
    expect(r.ok && r.msg.type === 'result' && !r.msg.ok && r.msg.error.code).toBe('result_too_large');
  });
});

describe('TabPorts → tab bridge', () => {
  test('calls and cancels go over the Port as the JSON text the page gets', async () => {
    const plugin = { name: 'p', urlPatterns: ['http://127.0.0.1/*'], excludePatterns: [] } as unknown as PluginInfo;
    const ports = new TabPorts({ pluginsForUrl: () => [plugin], plugin: () => plugin, portClosed: () => {}, registered: () => {}, progress: () => {}, logs: () => {} });
    const posted: unknown[] = [];
    const onMessage: ((m: unknown) => void)[] = [];
    const port = {
      name: TAB_PORT_NAME,
      sender: { tab: { id: 7 }, frameId: 0, documentId: 'doc-1', url: 'http://127.0.0.1/app', origin: 'http://127.0.0.1' },
      onMessage: { addListener: (cb: (m: unknown) => void) => onMessage.push(cb) },
      onDisconnect: { addListener: () => {} },
      postMessage: (m: unknown) => posted.push(m),
      disconnect: () => {},
    } as unknown as chrome.runtime.Port;
    ports.attach(port);
    const tp = ports.get(7)!;
    const call = ports.call(7, tp, { type: 'call', id: 'd1', plugin: 'p', tool: 't', input: { text: 'hi' }, config: { k: 1 } });
    expect(posted).toEqual([JSON.stringify({ type: 'call', id: 'd1', plugin: 'p', tool: 't', input: { text: 'hi' }, config: { k: 1 } })]);
    ports.cancel('d1', 'no longer needed');
    expect(JSON.parse(posted[1] as string)).toEqual({ type: 'cancel', id: 'd1', plugin: 'p', reason: 'no longer needed' });
    await expect(call).rejects.toThrow('Cancelled: no longer needed');
    // The result of a call still counts only over its own Port, through the fast path too.
    const second = ports.call(7, tp, { type: 'call', id: 'd2', plugin: 'p', tool: 't', input: {}, config: {} });
    for (const cb of onMessage) cb({ type: 'result', id: 'd2', plugin: 'other', ok: true, value: 1 });
    for (const cb of onMessage) cb({ type: 'result', id: 'd2', plugin: 'p', ok: true, value: { done: true } });
    expect(await second).toEqual({ value: { done: true } });
  });
});
