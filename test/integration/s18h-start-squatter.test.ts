/**
 * `opentabs start` and a port held by something that is not this config dir's server. A pid
 * outlives its process, and any HTTP server can answer GET /health with {"status":"ok"} (many
 * development servers do). start trusted that answer when server.pid named a live process, and
 * said "already running" while no OpenTabs server of this config dir ran. It now asks the process
 * on the port to prove it knows this config dir's secret (as `opentabs stop` does); when it
 * cannot, start says what holds the port and starts the server, or names a command that works.
 */
import { afterAll, afterEach, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliEnv, removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(180_000);

/** The port this config dir's server last ran on (extension/server.json). */
const OWN_PORT = 9771;
/** A port the squatter holds, asked for with --port. */
const TAKEN_PORT = 9773;

let dir: string;
let squatter: ReturnType<typeof Bun.serve>;
let squatterOnTaken: ReturnType<typeof Bun.serve>;
let victim: ChildProcess | undefined;
const started: string[] = [];

/** Answers /health the way OpenTabs answers a request without a token; knows no secret. */
const devServer = (port: number) =>
  Bun.serve({
    hostname: '127.0.0.1',
    port,
    fetch: (req) => (new URL(req.url).pathname === '/health' ? Response.json({ status: 'ok' }) : new Response('not found', { status: 404 })),
  });

beforeAll(() => {
  dir = tempDir();
  squatter = devServer(0);
  squatterOnTaken = devServer(TAKEN_PORT);
});
afterEach(() => {
  if (victim && victim.exitCode === null && victim.signalCode === null) victim.kill('SIGKILL');
  victim = undefined;
});
afterAll(async () => {
  for (const cfg of started) await runCli(['stop', '--force'], { configDir: cfg, timeoutMs: 60_000 }).catch(() => {});
  squatter?.stop(true);
  squatterOnTaken?.stop(true);
  removeDir(dir);
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

/** A config dir with a secret of its own, whose server last ran on OWN_PORT. */
function configDirNamed(name: string): string {
  const cfg = join(dir, name);
  mkdirSync(join(cfg, 'extension'), { recursive: true, mode: 0o700 });
  writeFileSync(join(cfg, 'extension', 'auth.json'), JSON.stringify({ secret: 'a'.repeat(64) }), { mode: 0o600 });
  writeFileSync(join(cfg, 'extension', 'server.json'), JSON.stringify({ port: OWN_PORT }));
  writeFileSync(join(cfg, 'mcp-config-shown'), 'shown\n');
  return cfg;
}

test('start does not call a stale server.pid whose port a development server answers "already running": it starts the server', async () => {
  victim = await startVictim();
  const cfg = configDirNamed('stale');
  writeFileSync(join(cfg, 'server.pid'), JSON.stringify({ pid: victim.pid, port: squatter.port }));
  started.push(cfg);
  const r = await runCli(['start', '--background'], { configDir: cfg, timeoutMs: 120_000 });
  expect(r.stdout).not.toContain('already running');
  expect(r.code).toBe(0);
  expect(r.stdout).toContain(`started in the background on http://127.0.0.1:${OWN_PORT}`);
  expect(r.stderr).toContain(`names pid ${victim.pid} on port ${squatter.port}`);
  expect(r.stderr).toContain("not this config dir's OpenTabs server");
  const status = await runCli(['status', '--json'], { configDir: cfg, timeoutMs: 60_000 });
  expect(JSON.parse(status.stdout)).toMatchObject({ running: true, url: `http://127.0.0.1:${OWN_PORT}` });
  const stop = await runCli(['stop'], { configDir: cfg, timeoutMs: 60_000 });
  expect(stop.code).toBe(0);
  expect(victim.exitCode === null && victim.signalCode === null).toBe(true);
});

test('start on a port a development server holds says what holds it, and the command it prints runs as written', async () => {
  const cfg = configDirNamed('taken');
  started.push(cfg);
  const r = await runCli(['start', '--port', String(TAKEN_PORT)], { configDir: cfg, timeoutMs: 120_000 });
  expect(r.code).toBe(1);
  expect(r.stderr).toContain(`Port ${TAKEN_PORT} is held by a process that answers GET /health like OpenTabs but is not this config dir's server`);
  const printed = /start OpenTabs on port (\d+) \(free just now\): `([^`]+)`/.exec(r.stderr);
  expect(printed).not.toBeNull();
  const [, freePort, command] = printed!;
  // As pasted into a shell where OPENTABS_CONFIG_DIR is not set (--background so that it returns).
  const env = cliEnv(cfg, { OPENTABS_CONFIG_DIR: undefined });
  const run = Bun.spawnSync(['/bin/sh', '-c', `${command} --background`], { env, stdout: 'pipe', stderr: 'pipe' });
  expect(run.stderr.toString()).toBe('');
  expect(run.stdout.toString()).toContain(`started in the background on http://127.0.0.1:${freePort}`);
  const stop = await runCli(['stop'], { configDir: cfg, timeoutMs: 60_000 });
  expect(stop.code).toBe(0);
});
