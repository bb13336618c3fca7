/**
 * A plugin adapter that misbehaves in its answers, as the worker's tab Ports see it: it answers a
 * call twice (the first answer counts, the second is dropped and breaks nothing), answers with a
 * malformed message (refused; the call waits on for a proper answer, which the server's timeout
 * bounds), answers an error and then a result (the error counts), or its document goes away
 * while a call runs (the call ends at once, naming the tab).
 */
import { expect, test } from 'bun:test';
import { TAB_PORT_NAME } from '../../server/protocol/page-channel.ts';
import type { PluginInfo } from '../../server/protocol/methods.ts';
import { TabPorts } from '../../extension/background/plugin-ports.ts';

function setup() {
  const plugin = { name: 'p', urlPatterns: ['http://127.0.0.1/*'], excludePatterns: [] } as unknown as PluginInfo;
  const ports = new TabPorts({ pluginsForUrl: () => [plugin], plugin: () => plugin, portClosed: () => {}, registered: () => {}, progress: () => {}, logs: () => {} });
  const onMessage: ((m: unknown) => void)[] = [];
  const onDisconnect: (() => void)[] = [];
  const port = {
    name: TAB_PORT_NAME,
    sender: { tab: { id: 7 }, frameId: 0, documentId: 'doc-1', url: 'http://127.0.0.1/app', origin: 'http://127.0.0.1' },
    onMessage: { addListener: (cb: (m: unknown) => void) => onMessage.push(cb) },
    onDisconnect: { addListener: (cb: () => void) => onDisconnect.push(cb) },
    postMessage: () => {},
    disconnect: () => {},
  } as unknown as chrome.runtime.Port;
  ports.attach(port);
  const tp = ports.get(7)!;
  const page = (m: unknown) => {
    for (const cb of onMessage) cb(m);
  };
  const call = (id: string) => ports.call(7, tp, { type: 'call', id, plugin: 'p', tool: 't', input: {}, config: {} });
  return { page, call, gone: () => onDisconnect.forEach((cb) => cb()) };
}

/** Whether a promise has settled by now (after pending microtasks). */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  p.then(() => (done = true), () => (done = true));
  await Bun.sleep(0);
  return done;
}

test('answered twice: the first answer counts, the second is dropped, and later calls work', async () => {
  const { page, call } = setup();
  const first = call('d1');
  page({ type: 'result', id: 'd1', plugin: 'p', ok: true, value: { n: 1 } });
  page({ type: 'result', id: 'd1', plugin: 'p', ok: true, value: { n: 2 } });
  page({ type: 'result', id: 'd1', plugin: 'p', ok: false, error: { message: 'late' } });
  expect(await first).toEqual({ value: { n: 1 } });
  const next = call('d2');
  page({ type: 'result', id: 'd2', plugin: 'p', ok: true, value: 'ok' });
  expect(await next).toEqual({ value: 'ok' });
});

test('a malformed answer is refused and the call waits on for a proper one', async () => {
  const { page, call } = setup();
  const c = call('d1');
  for (const bad of [{ type: 'result', id: 'd1', plugin: 'p', ok: 'yes', value: 1 }, 'not an object', null, { type: 'result', id: 'd1', plugin: 'p' }, 42]) page(bad);
  expect(await settled(c)).toBe(false);
  page({ type: 'result', id: 'd1', plugin: 'p', ok: true, value: [1] });
  expect(await c).toEqual({ value: [1] });
});

test('an error, then a result: the error counts', async () => {
  const { page, call } = setup();
  const c = call('d1');
  page({ type: 'result', id: 'd1', plugin: 'p', ok: false, error: { message: 'the app said no', code: 'not_found' } });
  page({ type: 'result', id: 'd1', plugin: 'p', ok: true, value: 'too late' });
  await expect(c).rejects.toThrow('the app said no');
});

test('the document goes away mid-call: the call ends at once with tab_closed', async () => {
  const { call, gone } = setup();
  const c = call('d1');
  gone();
  const err = await c.then(() => null, (e: { code?: string; message: string }) => e);
  expect(err?.code).toBe('tab_closed');
  expect(err?.message).toMatch(/closed|navigated away/);
});
