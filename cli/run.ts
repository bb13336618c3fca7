/**
 * The CLI: find the command, run it, turn failures into one line on stderr and an exit code (0 ok,
 * 1 failure, 2 usage). Commands are imported lazily so `opentabs tool call` does not load the
 * server. Entered through cli/main.ts, which runs `opentabs start` from the start-up bundle.
 */
import { CliError, EXIT_FAILURE, EXIT_USAGE, ce, err, nodeStreamsUsed, out, say } from './output.ts';
import type { Command } from './command.ts';
import { closestWords, keepsArguments } from './typo.ts';
import { shellWord } from './self.ts';
import { VERSION } from '../server/version.ts';
import { resolveConfigDir } from '../server/protocol/local-files.ts';

const COMMANDS: Record<string, { summary: string; load: () => Promise<Command> }> = {
  start: { summary: 'Start the server (foreground, or --background)', load: async () => (await import('./commands/start.ts')).command },
  stop: { summary: 'Stop the running server', load: async () => (await import('./commands/stop.ts')).command },
  status: { summary: 'Server, extension, plugin and tab status', load: async () => (await import('./commands/status.ts')).command },
  tool: { summary: 'List, inspect and call tools (CLI mode)', load: async () => (await import('./commands/tool.ts')).command },
  plugin: { summary: 'List, install, add, remove, configure, create and build plugins', load: async () => (await import('./commands/plugin.ts')).command },
  config: { summary: 'Show and change configuration; rotate the secret', load: async () => (await import('./commands/config.ts')).command },
  approvals: { summary: 'List tool calls waiting for your approval', load: async () => (await import('./commands/approve.ts')).approvalsCommand },
  approve: { summary: 'Allow a call waiting for approval (as the side panel does)', load: async () => (await import('./commands/approve.ts')).approveCommand },
  deny: { summary: 'Refuse a call waiting for approval', load: async () => (await import('./commands/approve.ts')).denyCommand },
  audit: { summary: 'Tool invocation history', load: async () => (await import('./commands/audit.ts')).command },
  logs: { summary: 'Server log (and plugin log lines)', load: async () => (await import('./commands/logs.ts')).command },
  doctor: { summary: 'Check the installation and explain how to fix problems', load: async () => (await import('./commands/doctor.ts')).command },
  mcp: { summary: 'Stdio MCP server bridging to the running server', load: async () => (await import('./commands/mcp.ts')).command },
  setup: { summary: 'Configure an AI client (opencode)', load: async () => (await import('./commands/setup.ts')).command },
};

function topHelp(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((k) => k.length));
  return [
    `opentabs ${VERSION} — a bridge between AI agents (MCP) and the web apps open in your browser`,
    '',
    'Usage: opentabs <command> [options]',
    '',
    'Commands:',
    ...Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`),
    '',
    'Run `opentabs <command> --help` for a command\'s options.',
    'Environment: OPENTABS_CONFIG_DIR (state dir, default ~/.opentabs), PORT (default: the port this config',
    "dir's server last ran on, else 9515), NO_COLOR.",
  ].join('\n');
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    err(topHelp());
    return EXIT_USAGE;
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    say(topHelp());
    return 0;
  }
  if (name === '--version' || name === '-v' || name === '-V' || name === 'version') {
    out(VERSION);
    return 0;
  }
  const entry = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!entry && name.startsWith('-')) {
    // `opentabs --port 9600 status`: options belong to the command, after it.
    const at = rest.findIndex((a) => Object.hasOwn(COMMANDS, a));
    let fixed = '';
    if (at >= 0 && !rest.some((a) => a.includes('`'))) {
      const command = rest[at]!;
      const before = [name, ...rest.slice(0, at)];
      const after = rest.slice(at + 1);
      // A group's subcommand stays right after the group (`tool list --json`).
      const sub = Object.hasOwn(GROUP_SUBCOMMANDS, command) && GROUP_SUBCOMMANDS[command]!.includes(after[0] ?? '') ? [after.shift()!] : [];
      fixed = [command, ...sub, ...before, ...after].map(shellWord).join(' ');
    }
    err(`${ce.red('error:')} unknown option "${name}" before the command.${fixed ? ` Options go after the command: \`opentabs ${fixed}\`.` : ''} Run \`opentabs --help\` for the list of commands.`);
    return EXIT_USAGE;
  }
  if (!entry) {
    err(`${ce.red('error:')} unknown command "${name}".${meant(name, rest)} Run \`opentabs --help\` for the list.`);
    return EXIT_USAGE;
  }
  const command = await entry.load();
  if (rest.length === 1 && (rest[0] === '--help' || rest[0] === '-h')) {
    say(command.help);
    return 0;
  }
  return command.run(rest);
}

/** Subcommands of the command groups, for `opentabs list` → `opentabs tool list` or `opentabs plugin list`. */
const GROUP_SUBCOMMANDS: Record<string, string[]> = {
  tool: ['list', 'schema', 'call'],
  plugin: ['list', 'install', 'add', 'remove', 'configure', 'create', 'build'],
  config: ['show', 'set', 'secret', 'rotate-secret'],
  setup: ['opencode'],
};

/** " Did you mean `opentabs start`?" for a mistyped command or a subcommand given without its group; "" when nothing fits. */
function meant(typed: string, rest: string[]): string {
  const name = typed.toLowerCase();
  let close = closestWords(name, Object.keys(COMMANDS));
  if (close.length === 0) {
    close = Object.entries(GROUP_SUBCOMMANDS)
      .filter(([, subs]) => subs.includes(name))
      .map(([group]) => `${group} ${name}`);
  }
  // One candidate: the whole command line again with it, so it runs as the user meant it.
  const tail = close.length === 1 && keepsArguments(typed) && !rest.some((a) => a.includes('`')) ? rest.map((a) => ` ${shellWord(a)}`).join('') : '';
  return close.length ? ` Did you mean ${close.map((c) => `\`opentabs ${c}${tail}\``).join(' or ')}?` : '';
}

/** Run the CLI and exit with its code (unless the command keeps running: start, mcp, logs -f). */
export async function runCli(argv: string[]): Promise<void> {
  try {
    const code = await main(argv);
    // Long-running commands resolve to -1 and keep the process alive; start resolves once its
    // server has stopped.
    if (code >= 0) await flushAndExit(code);
  } catch (e) {
    if (e instanceof CliError) {
      err(`${ce.red('error:')} ${e.shown}`);
      await flushAndExit(e.exitCode);
    } else if (isFileRefusal(e)) {
      err(`${ce.red('error:')} ${fileRefusalMessage(e)}`);
      await flushAndExit(EXIT_FAILURE);
    } else {
      err(`${ce.red('error:')} ${(e as Error)?.stack ?? String(e)}`);
      await flushAndExit(EXIT_FAILURE);
    }
  }
}

/**
 * Errno codes of a file system that refuses a write or a read: permissions, a read-only or full
 * disk, a file where a folder must be (or the other way round).
 */
const FILE_REFUSALS = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOSPC', 'EDQUOT', 'ENOTDIR', 'EEXIST', 'EISDIR']);

function isFileRefusal(e: unknown): e is Error & { code: string; path?: string } {
  return e instanceof Error && FILE_REFUSALS.has(String((e as { code?: unknown }).code));
}

/**
 * A refused file operation in one line (no stack trace: the cause is the file system, not a bug),
 * with what to do when the file is in the config dir and the message does not say it already.
 */
function fileRefusalMessage(e: Error & { code: string; path?: string }): string {
  if (e.message.includes('OPENTABS_CONFIG_DIR')) return e.message;
  const dir = resolveConfigDir();
  const inConfigDir = typeof e.path === 'string' && (e.path === dir || e.path.startsWith(`${dir}/`) || e.path.startsWith(`${dir}\\`));
  if (!inConfigDir) return e.message;
  const why =
    e.code === 'ENOSPC' || e.code === 'EDQUOT'
      ? 'the disk is full'
      : e.code === 'EROFS'
        ? 'it is on a read-only file system'
        : e.code === 'EACCES' || e.code === 'EPERM'
          ? 'you cannot write to it'
          : 'a file or folder is in the way';
  return `${e.message}\nThe config dir ${dir} cannot be used: ${why}. Fix that, or set OPENTABS_CONFIG_DIR to a folder you can write.`;
}

/**
 * Exit with the code. The CLI's own output is written synchronously (cli/output.ts); a command
 * that wrote through process.stderr (the status line on a terminal) waits for it to drain.
 */
async function flushAndExit(code: number): Promise<never> {
  if (nodeStreamsUsed() && process.stderr.writableNeedDrain) await new Promise<void>((resolve) => process.stderr.once('drain', () => resolve()));
  process.exit(code);
}
