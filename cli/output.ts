/**
 * Terminal output for the CLI: colour only on a TTY and never with NO_COLOR, data on stdout,
 * messages and errors on stderr, and one error type that carries the exit code.
 */
import { runnableCommands } from '../server/cli-command.ts';

/** Suggested commands in CLI output run as printed (see server/cli-command.ts). */
export { runnableCommands };

/** Exit codes: 0 ok, 1 failure (server/tool/problem), 2 usage error (bad flags or arguments). */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** A failure the CLI reports as one line on stderr (no stack trace) with this exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    public readonly exitCode: number = EXIT_FAILURE,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** Usage error: exit code 2 and a hint to the command's --help. */
export function usageError(message: string, command?: string): CliError {
  const hint = command ? `\nRun \`opentabs ${command} --help\` for usage.` : '';
  return new CliError(`${message}${hint}`, EXIT_USAGE);
}

function colourEnabled(stream: NodeJS.WriteStream): boolean {
  // https://no-color.org: any non-empty NO_COLOR disables colour.
  if (process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== '') return false;
  if (process.env.FORCE_COLOR !== undefined && process.env.FORCE_COLOR !== '0') return true;
  return Boolean(stream.isTTY);
}

/** The stream is looked up when text is painted: touching process.stdout at import costs start-up time. */
function paint(code: string, stream: () => NodeJS.WriteStream) {
  return (s: string) => (colourEnabled(stream()) ? `\x1b[${code}m${s}\x1b[0m` : s);
}

const stdout = () => process.stdout;
const stderr = () => process.stderr;

/** Colours for stdout text. */
export const c = {
  bold: paint('1', stdout),
  dim: paint('2', stdout),
  red: paint('31', stdout),
  green: paint('32', stdout),
  yellow: paint('33', stdout),
  cyan: paint('36', stdout),
};

/** Colours for stderr text. */
export const ce = {
  bold: paint('1', stderr),
  red: paint('31', stderr),
  yellow: paint('33', stderr),
  dim: paint('2', stderr),
};

export function out(text = ''): void {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}

/** Messages and errors on stderr are the CLI's own text: suggested commands made runnable. */
export function err(text: string): void {
  text = runnableCommands(text);
  process.stderr.write(text.endsWith('\n') ? text : `${text}\n`);
}

export function printJson(value: unknown): void {
  out(JSON.stringify(value, null, 2));
}

/** out() for the CLI's own messages (never for data such as tool results): suggested commands made runnable. */
export function say(text = ''): void {
  out(runnableCommands(text));
}

/** A plain text table: columns padded to the widest cell, last column unpadded. */
export function table(rows: string[][], header?: string[]): string {
  const all = header ? [header, ...rows] : rows;
  if (all.length === 0) return '';
  const widths: number[] = [];
  for (const row of all) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, visibleLength(cell))));
  const lines = all.map((row) =>
    row.map((cell, i) => (i === row.length - 1 ? cell : cell + ' '.repeat(widths[i] - visibleLength(cell)))).join('  '),
  );
  if (header) lines[0] = c.bold(lines[0]);
  return lines.join('\n');
}

function visibleLength(s: string): number {
  // eslint-disable-next-line no-control-regex
  return s.replace(/\x1b\[[0-9;]*m/g, '').length;
}

/** Shorten to one line of at most `max` characters. */
export function oneLine(s: string, max = 80): string {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** "1 tool", "3 tools". */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
