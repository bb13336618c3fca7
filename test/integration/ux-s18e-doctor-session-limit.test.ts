/**
 * `opentabs doctor` after refused MCP sessions, once the limit was raised to 30 (as the 429 and
 * doctor told the user): the fix it prints raises the limit above 30, rather than setting the
 * 30 that is already in force.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { startPluginServer } from '../harness/fake-extension.ts';
import type { TestServer } from '../harness/server.ts';
import { runCli } from './cli-support.ts';

setDefaultTimeout(120_000);

const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
let srv: TestServer;

beforeAll(async () => {
  // No share of the user's own beyond the limit: these sessions are opened with the secret.
  srv = await startPluginServer({ limits: { mcpSessionRate: { max: 1, windowMs: 60_000 }, userMcpSessionRate: { max: 0, windowMs: 60_000 } } });
});
afterAll(async () => {
  await srv?.stop();
});

const postInit = () =>
  fetch(`${srv.url}/mcp`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: INIT });

type Check = { check: string; status: string; detail: string; fix?: string };

async function sessionCheck(): Promise<Check | undefined> {
  const doctor = await runCli(['doctor', '--json', '--port', String(new URL(srv.url).port)], { configDir: srv.configDir });
  return (JSON.parse(doctor.stdout) as Check[]).find((c) => c.check === 'MCP sessions');
}

test('after the limit was raised to 30, doctor suggests more than 30', async () => {
  expect((await postInit()).status).toBe(200);
  expect((await postInit()).status).toBe(429);
  const atOne = await sessionCheck();
  expect(atOne?.fix).toContain('config set mcpSessionsPerMinute 30`');

  const set = await runCli(['config', 'set', 'mcpSessionsPerMinute', '30', '--port', String(new URL(srv.url).port)], { configDir: srv.configDir });
  expect(set.code).toBe(0);
  const at30 = await sessionCheck();
  expect(at30?.status).toBe('warn');
  expect(at30?.detail).toContain('the limit is now 30 per minute');
  expect(at30?.fix).toContain('config set mcpSessionsPerMinute 60`');
  expect(at30?.fix).not.toContain('mcpSessionsPerMinute 30`');
});

test('the 429 at a limit of 30 suggests more than 30', async () => {
  // The limit is 30 now (previous test); at most 31 more sessions reach it.
  let refused: Response | null = null;
  for (let i = 0; i < 31 && !refused; i++) {
    const r = await postInit();
    if (r.status === 429) refused = r;
    else await r.body?.cancel();
  }
  expect(refused).not.toBeNull();
  const message = ((await refused!.json()) as { error: { message: string } }).error.message;
  expect(message).toContain('at most 30 per 60 s');
  expect(message).toContain('config set mcpSessionsPerMinute 60`');
});
