/**
 * The page channel's valibot schemas (server/protocol/page-channel-schema.ts), checked on receipt
 * in the extension: a malformed page message is refused with a clear error, and the worker's Port
 * handling (extension/background/plugin-ports.ts) refuses it without a crash and keeps serving.
 */
import { describe, expect, test } from 'bun:test';
import { parsePageMessage } from '../../server/protocol/page-channel-schema.ts';
import { sanitizePageMessage, TAB_PORT_NAME } from '../../server/protocol/page-channel.ts';
import type { LogEntry, PluginInfo } from '../../server/protocol/methods.ts';
import { TabPorts } from '../../extension/background/plugin-ports.ts';
import { extLogs } from '../../extension/shared/ext-log.ts';

describe('parsePageMessage', () => {
  test('malformed messages are refused with an error naming the field', () => {
    const cases: [unknown, string][] = [
      [null, 'Malformed page message: Invalid type'],
      [{ type: 'progress', id: 'd', plugin: 'p', progress: 'half' }, 'Malformed page message (progress): progress: Invalid type: Expected number'],
      [{ type: 'progress', id: 'd', plugin: 'p', progress: Infinity }, 'progress'],
      [{ type: 'result', plugin: 'p', ok: true }, 'Malformed page message (result): id'],
      [{ type: 'result', id: 'd', plugin: 'p', ok: 'yes' }, '(result): ok'],
      [{ type: 'result', id: 'd', plugin: '', ok: true }, 'plugin: must not be empty'],
      [{ type: 'call', id: 'd', plugin: 'p' }, 'Malformed page message (call): type'],
      [{ type: 'registered', plugin: 'p' }, '(registered): hash'],
      [{ type: 'log', plugin: 'p', id: 'x'.repeat(10_000) }, '(log): id: must be at most'],
    ];
    for (const [raw, error] of cases) {
      const r = parsePageMessage(raw);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error).toContain(error);
    }
  });

  test('well-formed messages pass, capped and defaulted as sanitizePageMessage does', () => {
    const msgs = [
      { type: 'result', id: 'd', plugin: 'p', ok: true, value: { a: 1 } },
      { type: 'result', id: 'd', plugin: 'p', ok: false, error: { code: 'Bad Code', message: 'x' } },
      { type: 'progress', id: 'd', plugin: 'p', progress: 1, total: 'x' },
      { type: 'log', plugin: 'p', level: 'loud', message: { m: 1 }, ts: 'now' },
      { type: 'registered', plugin: 'p', hash: 'abc' },
    ];
    for (const m of msgs) {
      const r = parsePageMessage(m);
      expect(r.ok).toBe(true);
      const { ts: _a, ...got } = (r as { msg: Record<string, unknown> }).msg;
      const { ts: _b, ...want } = sanitizePageMessage(m) as unknown as Record<string, unknown>;
      expect(got).toEqual(want);
    }
  });
});

/** A chrome.runtime.Port as the tab bridge of a plugin page opens it. */
function fakePort(url: string) {
  const onMessage: ((m: unknown) => void)[] = [];
  const posted: unknown[] = [];
  const port = {
    name: TAB_PORT_NAME,
    sender: { tab: { id: 7 }, frameId: 0, documentId: 'doc-1', url, origin: new URL(url).origin },
    onMessage: { addListener: (cb: (m: unknown) => void) => onMessage.push(cb) },
    onDisconnect: { addListener: () => {} },
    postMessage: (m: unknown) => posted.push(m),
    disconnect: () => {},
  };
  return { port: port as unknown as chrome.runtime.Port, posted, send: (m: unknown) => onMessage.forEach((cb) => cb(m)) };
}

describe('TabPorts (worker side of the page channel)', () => {
  test('a malformed page message is refused with a logged reason; the call on that Port still completes', async () => {
    const plugin = { name: 'p', urlPatterns: ['http://127.0.0.1/*'], excludePatterns: [] } as unknown as PluginInfo;
    const progress: unknown[] = [];
    const logs: LogEntry[][] = [];
    const ports = new TabPorts({
      pluginsForUrl: (url) => (url.startsWith('http://127.0.0.1/') ? [plugin] : []),
      plugin: (name) => (name === 'p' ? plugin : undefined),
      portClosed: () => {},
      registered: () => {},
      progress: (id, p) => progress.push({ id, ...p }),
      logs: (entries) => logs.push(entries),
    });
    const fp = fakePort('http://127.0.0.1/app');
    ports.attach(fp.port);
    const tp = ports.get(7)!;
    expect(tp).toBeDefined();
    const call = ports.call(7, tp, { type: 'call', id: 'd1', plugin: 'p', tool: 't', input: {}, config: {} });
    expect(fp.posted).toHaveLength(1);

    for (const junk of [null, 42, 'x', { type: 'result', id: 'd1', plugin: 'p', ok: 'maybe' }, { type: 'progress', id: 'd1', plugin: 'p', progress: 'half' }, { type: 'nope', plugin: 'p' }]) {
      expect(() => fp.send(junk)).not.toThrow();
    }
    const warnings = extLogs('warning').map((e) => e.message);
    expect(warnings.some((m) => m.includes('Tab 7') && m.includes('Malformed page message (progress): progress') && m.includes('refused'))).toBe(true);
    expect(warnings.some((m) => m.includes('Malformed page message (result): ok'))).toBe(true);
    expect(progress).toEqual([]);

    fp.send({ type: 'progress', id: 'd1', plugin: 'p', progress: 1, total: 2 });
    fp.send({ type: 'result', id: 'd1', plugin: 'p', ok: true, value: { done: true } });
    expect(await call).toEqual({ value: { done: true } });
    expect(progress).toEqual([{ id: 'd1', progress: 1, total: 2, message: undefined }]);
  });
});
