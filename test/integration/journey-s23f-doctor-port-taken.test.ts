/**
 * `opentabs doctor --port P` on a fresh config dir while another program (not OpenTabs) holds P:
 * every fix that starts the server names the free port the port-owner check offers, never the
 * taken P, where that start would be refused; the start, run as printed, starts there.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliEnv, killPid, removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(180_000);

type Check = { check: string; status: string; detail: string; fix?: string };

let root: string;
let cfg: string;
let other: ReturnType<typeof Bun.serve>;

beforeAll(() => {
  root = tempDir('opentabs-journey-s23f-taken-');
  cfg = join(root, 'cfg');
  other = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('not here', { status: 404 }) });
});
afterAll(async () => {
  other.stop(true);
  try {
    await killPid((JSON.parse(readFileSync(join(cfg, 'server.pid'), 'utf8')) as { pid: number }).pid);
  } catch {
    // Not started.
  }
  removeDir(root);
});

test('the fixes that start the server all name the free port, not the taken one', async () => {
  const taken = other.port!;
  const env = { HOME: root };
  const r = await runCli(['doctor', '--json', '--port', String(taken)], { configDir: cfg, env });
  expect(r.code).toBe(1);
  const checks = JSON.parse(r.stdout) as Check[];
  expect(checks.find((c) => c.check === 'port owner')?.status).toBe('fail');
  const starts = checks.flatMap((c) => [...(c.fix ?? '').matchAll(/`([^`]* start[^`]*)`/g)].map((m) => ({ check: c.check, cmd: m[1]! })));
  // config dir, secret, port owner and extension folder each say to start it.
  expect(starts.length).toBeGreaterThanOrEqual(4);
  const ports = new Set(starts.map((s) => /--port (\d+)/.exec(s.cmd)?.[1]));
  expect(ports.size).toBe(1);
  const port = Number([...ports][0]);
  expect(port).not.toBe(taken);
  expect(port).toBeGreaterThan(0);

  // The config dir check's start, run as printed (in the background, so the test goes on).
  const cmd = starts.find((s) => s.check === 'config dir')!.cmd.replace(/ start /, ' start --background ');
  const ran = Bun.spawnSync(['sh', '-c', cmd], { cwd: root, env: cliEnv(cfg, { HOME: root, OPENTABS_CONFIG_DIR: undefined }), stdout: 'pipe', stderr: 'pipe' });
  expect({ cmd, code: ran.exitCode, stderr: ran.stderr.toString() }).toEqual({ cmd, code: 0, stderr: '' });
  expect(existsSync(join(cfg, 'server.pid'))).toBe(true);
  expect((JSON.parse(readFileSync(join(cfg, 'server.pid'), 'utf8')) as { port: number }).port).toBe(port);
});
