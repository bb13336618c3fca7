/** `opentabs audit`: tool invocation history from GET /audit, or the on-disk log with --file. */
import { existsSync } from 'node:fs';
import { NotRegularFileError, readRegularFileSync } from '../../server/protocol/regular-file.ts';
import { join } from 'node:path';
import { AUDIT_QUERY_DEFAULT_LIMIT, AUDIT_QUERY_MAX_LIMIT, AUDIT_RING_SIZE } from '../../server/limits.ts';
import type { AuditEntry } from '../../server/state/audit.ts';
import { parse, parseBool, parsePositiveInt } from '../args.ts';
import type { Command } from '../command.ts';
import { CliError, c, err, oneLine, out, printJson, printable, table, usageError, say } from '../output.ts';
import { shellWord } from '../self.ts';
import { api, configDir, notRunningMessage, resolveTarget } from '../server-client.ts';

const HELP = `Usage: opentabs audit [--limit N] [--plugin P] [--tool T] [--success true|false] [--json] [--file]
                      [--port N]

Tool invocations, newest first: time, tool, result, how the user answered a call that asked
(allowed, always allowed, denied), duration and the error of failures.

Options:
  --limit N            How many entries (default ${AUDIT_QUERY_DEFAULT_LIMIT}; at most ${AUDIT_QUERY_MAX_LIMIT} from the server, any with --file)
  --plugin P           Only this plugin ("browser" for built-in tools)
  --tool T             Only this tool (full name, e.g. slack_send_message; with --plugin slack,
                       send_message says the same)
  --success true|false Only successes or only failures
  --file               Read the full on-disk log (audit.log.1 + audit.log, and the calls the user
                       answered from audit-decisions.log) instead of the server's last ${AUDIT_QUERY_MAX_LIMIT};
                       works without a running server and survives restarts
  --json               Print the entries as a JSON array
  --port N             Server port`;

/**
 * --tool as the audit records it: a plugin tool's full name is `<plugin>_<tool>`, so with
 * --plugin P the tool's own name (as in `permission.P.<tool>`) means `P_<tool>`. Built-in tools
 * (plugin "browser": browser_*, extension_*, plugin_*) and page tools are named in full already.
 */
export function fullToolName(plugin: string | undefined, tool: string | undefined): string | undefined {
  if (tool === undefined || plugin === undefined || plugin === 'browser' || plugin.startsWith('page:')) return tool;
  return tool.startsWith(`${plugin}_`) ? tool : `${plugin}_${tool}`;
}

/** The ASKED column: how the user answered a call that asked for approval. */
const ASKED: Record<string, string> = { allowed: 'allowed', always: 'always allowed', denied: 'denied' };

export const command: Command = {
  name: 'audit',
  summary: 'Audit log',
  help: HELP,
  async run(argv) {
    const { values, positionals } = parse(
      argv,
      {
        limit: { type: 'string' },
        plugin: { type: 'string' },
        tool: { type: 'string' },
        success: { type: 'string' },
        json: { type: 'boolean' },
        file: { type: 'boolean' },
        port: { type: 'string' },
      },
      'audit',
    );
    if (values.help) return (say(HELP), 0);
    if (positionals.length > 0) throw usageError(`Unexpected argument "${positionals[0]}".`, 'audit');
    if (values.limit !== undefined && !values.file && /^\s*\d+\s*$/.test(values.limit) && Number(values.limit) > AUDIT_QUERY_MAX_LIMIT) {
      const n = String(Number(values.limit));
      throw usageError(
        `Invalid --limit ${JSON.stringify(values.limit)}: the server keeps the last ${AUDIT_QUERY_MAX_LIMIT} calls (--limit 1–${AUDIT_QUERY_MAX_LIMIT}); \`opentabs audit --file --limit ${n}\` reads the whole log on disk.`,
        'audit',
      );
    }
    const limit =
      values.limit !== undefined
        ? parsePositiveInt(values.limit, '--limit', 'audit', values.file ? Number.MAX_SAFE_INTEGER : AUDIT_QUERY_MAX_LIMIT)
        : AUDIT_QUERY_DEFAULT_LIMIT;
    const success = values.success !== undefined ? parseBool(values.success, '--success', 'audit') : undefined;
    const filter = { limit, plugin: values.plugin, tool: fullToolName(values.plugin, values.tool), success };

    // One more than asked for, to tell whether more calls match than are shown.
    const probe = { ...filter, limit: limit + 1 };
    let entries: AuditEntry[];
    let fromFile = values.file === true;
    let dir: string;
    if (values.file) {
      dir = configDir();
      entries = readAuditFiles(dir, probe);
    } else {
      const t = resolveTarget(values.port, 'audit');
      dir = t.configDir;
      const q = new URLSearchParams({ limit: String(Math.min(probe.limit, AUDIT_QUERY_MAX_LIMIT)) });
      if (filter.plugin) q.set('plugin', filter.plugin);
      if (filter.tool) q.set('tool', filter.tool);
      if (success !== undefined) q.set('success', String(success));
      try {
        const { body } = await api<unknown>(t, 'GET', `/audit?${q}`);
        entries = (Array.isArray(body) ? body : ((body as { entries?: AuditEntry[] })?.entries ?? [])) as AuditEntry[];
      } catch (e) {
        // No server: the log on disk holds the same entries (and more).
        if (!(e instanceof CliError && e.message === notRunningMessage(t)) || !existsSync(join(t.configDir, 'audit.log'))) throw e;
        err(`(no OpenTabs server is running on ${t.url}: entries from ${join(t.configDir, 'audit.log')}, as with --file)`);
        entries = readAuditFiles(t.configDir, probe);
        fromFile = true;
      }
    }
    // The server keeps the last AUDIT_RING_SIZE calls: all it has (or all of them that match the
    // filters) may still be fewer than the log on disk holds.
    const filtered = filter.plugin !== undefined || filter.tool !== undefined || success !== undefined;
    const more =
      entries.length > limit ||
      (!fromFile && (entries.length === AUDIT_QUERY_MAX_LIMIT || (filtered && !values.json && logOutgrewServer(dir))));
    entries = entries.slice(0, limit);
    if (values.json) {
      printJson(entries);
      return 0;
    }
    if (entries.length === 0) {
      out('No tool invocations recorded' + (filter.plugin || filter.tool || success !== undefined ? ' that match the filters.' : '.'));
      if (filter.tool && !filter.plugin) err(`(--tool takes the full name, as \`opentabs tool list\` shows it: <plugin>_<tool>)`);
      return 0;
    }
    out(
      table(
        entries.map((e) => [
          e.timestamp,
          e.tool,
          e.success ? c.green('ok') : c.red('failed'),
          ASKED[String(e.approval)] ?? '',
          `${e.durationMs}ms`,
          e.error ? printable(oneLine(`${e.error.code}: ${e.error.message}`, 80)) : '',
        ]),
        ['TIME', 'TOOL', 'RESULT', 'ASKED', 'DURATION', 'ERROR'],
      ),
    );
    const hint = more ? moreHint(dir, filter, fromFile, entries.length, values.port) : '';
    if (hint) err(hint);
    return 0;
  },
};

/**
 * What to run to see more than the `shown` newest calls: a larger --limit (up to the server's
 * AUDIT_QUERY_MAX_LIMIT), or --file with a limit that covers every matching call in the log on disk,
 * with the filters the user gave.
 */
function moreHint(
  dir: string,
  f: { plugin?: string; tool?: string; success?: boolean },
  fromFile: boolean,
  shown: number,
  port: string | undefined,
): string {
  // Matching calls in the whole log on disk, and among its last AUDIT_RING_SIZE calls (what the server keeps).
  let total: number | null = null;
  let kept: number | null = null;
  try {
    const all = readAuditFiles(dir, { limit: Number.MAX_SAFE_INTEGER });
    total = all.filter((e) => matches(e, f)).length;
    kept = all.slice(0, AUDIT_RING_SIZE).filter((e) => matches(e, f)).length;
  } catch {
    // An unreadable log: the counts are not known.
  }
  const filters = [
    ...(f.plugin !== undefined ? ['--plugin', f.plugin] : []),
    ...(f.tool !== undefined ? ['--tool', f.tool] : []),
    ...(f.success !== undefined ? ['--success', String(f.success)] : []),
  ];
  const cmd = (args: string[]) => `\`${['opentabs', 'audit', ...filters, ...args].map(shellWord).join(' ')}\``;
  if (total !== null && total <= shown) return '';
  const ways: string[] = [];
  if (!fromFile && shown < AUDIT_QUERY_MAX_LIMIT && (kept === null || kept > shown)) {
    const n = Math.min(AUDIT_QUERY_MAX_LIMIT, kept ?? AUDIT_QUERY_MAX_LIMIT);
    ways.push(`${cmd(['--limit', String(n), ...(port !== undefined ? ['--port', port] : [])])} shows ${n === total ? `all ${n}` : kept === null ? `up to ${n}` : `the ${n} among the last ${AUDIT_RING_SIZE} calls the server keeps`}`);
  }
  if (total === null) ways.push(`${cmd(['--file', '--limit', 'N'])} reads the whole log on disk`);
  else if (fromFile || kept === null || total > kept) ways.push(`${cmd(['--file', '--limit', String(total)])} shows all ${total} from the log on disk`);
  const serverKeeps = !fromFile && (shown >= AUDIT_QUERY_MAX_LIMIT || (kept !== null && kept <= shown)) ? `: the server keeps the last ${AUDIT_RING_SIZE}` : '';
  return `(the newest ${shown}${total !== null ? ` of ${total}` : ''} calls${serverKeeps}; ${ways.join(', ')})`;
}

/** True when the log on disk holds more calls than the server keeps (a rotated part, or more lines than AUDIT_RING_SIZE). */
function logOutgrewServer(dir: string): boolean {
  try {
    if (existsSync(join(dir, 'audit.log.1'))) return true;
    const text = readRegularFileSync(join(dir, 'audit.log'));
    let lines = 0;
    for (let at = text.indexOf('\n'); at !== -1 && lines <= AUDIT_RING_SIZE; at = text.indexOf('\n', at + 1)) lines++;
    return lines > AUDIT_RING_SIZE;
  } catch {
    return false;
  }
}

function matches(e: AuditEntry, f: { plugin?: string; tool?: string; success?: boolean }): boolean {
  return (f.plugin === undefined || e.plugin === f.plugin) && (f.tool === undefined || e.tool === f.tool) && (f.success === undefined || e.success === f.success);
}

/** The lines of one audit file, oldest first ([] when it is missing or not a regular file). */
function fileLines(path: string): string[] {
  if (!existsSync(path)) return [];
  let text: string;
  try {
    text = readRegularFileSync(path);
  } catch (e) {
    // A FIFO or a device in the log's place: opening or reading it would never end.
    if (!(e instanceof NotRegularFileError)) throw e;
    err(`(${e.message} Its entries are not shown.)`);
    return [];
  }
  return text.split('\n').filter((l) => l.trim() !== '');
}

function parseLine(line: string): AuditEntry | null {
  try {
    const e = JSON.parse(line) as AuditEntry;
    return e && typeof e.tool === 'string' && typeof e.timestamp === 'string' ? e : null;
  } catch {
    // A torn last line (crash mid-append) must not hide the rest.
    return null;
  }
}

/**
 * Entries from audit.log.1 then audit.log (NDJSON), with the calls the user answered that only
 * audit-decisions.log(.1) still holds (audit.log rotated them out) put back in time order;
 * filtered, newest first. Each entry once: a decision's line is in both files, the same bytes.
 * Bad lines are skipped.
 */
export function readAuditFiles(
  dir: string,
  f: { limit: number; plugin?: string; tool?: string; success?: boolean },
): AuditEntry[] {
  const main = [...fileLines(join(dir, 'audit.log.1')), ...fileLines(join(dir, 'audit.log'))];
  const inMain = new Map<string, number>();
  for (const l of main) inMain.set(l, (inMain.get(l) ?? 0) + 1);
  const onlyKept: string[] = [];
  for (const l of [...fileLines(join(dir, 'audit-decisions.log.1')), ...fileLines(join(dir, 'audit-decisions.log'))]) {
    const n = inMain.get(l) ?? 0;
    if (n > 0) inMain.set(l, n - 1);
    else onlyKept.push(l);
  }
  const toEntries = (lines: string[]) => lines.map(parseLine).filter((e): e is AuditEntry => e !== null);
  const all = mergeByTime(toEntries(onlyKept), toEntries(main));
  const matched = all.filter((e) => matches(e, f));
  return matched.reverse().slice(0, f.limit);
}

/** Two lists each in time order, as one (ties and unreadable times: `a` first). */
function mergeByTime(a: AuditEntry[], b: AuditEntry[]): AuditEntry[] {
  const out: AuditEntry[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const ta = Date.parse(a[i]!.timestamp);
    const tb = Date.parse(b[j]!.timestamp);
    out.push(Number.isFinite(tb) && ta > tb ? b[j++]! : a[i++]!);
  }
  while (i < a.length) out.push(a[i++]!);
  while (j < b.length) out.push(b[j++]!);
  return out;
}
