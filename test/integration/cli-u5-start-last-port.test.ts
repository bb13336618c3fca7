/**
 * `npm start -- --port N` once, then `npm start` (no --port, no PORT) after a stop: the server
 * starts on N again, where the MCP client configs printed on first run and the extension point,
 * not on 9515. --port and PORT still choose.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { killPid, removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(180_000);

let root: string;
let cfg: string;
const pids: number[] = [];

function freePort(): number {
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') });
  const p = probe.port!;
  probe.stop(true);
  return p;
}

const pidFile = () => JSON.parse(readFileSync(join(cfg, 'server.pid'), 'utf8')) as { pid: number; port: number };

async function startAndStop(args: string[], env: Record<string, string> = {}): Promise<number> {
  const start = await runCli(['start', '--background', ...args], { configDir: cfg, env, timeoutMs: 120_000 });
  expect({ code: start.code, stderr: start.stderr }).toEqual({ code: 0, stderr: '' });
  const { pid, port } = pidFile();
  pids.push(pid);
  const stop = await runCli(['stop'], { configDir: cfg });
  expect(stop.code).toBe(0);
  return port;
}

beforeAll(() => {
  root = tempDir();
  cfg = join(root, 'config');
});

afterAll(async () => {
  if (existsSync(join(cfg, 'server.pid'))) pids.push(pidFile().pid);
  for (const pid of pids) await killPid(pid);
  removeDir(root);
});

test('start without --port after a stop listens on the port the server last ran on', async () => {
  const first = freePort();
  expect(await startAndStop(['--port', String(first)])).toBe(first);
  expect(await startAndStop([])).toBe(first);
});

test('--port and PORT still choose the port', async () => {
  const other = freePort();
  expect(await startAndStop(['--port', String(other)])).toBe(other);
  const viaEnv = freePort();
  expect(await startAndStop([], { PORT: String(viaEnv) })).toBe(viaEnv);
  // The last one ran on viaEnv: that is where a plain start goes now.
  expect(await startAndStop([])).toBe(viaEnv);
});

test("a background server's banner in server.log names opentabs stop, not Ctrl-C", () => {
  const log = readFileSync(join(cfg, 'server.log'), 'utf8');
  expect(log).toContain('Stop with `');
  expect(log).not.toContain('Ctrl-C');
});
