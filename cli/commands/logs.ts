/**
 * `opentabs logs`: the server's log file (server.log, JSON lines) printed readably, optionally
 * followed; with --plugin, only lines about that plugin — and, while following a running server,
 * the plugin's own log entries as the server publishes them over MCP logging.
 */
import { closeSync, constants, existsSync, fstatSync, readSync, statSync } from 'node:fs';
import { NotRegularFileError, openRegularSync } from '../../server/protocol/regular-file.ts';
import { join } from 'node:path';
import { parse, parsePositiveInt } from '../args.ts';
import type { Command } from '../command.ts';
import { CliError, c, err, literal, out, printable, usageError, say } from '../output.ts';
import { api, configDir, probePort, requireVerifiedServer, resolveTarget, secretFor, verifiedClientFetch } from '../server-client.ts';

const HELP = `Usage: opentabs logs [-f] [-n N] [--plugin P] [--json] [--port N]

Print the server log (<config dir>/server.log), oldest first.

Options:
  -f, --follow      Keep printing new lines (Ctrl-C to stop); follows log rotation
  -n, --lines N     How many lines of history to print first (default 50)
  --plugin P        Only lines about plugin P, then P's own recent log entries (debug/info/
                    warn/error from its adapter) kept by the running server; with -f, new
                    entries as they arrive
  --json            Print the raw JSON lines (a line of plain text, such as the start banner of a
                    --background server, as {"level":"info","event":"output","text":…})
  --port N          Server port (for --plugin)`;

const FOLLOW_POLL_MS = 250;

export const command: Command = {
  name: 'logs',
  summary: 'Logs',
  help: HELP,
  async run(argv) {
    const { values, positionals } = parse(
      argv,
      {
        follow: { type: 'boolean', short: 'f' },
        lines: { type: 'string', short: 'n' },
        plugin: { type: 'string' },
        json: { type: 'boolean' },
        port: { type: 'string' },
      },
      'logs',
    );
    if (values.help) return (say(HELP), 0);
    if (positionals.length > 0) throw usageError(`Unexpected argument "${positionals[0]}".`, 'logs');
    const lines = values.lines !== undefined ? parsePositiveInt(values.lines, '--lines', 'logs') : 50;
    const dir = configDir();
    const path = join(dir, 'server.log');
    const show = (line: string) => {
      if (!line.trim()) return;
      if (values.plugin && !mentionsPlugin(line, values.plugin)) return;
      out(values.json ? jsonLine(line) : formatLine(line));
    };

    let offset = 0;
    if (existsSync(path)) {
      const text = readFrom(path, 0);
      offset = Buffer.byteLength(text);
      const all = text.split('\n').filter((l) => l.trim() && (!values.plugin || mentionsPlugin(l, values.plugin)));
      for (const l of all.slice(-lines)) out(values.json ? jsonLine(l) : formatLine(l));
    } else if (!values.follow) {
      err(`No server log yet (${path}); it is written once the server has started.`);
      return 0;
    }
    // The plugin's own recent log entries, kept by the running server.
    if (values.plugin) await printBufferedPluginLogs(values.port, values.plugin, lines, Boolean(values.json));
    if (!values.follow) return 0;

    if (values.plugin) void followPluginLogs(values.port, values.plugin, Boolean(values.json));
    let partial = '';
    // Poll: simple, works across rotation (server.log renamed to server.log.1 and recreated).
    setInterval(() => {
      if (!existsSync(path)) return;
      const st = statSync(path);
      if (!st.isFile()) return;
      const size = st.size;
      if (size < offset) offset = 0;
      if (size === offset) return;
      const chunk = readFrom(path, offset);
      offset += Buffer.byteLength(chunk);
      const parts = (partial + chunk).split('\n');
      partial = parts.pop() ?? '';
      for (const l of parts) show(l);
    }, FOLLOW_POLL_MS);
    return -1;
  },
};

function readFrom(path: string, offset: number): string {
  let fd: number;
  try {
    // Not a FIFO or a device another program put there: opening or reading one would never end.
    fd = openRegularSync(path, constants.O_RDONLY);
  } catch (e) {
    if (e instanceof NotRegularFileError) throw new CliError(e.message);
    throw e;
  }
  try {
    const size = fstatSync(fd).size;
    if (size <= offset) return '';
    const buf = Buffer.alloc(size - offset);
    const n = readSync(fd, buf, 0, buf.length, offset);
    return buf.subarray(0, n).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/**
 * A server.log line for --json: as written when it is a JSON object; otherwise (the text a server
 * started with --background printed, which goes to the same file) as {"level":"info","event":"output","text":…},
 * so every line of the output parses as JSON.
 */
export function jsonLine(line: string): string {
  try {
    const o = JSON.parse(line) as unknown;
    if (o !== null && typeof o === 'object' && !Array.isArray(o)) return printable(line);
  } catch {
    // Not JSON: wrapped below.
  }
  return printable(JSON.stringify({ level: 'info', event: 'output', text: line }));
}

function mentionsPlugin(line: string, plugin: string): boolean {
  try {
    const o = JSON.parse(line) as Record<string, unknown>;
    return o.plugin === plugin || o.name === plugin || (typeof o.tool === 'string' && o.tool.startsWith(`${plugin}_`)) || line.includes(`"${plugin}"`);
  } catch {
    return line.includes(plugin);
  }
}

/**
 * One field of a log line on one terminal line: line feeds and tabs as \n and \t, other control
 * characters as \uXXXX (printable), so text that reached the log (an extension's error message,
 * a close reason) cannot print a line of its own that looks like the server's.
 */
const oneField = (s: string): string => printable(s.replace(/\n/g, '\\n').replace(/\t/g, '\\t'));

/** `2026-… INFO  listening url=… pid=…` from a server.log JSON line (non-JSON lines shown escaped). */
export function formatLine(line: string): string {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(line);
  } catch {
    return oneField(line);
  }
  if (!o || typeof o !== 'object') return oneField(line);
  const { ts, level, event, ...fields } = o;
  const lvl = oneField(String(level ?? 'info').toUpperCase().padEnd(5));
  const painted = level === 'error' ? c.red(lvl) : level === 'warn' ? c.yellow(lvl) : c.dim(lvl);
  const rest = Object.entries(fields)
    .map(([k, v]) => `${oneField(k)}=${oneField(typeof v === 'string' ? v : JSON.stringify(v) ?? String(v))}`)
    .join(' ');
  return `${c.dim(oneField(String(ts ?? '')))} ${painted} ${oneField(String(event ?? ''))}${rest ? ` ${rest}` : ''}`;
}

interface PluginLogEntry {
  level: string;
  message: string;
  data?: unknown;
  ts: number;
}

const formatPluginEntry = (plugin: string, e: PluginLogEntry, json: boolean) =>
  json
    ? printable(JSON.stringify({ ts: new Date(e.ts).toISOString(), source: 'plugin', plugin, level: e.level, message: e.message, data: e.data }))
    : `${c.dim(new Date(e.ts).toISOString())} ${c.cyan(`[${plugin}]`)} ${printable(e.level.toUpperCase().padEnd(5))} ${printable(e.message)}${e.data === undefined ? '' : ` ${printable(JSON.stringify(e.data))}`}`;

/** GET /plugins/:name/logs from a running server (when none runs, a note on stderr says so). */
async function printBufferedPluginLogs(portFlag: string | undefined, plugin: string, lines: number, json: boolean): Promise<void> {
  const t = resolveTarget(portFlag, 'logs');
  if ((await probePort(t.port)).kind !== 'opentabs') {
    err(`(no OpenTabs server is running on ${t.url}: only the server.log lines about "${plugin}" are shown; the plugin's own log entries are kept by the running server)`);
    return;
  }
  const r = await api<{ logs: PluginLogEntry[] }>(t, 'GET', `/plugins/${encodeURIComponent(plugin)}/logs`, { okStatuses: [404], timeoutMs: 5000 });
  if (r.status === 404) {
    err(`(no plugin "${plugin}" is loaded in the running server, so it has no plugin log)`);
    return;
  }
  for (const e of r.body.logs.slice(-lines)) out(formatPluginEntry(plugin, e, json));
}

/** Live plugin log entries: the server forwards them to MCP sessions as notifications/message. */
async function followPluginLogs(portFlag: string | undefined, plugin: string, json: boolean): Promise<void> {
  const t = resolveTarget(portFlag, 'logs');
  if ((await probePort(t.port)).kind !== 'opentabs') return;
  try {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    const { LoggingMessageNotificationSchema } = await import('@modelcontextprotocol/sdk/types.js');
    const secret = secretFor(t.configDir);
    if (secret) await requireVerifiedServer(t, secret);
    const client = new Client({ name: 'opentabs-logs', version: '1' });
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      const { level, logger, data } = n.params;
      if (logger !== plugin && !(typeof logger === 'string' && logger.startsWith(`${plugin}`))) return;
      // The page wrote this text: escape sequences in it are shown, never sent to the terminal.
      if (json) out(printable(JSON.stringify({ ts: new Date().toISOString(), source: 'plugin', plugin, level, data })));
      else out(`${c.dim(new Date().toISOString())} ${c.cyan(`[${plugin}]`)} ${printable(String(level).toUpperCase().padEnd(5))} ${printable(typeof data === 'string' ? data : (JSON.stringify(data) ?? String(data)))}`);
    });
    await client.connect(
      // Its client reopens the event stream by itself when the server goes away: each request is
      // checked first and carries the client token (live log lines are MCP). Only the initialize,
      // sent once right after a check, carries the secret: the user's session then comes from the
      // user's own share of new sessions, which agents cannot use up.
      new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), { fetch: verifiedClientFetch(t, { userInitialize: true }) }),
    );
    await client.setLoggingLevel('debug').catch(() => {});
  } catch (e) {
    // The server's (or the connection's) words, printed as they are.
    err(`(live plugin logs unavailable: ${literal((e as Error).message)})`);
  }
}
