/**
 * The user updates the install (git pull, npm install) while the server runs: `opentabs start`
 * says the running server runs the code it loaded before, and so does `opentabs doctor` now, with
 * the restart as its fix, which runs as printed. (The update is made by dating the server's
 * start before every file of the install, in its server.pid.)
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliEnv, killPid, removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(180_000);

type Check = { check: string; status: string; detail: string; fix?: string };

let root: string;
let cfg: string;
const pidFile = () => JSON.parse(readFileSync(join(cfg, 'server.pid'), 'utf8')) as { pid: number; port: number; startedAt: number };

beforeAll(() => {
  root = tempDir('opentabs-journey-s23f-old-server-');
  cfg = join(root, 'cfg');
});
afterAll(async () => {
  try {
    await killPid(pidFile().pid);
  } catch {
    // Not running.
  }
  removeDir(root);
});

test('doctor names a server older than the install, and its restart fix runs as printed', async () => {
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') });
  const port = probe.port!;
  probe.stop(true);
  const env = { HOME: root };
  expect((await runCli(['start', '--background', '--port', String(port)], { configDir: cfg, env, timeoutMs: 120_000 })).code).toBe(0);
  const first = pidFile();

  const serverCode = async () => {
    const r = await runCli(['doctor', '--json'], { configDir: cfg, env });
    return (JSON.parse(r.stdout) as Check[]).find((c) => c.check === 'server code');
  };
  // Started after every file of the install: nothing to say.
  writeFileSync(join(cfg, 'server.pid'), JSON.stringify({ ...first, startedAt: Date.now() + 10 * 365 * 86_400_000 }));
  expect(await serverCode()).toBeUndefined();

  // Started before them: said, as start says it.
  writeFileSync(join(cfg, 'server.pid'), JSON.stringify({ ...first, startedAt: 1 }));
  const check = await serverCode();
  expect(check?.status).toBe('warn');
  expect(check?.detail).toMatch(/^the server started before \/.+ changed, and runs the code it loaded then$/);
  const start = await runCli(['start'], { configDir: cfg, env });
  expect(start.stdout).toContain('runs the code it loaded then');

  // The real start time back (stop checks it against the process, so as not to signal a reused pid).
  writeFileSync(join(cfg, 'server.pid'), JSON.stringify(first));
  const cmd = /`([^`]+)`/.exec(check!.fix!)![1]!;
  expect(cmd).toContain(' stop && ');
  const r = Bun.spawnSync(['sh', '-c', cmd.replace(/ start( --port \d+)?$/, ' start --background$1')], { cwd: root, env: cliEnv(cfg, { HOME: root }), stdout: 'pipe', stderr: 'pipe' });
  expect({ cmd, code: r.exitCode, stderr: r.stderr.toString() }).toEqual({ cmd, code: 0, stderr: '' });
  const second = pidFile();
  expect(second.pid).not.toBe(first.pid);
  expect(second.port).toBe(port);
});
