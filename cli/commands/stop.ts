/** `opentabs stop`: SIGTERM the pid in server.pid and wait until it is gone. */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from '../args.ts';
import type { Command } from '../command.ts';
import { CliError, err, out, say } from '../output.ts';
import { checkConfigServer, configDir, isAlive, probePort, readPidFile } from '../server-client.ts';

const HELP = `Usage: opentabs stop [--force]

Stop the OpenTabs server whose pid is in <config dir>/server.pid (SIGTERM, then wait until the
process is gone; SIGKILL if it has not exited after ${'10'}s). Says so and exits 0 when no server is
running.

Options:
  --force      Signal the pid even if its port does not answer as this config dir's server
  -h, --help   Show this help`;

const STOP_TIMEOUT_MS = 10_000;
const KILL_TIMEOUT_MS = 5_000;

export const command: Command = {
  name: 'stop',
  summary: 'Stop the server',
  help: HELP,
  async run(argv) {
    const { values, positionals } = parse(argv, { force: { type: 'boolean' } }, 'stop');
    if (values.help) {
      say(HELP);
      return 0;
    }
    if (positionals.length > 0) throw new CliError(`Unexpected argument "${positionals[0]}". Run \`opentabs stop --help\`.`, 2);
    const dir = configDir();
    const pidPath = join(dir, 'server.pid');
    const info = readPidFile(dir);
    if (!info) {
      out(`OpenTabs server is not running (no ${pidPath}).`);
      return 0;
    }
    if (!isAlive(info.pid)) {
      rmSync(pidPath, { force: true });
      out(`OpenTabs server is not running (removed stale ${pidPath} for pid ${info.pid}).`);
      return 0;
    }
    // Guard against a recycled pid (after a crash or a reboot it may be any program of the user):
    // the process on the port recorded with it must prove it knows this config dir's secret.
    // Answering GET /health with {"status":"ok"} proves nothing: any HTTP server can, and so does
    // an OpenTabs server of another config dir.
    if (!values.force && info.port > 0) {
      const why = await notThisServer(dir, info.port);
      if (why !== null) {
        const other = (await probePort(info.port)).kind === 'free' ? otherProgram(info.pid) : null;
        if (other !== null) {
          // The server died without removing its pid file (a crash, SIGKILL, a reboot) and its pid
          // went to another program: nothing to stop, and that program is not signalled.
          rmSync(pidPath, { force: true });
          out(`OpenTabs server is not running (removed stale ${pidPath}: pid ${info.pid} is now another program, ${other}).`);
          return 0;
        }
        throw new CliError(
          `Process ${info.pid} from ${pidPath} is alive but ${why}; ` +
            'it may be another program that reused the pid. Use `opentabs stop --force` to signal it anyway.',
        );
      }
    }
    process.kill(info.pid, 'SIGTERM');
    if (await waitGone(info.pid, STOP_TIMEOUT_MS)) {
      out(`Stopped OpenTabs server (pid ${info.pid}).`);
      return 0;
    }
    err(`Server (pid ${info.pid}) did not exit within ${STOP_TIMEOUT_MS / 1000}s; sending SIGKILL.`);
    try {
      process.kill(info.pid, 'SIGKILL');
    } catch {}
    if (await waitGone(info.pid, KILL_TIMEOUT_MS)) {
      rmSync(pidPath, { force: true });
      out(`Killed OpenTabs server (pid ${info.pid}).`);
      return 0;
    }
    throw new CliError(`Could not stop pid ${info.pid}.`);
  },
};

/** Null when this config dir's server answers on `port` (it proves it knows the secret), else why not. */
async function notThisServer(dir: string, port: number): Promise<string | null> {
  const r = await checkConfigServer(dir, port, 'pidfile');
  if (r === null) return `${join(dir, 'extension', 'auth.json')} holds no secret, so nothing on port ${port} can be shown to be this config dir's server`;
  if (r.kind === 'verified') return null;
  if (r.kind === 'unverified') return `the process on port ${port} is not this config dir's OpenTabs server (it ${r.why})`;
  return `nothing answers as OpenTabs on port ${port}`;
}

/**
 * The command line of a live pid when it is plainly not an OpenTabs server (read from Linux's
 * /proc), else null: it may be one (a server closes its port before it exits), or there is no
 * way to tell.
 */
function otherProgram(pid: number): string | null {
  let args: string[];
  try {
    args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return null;
  }
  if (args.length === 0) return null;
  const text = args.join(' ');
  // Every way the server runs: `bun …/cli/main.ts start`, `node …/cli/bin.mjs start`, the
  // single-file binary `opentabs start`, a process embedding the server.
  if (/opentabs|main\.ts|bin\.mjs|serve|bun|node/i.test(text)) return null;
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
}

async function waitGone(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await Bun.sleep(50);
  }
  return !isAlive(pid);
}
