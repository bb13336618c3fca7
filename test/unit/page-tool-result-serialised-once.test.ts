/**
 * A large page-tool (WebMCP) result is serialised once in the service worker: the text measured
 * against PAGE_TOOL_RESULT_MAX_BYTES goes into the JSON-RPC frame (result-json.ts), the frame is
 * the one JSON.stringify of the whole would make. A plugin result the worker refuses for its size
 * is serialised once too, its error made from that count. And the tab bridge's bound on a result
 * it passes unmeasured holds for what the text becomes once parsed and serialised again.
 */
import { describe, expect, test } from 'bun:test';
import { result as rpcResult } from '../../server/protocol/jsonrpc.ts';
import { PLUGIN_RESULT_MAX_BYTES } from '../../server/protocol/limits.ts';
import { sanitizePageMessage, TAB_PORT_NAME, utf8Bytes } from '../../server/protocol/page-channel.ts';
import { sanitizePageToolsMessage } from '../../server/protocol/page-tools.ts';
import type { DispatchResult, PluginInfo } from '../../server/protocol/methods.ts';
import { EXPONENT_GROWTH, textWithinResultCap } from '../../extension/shared/page-message.ts';
import { spliceResults } from '../../extension/background/result-json.ts';
import { TabPorts } from '../../extension/background/plugin-ports.ts';

(globalThis as Record<string, unknown>).chrome ??= {
  runtime: { id: 'ext' },
  webNavigation: { onCommitted: { addListener: () => {} } },
  tabs: { onRemoved: { addListener: () => {} } },
};
const { PageTools } = await import('../../extension/background/page-tools.ts');

const BIG = 512 * 1024;

/** Counts JSON.stringify calls whose text is at least `min` characters while `fn` runs. */
async function bigStringifies<T>(min: number, fn: () => T | Promise<T>): Promise<{ n: number; out: T }> {
  const real = JSON.stringify;
  let n = 0;
  JSON.stringify = ((...args: Parameters<typeof JSON.stringify>) => {
    const s = real(...args);
    if (typeof s === 'string' && s.length >= min) n++;
    return s;
  }) as typeof JSON.stringify;
  let out: T;
  try {
    out = await fn();
  } finally {
    JSON.stringify = real;
  }
  return { n, out };
}

function pageTools() {
  const listeners: ((m: unknown) => void)[] = [];
  const port = {
    name: 'opentabs-page-tools',
    sender: { tab: { id: 3 }, frameId: 0, documentId: 'doc', url: 'http://127.0.0.1/app', origin: 'http://127.0.0.1', id: 'ext' },
    onMessage: { addListener: (cb: (m: unknown) => void) => listeners.push(cb) },
    onDisconnect: { addListener: () => {} },
    postMessage: () => {},
    disconnect: () => {},
  } as unknown as chrome.runtime.Port;
  const tools = new PageTools({ connected: false, request: async () => ({ refused: [] }) } as never);
  tools.attachPort(port);
  const deliver = (m: unknown) => {
    for (const cb of listeners) cb(m);
  };
  deliver({ type: 'tools', tools: [{ name: 'big', description: 'big', inputSchema: { type: 'object', properties: {} } }] });
  let id = 0;
  const call = () => {
    const dispatchId = `d${++id}`;
    return { dispatchId, done: tools.dispatch({ dispatchId, plugin: 'page:http://127.0.0.1', tool: 'big', input: {}, tabId: 3 }) };
  };
  return { deliver, call };
}

describe('a large page-tool result in the worker', () => {
  test('is serialised once between the Port and the frame, which is the frame JSON.stringify makes', async () => {
    const { deliver, call } = pageTools();
    // As the bridge passes it on: content fields only (sanitizePageToolsMessage), a fresh copy from the Port.
    const value = { content: [{ type: 'text', text: `"quoted"\t${'é'.repeat(1000)}\n${'x'.repeat(BIG)}` }, { type: 'resource', resource: { uri: 'https://a.example/r', text: 'r' } }], structuredContent: { rows: [1, 2, 3] }, isError: false };
    const posted = JSON.parse(JSON.stringify(sanitizePageToolsMessage({ type: 'result', id: 'd1', ok: true, value })));
    expect(posted.value).toEqual(value);
    const c = call();
    const counted = await bigStringifies(BIG, async () => {
      deliver(posted);
      const r: DispatchResult = await c.done;
      return spliceResults(rpcResult('s1', r));
    });
    // One JSON text of the value in all: the one measured against the cap; the frame reuses it.
    expect(counted.n).toBe(1);
    expect(counted.out).toBe(JSON.stringify({ jsonrpc: '2.0', id: 's1', result: { value } }));
  });

  test('a result with fields the check leaves out goes to the server without them (its text is not reused)', async () => {
    const { deliver, call } = pageTools();
    const c = call();
    // Not what the bridge passes on (it drops these), but the worker checks what the Port brings.
    deliver({ type: 'result', id: c.dispatchId, ok: true, value: { isError: false, content: [{ type: 'text', text: 'y'.repeat(BIG), annotations: { audience: ['assistant'] }, _meta: { x: 1 } }], extra: 'z' } });
    const frame = spliceResults(rpcResult('s1', await c.done));
    expect(frame).toBe(JSON.stringify({ jsonrpc: '2.0', id: 's1', result: { value: { content: [{ type: 'text', text: 'y'.repeat(BIG) }], isError: false } } }));
  });
});

describe('a plugin result the worker refuses for its size', () => {
  test('is serialised once, with the same error sanitizePageMessage gives', async () => {
    const plugin = { name: 'p', urlPatterns: ['http://127.0.0.1/*'], excludePatterns: [] } as unknown as PluginInfo;
    const ports = new TabPorts({ pluginsForUrl: () => [plugin], plugin: () => plugin, portClosed: () => {}, registered: () => {}, progress: () => {}, logs: () => {} });
    const onMessage: ((m: unknown) => void)[] = [];
    ports.attach({
      name: TAB_PORT_NAME,
      sender: { tab: { id: 7 }, frameId: 0, documentId: 'doc-1', url: 'http://127.0.0.1/app', origin: 'http://127.0.0.1' },
      onMessage: { addListener: (cb: (m: unknown) => void) => onMessage.push(cb) },
      onDisconnect: { addListener: () => {} },
      postMessage: () => {},
      disconnect: () => {},
    } as unknown as chrome.runtime.Port);
    const raw = { type: 'result', id: 'd1', plugin: 'p', ok: true, value: { text: 'é'.repeat(PLUGIN_RESULT_MAX_BYTES / 2) } };
    const expected = sanitizePageMessage(raw);
    const call = ports.call(7, ports.get(7)!, { type: 'call', id: 'd1', plugin: 'p', tool: 't', input: {}, config: {} });
    const counted = await bigStringifies(BIG, () => {
      for (const cb of onMessage) cb(raw);
    });
    expect(counted.n).toBe(1);
    const err = await call.then(
      () => null,
      (e: { code?: string; message: string; category?: string; retryable?: boolean }) => e,
    );
    expect(expected).toMatchObject({ ok: false });
    const want = (expected as { error: { code: string; message: string; category: string; retryable: boolean } }).error;
    expect({ code: err?.code, message: err?.message, category: err?.category, retryable: err?.retryable }).toEqual(want);
  });
});

describe("the tab bridge's bound on a result it does not measure", () => {
  const reserialised = (text: string) => utf8Bytes(JSON.stringify(JSON.parse(text)));
  const sites = (text: string) => text.match(/\d[eE]/g)?.length ?? 0;

  test('a number grows by at most EXPONENT_GROWTH characters, and only one written with an exponent', () => {
    const numbers = ['1e20', '-1e20', '1E20', '9e20', '1e+20', '1.5e20', '1e21', '1e-6', '1.5e-6', '1e-7', '5e-324', '1e400', '-1e400', '123e18', '0.000001', '100000000000000000000', '0.1e1', '12345678901234567890123', '-0', '0.0000001', '1.7976931348623157e308', '2.2250738585072014e-308', '1e-5', '9.87654321e-3', '1e0', '0e5'];
    for (const n of numbers) {
      const grown = JSON.stringify(JSON.parse(n)).length - n.length;
      expect({ n, within: grown <= sites(n) * EXPONENT_GROWTH }).toEqual({ n, within: true });
    }
    expect(JSON.stringify(1e20).length - '1e20'.length).toBe(EXPONENT_GROWTH);
  });

  test('a text within the cap as written but over it once serialised again is not passed unmeasured', () => {
    const n = Math.ceil(PLUGIN_RESULT_MAX_BYTES / 22) + 10;
    const detail = `{"type":"result","id":"d1","plugin":"p","ok":true,"value":[${Array(n).fill('1e20').join(',')}]}`;
    expect(utf8Bytes(detail)).toBeLessThan(PLUGIN_RESULT_MAX_BYTES / 4);
    expect(reserialised(detail)).toBeGreaterThan(PLUGIN_RESULT_MAX_BYTES);
    expect(textWithinResultCap(detail)).toBe(false);
    // A few such numbers in a large text are fine: the bound has room for them.
    const some = `{"type":"result","id":"d1","plugin":"p","ok":true,"value":{"n":[${Array(1000).fill('1e20').join(',')}],"t":"${'x'.repeat(4_000_000)}"}}`;
    expect(textWithinResultCap(some)).toBe(true);
    expect(reserialised(some)).toBeLessThanOrEqual(PLUGIN_RESULT_MAX_BYTES);
    // Just under the cap as written (the same length each time): two such numbers fit, six do not.
    const edge = (k: number) => `{"type":"result","id":"d1","plugin":"p","ok":true,"value":{"n":[${Array(k).fill('1e20').join(',')}],"t":"${'x'.repeat(PLUGIN_RESULT_MAX_BYTES - 150 - 5 * k)}"}}`;
    expect(edge(2).length).toBe(edge(6).length);
    expect(PLUGIN_RESULT_MAX_BYTES - edge(2).length).toBeLessThan(EXPONENT_GROWTH * 6);
    expect(textWithinResultCap(edge(2))).toBe(true);
    expect(reserialised(edge(2))).toBeLessThanOrEqual(PLUGIN_RESULT_MAX_BYTES);
    expect(textWithinResultCap(edge(6))).toBe(false);
    expect(reserialised(edge(6))).toBeGreaterThan(PLUGIN_RESULT_MAX_BYTES);
  });

  test('a lone surrogate (written as a 6-character escape) makes the text measured; plain text and hex digits followed by e are bounded', () => {
    const lone = `{"type":"result","id":"d1","plugin":"p","ok":true,"value":"${'\ud800'.repeat(10)}"}`;
    expect(textWithinResultCap(lone)).toBe(false);
    expect(textWithinResultCap(`{"type":"result","id":"d1","plugin":"p","ok":true,"value":"${'😀'.repeat(1000)}"}`)).toBe(true);
    const hex = `{"type":"result","id":"d1","plugin":"p","ok":true,"value":"${'1e2d3e4f'.repeat(1000)}"}`;
    expect(textWithinResultCap(hex)).toBe(true);
  });

  test('random texts: whenever the bound says within, the text serialised again is within it', () => {
    let x = 12345;
    const rnd = (k: number) => ((x = (x * 1103515245 + 12345) >>> 0) % k);
    const pieces = ['1e20', '-1.5E19', '1e-6', '0.5', '"a1e2"', '"é"', '"😀"', 'true', 'null', '12345678901234567890', '1e400'];
    for (let round = 0; round < 200; round++) {
      const items: string[] = [];
      for (let i = rnd(50); i > 0; i--) items.push(pieces[rnd(pieces.length)]!);
      const text = `[${items.join(',')}]`;
      expect(reserialised(text)).toBeLessThanOrEqual(utf8Bytes(text) + sites(text) * EXPONENT_GROWTH);
    }
  });
});
