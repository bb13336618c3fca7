/**
 * Arguments nested a hundred thousand levels deep (a few hundred KB of `[`) once reached the
 * approval step: serializing the card overflowed the stack, the call failed, and its approval
 * stayed behind unseen — `GET /approvals` (`opentabs approvals`) answered 500 for every approval
 * while it waited, and each such call kept a slot of the pending-approval caps until it timed out.
 * Now arguments deeper than TOOL_ARGS_MAX_DEPTH are refused before anything reads them, on every
 * transport, and an approval that cannot be shown never stays waiting.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { TOOL_ARGS_MAX_DEPTH, MAX_PENDING_APPROVALS_PER_CALLER } from '../../server/limits.ts';
import type { TestServer } from '../harness/server.ts';
import { FakeExtension, startPluginServer } from '../harness/fake-extension.ts';

setDefaultTimeout(60_000);
let srv: TestServer;
let ext: FakeExtension;
let dispatched = 0;

beforeAll(async () => {
  srv = await startPluginServer({ plugins: [{ name: 'mail', tools: [{ name: 'send', inputSchema: { type: 'object' } }] }], permissions: { mail: { default: 'ask' } } });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.onDispatch('mail_send', () => {
    dispatched++;
    return { value: 'sent' };
  });
});
afterAll(async () => {
  await ext?.close().catch(() => {});
  await srv?.stop();
});

const nested = (depth: number) => `{"x":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;

const restCall = (argsJson: string, signal?: AbortSignal) =>
  fetch(`${srv.url}/tools/mail_send/call`, { method: 'POST', signal, headers: { ...srv.auth, 'content-type': 'application/json' }, body: `{"arguments":${argsJson}}` });

const statelessCall = (argsJson: string) =>
  fetch(`${srv.url}/mcp`, {
    method: 'POST',
    headers: { ...srv.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'mail_send' },
    body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"mail_send","arguments":${argsJson}}}`,
  });

async function approvals(): Promise<{ status: number; list: { id: string }[] }> {
  const r = await fetch(`${srv.url}/approvals`, { headers: srv.auth });
  const body = (await r.json()) as { approvals?: { id: string }[] };
  return { status: r.status, list: body.approvals ?? [] };
}

test('deeply nested arguments are refused before approval, on REST and stateless MCP; nothing waits, nothing runs', async () => {
  for (let i = 0; i < MAX_PENDING_APPROVALS_PER_CALLER + 1; i++) {
    const r = await restCall(nested(100_000));
    expect(r.status).toBe(400);
    const body = (await r.json()) as any;
    expect(body.error.code).toBe('invalid_arguments');
    expect(body.error.message).toContain(`more than ${TOOL_ARGS_MAX_DEPTH} levels`);
  }
  const m = (await (await statelessCall(nested(100_000))).json()) as any;
  expect(m.result.isError).toBe(true);
  expect(m.result.structuredContent.error.code).toBe('invalid_arguments');

  const a = await approvals();
  expect(a.status).toBe(200);
  expect(a.list).toEqual([]);
  expect(dispatched).toBe(0);
});

test('arguments at the depth limit still go to the user, and the caps were not used up', async () => {
  const ac = new AbortController();
  const pending = restCall(nested(TOOL_ARGS_MAX_DEPTH), ac.signal).catch(() => null);
  const deadline = Date.now() + 15_000;
  let a = await approvals();
  while (a.list.length === 0 && Date.now() < deadline) {
    await Bun.sleep(20);
    a = await approvals();
  }
  expect(a.status).toBe(200);
  expect(a.list.length).toBe(1);
  ext.confirm(a.list[0]!.id, 'allow');
  const r = await pending;
  expect(r?.status).toBe(200);
  expect(dispatched).toBe(1);
  const over = await restCall(nested(TOOL_ARGS_MAX_DEPTH + 1));
  expect(over.status).toBe(400);
});

test('an approval whose card cannot be sent does not stay waiting', async () => {
  const params: Record<string, unknown> = {};
  params.self = params; // cannot be serialized
  await expect(srv.ctx.hub.confirmations.ask({ tool: 'mail_send', plugin: 'mail', params, caller: 'test' })).rejects.toThrow();
  expect(srv.ctx.hub.confirmations.list()).toEqual([]);
  const a = await approvals();
  expect(a.status).toBe(200);
});
