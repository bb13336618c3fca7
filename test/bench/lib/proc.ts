/** Server subprocesses for the bench: spawn, wait for the address, read RSS, stop (bounded). */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { withServerEnv } from '../../../cli/server-env.ts';

export const ROOT = join(import.meta.dir, '..', '..', '..');
export const BUN = process.execPath;

export interface ServerProc {
  proc: ChildProcess;
  pid: number;
  port: number;
  url: string;
  secret: string;
  auth: Record<string, string>;
  /** One stdin command to the child (server-child.ts), its one-line JSON answer. */
  command(line: string): Promise<any>;
  stop(): Promise<void>;
}

/** VmRSS of a process in bytes (0 when it cannot be read). */
export function rssOf(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** RSS split (MB) from /proc: anonymous memory (heaps, buffers) vs file-backed (code, mapped files). */
export function rssParts(pid: number): { rss: number; anon: number; file: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  const r = (x: number) => Math.round((x / 1024) * 10) / 10;
  return { rss: r(kb('VmRSS')), anon: r(kb('RssAnon')), file: r(kb('RssFile')) };
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the process has exited. */
export function stopProc(proc: ChildProcess, graceMs = 5_000): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const killer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
    proc.once('exit', () => {
      clearTimeout(killer);
      resolve();
    });
    proc.kill('SIGTERM');
  });
}

/** Read stdout until `match` returns a value, or fail after `timeoutMs` / on exit. */
export function waitForLine<T>(proc: ChildProcess, match: (line: string) => T | undefined, timeoutMs: number, what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    let buf = '';
    let err = '';
    const onErr = (c: Buffer) => (err += c.toString());
    const done = (fn: () => void) => {
      clearTimeout(timer);
      proc.stdout?.off('data', onData);
      proc.stderr?.off('data', onErr);
      proc.off('exit', onExit);
      fn();
    };
    const onData = (c: Buffer) => {
      buf += c.toString();
      for (const line of buf.split('\n')) {
        const v = match(line);
        if (v !== undefined) return done(() => resolve(v));
      }
    };
    const onExit = (code: number | null) => done(() => reject(new Error(`${what}: process exited (${code}) before it was ready. ${err.slice(-2000)}`)));
    proc.stderr?.on('data', onErr);
    const timer = setTimeout(() => done(() => reject(new Error(`${what}: not ready within ${timeoutMs} ms. stdout: ${buf.slice(-500)} stderr: ${err.slice(-1500)}`))), timeoutMs);
    proc.stdout?.on('data', onData);
    proc.once('exit', onExit);
  });
}

/**
 * Start test/bench/lib/server-child.ts on `configDir` (extra Bun flags first, e.g. a CPU profile),
 * with the environment the CLI gives the servers it starts (cli/server-env.ts).
 */
export async function startServerChild(configDir: string, limits: Record<string, unknown>, bunFlags: string[] = []): Promise<ServerProc> {
  const proc = spawn(BUN, [...bunFlags, join(import.meta.dir, 'server-child.ts'), configDir, JSON.stringify(limits)], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'], env: { ...withServerEnv(process.env), NO_COLOR: '1' } });
  try {
    const info = await waitForLine(
      proc,
      (l) => {
        if (!l.startsWith('{"port"')) return undefined;
        try {
          return JSON.parse(l) as { port: number; pid: number; secret: string };
        } catch {
          return undefined;
        }
      },
      60_000,
      'server child',
    );
    const url = `http://127.0.0.1:${info.port}`;
    // Keep stderr drained (a full pipe would block the child).
    proc.stderr?.on('data', () => {});
    const command = (line: string) => {
      const answer = waitForLine(proc, (l) => {
        if (!l.startsWith('{') || l.startsWith('{"port"')) return undefined;
        try {
          return JSON.parse(l);
        } catch {
          return undefined;
        }
      }, 10_000, `server child command "${line}"`);
      proc.stdin!.write(`${line}\n`);
      return answer;
    };
    return { proc, pid: proc.pid!, port: info.port, url, secret: info.secret, auth: { Authorization: `Bearer ${info.secret}` }, command, stop: () => stopProc(proc) };
  } catch (e) {
    await stopProc(proc);
    throw e;
  }
}

/** CPU time (ms, user + system) of a process from /proc/<pid>/stat; 0 when it is gone. */
export function cpuMsOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // utime, stime in clock ticks (USER_HZ 100)
  } catch {
    return 0;
  }
}

/**
 * Which process a pid is: the server, this bench process (client), or one of its Chromium
 * processes by its --type (`chromium renderer (extensions)`, `chromium renderer`, `chromium browser` …).
 */
export function processGroups(serverPid: number): Map<number, string> {
  const parent = new Map<number, number>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      parent.set(Number(d), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {}
  }
  const out = new Map<number, string>([[process.pid, 'client'], [serverPid, 'server']]);
  const isOurs = (pid: number): boolean => {
    for (let p = pid, i = 0; p > 1 && i < 20; p = parent.get(p) ?? 0, i++) if (p === process.pid) return true;
    return false;
  };
  for (const pid of parent.keys()) {
    if (out.has(pid) || !isOurs(pid)) continue;
    let cmd = '';
    try {
      cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {}
    if (!cmd.includes('chrom')) continue;
    const type = cmd.includes('--extension-process') ? 'renderer (extensions)' : /--type=([a-z-]+)/.exec(cmd)?.[1];
    const sub = /--utility-sub-type=([\w.]+)/.exec(cmd)?.[1];
    out.set(pid, `chromium ${type ? (sub ? `${type} ${sub.replace(/^.*\./, '')}` : type) : 'browser'}`);
  }
  return out;
}

/** CPU ms spent by each group while `fn` runs. */
export async function cpuDuring(groups: Map<number, string>, fn: () => Promise<unknown>): Promise<Record<string, number>> {
  const before = new Map([...groups.keys()].map((pid) => [pid, cpuMsOf(pid)]));
  await fn();
  const out: Record<string, number> = {};
  for (const [pid, g] of groups) out[g] = (out[g] ?? 0) + cpuMsOf(pid) - before.get(pid)!;
  return out;
}
