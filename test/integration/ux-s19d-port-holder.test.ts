/**
 * A port that is taken: `opentabs start` and `opentabs doctor` name the process that holds it
 * (pid and command line, found through /proc on Linux), and when it is the OpenTabs server of
 * another config dir, that config dir and the command that stops it, runnable as printed from a
 * shell without OPENTABS_CONFIG_DIR.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliEnv, collect, killPid, pidAlive, removeDir, runCli, tempDir, waitFor } from './cli-support.ts';

setDefaultTimeout(180_000);

let dirA: string;
let dirB: string;
let holder: ReturnType<typeof Bun.spawn> | undefined;
let holderPort = 0;
let script = '';
/** A key on the holder's command line: shown as …, never printed. */
const KEY = 'k3y'.repeat(12);

beforeAll(async () => {
  dirA = tempDir();
  dirB = tempDir();
  // Another program of the user: an HTTP server in its own process, on a port the system picks.
  script = join(dirB, 'holder.ts');
  writeFileSync(script, "const s = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('no', { status: 404 }) }); console.log('port=' + s.port);\n");
  holder = Bun.spawn([process.execPath, script, `--api-key=${KEY}`, KEY.toUpperCase()], { stdout: 'pipe', stderr: 'ignore' });
  const out = collect(holder.stdout as ReadableStream<Uint8Array>);
  const m = await out.until(/port=(\d+)/, 30_000);
  holderPort = Number(m?.[1]);
  expect(holderPort).toBeGreaterThan(0);
});

afterAll(async () => {
  holder?.kill('SIGKILL');
  for (const dir of [dirA, dirB]) {
    await runCli(['stop', '--force'], { configDir: dir, timeoutMs: 60_000 }).catch(() => {});
    removeDir(dir);
  }
});

test.skipIf(process.platform !== 'linux')('start on a port another program holds names its pid and command line', async () => {
  const r = await runCli(['start', '--port', String(holderPort)], { configDir: dirB, timeoutMs: 60_000 });
  expect(r.code).toBe(1);
  expect(r.stderr).toContain(`Port ${holderPort} is in use by another program`);
  expect(r.stderr).toContain(`pid ${holder!.pid} (`);
  expect(r.stderr).toContain(`${script} --api-key=… …)`);
  expect(r.stderr.toLowerCase()).not.toContain(KEY);

  const d = await runCli(['doctor', '--port', String(holderPort)], { configDir: dirB, timeoutMs: 60_000 });
  expect(d.stdout).toContain(`port ${holderPort} is held by another program`);
  expect(d.stdout).toContain(`pid ${holder!.pid} (`);
});

test.skipIf(process.platform !== 'linux')('the OpenTabs server of another config dir is named with its config dir and a stop command that runs as printed', async () => {
  const a = await runCli(['start', '--background', '--port', '0'], { configDir: dirA, timeoutMs: 90_000 });
  expect(a.code).toBe(0);
  const pidA = JSON.parse(readFileSync(join(dirA, 'server.pid'), 'utf8')) as { pid: number; port: number };

  const r = await runCli(['start', '--port', String(pidA.port)], { configDir: dirB, timeoutMs: 60_000 });
  expect(r.code).toBe(1);
  expect(r.stderr).toContain(`pid ${pidA.pid} (`);
  expect(r.stderr).toContain(`the OpenTabs server of config dir ${dirA}`);
  const stop = /To stop that server: `([^`]+)`/.exec(r.stderr)?.[1];
  expect(stop).toBeDefined();

  // A command of this config dir, which has no secret yet, sent to that port: whose server it is, and a free port.
  expect(existsSync(join(dirB, 'extension', 'auth.json'))).toBe(false);
  const noSecret = await runCli(['status', '--port', String(pidA.port)], { configDir: dirB, timeoutMs: 60_000 });
  expect(noSecret.code).toBe(1);
  expect(noSecret.stderr).toContain(`held by pid ${pidA.pid}, the OpenTabs server of config dir ${dirA}`);
  expect(noSecret.stderr).toMatch(/Or start OpenTabs on port \d+ \(free just now\)/);

  // A command of this config dir (which has a secret now) sent to that port says whose server it is.
  expect((await runCli(['config', 'rotate-secret'], { configDir: dirB, timeoutMs: 60_000 })).code).toBe(0);
  const status = await runCli(['status', '--port', String(pidA.port)], { configDir: dirB, timeoutMs: 60_000 });
  expect(status.code).toBe(1);
  expect(status.stderr).toContain('so the secret was not sent to it');
  expect(status.stderr).toContain(`It is pid ${pidA.pid} (`);
  expect(status.stderr).toContain(`the OpenTabs server of config dir ${dirA}: to use it, put OPENTABS_CONFIG_DIR=${dirA} in front of the command`);

  const doctor = JSON.parse((await runCli(['doctor', '--json', '--port', String(pidA.port)], { configDir: dirB, timeoutMs: 60_000 })).stdout) as { check: string; fix?: string }[];
  const auth = doctor.find((c) => c.check === 'server auth');
  expect(auth?.fix).toContain(`pid ${pidA.pid}, the OpenTabs server of config dir ${dirA}`);
  expect(auth?.fix).toContain(`\`${stop}\``);

  // Run it as a user would paste it: in a shell where OPENTABS_CONFIG_DIR is not set.
  const sh = Bun.spawn(['sh', '-c', stop!], { env: cliEnv(dirB, { OPENTABS_CONFIG_DIR: undefined }), stdout: 'pipe', stderr: 'pipe' });
  const timer = setTimeout(() => sh.kill('SIGKILL'), 60_000);
  const [stdout, , code] = await Promise.all([new Response(sh.stdout).text(), new Response(sh.stderr).text(), sh.exited]);
  clearTimeout(timer);
  expect(code).toBe(0);
  expect(stdout).toContain(`Stopped OpenTabs server (pid ${pidA.pid})`);
  await waitFor(() => !pidAlive(pidA.pid), 30_000, 'the other config dir’s server to exit');
  await killPid(pidA.pid);
});
