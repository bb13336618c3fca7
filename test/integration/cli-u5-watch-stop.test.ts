/**
 * `opentabs plugin build --watch` (`npm run dev`) stopped with SIGTERM while its type check runs
 * (a process manager, or the npm shim passing the signal on): the compiler is ended with it, not
 * waited for, and no type-check result is printed after the stop.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { MAIN, cliEnv, collect, removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(180_000);

let root: string;
let cfg: string;
let dir: string;

beforeAll(async () => {
  root = tempDir();
  cfg = join(root, 'config');
  dir = join(root, 'opentabs-plugin-watch-stop');
  const created = await runCli(['plugin', 'create', 'watch-stop', '--dir', dir, '--url', 'http://127.0.0.1:9/*'], { configDir: cfg, cwd: root });
  expect(created.code).toBe(0);
});

afterAll(() => removeDir(root));

/** Child pids of `pid` whose command line mentions tsc (Linux /proc). */
function tscChildren(pid: number): number[] {
  const found: number[] = [];
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      for (const child of readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)) {
        const cmd = readFileSync(`/proc/${child}/cmdline`, 'utf8');
        if (/typescript[\\/]bin[\\/]tsc/.test(cmd)) found.push(Number(child));
      }
    }
  } catch {}
  return found;
}

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
}

test('SIGTERM during the type check ends the compiler and prints no result after the stop', async () => {
  const proc = Bun.spawn([process.execPath, MAIN, 'plugin', 'build', dir, '--watch'], { env: cliEnv(cfg), stdout: 'pipe', stderr: 'pipe' });
  const stdout = collect(proc.stdout);
  const stderr = collect(proc.stderr);
  try {
    expect(await stdout.until(/Watching /, 120_000)).not.toBeNull();
    // The first build's type check starts right after it loads; wait (bounded) until tsc runs.
    let tsc: number[] = [];
    for (let i = 0; i < 600 && tsc.length === 0; i++) {
      tsc = tscChildren(proc.pid);
      if (tsc.length === 0) await Bun.sleep(50);
    }
    expect(tsc.length).toBeGreaterThan(0);
    const before = stderr.text().length;
    proc.kill('SIGTERM');
    expect(await proc.exited).toBe(0);
    const after = stderr.text().slice(before);
    expect(after).not.toContain('Type check passed');
    expect(after).not.toContain('Type check failed');
    for (const pid of tsc) expect(alive(pid)).toBe(false);
  } finally {
    if (proc.exitCode === null) proc.kill('SIGKILL');
  }
});
