/**
 * The command the 429 on /mcp suggests (`opentabs config set mcpSessionsPerMinute N`) runs as
 * printed and lifts the limit without a restart; a bad value is refused and config.json is unchanged.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startPluginServer } from '../harness/fake-extension.ts';
import type { TestServer } from '../harness/server.ts';
import { runCli } from './cli-support.ts';

setDefaultTimeout(120_000);

const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
let srv: TestServer;

beforeAll(async () => {
  srv = await startPluginServer({ limits: { mcpSessionRate: { max: 1, windowMs: 60_000 } } });
});
afterAll(async () => {
  await srv?.stop();
});

const postInit = () =>
  fetch(`${srv.url}/mcp`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: INIT });

test('the 429 names `opentabs config set mcpSessionsPerMinute`, which runs and lifts the limit; a bad value changes nothing', async () => {
  expect((await postInit()).status).toBe(200);
  const refused = await postInit();
  expect(refused.status).toBe(429);
  const message = ((await refused.json()) as { error: { message: string } }).error.message;
  // `opentabs …`, or the absolute command when opentabs is not on PATH (as in this test).
  const suggested = /`(?:opentabs|\S+ \S+\/cli\/main\.ts) (config set mcpSessionsPerMinute \d+)`/.exec(message);
  expect(suggested).not.toBeNull();

  const cfgPath = join(srv.configDir, 'config.json');
  const before = readFileSync(cfgPath, 'utf8');
  for (const bad of ['0', '2.5', 'lots', '10001']) {
    const r = await runCli(['config', 'set', 'mcpSessionsPerMinute', bad], { configDir: srv.configDir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('mcpSessionsPerMinute');
  }
  expect(readFileSync(cfgPath, 'utf8')).toBe(before);

  const r = await runCli(suggested![1]!.split(' '), { configDir: srv.configDir });
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  expect(JSON.parse(readFileSync(cfgPath, 'utf8')).mcpSessionsPerMinute).toBe(30);
  // The server re-reads config.json when a session is refused: the next initialize succeeds.
  expect((await postInit()).status).toBe(200);
});
