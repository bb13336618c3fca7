/**
 * The memory keeper's quiet-spell release (Bun.shrink: JSC drops compiled code and returns free
 * memory) inside a running server: after start-up and again after calls stop, it runs once, and
 * the server goes on answering REST and MCP calls through the extension's WebSocket, with the same
 * results as before it. What it saves is measured by `bun test/bench/server.ts --memory`.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { TestServer } from '../harness/server.ts';
import { connectMcp, FakeExtension, startPluginServer } from '../harness/fake-extension.ts';

let srv: TestServer;
let ext: FakeExtension;
let mcp: Client;

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (cond()) return;
    await Bun.sleep(10);
  }
  throw new Error(`never happened: ${what}`);
}

const rest = async (n: number) => {
  const res = await fetch(`${srv.url}/tools/alpha_echo/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: { n } }) });
  return { status: res.status, body: (await res.json()) as { result?: unknown } };
};
const viaMcp = async (n: number) => {
  const r = (await mcp.callTool({ name: 'alpha_echo', arguments: { n } })) as { isError?: boolean; structuredContent?: unknown; content: { text: string }[] };
  return { isError: r.isError ?? false, text: r.content[0]?.text };
};

beforeAll(async () => {
  srv = await startPluginServer({
    plugins: [{ name: 'alpha', tools: [{ name: 'echo', inputSchema: { type: 'object', properties: { n: { type: 'integer' } }, additionalProperties: false } }] }],
    permissions: { alpha: { default: 'auto' } },
    limits: { memoryReleaseIdleMs: 150 },
  });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.onDispatch('alpha_echo', (p) => ({ value: { n: (p.input as { n: number }).n * 2 } }));
  mcp = await connectMcp(srv.url, srv.secret);
});

afterAll(async () => {
  await mcp?.close();
  await ext?.close();
  await srv?.stop();
});

test('calls answer the same before and after each quiet-spell release', async () => {
  const before = { rest: await rest(21), mcp: await viaMcp(4) };
  expect(before.rest.status).toBe(200);
  expect(before.rest.body.result).toEqual({ n: 42 });
  expect(before.mcp.isError).toBe(false);
  for (let round = 0; round < 2; round++) {
    const released = srv.memory.releases;
    // Quiet: no request until the keeper has given memory back.
    await until(() => srv.memory.releases > released, `release ${round + 1} after the calls stop`);
    expect(await rest(21)).toEqual(before.rest);
    expect(await viaMcp(4)).toEqual(before.mcp);
    // Argument validation (Ajv's compiled validator) still refuses a wrong type.
    const bad = await fetch(`${srv.url}/tools/alpha_echo/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: '{"arguments":{"n":"x"}}' });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('n');
  }
  const list = await mcp.listTools();
  expect(list.tools.some((t) => t.name === 'alpha_echo')).toBe(true);
});
