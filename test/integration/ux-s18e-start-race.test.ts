/**
 * `opentabs start` run twice at the same moment for one config dir (two terminals, or two MCP
 * clients' stdio bridges): the port is free when both check it, one binds it, and the other must
 * say the server is running (exit 0), not that "another program" took the port. On a new config
 * dir each also makes a secret: the server that binds must hold the one left on disk.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { killPid, pidAlive, removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(180_000);

let root: string;
const started: number[] = [];
beforeAll(() => {
  root = tempDir('opentabs-ux-s18e-race-');
});
afterAll(async () => {
  for (const pid of started) await killPid(pid);
  removeDir(root);
});

async function freePort(): Promise<number> {
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') });
  const port = probe.port!;
  probe.stop(true);
  return port;
}

test('three background starts at once: one server, with the secret on disk; every start exits 0, none blames another program', async () => {
  for (let round = 0; round < 3; round++) {
    const cfg = join(root, `round-${round}`);
    const port = await freePort();
    const runs = await Promise.all([0, 1, 2].map(() => runCli(['start', '--background', '--port', String(port)], { configDir: cfg, timeoutMs: 120_000 })));
    const pid = (JSON.parse(readFileSync(join(cfg, 'server.pid'), 'utf8')) as { pid: number }).pid;
    started.push(pid);
    for (const r of runs) {
      expect(r.stderr).not.toContain('another program');
      expect(r.code).toBe(0);
    }
    expect(pidAlive(pid)).toBe(true);
    // The server that won holds the secret on disk (each start on a new config dir makes one).
    const secret = (JSON.parse(readFileSync(join(cfg, 'extension', 'auth.json'), 'utf8')) as { secret: string }).secret;
    const health = await fetch(`http://127.0.0.1:${port}/health`, { headers: { authorization: `Bearer ${secret}` } });
    expect(((await health.json()) as { version?: string }).version).toBeString();
    expect(runs.filter((r) => r.stdout.includes('started in the background')).length).toBe(1);
    expect((await runCli(['stop'], { configDir: cfg })).code).toBe(0);
  }
});
