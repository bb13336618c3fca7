/**
 * `opentabs stop` signals the pid in server.pid. A pid outlives its process: after a crash or a
 * reboot, server.pid may name a process that is now another program of the user (an editor, a
 * shell). stop checked only that something on the recorded port answered GET /health with
 * {"status":"ok"} — what any HTTP server can answer (another user's program squatting the port,
 * many development servers, an OpenTabs server of another config dir) — and then sent that other
 * program SIGTERM, and SIGKILL 10 s later. stop now signals only when the process on the port
 * proves it knows this config dir's secret (the handshake the CLI runs before any request).
 */
import { afterAll, afterEach, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir, runCli, tempDir } from './cli-support.ts';
import { startTestServer, type TestServer } from '../harness/server.ts';

setDefaultTimeout(120_000);

let dir: string;
let squatter: ReturnType<typeof Bun.serve>;
let other: TestServer;
let victim: ChildProcess | undefined;

beforeAll(async () => {
  dir = tempDir();
  // Answers /health the way OpenTabs answers a request without a token; knows no secret.
  squatter = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (req) => (new URL(req.url).pathname === '/health' ? Response.json({ status: 'ok' }) : new Response('not found', { status: 404 })),
  });
  // A real OpenTabs server, of another config dir.
  other = await startTestServer();
});
afterAll(async () => {
  squatter?.stop(true);
  await other?.stop();
  removeDir(dir);
});
afterEach(() => {
  if (victim && victim.exitCode === null && victim.signalCode === null) victim.kill('SIGKILL');
  victim = undefined;
});

/** Another program of the user, now holding the pid server.pid names. */
async function startVictim(): Promise<ChildProcess> {
  const child = spawn('sleep', ['600'], { stdio: 'ignore' });
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', reject);
  });
  return child;
}

const alive = (c: ChildProcess) => c.exitCode === null && c.signalCode === null;

/** A config dir whose server.pid names the victim's pid and `port`, with a secret of its own. */
function configDirFor(name: string, pid: number, port: number): string {
  const cfg = join(dir, name);
  mkdirSync(join(cfg, 'extension'), { recursive: true, mode: 0o700 });
  writeFileSync(join(cfg, 'extension', 'auth.json'), JSON.stringify({ secret: 'a'.repeat(64) }), { mode: 0o600 });
  writeFileSync(join(cfg, 'server.pid'), JSON.stringify({ pid, port }));
  return cfg;
}

for (const [what, port] of [
  ['a process that answers /health like OpenTabs', () => squatter.port!],
  ['an OpenTabs server of another config dir', () => other.port],
] as const) {
  test(`stop does not signal a stale pid when ${what} holds the recorded port`, async () => {
    victim = await startVictim();
    const cfg = configDirFor(`stale-${port()}`, victim.pid!, port());
    const r = await runCli(['stop'], { configDir: cfg, timeoutMs: 60_000 });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`Process ${victim.pid}`);
    expect(r.stderr).toContain('--force');
    expect(alive(victim)).toBe(true);
  });
}

test('stop still stops this config dir\'s own server', async () => {
  const own = await runCli(['start', '--background', '--port', '0'], { configDir: join(dir, 'own'), timeoutMs: 90_000 });
  expect(own.code).toBe(0);
  const r = await runCli(['stop'], { configDir: join(dir, 'own'), timeoutMs: 60_000 });
  expect(r.code).toBe(0);
  expect(r.stdout).toContain('Stopped OpenTabs server');
});
