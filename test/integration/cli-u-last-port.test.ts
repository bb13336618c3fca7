/**
 * A server started on another port than the default (`npm start -- --port N`), then stopped: the
 * commands run later without --port (status, doctor, tool call, and the stdio bridge of the printed
 * client config, which carries no port) use N, the port the printed MCP client configs and the
 * extension name, not 9515; `opentabs start` without --port starts it there again.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MAIN, cliEnv, collect, killPid, removeDir, runCli, tempDir, waitFor } from './cli-support.ts';

setDefaultTimeout(180_000);

let root: string;
let cfg: string;
let port = 0;
const pids: number[] = [];

function freePort(): number {
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') });
  const p = probe.port!;
  probe.stop(true);
  return p;
}

const pidFile = () => JSON.parse(readFileSync(join(cfg, 'server.pid'), 'utf8')) as { pid: number; port: number };

beforeAll(async () => {
  root = tempDir();
  cfg = join(root, 'config');
  port = freePort();
  const start = await runCli(['start', '--background', '--port', String(port)], { configDir: cfg, timeoutMs: 120_000 });
  expect(start.code).toBe(0);
  pids.push(pidFile().pid);
  const stop = await runCli(['stop'], { configDir: cfg });
  expect(stop.code).toBe(0);
  expect(existsSync(join(cfg, 'server.pid'))).toBe(false);
});

afterAll(async () => {
  if (existsSync(join(cfg, 'server.pid'))) pids.push(pidFile().pid);
  for (const pid of pids) await killPid(pid);
  removeDir(root);
});

test('status, tool call and doctor after a stop name the port the server last ran on, and how to start it there', async () => {
  const status = await runCli(['status'], { configDir: cfg });
  expect(status.code).toBe(1);
  const text = status.stdout + status.stderr;
  expect(text).toContain(`not running on http://127.0.0.1:${port}`);
  expect(text).toContain(`start --port ${port}\``);
  const call = await runCli(['tool', 'call', 'browser_list_tabs'], { configDir: cfg });
  expect(call.code).toBe(1);
  expect(call.stderr).toContain(`start --port ${port}\``);
  const doctor = await runCli(['doctor', '--json'], { configDir: cfg });
  const server = (JSON.parse(doctor.stdout) as Array<{ check: string; detail: string; fix?: string }>).find((c) => c.check === 'server')!;
  expect(server.detail).toContain(`http://127.0.0.1:${port}`);
  expect(server.fix).toContain(`start --port ${port}\``);
});

test('the stdio bridge with no --port starts the stopped server on the port it last ran on', async () => {
  const bridge = Bun.spawn([process.execPath, MAIN, 'mcp'], { env: cliEnv(cfg), stdin: 'pipe', stdout: 'pipe', stderr: 'pipe' });
  const stdout = collect(bridge.stdout);
  const stderr = collect(bridge.stderr);
  try {
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
    bridge.stdin.write(`${JSON.stringify(init)}\n`);
    await bridge.stdin.flush();
    const answer = await stdout.until(/"id":1[,}]/, 120_000);
    expect({ answer: answer !== null, stderr: answer ? '' : stderr.text() }).toEqual({ answer: true, stderr: '' });
    expect(stdout.text()).toContain('"protocolVersion"');
    await waitFor(() => existsSync(join(cfg, 'server.pid')), 10_000, 'server.pid');
    pids.push(pidFile().pid);
    expect(pidFile().port).toBe(port);
    expect(stderr.text()).toContain(`http://127.0.0.1:${port}`);
  } finally {
    bridge.stdin.end();
    const timer = setTimeout(() => bridge.kill('SIGKILL'), 15_000);
    await bridge.exited;
    clearTimeout(timer);
  }
});
