/**
 * /health's auditSummary after a restart: the calls of the last 24 hours already in audit.log are
 * counted (rebuilt once the server has listed its tools), plus the calls made since, each once.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempConfigDir, removeDir, startTestServer, type TestServer } from '../harness/server.ts';

const HOUR = 3_600_000;
let dir: string;
let srv: TestServer;

beforeAll(async () => {
  dir = makeTempConfigDir('opentabs-audit-summary-');
  const line = (msAgo: number, success: boolean) =>
    JSON.stringify({ timestamp: new Date(Date.now() - msAgo).toISOString(), tool: 'browser_list_tabs', plugin: 'browser', success, durationMs: 2 });
  // 2,000 calls of the last 24 hours (every fourth failed) and 50 older ones.
  const lines = [...Array.from({ length: 50 }, (_, i) => line(30 * HOUR + i * 1000, true)), ...Array.from({ length: 2000 }, (_, i) => line((2000 - i) * 30_000, i % 4 !== 0))];
  writeFileSync(join(dir, 'audit.log'), `${lines.join('\n')}\n`, { mode: 0o600 });
  srv = await startTestServer({ configDir: dir });
});
afterAll(async () => {
  await srv?.stop();
  removeDir(dir);
});

test('the last 24 hours from before the restart, and the calls since, each counted once', async () => {
  await srv.ctx.audit.dayLoaded;
  const health = async () => (await (await fetch(`${srv.url}/health`, { headers: srv.auth })).json()) as { auditSummary: { last24h: { total: number; success: number; failure: number } } };
  expect((await health()).auditSummary.last24h).toEqual({ total: 2000, success: 1500, failure: 500 });
  // A call now (refused: no extension) is one more failure.
  await fetch(`${srv.url}/tools/browser_list_tabs/call`, { method: 'POST', headers: { ...srv.auth, 'Content-Type': 'application/json' }, body: '{}' });
  expect((await health()).auditSummary.last24h).toEqual({ total: 2001, success: 1500, failure: 501 });
});
