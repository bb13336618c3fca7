/**
 * `opentabs start` after an update while the server of the previous version still runs: it says
 * the server is already running, and that this server started before the install's files changed
 * (so it runs the old code), with the restart. A server started after them gets no such note.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { killPid, removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(120_000);

let root: string;
const started: number[] = [];
beforeAll(() => {
  root = tempDir('opentabs-ux-s18e-older-');
});
afterAll(async () => {
  for (const pid of started) await killPid(pid);
  removeDir(root);
});

test('a server started before the install changed is named as running the old code', async () => {
  const cfg = join(root, 'cfg');
  const start = await runCli(['start', '--background', '--port', '0'], { configDir: cfg, timeoutMs: 90_000 });
  expect(start.code).toBe(0);
  const pidPath = join(cfg, 'server.pid');
  const pid = JSON.parse(readFileSync(pidPath, 'utf8')) as { pid: number; port: number; startedAt: number };
  started.push(pid.pid);

  // As if it had started long before every file of this install was written (an update since).
  writeFileSync(pidPath, JSON.stringify({ ...pid, startedAt: 1 }));
  for (const args of [['start'], ['start', '--port', String(pid.port)]]) {
    const again = await runCli(args, { configDir: cfg });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`already running on http://127.0.0.1:${pid.port} (pid ${pid.pid})`);
    expect(again.stdout).toContain('changed, and runs the code it loaded then: restart it to run this version');
    expect(again.stdout).toMatch(/ stop && \S.* start`\)/);
  }

  // Started after every file of this install: nothing to say.
  writeFileSync(pidPath, JSON.stringify({ ...pid, startedAt: Date.now() + 365 * 24 * 3600 * 1000 }));
  const fresh = await runCli(['start'], { configDir: cfg });
  expect(fresh.code).toBe(0);
  expect(fresh.stdout).toContain('already running');
  expect(fresh.stdout).not.toContain('restart it to run this version');
  expect((await runCli(['stop'], { configDir: cfg })).code).toBe(0);
});
