/**
 * Helpers for the CLI integration tests: run `bun cli/main.ts …` as a subprocess against a given
 * config dir (never the user's ~/.opentabs), bounded by a timeout, colour off.
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dir, '..', '..');
export const MAIN = join(ROOT, 'cli', 'main.ts');

const node = Bun.which('node');
/**
 * The command the CLI prints for itself when `opentabs` is not on PATH, as words: Node (its
 * absolute path) running the npm shim when Node is on PATH, else Bun with the flags that keep it
 * from reading the bunfig.toml and .env of the folder it is run in.
 */
export const PRINTED: string[] =
  node !== null && !/^bunx?(\.exe)?$/i.test(basename(realpathSync(node)))
    ? [node, join(ROOT, 'cli', 'bin.mjs')]
    : [process.execPath, '--no-env-file', `--config=${join(ROOT, 'cli', 'bun-run.toml')}`, MAIN];

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  configDir: string;
  cwd?: string;
  env?: Record<string, string | undefined>;
  stdin?: string;
  timeoutMs?: number;
  /** Run this executable instead of `bun cli/main.ts` (the compiled binary). */
  exe?: string[];
}

export function cliEnv(configDir: string, extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  delete env.PORT;
  delete env.FORCE_COLOR;
  delete env.OPENTABS_DANGEROUSLY_SKIP_PERMISSIONS;
  Object.assign(env, { OPENTABS_CONFIG_DIR: configDir, NO_COLOR: '1' });
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

export async function runCli(args: string[], o: RunOptions): Promise<CliResult> {
  const cmd = [...(o.exe ?? [process.execPath, MAIN]), ...args];
  const proc = Bun.spawn(cmd, {
    cwd: o.cwd ?? ROOT,
    env: cliEnv(o.configDir, o.env),
    stdin: o.stdin !== undefined ? new Blob([o.stdin]) : 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const timer = setTimeout(() => proc.kill('SIGKILL'), o.timeoutMs ?? 45_000);
  try {
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    return { code, stdout, stderr };
  } finally {
    clearTimeout(timer);
  }
}

export function tempDir(prefix = 'opentabs-cli-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** Is a pid alive (and not a zombie)? */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = require('node:fs').readFileSync(`/proc/${pid}/stat`, 'utf8') as string;
    return !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

/** Wait (bounded) until `fn` is true. */
export async function waitFor(fn: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await fn()) return;
    await Bun.sleep(50);
  }
  if (await fn()) return;
  throw new Error(`timed out waiting for ${what}`);
}

/** The JSON blocks of `opentabs start` config output: lines from "{" to the matching "}" at column 0. */
export function jsonBlocks(text: string): unknown[] {
  const out: unknown[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '{') continue;
    const end = lines.indexOf('}', i);
    if (end < 0) break;
    out.push(JSON.parse(lines.slice(i, end + 1).join('\n')));
    i = end;
  }
  return out;
}

/** Kill a server started by a test (by pid from server.pid), bounded. */
export async function killPid(pid: number): Promise<void> {
  if (!pidAlive(pid)) return;
  try {
    process.kill(pid, 'SIGTERM');
  } catch {}
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline && pidAlive(pid)) await Bun.sleep(50);
  if (pidAlive(pid)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  }
}

/** Collects a child's output stream in the background; `until` waits (bounded) for a pattern. */
export function collect(stream: ReadableStream<Uint8Array>): { text(): string; until(re: RegExp, timeoutMs: number): Promise<RegExpExecArray | null> } {
  let buf = '';
  const decoder = new TextDecoder();
  void (async () => {
    const reader = stream.getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += decoder.decode(value, { stream: true });
      }
    } catch {
      // The child went away; keep what we have.
    }
  })();
  return {
    text: () => buf,
    async until(re, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (!re.test(buf) && Date.now() < deadline) await Bun.sleep(25);
      return re.exec(buf);
    },
  };
}
