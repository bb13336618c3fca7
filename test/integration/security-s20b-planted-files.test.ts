/**
 * Another program of the user puts a named pipe (FIFO), a socket or a link to a device where the
 * config dir keeps a file. Opening a FIFO waits for its other end for good, and reading
 * /dev/zero never ends: the server never answered (the start-up held on config.json, auth.json,
 * audit.log, server.log or extension/.install-hash), and `opentabs audit --file`, `logs`,
 * `status`, `config show` and `doctor` never returned. Now the server replaces what is in a log's
 * place with a regular file (as it does a symbolic link), sets a config.json that is not a regular
 * file aside as it does a corrupt one, and the CLI names the file it cannot read.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { killPid, removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(180_000);

let root: string;
const started: number[] = [];

function freePort(): number {
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') });
  const p = probe.port!;
  probe.stop(true);
  return p;
}

function fifo(path: string): void {
  execFileSync('mkfifo', [path]);
}

/** A config dir holding a FIFO at each name (and the given extras). */
function plantedDir(name: string, fifos: string[]): string {
  const dir = join(root, name);
  mkdirSync(join(dir, 'extension'), { recursive: true, mode: 0o700 });
  for (const f of fifos) fifo(join(dir, f));
  return dir;
}

function serverPid(dir: string): number | null {
  try {
    const pid = (JSON.parse(readFileSync(join(dir, 'server.pid'), 'utf8')) as { pid: number }).pid;
    return Number.isInteger(pid) ? pid : null;
  } catch {
    return null;
  }
}

beforeAll(() => {
  root = tempDir('opentabs-s20b-planted-');
});

afterAll(async () => {
  for (const pid of started) await killPid(pid);
  removeDir(root);
});

test('the server starts and answers with a FIFO at every file it opens; the logs are regular files again', async () => {
  const names = ['server.log', 'audit.log', 'audit.log.1', 'config.json', 'extension/auth.json', 'extension/server.json', 'extension/.install-hash'];
  const dir = plantedDir('server', names);
  const port = freePort();
  const start = await runCli(['start', '--background', '--port', String(port)], { configDir: dir, timeoutMs: 90_000 });
  const pid = serverPid(dir);
  if (pid) started.push(pid);
  expect({ code: start.code, stderr: start.stderr.includes('named pipe (FIFO)') }).toEqual({ code: 0, stderr: true });
  const secret = (JSON.parse(readFileSync(join(dir, 'extension', 'auth.json'), 'utf8')) as { secret: string }).secret;
  const health = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(20_000) });
  expect(health.status).toBe(200);
  await health.body?.cancel();
  // A call is audited, to a regular audit.log.
  const r = await fetch(`http://127.0.0.1:${port}/tools/browser_list_tabs/call`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${secret}`, 'Content-Type': 'application/json' },
    body: '{}',
    signal: AbortSignal.timeout(20_000),
  });
  await r.body?.cancel();
  for (const name of ['server.log', 'audit.log', 'config.json', 'extension/auth.json', 'extension/server.json']) {
    expect([name, lstatSync(join(dir, name)).isFile()]).toEqual([name, true]);
  }
  expect(readFileSync(join(dir, 'audit.log'), 'utf8')).toContain('"tool":"browser_list_tabs"');
  // config.json's pipe is set aside as a corrupt config.json is, and server.log says what it was.
  expect(readdirSync(dir).some((f) => f.startsWith('config.json.corrupt-'))).toBe(true);
  expect(readFileSync(join(dir, 'server.log'), 'utf8')).toContain('config.json was a named pipe (FIFO), not a regular file');
  const stop = await runCli(['stop'], { configDir: dir, timeoutMs: 30_000 });
  expect(stop.code).toBe(0);
});

test('a socket at audit.log and a link to /dev/zero at config.json: the server starts all the same', async () => {
  const dir = plantedDir('socket', []);
  const sock = Bun.listen({ unix: join(dir, 'audit.log'), socket: { data() {} } });
  symlinkSync('/dev/zero', join(dir, 'config.json'));
  const port = freePort();
  try {
    const start = await runCli(['start', '--background', '--port', String(port)], { configDir: dir, timeoutMs: 90_000 });
    const pid = serverPid(dir);
    if (pid) started.push(pid);
    expect(start.code).toBe(0);
    // The line the server wrote on stderr about it (a background server's stderr goes to server.log).
    const said = `${start.stderr}${readFileSync(join(dir, 'server.log'), 'utf8')}`;
    expect(said).toContain(`${join(dir, 'audit.log')} was a socket; removed it and writing to a new file there`);
    expect(lstatSync(join(dir, 'audit.log')).isFile()).toBe(true);
    expect(lstatSync(join(dir, 'config.json')).isFile()).toBe(true);
    // The link was moved aside, not followed: /dev/zero is still what it was.
    expect(lstatSync('/dev/zero').isCharacterDevice()).toBe(true);
    expect((await runCli(['stop'], { configDir: dir, timeoutMs: 30_000 })).code).toBe(0);
  } finally {
    sock.stop(true);
  }
});

test('CLI commands that read the config dir return, naming a file that is not a regular one', async () => {
  const dir = plantedDir('cli', ['audit.log', 'audit.log.1', 'server.log', 'server.pid', 'config.json', 'extension/auth.json', 'extension/server.json']);
  const audit = await runCli(['audit', '--file'], { configDir: dir, timeoutMs: 30_000 });
  expect(audit.code).toBe(0);
  expect(audit.stderr).toContain(`${join(dir, 'audit.log')} is a named pipe (FIFO), not a regular file`);
  expect(audit.stderr).toContain(`${join(dir, 'audit.log.1')} is a named pipe (FIFO), not a regular file`);
  const logs = await runCli(['logs'], { configDir: dir, timeoutMs: 30_000 });
  expect(logs.code).toBe(1);
  expect(logs.stderr).toContain(`${join(dir, 'server.log')} is a named pipe (FIFO), not a regular file`);
  for (const args of [['status'], ['config', 'show'], ['config', 'secret'], ['doctor']]) {
    const r = await runCli(args, { configDir: dir, timeoutMs: 30_000 });
    // Answered (0 or 1), not killed at the timeout.
    expect([args.join(' '), r.code === 0 || r.code === 1]).toEqual([args.join(' '), true]);
  }
  // Nothing was removed or replaced by a command that only reads.
  for (const name of ['audit.log', 'server.log', 'config.json']) expect([name, lstatSync(join(dir, name)).isFIFO()]).toEqual([name, true]);
  expect(existsSync(join(dir, 'server.pid'))).toBe(true);
});
