/**
 * The command the 429 on /mcp suggests (`opentabs config set mcpSessionsPerMinute N`) runs as
 * printed and lifts the limit without a restart; a bad value is refused and config.json is unchanged.
 * Refusals show in /health, once a minute in server.log, and as a doctor warning naming the command.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startPluginServer } from '../harness/fake-extension.ts';
import type { TestServer } from '../harness/server.ts';
import { PRINTED, runCli } from './cli-support.ts';

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

test('the 429 names `opentabs config set mcpSessionsPerMinute`, which runs and lifts the limit; a bad value changes nothing', async () => {
  expect((await postInit()).status).toBe(200);
  const refused = await postInit();
  expect(refused.status).toBe(429);
  const message = ((await refused.json()) as { error: { message: string } }).error.message;
  // `opentabs …`, or the absolute command when opentabs is not on PATH (as in this test).
  const quoted = /`([^`]*) (config set mcpSessionsPerMinute \d+)`/.exec(message);
  expect(quoted).not.toBeNull();
  expect(['opentabs', PRINTED.join(' ')]).toContain(quoted![1]);
  const suggested = quoted![2]!;

  // A client refused here often shows only "failed to connect": /health, server.log and doctor
  // say what happened. Five more refusals make no more log lines (one a minute at most).
  for (let i = 0; i < 5; i++) expect((await postInit()).status).toBe(429);
  const health = (await (await fetch(`${srv.url}/health`, { headers: srv.auth })).json()) as { mcpSessionsRefused: { count: number; lastAt: number; perMinute: number } };
  expect(health.mcpSessionsRefused.count).toBe(6);
  expect(health.mcpSessionsRefused.perMinute).toBe(1);
  expect(Date.now() - health.mcpSessionsRefused.lastAt).toBeLessThan(60_000);
  const logLines = readFileSync(join(srv.configDir, 'server.log'), 'utf8').split('\n').filter((l) => l.includes('mcp_session_refused'));
  expect(logLines.length).toBe(1);
  const doctor = await runCli(['doctor', '--json', '--port', String(new URL(srv.url).port)], { configDir: srv.configDir });
  const check = (JSON.parse(doctor.stdout) as { check: string; status: string; detail: string; fix?: string }[]).find((c) => c.check === 'MCP sessions');
  expect(check?.status).toBe('warn');
  expect(check?.detail).toContain('6 new MCP sessions refused');
  expect(check?.fix).toMatch(/config set mcpSessionsPerMinute 30/);

  const cfgPath = join(srv.configDir, 'config.json');
  const before = readFileSync(cfgPath, 'utf8');
  for (const bad of ['0', '2.5', 'lots', '10001']) {
    const r = await runCli(['config', 'set', 'mcpSessionsPerMinute', bad], { configDir: srv.configDir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('mcpSessionsPerMinute');
  }
  expect(readFileSync(cfgPath, 'utf8')).toBe(before);

  const r = await runCli(suggested.split(' '), { configDir: srv.configDir, exe: quoted![1] === 'opentabs' ? undefined : PRINTED });
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  expect(JSON.parse(readFileSync(cfgPath, 'utf8')).mcpSessionsPerMinute).toBe(30);
  // The server re-reads config.json when a session is refused: the next initialize succeeds.
  expect((await postInit()).status).toBe(200);
});
