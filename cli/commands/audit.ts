/** `opentabs audit`: tool invocation history from GET /audit, or the on-disk log with --file. */
import { existsSync } from 'node:fs';
import { NotRegularFileError, readRegularFileSync } from '../../server/protocol/regular-file.ts';
import { join } from 'node:path';
import { AUDIT_QUERY_DEFAULT_LIMIT, AUDIT_QUERY_MAX_LIMIT } from '../../server/limits.ts';
import type { AuditEntry } from '../../server/state/audit.ts';
import { parse, parseBool, parsePositiveInt } from '../args.ts';
import type { Command } from '../command.ts';
import { CliError, c, err, oneLine, out, printJson, printable, table, usageError } from '../output.ts';
import { api, configDir, notRunningMessage, resolveTarget } from '../server-client.ts';

const HELP = `Usage: opentabs audit [--limit N] [--plugin P] [--tool T] [--success true|false] [--json] [--file]
                      [--port N]

Tool invocations, newest first: time, tool, result, how the user answered a call that asked
(allowed, always allowed, denied), duration and the error of failures.

Options:
  --limit N            How many entries (default ${AUDIT_QUERY_DEFAULT_LIMIT}; at most ${AUDIT_QUERY_MAX_LIMIT} from the server, any with --file)
  --plugin P           Only this plugin ("browser" for built-in tools)
  --tool T             Only this tool (full name, e.g. slack_send_message)
  --success true|false Only successes or only failures
  --file               Read the full on-disk log (audit.log.1 + audit.log, and the calls the user
                       answered from audit-decisions.log) instead of the server's last ${AUDIT_QUERY_MAX_LIMIT};
                       works without a running server and survives restarts
  --json               Print the entries as a JSON array
  --port N             Server port`;

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
    if (values.help) return (out(HELP), 0);
    if (positionals.length > 0) throw usageError(`Unexpected argument "${positionals[0]}".`, 'audit');
    const limit =
      values.limit !== undefined
        ? parsePositiveInt(values.limit, '--limit', 'audit', values.file ? Number.MAX_SAFE_INTEGER : AUDIT_QUERY_MAX_LIMIT)
        : AUDIT_QUERY_DEFAULT_LIMIT;
    const success = values.success !== undefined ? parseBool(values.success, '--success', 'audit') : undefined;
    const filter = { limit, plugin: values.plugin, tool: values.tool, success };

    let entries: AuditEntry[];
    if (values.file) {
      entries = readAuditFiles(configDir(), filter);
    } else {
      const t = resolveTarget(values.port, 'audit');
      const q = new URLSearchParams({ limit: String(limit) });
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
        entries = readAuditFiles(t.configDir, filter);
      }
    }
    if (values.json) {
      printJson(entries);
      return 0;
    }
    if (entries.length === 0) {
      out('No tool invocations recorded' + (filter.plugin || filter.tool || success !== undefined ? ' that match the filters.' : '.'));
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
    return 0;
  },
};

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
  const matched = all.filter(
    (e) =>
      (f.plugin === undefined || e.plugin === f.plugin) &&
      (f.tool === undefined || e.tool === f.tool) &&
      (f.success === undefined || e.success === f.success),
  );
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
