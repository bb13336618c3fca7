/** `opentabs stop`: SIGTERM the pid in server.pid and wait until it is gone. */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from '../args.ts';
import type { Command } from '../command.ts';
import { CliError, err, out } from '../output.ts';
import { configDir, isAlive, probePort, readPidFile } from '../server-client.ts';

const HELP = `Usage: opentabs stop [--force]

Stop the OpenTabs server whose pid is in <config dir>/server.pid (SIGTERM, then wait until the
process is gone; SIGKILL if it has not exited after ${'10'}s). Says so and exits 0 when no server is
running.

Options:
  --force      Signal the pid even if its port does not answer as an OpenTabs server
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
      out(HELP);
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
    // Guard against a recycled pid: the port recorded with it must answer as our server.
    if (!values.force && info.port > 0 && (await probePort(info.port)).kind !== 'opentabs') {
      throw new CliError(
        `Process ${info.pid} from ${pidPath} is alive but nothing answers as OpenTabs on port ${info.port}; ` +
          'it may be another program that reused the pid. Use `opentabs stop --force` to signal it anyway.',
      );
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

async function waitGone(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await Bun.sleep(50);
  }
  return !isAlive(pid);
}
