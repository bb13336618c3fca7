/**
 * `opentabs start --dev` while this config dir's server runs in production mode: not "already
 * running" (exit 0, no dev mode, so local plugins are not watched), but exit 1 with the command that
 * restarts it in dev mode; that command, run as printed, gives a dev-mode server on the same port.
 * With a dev-mode server running, `start --dev` is "already running", exit 0.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliEnv, killPid, removeDir, runCli, tempDir, waitFor } from './cli-support.ts';

setDefaultTimeout(180_000);

let root: string;
let cfg: string;
let port = 0;
const pids = new Set<number>();

const pidFile = () => JSON.parse(readFileSync(join(cfg, 'server.pid'), 'utf8')) as { pid: number; port: number };

async function mode(): Promise<string | undefined> {
  const secret = JSON.parse(readFileSync(join(cfg, 'extension', 'auth.json'), 'utf8')).secret as string;
  try {
    const res = await fetch(`http://127.0.0.1:${port}/health`, { headers: { authorization: `Bearer ${secret}` }, signal: AbortSignal.timeout(2000) });
    return ((await res.json()) as { mode?: string }).mode;
  } catch {
    return undefined;
  }
}

beforeAll(async () => {
  root = tempDir();
  cfg = join(root, 'config');
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') });
  port = probe.port!;
  probe.stop(true);
  const start = await runCli(['start', '--background', '--port', String(port)], { configDir: cfg, timeoutMs: 120_000 });
  expect(start.code).toBe(0);
  pids.add(pidFile().pid);
});

afterAll(async () => {
  if (existsSync(join(cfg, 'server.pid'))) pids.add(pidFile().pid);
  for (const pid of pids) await killPid(pid);
  removeDir(root);
});

test('start --dev with a production server running says it is not in dev mode, and the printed fix restarts it in dev mode', async () => {
  expect(await mode()).toBe('production');
  for (const args of [['start', '--dev'], ['start', '--dev', '--port', String(port)]]) {
    const r = await runCli(args, { configDir: cfg });
    expect({ args, code: r.code }).toEqual({ args, code: 1 });
    expect(r.stderr).toContain('not dev mode');
  }
  const r = await runCli(['start', '--dev'], { configDir: cfg });
  const fix = /`([^`]*start --dev[^`]*)`/.exec(r.stderr)?.[1];
  expect(fix).toBeDefined();
  expect(fix).toContain(`--port ${port}`);
  // Run as printed, from a shell without OPENTABS_CONFIG_DIR (the command carries it).
  const proc = Bun.spawn(['sh', '-c', fix!], { env: cliEnv(cfg, { OPENTABS_CONFIG_DIR: undefined }), stdin: 'ignore', stdout: 'ignore', stderr: 'pipe' });
  try {
    await waitFor(async () => (await mode()) === 'dev', 60_000, 'the server to run in dev mode');
    pids.add(pidFile().pid);
    expect(pidFile().port).toBe(port);
    const again = await runCli(['start', '--dev'], { configDir: cfg });
    expect({ code: again.code, out: again.stdout }).toEqual({ code: 0, out: expect.stringContaining('already running') });
  } finally {
    if (existsSync(join(cfg, 'server.pid'))) await killPid(pidFile().pid);
    const timer = setTimeout(() => proc.kill('SIGKILL'), 15_000);
    await proc.exited;
    clearTimeout(timer);
  }
});
