/**
 * A command given a --port (or PORT) where nothing listens while this config dir's server runs on
 * another port: the message names the port the server runs on, and does not suggest
 * `opentabs start --port <wrong>`, which would be refused (one server per config dir).
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { killPid, removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(180_000);

let root: string;
let cfg: string;
let port = 0;
let wrong = 0;
let pid = 0;

function freePort(): number {
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') });
  const p = probe.port!;
  probe.stop(true);
  return p;
}

beforeAll(async () => {
  root = tempDir();
  cfg = join(root, 'config');
  port = freePort();
  wrong = freePort();
  if (wrong === port) wrong = port === 65535 ? port - 1 : port + 1;
  const start = await runCli(['start', '--background', '--port', String(port)], { configDir: cfg, timeoutMs: 120_000 });
  expect(start.code).toBe(0);
  pid = (JSON.parse(readFileSync(join(cfg, 'server.pid'), 'utf8')) as { pid: number }).pid;
});

afterAll(async () => {
  if (existsSync(join(cfg, 'server.pid'))) await runCli(['stop'], { configDir: cfg });
  if (pid) await killPid(pid);
  removeDir(root);
});

test('status, tool list and tool call with --port elsewhere name the running server and how to reach it', async () => {
  for (const args of [['status'], ['tool', 'list'], ['tool', 'call', 'browser_list_tabs']]) {
    const r = await runCli([...args, '--port', String(wrong)], { configDir: cfg });
    const text = r.stdout + r.stderr;
    expect({ args, code: r.code }).toEqual({ args, code: 1 });
    expect(text).toContain(`not running on http://127.0.0.1:${wrong}`);
    expect(text).toContain(`server runs on http://127.0.0.1:${port} (pid ${pid})`);
    expect(text).toContain('leave out --port');
    expect(text).toContain(`--port ${port}\``);
    expect(text).not.toContain(`start --port ${wrong}`);
  }
});

test('PORT set to another port: the message says to unset it', async () => {
  const r = await runCli(['status'], { configDir: cfg, env: { PORT: String(wrong) } });
  expect(r.code).toBe(1);
  const text = r.stdout + r.stderr;
  expect(text).toContain(`server runs on http://127.0.0.1:${port}`);
  expect(text).toContain('unset PORT');
  expect(text).not.toContain(`start --port ${wrong}`);
});

test('doctor --port elsewhere: the server check names the running server, its fix reaches it', async () => {
  const r = await runCli(['doctor', '--json', '--port', String(wrong)], { configDir: cfg });
  const server = (JSON.parse(r.stdout) as Array<{ check: string; detail: string; fix?: string }>).find((c) => c.check === 'server')!;
  expect(server.detail).toContain(`http://127.0.0.1:${port} (pid ${pid})`);
  expect(server.fix).toContain(`doctor --port ${port}\``);
  expect(server.fix).not.toContain(`start --port ${wrong}`);
  const ok = await runCli(['doctor', '--json', '--port', String(port)], { configDir: cfg });
  const serverOk = (JSON.parse(ok.stdout) as Array<{ check: string; status: string }>).find((c) => c.check === 'server')!;
  expect(serverOk.status).toBe('ok');
});

test('with no --port the commands still find the server through server.pid', async () => {
  const r = await runCli(['status'], { configDir: cfg });
  expect(r.code).toBe(0);
  expect(r.stdout).toContain(`http://127.0.0.1:${port}`);
});

test('PORT names a port another program holds: status, start and a fresh start say PORT chose it', async () => {
  const squatter = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('hello') });
  try {
    const env = { PORT: String(squatter.port) };
    const status = await runCli(['status'], { configDir: cfg, env });
    expect(status.code).toBe(1);
    expect(status.stderr).toContain(`server runs on http://127.0.0.1:${port} (pid ${pid}): unset PORT`);
    const start = await runCli(['start'], { configDir: cfg, env });
    expect(start.code).toBe(1);
    expect(start.stderr).toContain(`Port ${squatter.port} came from the PORT environment variable`);
    const fresh = await runCli(['start'], { configDir: join(root, 'fresh'), env });
    expect(fresh.code).toBe(1);
    expect(fresh.stderr).toContain(`Port ${squatter.port} is in use by another program`);
    expect(fresh.stderr).toContain(`port ${squatter.port} came from the PORT environment variable`);
  } finally {
    squatter.stop(true);
  }
});
