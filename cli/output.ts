/**
 * Terminal output for the CLI: colour only on a TTY and never with NO_COLOR, data on stdout,
 * messages and errors on stderr, and one error type that carries the exit code.
 */
import { runnableCommands } from '../server/cli-command.ts';
import { escapedChar, printable, UNSHOWN } from '../server/shown-text.ts';

/** Suggested commands in CLI output run as printed (see server/cli-command.ts). */
export { runnableCommands };

/** Exit codes: 0 ok, 1 failure (server/tool/problem), 2 usage error (bad flags or arguments). */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/**
 * A failure the CLI reports as one line on stderr (no stack trace) with this exit code. The message
 * may hold literal() spans: `shown` keeps them for err(), `message` is the plain text.
 */
export class CliError extends Error {
  readonly shown: string;
  constructor(
    message: string,
    public readonly exitCode: number = EXIT_FAILURE,
  ) {
    super(withoutMarks(message));
    this.shown = message;
    this.name = 'CliError';
  }
}

/** Usage error: exit code 2 and a hint to the command's --help. */
export function usageError(message: string, command?: string): CliError {
  const hint = command ? `\nRun \`opentabs ${command} --help\` for usage.` : '';
  return new CliError(`${message}${hint}`, EXIT_USAGE);
}

/**
 * Whether fd 1 or 2 is a terminal, without touching process.stdout / process.stderr: Bun builds
 * those Node streams on first access, which loads node:stream and takes ≈ 15–20 ms (the whole of
 * a CLI command's own work, and main-thread time `opentabs start` would take from plugin
 * discovery). Bun's native tty binding answers in microseconds; the stream's isTTY is the fallback.
 */
export function isTerminal(fd: 1 | 2): boolean {
  try {
    const tty = (process as unknown as { binding(name: string): { isTTY?: (fd: number) => boolean } }).binding('tty_wrap');
    if (typeof tty.isTTY === 'function') return tty.isTTY(fd);
  } catch {
    // No such binding: ask the stream.
  }
  return Boolean((fd === 1 ? process.stdout : process.stderr).isTTY);
}

let streamsUsed = false;
/** process.stderr (built on first use); the CLI's exit then waits for it to drain. */
export function stderrStream(): NodeJS.WriteStream {
  streamsUsed = true;
  return process.stderr;
}

/** True once stderrStream() was used: something may still be queued on it. */
export function nodeStreamsUsed(): boolean {
  return streamsUsed;
}

function colourEnabled(fd: 1 | 2): boolean {
  // https://no-color.org: any non-empty NO_COLOR disables colour.
  if (process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== '') return false;
  if (process.env.FORCE_COLOR !== undefined && process.env.FORCE_COLOR !== '0') return true;
  return isTerminal(fd);
}

/** Decided when text is painted (NO_COLOR may be set after this module loads). */
function paint(code: string, fd: 1 | 2) {
  return (s: string) => (colourEnabled(fd) ? `\x1b[${code}m${s}\x1b[0m` : s);
}

/** Colours for stdout text. */
export const c = {
  bold: paint('1', 1),
  dim: paint('2', 1),
  red: paint('31', 1),
  green: paint('32', 1),
  yellow: paint('33', 1),
  cyan: paint('36', 1),
};

/** Colours for stderr text. */
export const ce = {
  bold: paint('1', 2),
  red: paint('31', 2),
  yellow: paint('33', 2),
  dim: paint('2', 2),
};

/** printable(): the one reading of untrusted text shown on a terminal (server/shown-text.ts). */
export { printable };

/** The colour sequences paint() writes: the only escape sequences the CLI's output carries. */
const OWN_SGR = /\x1b\[(?:0|1|2|31|32|33|36)m/y;

/**
 * What out() and err() write: printable(), except for the CLI's own colours (bold, dim, red,
 * green, yellow, cyan, reset). Untrusted text that reaches a message without printable() still
 * cannot move the cursor, erase, retitle, link or write the clipboard, hide or reorder text.
 */
export function terminalText(s: string): string {
  return s.replace(UNSHOWN, (ch, at: number) => {
    if (ch === '\x1b') {
      OWN_SGR.lastIndex = at;
      if (OWN_SGR.test(s)) return ch;
    }
    return escapedChar(ch);
  });
}

/**
 * Data and messages on stdout go out through console.log: in Bun it writes synchronously (a slow
 * pipe reader gets everything even when the process exits right after), prints a single string
 * argument as is (no % formatting, no colour of its own), ends quietly at a closed pipe (`| head`)
 * instead of an EPIPE crash, and does not build Node's stdout stream (see isTerminal).
 */
export function out(text = ''): void {
  text = terminalText(text);
  console.log(text.endsWith('\n') ? text.slice(0, -1) : text);
}

/**
 * Marks around text the CLI did not write (a page's or a plugin's error, a progress message, an
 * answer from the server, a tool call's arguments): err() and say() make the CLI's own suggested
 * commands runnable (runnableCommands), never a backticked `opentabs …` inside these marks. Two
 * C0 controls, so nothing shown ever carries them (terminalText writes a stray one as \u0002).
 */
const LITERAL_START = '\u0002';
const LITERAL_END = '\u0003';
// eslint-disable-next-line no-control-regex
const LITERAL_SPAN = /\u0002([^\u0002\u0003]*)\u0003/g;

/**
 * `s` for err(), say() or a CliError message, printed as it is: its backticked commands are not
 * rewritten into the CLI's own runnable form. Marks already inside `s` are dropped, so the whole of
 * it stays one literal span (a message from literal() text put in literal() again, or marks the
 * text brought itself to end the span early).
 */
export function literal(s: string): string {
  // eslint-disable-next-line no-control-regex
  return `${LITERAL_START}${s.replace(/[\u0002\u0003]/g, '')}${LITERAL_END}`;
}

/** The CLI's own message: runnableCommands() on its text outside literal() spans, and the marks taken out. */
export function ownText(text: string): string {
  if (!text.includes(LITERAL_START)) return runnableCommands(text);
  let result = '';
  let from = 0;
  for (const m of text.matchAll(LITERAL_SPAN)) {
    result += runnableCommands(text.slice(from, m.index)) + m[1];
    from = m.index + m[0].length;
  }
  return result + runnableCommands(text.slice(from));
}

/** `text` with the marks of its literal() spans taken out (nothing rewritten). */
export function withoutMarks(text: string): string {
  return text.includes(LITERAL_START) ? text.replace(LITERAL_SPAN, '$1') : text;
}

/** Messages and errors on stderr are the CLI's own text: suggested commands made runnable, except in literal() spans. */
export function err(text: string): void {
  text = terminalText(ownText(text));
  writeStderr(text.endsWith('\n') ? text : `${text}\n`);
}

/**
 * Straight to fd 2 with one synchronous write (Bun leaves stdio blocking), not console.error,
 * which paints the whole line red on a terminal, nor process.stderr (see isTerminal). What a
 * non-blocking or full pipe does not take goes through process.stderr, and so does everything once
 * that stream is in use, to keep the order; a closed pipe ends the text quietly.
 */
function writeStderr(text: string): void {
  if (!streamsUsed) {
    const bytes = Buffer.from(text);
    let written = 0;
    try {
      written = (require('node:fs') as typeof import('node:fs')).writeSync(2, bytes);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EPIPE') return;
    }
    if (written >= bytes.length) return;
    text = bytes.subarray(written).toString();
  }
  stderrStream().write(text);
}

export function printJson(value: unknown): void {
  // JSON escapes C0 controls itself; out() escapes the rest of what a terminal would not simply
  // show as \uXXXX, which is the same JSON.
  out(JSON.stringify(value, null, 2));
}

/** out() for the CLI's own messages (never for data such as tool results): suggested commands made runnable, except in literal() spans. */
export function say(text = ''): void {
  out(ownText(text));
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
