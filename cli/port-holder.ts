/**
 * Which process listens on a TCP port, for the messages about a port that is taken: on Linux from
 * /proc (the listening socket's inode in /proc/net/tcp{,6}, then the process whose fd is that
 * socket), elsewhere from `lsof` when it is installed. Only processes the user may inspect are
 * named; otherwise the message says which command finds the holder.
 */
import { existsSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { printable } from './output.ts';
import { probePort, type Target } from './port-probe.ts';
import { runnableArgv, shellWord } from './self.ts';

export interface PortHolder {
  pid: number;
  /** The process's command line (or its name), shortened, control characters shown as \uXXXX. */
  command: string;
  /** For an OpenTabs server: the config dir it runs with (OPENTABS_CONFIG_DIR, else HOME/.opentabs). */
  configDir?: string;
}

/** Longest command line shown. */
const COMMAND_MAX = 120;
/** Upper bound on the /proc/<pid>/fd entries read while looking for the socket. */
const FD_SCAN_MAX = 200_000;

/** The process listening on `port` (any local address), or null when it cannot be told cheaply. */
export function findPortHolder(port: number): PortHolder | null {
  try {
    if (process.platform === 'linux') return fromProc(port);
    if (process.platform === 'darwin' || process.platform === 'freebsd' || process.platform === 'openbsd') return fromLsof(port);
  } catch {
    // Best effort: the caller then says how to look it up.
  }
  return null;
}

/** How to find the holder by hand, for when findPortHolder could not. */
export function howToFindHolder(port: number): string {
  return process.platform === 'win32'
    ? `\`netstat -ano | findstr :${port}\` names its pid`
    : `\`lsof -nP -iTCP:${port} -sTCP:LISTEN\`${process.platform === 'linux' ? ` or \`ss -ltnp 'sport = :${port}'\`` : ''} names it (run with sudo if it belongs to another user)`;
}

/**
 * One phrase naming what holds the port: "pid 1234 (python3 -m http.server 9731)", or how to
 * find it. An OpenTabs server of another config dir is named with that config dir.
 */
export function describePortHolder(port: number): string {
  const h = findPortHolder(port);
  if (!h) return `what holds it: ${howToFindHolder(port)}`;
  return `pid ${h.pid} (${h.command})${h.configDir ? `, the OpenTabs server of config dir ${h.configDir}` : ''}`;
}

/**
 * The command that stops another config dir's OpenTabs server, written out in full (the config dir
 * in front, and the absolute command when `opentabs` is not on PATH).
 */
export function stopCommandFor(configDir: string): string {
  return `OPENTABS_CONFIG_DIR=${shellWord(configDir)} ${runnableArgv(['stop']).map(shellWord).join(' ')}`;
}

function fromProc(port: number): PortHolder | null {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // sl local_address rem_address st … uid timeout inode; st 0A is LISTEN.
      if (f.length < 10 || f[3] !== '0A') continue;
      const local = f[1]!;
      if (Number.parseInt(local.slice(local.lastIndexOf(':') + 1), 16) !== port) continue;
      if (f[9] !== '0') inodes.add(f[9]!);
    }
  }
  if (inodes.size === 0) return null;
  const wanted = new Set([...inodes].map((i) => `socket:[${i}]`));
  let read = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue; // another user's process, or gone
    }
    for (const fd of fds) {
      if (++read > FD_SCAN_MAX) return null;
      let target: string;
      try {
        target = readlinkSync(`/proc/${entry}/fd/${fd}`);
      } catch {
        continue;
      }
      if (wanted.has(target)) return describeProc(Number(entry));
    }
  }
  return null;
}

function describeProc(pid: number): PortHolder {
  let argv: string[] = [];
  try {
    argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter((a) => a !== '');
  } catch {}
  if (argv.length === 0) {
    try {
      argv = [readFileSync(`/proc/${pid}/comm`, 'utf8').trim()];
    } catch {}
  }
  const holder: PortHolder = { pid, command: shortCommand(argv) };
  if (looksLikeOpenTabs(argv)) {
    try {
      const env = new Map(
        readFileSync(`/proc/${pid}/environ`, 'utf8')
          .split('\0')
          .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)] as const),
      );
      const dir = env.get('OPENTABS_CONFIG_DIR')?.trim();
      let cwd: string | undefined;
      try {
        cwd = readlinkSync(`/proc/${pid}/cwd`);
      } catch {}
      if (dir) holder.configDir = cwd ? resolve(cwd, dir) : dir;
      else if (env.get('HOME')) holder.configDir = join(env.get('HOME')!, '.opentabs');
      // Printed and put into a command to paste: one with control or invisible characters is not named.
      if (holder.configDir !== undefined && printable(holder.configDir) !== holder.configDir) delete holder.configDir;
    } catch {}
  }
  return holder;
}

function fromLsof(port: number): PortHolder | null {
  const lsof = Bun.which('lsof') ?? ['/usr/sbin/lsof', '/usr/bin/lsof'].find((p) => existsSync(p));
  if (!lsof) return null;
  const r = Bun.spawnSync([lsof, '-nP', `-iTCP:${port}`, '-sTCP:LISTEN', '-Fpc'], { stdout: 'pipe', stderr: 'ignore', timeout: 3000 });
  const text = r.stdout.toString();
  const pid = Number(/^p(\d+)$/m.exec(text)?.[1]);
  if (!Number.isInteger(pid) || pid <= 0) return null;
  const name = /^c(.*)$/m.exec(text)?.[1] ?? '?';
  let argv = [name];
  const ps = Bun.spawnSync(['ps', '-o', 'command=', '-p', String(pid)], { stdout: 'pipe', stderr: 'ignore', timeout: 3000 });
  const full = ps.stdout.toString().trim();
  if (full) argv = full.split(/\s+/);
  return { pid, command: shortCommand(argv) };
}

/** Bun running cli/main.ts or cli/bin.mjs start, or a single-file `opentabs` binary. */
function looksLikeOpenTabs(argv: string[]): boolean {
  return argv.some((a) => /(^|\/)cli\/(main\.ts|bin\.mjs)$/.test(a) || /(^|\/)opentabs$/.test(a)) && argv.includes('start');
}

/** An argument that names a secret (`--token=…`, `API_KEY=…`). */
const SECRET_NAME = /token|secret|passw|api[-_]?key|bearer|credential|auth/i;
/** A value that looks like a key or token: a long run of letters, digits and + _ = - with a digit in it. */
const SECRET_VALUE = /(?=[A-Za-z0-9+_=-]*\d)[A-Za-z0-9+_=-]{24,}/;

/**
 * The command line as shown in a message, which may reach an agent reading the CLI's output or
 * an MCP client: arguments that look like secrets are replaced by …, whole or after their '='.
 */
function redact(arg: string): string {
  const eq = arg.indexOf('=');
  if (eq > 0 && SECRET_NAME.test(arg.slice(0, eq))) return `${arg.slice(0, eq + 1)}…`;
  // A path is not a secret (its folder names may be long).
  if (arg.includes('/')) return arg;
  return SECRET_NAME.test(arg) || SECRET_VALUE.test(arg) ? '…' : arg;
}

function shortCommand(argv: string[]): string {
  const text = printable(argv.map(redact).join(' ').replace(/\s+/g, ' ').trim()) || '?';
  return text.length > COMMAND_MAX ? `${text.slice(0, COMMAND_MAX - 1)}…` : text;
}

/** How many ports after a taken one are tried for a free one to suggest. */
const FREE_PORT_TRIES = 20;

/**
 * The command to run instead of a start on a taken port: `opentabs start --port N` with a port
 * found free just now (--port beats PORT), else --port 0 (the system picks one).
 */
export async function insteadOf(port: number, stopFirst = true): Promise<string> {
  const lead = stopFirst ? 'Stop that program, or start' : 'Or start';
  const p = await freePortAfter(port);
  if (p !== null) {
    return `${lead} OpenTabs on port ${p} (free just now): \`opentabs start --port ${p}\`; MCP client configs that name port ${port} then need port ${p}.`;
  }
  return `${lead} OpenTabs on a port the system picks: \`opentabs start --port 0\`.`;
}

/** A port after `port` that nothing listens on just now, or null. */
export async function freePortAfter(port: number): Promise<number | null> {
  for (let p = port + 1; p <= Math.min(65535, port + FREE_PORT_TRIES); p++) {
    if ((await probePort(p, 1000)).kind === 'free') return p;
  }
  return null;
}

/**
 * The fix for a port held by an OpenTabs server that is not this config dir's: the other config
 * dir's server when the holder is one (use it, or stop it), and a port found free for this
 * config dir's own.
 */
export async function otherServerFix(t: Target): Promise<string> {
  const holder = findPortHolder(t.port);
  const instead = await insteadOf(t.port, false);
  if (holder?.configDir && holder.configDir !== t.configDir) {
    return (
      `Port ${t.port} is held by pid ${holder.pid}, the OpenTabs server of config dir ${holder.configDir}: put OPENTABS_CONFIG_DIR=${shellWord(holder.configDir)} ` +
      `in front of commands to use it, or stop it: \`${stopCommandFor(holder.configDir)}\`. ${instead}`
    );
  }
  return `Use the OPENTABS_CONFIG_DIR that server was started with (it is ${describePortHolder(t.port)}). ${instead}`;
}
