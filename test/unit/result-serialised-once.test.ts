/**
 * A large result is serialised once in the service worker: the plugin result path (the bridge's
 * message over the Port → TabPorts → the JSON-RPC frame, extension/background/result-json.ts) and
 * the tab bridge's check make no JSON text of the value besides the one measured against the cap,
 * and the frame is the text JSON.stringify of the whole would make, with the secret scrubbed from
 * the spliced-in part as from any other.
 */
import { afterEach, describe, expect, test } from 'bun:test';
import { TAB_PORT_NAME } from '../../server/protocol/page-channel.ts';
import { result as rpcResult } from '../../server/protocol/jsonrpc.ts';
import { PLUGIN_RESULT_MAX_BYTES } from '../../server/protocol/limits.ts';
import type { DispatchResult, PluginInfo } from '../../server/protocol/methods.ts';
import { TabPorts } from '../../extension/background/plugin-ports.ts';
import { checkPageMessage } from '../../extension/shared/page-message.ts';
import { spliceResults, withJson } from '../../extension/background/result-json.ts';
import { REDACTED_SECRET, rememberSecret, withoutSecret } from '../../extension/background/own-secret.ts';

const BIG = 1024 * 1024;
const SECRET = 'ab'.repeat(32);

/** Counts JSON.stringify calls whose text is at least `min` characters while `fn` runs. */
function bigStringifies<T>(min: number, fn: () => T): { n: number; out: T } {
  const real = JSON.stringify;
  let n = 0;
  JSON.stringify = ((...args: Parameters<typeof JSON.stringify>) => {
    const s = real(...args);
    if (typeof s === 'string' && s.length >= min) n++;
    return s;
  }) as typeof JSON.stringify;
  let out: T;
  try {
    out = fn();
  } finally {
    JSON.stringify = real;
  }
  return { n, out };
}

function fakePort(onMessage: ((m: unknown) => void)[]): chrome.runtime.Port {
  return {
    name: TAB_PORT_NAME,
    sender: { tab: { id: 7 }, frameId: 0, documentId: 'doc-1', url: 'http://127.0.0.1/app', origin: 'http://127.0.0.1' },
    onMessage: { addListener: (cb: (m: unknown) => void) => onMessage.push(cb) },
    onDisconnect: { addListener: () => {} },
    postMessage: () => {},
    disconnect: () => {},
  } as unknown as chrome.runtime.Port;
}

afterEach(() => rememberSecret(null));

describe('a large plugin result in the worker', () => {
  test('is serialised once between the Port and the frame, which is the frame JSON.stringify makes, secret scrubbed', async () => {
    const plugin = { name: 'p', urlPatterns: ['http://127.0.0.1/*'], excludePatterns: [] } as unknown as PluginInfo;
    const ports = new TabPorts({ pluginsForUrl: () => [plugin], plugin: () => plugin, portClosed: () => {}, registered: () => {}, progress: () => {}, logs: () => {} });
    const onMessage: ((m: unknown) => void)[] = [];
    ports.attach(fakePort(onMessage));
    const value = { rows: Array.from({ length: 2000 }, (_, i) => ({ i, text: `row ${i} ${'é'.repeat(200)} ${i === 1000 ? SECRET : ''}` })), tail: 'x'.repeat(BIG) };
    const detail = JSON.stringify({ type: 'result', id: 'd1', plugin: 'p', ok: true, value });
    const expected = JSON.stringify({ jsonrpc: '2.0', id: 's1', result: { value } });

    const call = ports.call(7, ports.get(7)!, { type: 'call', id: 'd1', plugin: 'p', tool: 't', input: {}, config: {} });
    // As the Port delivers it: a fresh copy of what the bridge posted.
    const posted = JSON.parse(detail);
    const received = bigStringifies(BIG, () => {
      for (const cb of onMessage) cb(posted);
    });
    const result: DispatchResult = await call;
    const framed = bigStringifies(BIG, () => spliceResults(rpcResult('s1', result)));
    // One JSON text of the value in all: the one measured against the cap; the frame reuses it.
    expect(received.n + framed.n).toBe(1);
    expect(framed.out).toBe(expected);
    expect((result.value as typeof value).rows[5]).toEqual(value.rows[5]);

    rememberSecret(SECRET);
    const sent = withoutSecret(framed.out);
    expect(sent).not.toContain(SECRET.slice(0, 16));
    expect(sent).toContain(REDACTED_SECRET);
    expect(JSON.parse(sent).result.value.rows[1000].text).toContain(REDACTED_SECRET);
  });

  test('over the cap once serialised, though not as the page wrote it: refused with the same error as before', async () => {
    const plugin = { name: 'p', urlPatterns: ['http://127.0.0.1/*'], excludePatterns: [] } as unknown as PluginInfo;
    const ports = new TabPorts({ pluginsForUrl: () => [plugin], plugin: () => plugin, portClosed: () => {}, registered: () => {}, progress: () => {}, logs: () => {} });
    const onMessage: ((m: unknown) => void)[] = [];
    ports.attach(fakePort(onMessage));
    // Within the cap as the page wrote it (1e20 is 4 characters), over it once serialised (21).
    const n = Math.ceil(PLUGIN_RESULT_MAX_BYTES / 22);
    const detail = `{"type":"result","id":"d1","plugin":"p","ok":true,"value":[${Array(n).fill('1e20').join(',')}]}`;
    expect(detail.length).toBeLessThan(PLUGIN_RESULT_MAX_BYTES);
    const call = ports.call(7, ports.get(7)!, { type: 'call', id: 'd1', plugin: 'p', tool: 't', input: {}, config: {} });
    for (const cb of onMessage) cb(JSON.parse(detail));
    const err = await call.then(
      () => null,
      (e: { code?: string; message: string }) => e,
    );
    expect(err?.code).toBe('result_too_large');
    expect(err?.message).toContain(`is ${22 * n - 1 + 2} bytes of JSON, over the ${PLUGIN_RESULT_MAX_BYTES}-byte limit`);
  });
});

describe('the tab bridge check', () => {
  test('takes a result whose text is within the cap without serialising its value', () => {
    const raw = { type: 'result', id: 'd1', plugin: 'p', ok: true, value: { tail: 'x'.repeat(BIG) } };
    const checked = bigStringifies(BIG, () => checkPageMessage(raw, true));
    expect(checked.n).toBe(0);
    expect(checked.out).toEqual({ ok: true, msg: raw as never });
    // Without the assurance it measures, as sanitizePageMessage does.
    expect(bigStringifies(BIG, () => checkPageMessage(raw)).n).toBe(1);
  });

  test('a short result goes through unchanged (no placeholder), a long one as its text', () => {
    const small = { value: { text: 'hi' } };
    expect(withJson(small, JSON.stringify(small))).toBe(small);
    const long = { value: 'y'.repeat(10_000) };
    const wrapped = withJson(long, JSON.stringify(long));
    expect(wrapped.value).toBe(long.value);
    expect(spliceResults(JSON.stringify({ result: wrapped }))).toBe(JSON.stringify({ result: long }));
  });
});

describe('the secret scrub on large texts', () => {
  // A secret with every hex digit in it, in no pattern, so windows at different offsets differ.
  const secret = '3f9a0c7be21d4856a0b9c3e7f1d2456789abcdef0fedcba9876543210c0ffee1';
  const noise = (n: number, seed: number) => {
    let s = '';
    let x = seed;
    for (let i = 0; i < n; i++) {
      x = (x * 1103515245 + 12345) >>> 0;
      s += '0123456789abcdefABCDEF .,"\n'[x % 28];
    }
    return s;
  };
  const mixed = (s: string) => [...s].map((c, i) => (i % 2 ? c.toUpperCase() : c)).join('');

  test('a piece of the secret at any offset, in any case, inside hex or prose, is replaced; a shorter one is left', () => {
    rememberSecret(secret);
    for (let i = 0; i + 16 <= secret.length; i++) {
      for (const len of [15, 16, 23]) {
        if (i + len > secret.length) continue;
        const piece = secret.slice(i, i + len);
        for (const shown of [piece, piece.toUpperCase(), mixed(piece)]) {
          for (const [before, after] of [
            [noise(300, i), noise(300, i + 1)],
            ['see ', ' here'],
            ['', ''],
          ]) {
            const text = `${before}${shown}${after}`;
            const out = withoutSecret(text);
            if (len < 16) {
              // Left alone unless the surrounding hex happens to extend it into a longer piece.
              if (!/[0-9a-f]$/i.test(before!) && !/^[0-9a-f]/i.test(after!)) expect(out).toBe(text);
            } else {
              expect(out).toContain(REDACTED_SECRET);
              expect(out.toLowerCase()).not.toContain(piece.slice(0, 16).toLowerCase());
            }
          }
        }
      }
    }
  });

  test('a megabyte text holding no piece comes back as it is; with one piece deep inside, only that piece goes', () => {
    rememberSecret(secret);
    const big = noise(BIG, 7);
    expect(withoutSecret(big)).toBe(big);
    const at = 654_321;
    const withPiece = big.slice(0, at) + ' ' + secret.slice(17, 41) + ' ' + big.slice(at);
    expect(withoutSecret(withPiece)).toBe(big.slice(0, at) + ' ' + REDACTED_SECRET + ' ' + big.slice(at));
  });
});
