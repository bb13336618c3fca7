/**
 * Process lifecycle in a child process: port 0 prints the bound URL, the server answers, and
 * SIGTERM / SIGINT shut it down cleanly (pid file removed, audit flushed, lifecycle logged).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { makeTempConfigDir, removeDir } from '../harness/server.ts';

const SERVE = resolve(import.meta.dir, '../../server/serve.ts');

let dir: string;
beforeAll(() => {
  dir = makeTempConfigDir('opentabs-life-');
});
afterAll(() => removeDir(dir));

const script = `
const { runForeground } = await import(${JSON.stringify(SERVE)});
const s = await runForeground({ port: 0, configDir: process.env.DIR, installExtension: false });
await s.ready;
// An audit entry recorded just before the signal must be on disk after shutdown.
s.ctx.audit.record({ timestamp: new Date().toISOString(), tool: 'demo_ping', plugin: 'demo', success: true, durationMs: 1 });
process.stdout.write('READY\\n');
`;

async function runAndSignal(signal: 'SIGTERM' | 'SIGINT') {
  const child = spawn(process.execPath, ['-e', script], { env: { ...process.env, DIR: dir }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
  try {
    await new Promise<void>((res, rej) => {
      const timer = setTimeout(() => rej(new Error(`server did not start: ${out} ${err}`)), 30_000);
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        if (out.includes('READY')) {
          clearTimeout(timer);
          res();
        }
      });
      child.on('exit', () => {
        clearTimeout(timer);
        rej(new Error(`server exited early: ${out} ${err}`));
      });
    });
    const m = /listening on (http:\/\/127\.0\.0\.1:(\d+))/.exec(out);
    expect(m).not.toBeNull();
    const url = m![1];
    expect(Number(m![2])).toBeGreaterThan(0);
    const health = await fetch(`${url}/health`);
    expect(await health.json()).toEqual({ status: 'ok' });
    expect(JSON.parse(readFileSync(join(dir, 'server.pid'), 'utf8')).pid).toBe(child.pid);

    child.kill(signal);
    const code = await exited;
    expect(code).toBe(0);
    expect(existsSync(join(dir, 'server.pid'))).toBe(false);
    // The port is released.
    await expect(fetch(`${url}/health`)).rejects.toThrow();
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  }
}

describe('lifecycle', () => {
  test('SIGTERM: clean shutdown', async () => {
    await runAndSignal('SIGTERM');
  }, 60_000);

  test('SIGINT: clean shutdown; audit entries written before the signal are on disk', async () => {
    await runAndSignal('SIGINT');
    const audit = readFileSync(join(dir, 'audit.log'), 'utf8').trim().split('\n');
    expect(audit.length).toBe(2); // one per run
    const events = readFileSync(join(dir, 'server.log'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const signals = events.filter((e) => e.event === 'signal').map((e) => e.signal);
    expect(signals).toEqual(['SIGTERM', 'SIGINT']);
    expect(events.filter((e) => e.event === 'stopped').length).toBe(2);
  }, 60_000);
});
