/**
 * Plugin calls are limited per plugin and page-tool calls per origin, but built-in calls were not
 * limited at all: one MCP request holding a JSON-RPC batch of 2,000 tools/call (200 KB; a 10 MB
 * body holds about 100,000) had the server send the extension 2,000 tool runs at once — in a real
 * browser, as many screenshots, tab queries or page scripts together. Built-in calls in flight are
 * now counted per caller (an MCP session; REST callers share one count), BUILTIN_MAX_IN_FLIGHT_PER_CALLER
 * at most; the next is refused at once with too_many_in_flight (retryable, as for plugins).
 * (Batches exist in sessions of revisions up to 2025-03-26, which these sessions negotiate.)
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { BUILTIN_MAX_IN_FLIGHT_PER_CALLER } from '../../server/limits.ts';
import { FakeExtension, startPluginServer } from '../harness/fake-extension.ts';
import type { TestServer } from '../harness/server.ts';

setDefaultTimeout(120_000);

let srv: TestServer;
let ext: FakeExtension;
let dispatched = 0;
let release: () => void = () => {};
let released = new Promise<void>((resolve) => (release = resolve));

beforeAll(async () => {
  srv = await startPluginServer({ plugins: [], limits: { mcpSessionRate: { max: 1000, windowMs: 60_000 } } });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  // Each run waits until the test lets them all finish: every one sent is in flight at once.
  ext.onDispatch('browser_list_tabs', async () => {
    dispatched++;
    await released;
    return { value: { tabs: [] } };
  });
});
afterAll(async () => {
  release();
  await ext?.close();
  await srv?.stop();
});

const headers = (sid?: string) => ({ ...srv.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(sid ? { 'mcp-session-id': sid } : {}) });

async function openSession(): Promise<string> {
  const r = await fetch(`${srv.url}/mcp`, {
    method: 'POST',
    headers: headers(),
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'batch', version: '1' } } }),
  });
  expect(r.status).toBe(200);
  return r.headers.get('mcp-session-id')!;
}

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if (cond()) return;
    await Bun.sleep(10);
  }
  throw new Error(`never happened: ${what}`);
}

test('a batch of 2,000 built-in calls runs at most the per-caller limit at once; the rest are refused, retryable', async () => {
  const sid = await openSession();
  const N = 2_000;
  const batch = Array.from({ length: N }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'tools/call', params: { name: 'browser_list_tabs', arguments: {} } }));
  const answer = fetch(`${srv.url}/mcp`, { method: 'POST', headers: headers(sid), body: JSON.stringify(batch) });
  await until(() => dispatched >= BUILTIN_MAX_IN_FLIGHT_PER_CALLER, 'the first runs reaching the extension');
  // Another client is not held back by this one's calls.
  const other = await openSession();
  const single = fetch(`${srv.url}/mcp`, { method: 'POST', headers: headers(other), body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'browser_list_tabs', arguments: {} } }) });
  await until(() => dispatched === BUILTIN_MAX_IN_FLIGHT_PER_CALLER + 1, "the other client's call reaching the extension");
  release();
  const results = (await (await answer).json()) as { id: number; result: { isError?: boolean; content: { text: string }[] } }[];
  expect(results.length).toBe(N);
  const refused = results.filter((r) => r.result.isError);
  expect(refused.length).toBe(N - BUILTIN_MAX_IN_FLIGHT_PER_CALLER);
  expect(refused[0]!.result.content[0]!.text).toContain(`${BUILTIN_MAX_IN_FLIGHT_PER_CALLER} built-in tool calls in flight`);
  // Only the calls let through ever reached the extension.
  expect(dispatched).toBe(BUILTIN_MAX_IN_FLIGHT_PER_CALLER + 1);
  expect(((await (await single).json()) as { result: { isError?: boolean } }).result.isError).toBeFalsy();

  // Once they finished, the slots are free again.
  const again = (await (await fetch(`${srv.url}/mcp`, { method: 'POST', headers: headers(sid), body: JSON.stringify({ jsonrpc: '2.0', id: 9999, method: 'tools/call', params: { name: 'browser_list_tabs', arguments: {} } }) })).json()) as {
    result: { isError?: boolean };
  };
  expect(again.result.isError).toBeFalsy();
});

test('REST: the same limit over one shared count, refused with 429 and Retry-After', async () => {
  dispatched = 0;
  released = new Promise<void>((resolve) => (release = resolve));
  const call = () => fetch(`${srv.url}/tools/browser_list_tabs/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: '{}' });
  const running = Array.from({ length: BUILTIN_MAX_IN_FLIGHT_PER_CALLER }, call);
  await until(() => dispatched === BUILTIN_MAX_IN_FLIGHT_PER_CALLER, 'every REST call reaching the extension');
  const over = await call();
  expect(over.status).toBe(429);
  expect(over.headers.get('retry-after')).toBe('1');
  expect(((await over.json()) as { error: { code: string } }).error.code).toBe('too_many_in_flight');
  release();
  for (const r of await Promise.all(running)) expect(r.status).toBe(200);
});
