/**
 * A config dir with no secret yet, pointed (--port) at a port where another config dir's server
 * runs: status and doctor say the server is not this config dir's and name a start that works
 * (another port), instead of reporting it as running with an unknown version and mode, and instead
 * of a `start --port <that port>`, which would be refused.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { killPid, removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(180_000);

let root: string;
let owner: string;
let other: string;
let port = 0;
let pid = 0;

function freePort(): number {
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') });
  const p = probe.port!;
  probe.stop(true);
  return p;
}

beforeAll(async () => {
  root = tempDir();
  owner = join(root, 'owner');
  other = join(root, 'other');
  port = freePort();
  const start = await runCli(['start', '--background', '--port', String(port)], { configDir: owner, timeoutMs: 120_000 });
  expect(start.code).toBe(0);
  pid = (JSON.parse(readFileSync(join(owner, 'server.pid'), 'utf8')) as { pid: number }).pid;
});

afterAll(async () => {
  if (existsSync(join(owner, 'server.pid'))) await runCli(['stop'], { configDir: owner });
  if (pid) await killPid(pid);
  removeDir(root);
});

const next = () => (port === 65535 ? port - 1 : port + 1);

test('status: not this config dir\'s server, and a start on another port', async () => {
  for (const json of [false, true]) {
    const r = await runCli(['status', '--port', String(port), ...(json ? ['--json'] : [])], { configDir: other });
    expect({ json, code: r.code }).toEqual({ json, code: 1 });
    expect(r.stdout).not.toContain('running on');
    expect(r.stderr).toContain(`A server answers on http://127.0.0.1:${port}, but it is not this config dir's`);
    expect(r.stderr).toContain(`start --port ${next()}\``);
  }
});

test('doctor: the server check fails saying so; no fix starts a server on the taken port', async () => {
  const r = await runCli(['doctor', '--json', '--port', String(port)], { configDir: other });
  expect(r.code).toBe(1);
  const checks = JSON.parse(r.stdout) as Array<{ check: string; status: string; detail: string; fix?: string }>;
  const server = checks.find((c) => c.check === 'server')!;
  expect(server.status).toBe('fail');
  expect(server.detail).toContain("not this config dir's");
  for (const c of checks) expect(c.fix ?? '').not.toContain(`start --port ${port}\``);
  expect(checks.find((c) => c.check === 'secret')?.fix).toContain(`start --port ${next()}\``);
});

test("the owner's own status is unchanged", async () => {
  const r = await runCli(['status'], { configDir: owner });
  expect(r.code).toBe(0);
  expect(r.stdout).toContain(`running on http://127.0.0.1:${port}`);
});

test('doctor: a config dir with a secret of its own, pointed at that server: no restart on the taken port', async () => {
  const third = join(root, 'third');
  expect((await runCli(['config', 'rotate-secret'], { configDir: third })).code).toBe(0);
  const r = await runCli(['doctor', '--json', '--port', String(port)], { configDir: third });
  expect(r.code).toBe(1);
  const checks = JSON.parse(r.stdout) as Array<{ check: string; status: string; detail: string; fix?: string }>;
  const auth = checks.find((c) => c.check === 'server auth')!;
  expect(auth.detail).toContain(`The process on port ${port} is not this OpenTabs server`);
  expect(auth.fix).toContain(`start --port ${next()}\``);
  for (const c of checks) expect(c.fix ?? '').not.toContain(`start --port ${port}\``);
});
