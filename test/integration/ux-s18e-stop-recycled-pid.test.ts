/**
 * `opentabs stop` after the server died without removing server.pid (a crash, SIGKILL, a reboot)
 * and its pid went to another program, with nothing on the recorded port: there is nothing to stop.
 * The stale file is removed and that program is not signalled (before, stop failed and suggested
 * `stop --force`, which would have signalled it).
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pidAlive, removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(60_000);

let root: string;
beforeAll(() => {
  root = tempDir('opentabs-ux-s18e-stop-pid-');
});
afterAll(() => removeDir(root));

async function freePort(): Promise<number> {
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') });
  const port = probe.port!;
  probe.stop(true);
  return port;
}

test.skipIf(process.platform !== 'linux')('a stale server.pid naming another live program, nothing on its port: removed, the program left alone', async () => {
  const cfg = join(root, 'cfg');
  mkdirSync(cfg, { recursive: true, mode: 0o700 });
  const victim = spawn('sleep', ['600'], { stdio: 'ignore' });
  await new Promise((resolve) => victim.once('spawn', resolve));
  try {
    writeFileSync(join(cfg, 'server.pid'), JSON.stringify({ pid: victim.pid, port: await freePort(), startedAt: 1 }));
    const r = await runCli(['stop'], { configDir: cfg });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`removed stale ${join(cfg, 'server.pid')}: pid ${victim.pid} is now another program, "sleep 600"`);
    expect(existsSync(join(cfg, 'server.pid'))).toBe(false);
    expect(pidAlive(victim.pid!)).toBe(true);
  } finally {
    victim.kill('SIGKILL');
  }
});
