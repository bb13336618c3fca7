/**
 * `opentabs doctor` names the MCP clients of the running server as `opentabs status` counts them:
 * sessions in use apart from idle ones that exited clients left behind.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connectMcp } from '../harness/fake-extension.ts';
import { startTestServer, type TestServer } from '../harness/server.ts';
import { runCli } from './cli-support.ts';

setDefaultTimeout(120_000);

let srv: TestServer;
let live: Client | undefined;

beforeAll(async () => {
  srv = await startTestServer({ limits: { mcpSessionActiveWindowMs: 300 } });
});
afterAll(async () => {
  await live?.close().catch(() => {});
  await srv?.stop();
});

test('doctor shows MCP clients active and idle apart', async () => {
  // A client that exits without DELETE: its session stays open, idle.
  const gone = await connectMcp(srv.url, srv.secret, '/mcp', 'gone');
  await gone.listTools();
  const headers = { authorization: `Bearer ${srv.secret}` };
  live = await connectMcp(srv.url, srv.secret, '/mcp', 'live');
  // Its stream closed, the session left open: idle once the window has passed.
  await (gone.transport as { close(): Promise<void> } | undefined)?.close();
  let h = (await (await fetch(`${srv.url}/health`, { headers })).json()) as { mcpSessions: { active: number; idle: number } };
  for (let i = 0; i < 200 && !(h.mcpSessions.active === 1 && h.mcpSessions.idle === 1); i++) {
    await Bun.sleep(50);
    h = (await (await fetch(`${srv.url}/health`, { headers })).json()) as never;
  }
  expect(h.mcpSessions).toMatchObject({ active: 1, idle: 1 });
  const r = await runCli(['doctor', '--port', String(srv.port)], { configDir: srv.configDir, timeoutMs: 60_000 });
  expect(r.stdout).toMatch(/✓ MCP clients: 1 active, 1 idle \(no request for 0 s\+, often a client that has exited; closed after 30 min idle\)/);
  const json = JSON.parse((await runCli(['doctor', '--json', '--port', String(srv.port)], { configDir: srv.configDir, timeoutMs: 60_000 })).stdout) as { check: string; detail: string }[];
  expect(json.find((c) => c.check === 'MCP clients')?.detail).toStartWith('1 active, 1 idle');
});
