/**
 * The servers the CLI starts get cli/server-env.ts's JavaScriptCore settings in their environment
 * (JSC reads them only at process start): the detached server of `start --background`, and the
 * Bun process the npm shim (cli/bin.mjs, run by Node) starts. A value the user set wins.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SERVER_ENV, withServerEnv } from '../../cli/server-env.ts';
import { ROOT, cliEnv, killPid, pidAlive, removeDir, runCli, tempDir, waitFor } from './cli-support.ts';

setDefaultTimeout(180_000);

let root: string;
const pids: number[] = [];

function freePort(): number {
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') });
  const p = probe.port!;
  probe.stop(true);
  return p;
}

/** The environment a running process was started with. */
function environOf(pid: number): Record<string, string> {
  const out: Record<string, string> = {};
  for (const kv of readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')) {
    const eq = kv.indexOf('=');
    if (eq > 0) out[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  return out;
}

const pidOf = (cfg: string) => JSON.parse(readFileSync(join(cfg, 'server.pid'), 'utf8')) as { pid: number; port: number };
/** SERVER_ENV's names without a value: what a user who set none of them has. */
const unset = Object.fromEntries(Object.keys(SERVER_ENV).map((k) => [k, undefined]));

beforeAll(() => {
  root = tempDir();
});

afterAll(async () => {
  for (const pid of pids) await killPid(pid);
  removeDir(root);
});

test('withServerEnv adds the settings and keeps a value already set', () => {
  expect(Object.keys(SERVER_ENV).length).toBeGreaterThan(0);
  const added = withServerEnv({ PATH: '/bin' });
  for (const [k, v] of Object.entries(SERVER_ENV)) expect(added[k]).toBe(v);
  expect(added.PATH).toBe('/bin');
  const mine = Object.fromEntries(Object.keys(SERVER_ENV).map((k) => [k, 'mine']));
  expect(withServerEnv(mine)).toEqual(mine);
});

for (const [label, extra] of [
  ['gets the settings', unset],
  ['keeps the values the user set', Object.fromEntries(Object.keys(SERVER_ENV).map((k) => [k, '1']))],
] as const) {
  test(`the server of start --background ${label}`, async () => {
    const cfg = join(root, `bg-${label.replace(/\W+/g, '-')}`);
    const start = await runCli(['start', '--background', '--port', String(freePort())], { configDir: cfg, env: extra, timeoutMs: 120_000 });
    expect({ code: start.code, stderr: start.stderr }).toEqual({ code: 0, stderr: '' });
    const { pid } = pidOf(cfg);
    pids.push(pid);
    const env = environOf(pid);
    for (const [k, v] of Object.entries(SERVER_ENV)) expect(`${k}=${env[k]}`).toBe(`${k}=${extra[k] ?? v}`);
    expect((await runCli(['stop'], { configDir: cfg })).code).toBe(0);
  });
}

test('the Bun process the npm shim starts from Node gets the settings', async () => {
  const cfg = join(root, 'shim');
  // Node runs the shim as npm's bin would; the shim runs the CLI (here the foreground server) with Bun.
  const node = Bun.spawn(['node', join(ROOT, 'cli', 'bin.mjs'), 'start', '--port', String(freePort())], { cwd: ROOT, env: cliEnv(cfg, unset), stdout: 'ignore', stderr: 'ignore' });
  try {
    await waitFor(() => existsSync(join(cfg, 'server.pid')), 60_000, 'the server.pid of the shim-started server');
    const { pid } = pidOf(cfg);
    pids.push(pid);
    expect(pid).not.toBe(node.pid);
    expect(pidAlive(pid)).toBe(true);
    const env = environOf(pid);
    for (const [k, v] of Object.entries(SERVER_ENV)) expect(`${k}=${env[k]}`).toBe(`${k}=${v}`);
  } finally {
    node.kill('SIGTERM');
    await node.exited;
  }
});
