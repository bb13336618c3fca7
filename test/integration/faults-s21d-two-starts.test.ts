/**
 * Two servers of one config dir started at the same moment on different ports. `opentabs start`
 * checks server.pid first, but two starts at once both found none: both servers ran, both wrote
 * server.pid (the last one won) and the other one ran on unseen, with `opentabs stop` stopping
 * only one. server.pid is now claimed: the server that finds another one of its config dir alive
 * there stops with an error naming it. A server.pid naming a live process that is not this dir's
 * server (a reused pid) does not stop a start.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MAIN, ROOT, cliEnv, collect, killPid, pidAlive, runCli, tempDir, removeDir } from './cli-support.ts';

const dirs: string[] = [];
const pids: number[] = [];

afterAll(async () => {
  for (const pid of pids) await killPid(pid).catch(() => {});
  for (const d of dirs) removeDir(d);
});

function configDir(): string {
  const dir = tempDir('opentabs-two-starts-');
  dirs.push(dir);
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ schemaVersion: 1, localPlugins: [], permissions: {}, pluginSettings: {} }));
  return dir;
}

function start(dir: string) {
  const proc = Bun.spawn([process.execPath, MAIN, 'start', '--port', '0'], { cwd: ROOT, env: cliEnv(dir), stdout: 'pipe', stderr: 'pipe' });
  pids.push(proc.pid);
  return { proc, out: collect(proc.stdout), err: collect(proc.stderr) };
}

/** The server itself, started past the CLI's server.pid check (as the second of two starts at once gets there). */
function startPastTheCheck(dir: string) {
  const code = `const { startServer } = await import(${JSON.stringify(join(ROOT, 'server', 'serve.ts'))});
try { const s = await startServer({ configDir: ${JSON.stringify(dir)}, port: 0, installExtension: false, quiet: true }); console.log('listening ' + s.port); await s.stopped; }
catch (e) { console.error(String(e.message)); process.exit(3); }`;
  const proc = Bun.spawn([process.execPath, '-e', code], { cwd: ROOT, env: cliEnv(dir), stdout: 'pipe', stderr: 'pipe' });
  pids.push(proc.pid);
  return { proc, out: collect(proc.stdout), err: collect(proc.stderr) };
}

const pidFile = (dir: string) => JSON.parse(readFileSync(join(dir, 'server.pid'), 'utf8')) as { pid: number; port: number };

describe('two servers of one config dir', () => {
  test('the second finds the first in server.pid and stops naming it; server.pid and stop stay with the first', async () => {
    const dir = configDir();
    const first = start(dir);
    const m = await first.out.until(/listening on http:\/\/127\.0\.0\.1:(\d+)/, 60_000);
    expect(m).not.toBeNull();
    const port = Number(m![1]);

    const second = startPastTheCheck(dir);
    const code = await second.proc.exited;
    expect(code).toBe(3);
    expect(second.err.text()).toContain(`already running on http://127.0.0.1:${port} (pid ${first.proc.pid})`);
    expect(pidFile(dir)).toMatchObject({ pid: first.proc.pid, port });

    const stopped = await runCli(['stop'], { configDir: dir });
    expect(stopped.code).toBe(0);
    await first.proc.exited;
    expect(existsSync(join(dir, 'server.pid'))).toBe(false);
  }, 120_000);

  test('two `opentabs start` at the same moment: one server runs, the one server.pid and server.json name', async () => {
    const dir = configDir();
    const a = start(dir);
    const b = start(dir);
    // Each either listens or exits (the loser: "already running", from the CLI's check or the server's claim).
    const outcome = async (s: ReturnType<typeof start>) => Promise.race([s.out.until(/listening on http:\/\/127\.0\.0\.1:(\d+)/, 60_000).then((m) => (m ? 'listening' : 'silent')), s.proc.exited.then(() => 'exited')]);
    await Promise.all([outcome(a), outcome(b)]);
    // A server that lost the claim stops right after printing its port: wait for the two to settle.
    for (let i = 0; i < 100 && pidAlive(a.proc.pid) && pidAlive(b.proc.pid); i++) await Bun.sleep(100);
    const running = [a, b].filter((s) => pidAlive(s.proc.pid));
    expect(running.length).toBe(1);
    const loser = [a, b].find((s) => s !== running[0])!;
    expect(loser.out.text() + loser.err.text()).toMatch(/already running/);
    const winner = running[0]!;
    const port = Number(/listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(winner.out.text())![1]);
    expect(pidFile(dir)).toMatchObject({ pid: winner.proc.pid, port });
    // The extension folder is written once the server is up.
    for (let i = 0; i < 300 && !existsSync(join(dir, 'extension', 'server.json')); i++) await Bun.sleep(100);
    const ext = JSON.parse(readFileSync(join(dir, 'extension', 'server.json'), 'utf8')) as { port: number };
    expect(ext.port).toBe(port);
    expect((await runCli(['stop'], { configDir: dir })).code).toBe(0);
    await winner.proc.exited;
  }, 120_000);

  test('a server.pid naming a live process that is not this dir\'s server does not stop a start', async () => {
    const dir = configDir();
    // This test's own process: alive, and nothing of this config dir answers on the port it names.
    writeFileSync(join(dir, 'server.pid'), JSON.stringify({ pid: process.pid, port: 9, startedAt: 1 }));
    const s = startPastTheCheck(dir);
    const m = await s.out.until(/listening (\d+)/, 60_000);
    expect(m).not.toBeNull();
    expect(pidFile(dir)).toMatchObject({ pid: s.proc.pid, port: Number(m![1]) });
    s.proc.kill('SIGTERM');
    await s.proc.exited;
  }, 120_000);
});
