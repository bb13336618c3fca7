/**
 * server.log: one JSON line per lifecycle event or request error. Secrets never reach it:
 * fields with secret-like names are redacted and bearer tokens / 64-hex strings are masked.
 * Appends are synchronous: events are rare, and a line must survive a crash right after it.
 */
import { lstatSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { printable } from '../shown-text.ts';
import { NotRegularFileError } from '../protocol/regular-file.ts';
import { appendToLog, rotateTo } from './log-file.ts';

export type LogLevel = 'info' | 'warn' | 'error';

const SECRET_KEY_RE = /secret|token|authorization|password|cookie|api[-_]?key/i;
const HEX64_RE = /\b[0-9a-f]{64}\b/gi;
const BEARER_RE = /(Bearer\s+)\S+/gi;
/** server.log rotates to server.log.1 past this size. */
const SERVER_LOG_ROTATE_BYTES = 5 * 1024 * 1024;

export function redact(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return value.replace(BEARER_RE, '$1[redacted]').replace(HEX64_RE, '[redacted]');
  if (depth > 4 || value === null || typeof value !== 'object') return value;
  if (value instanceof Error) return redact(value.message, depth + 1);
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = SECRET_KEY_RE.test(k) ? '[redacted]' : redact(v, depth + 1);
  return out;
}

export class ServerLog {
  private size = -1;
  /** Last write failure (a full disk must not take the server down). */
  lastError: string | null = null;

  constructor(readonly path: string) {}

  /**
   * Throws NotRegularFileError (naming the file, and to remove it) when a folder is at server.log:
   * no line could be written there, and the server would run without its log, saying nothing. The
   * server checks this at start, as audit.log's folder stops it. (A link, pipe or socket there is
   * replaced by a regular file on the first write: log-file.ts.)
   */
  assertWritable(): void {
    let folder = false;
    try {
      folder = lstatSync(this.path).isDirectory();
    } catch {}
    if (folder) throw new NotRegularFileError(this.path, 'a folder', true);
  }

  info(event: string, fields: object = {}): void {
    this.write('info', event, fields);
  }
  warn(event: string, fields: object = {}): void {
    this.write('warn', event, fields);
  }
  error(event: string, fields: object = {}): void {
    this.write('error', event, fields);
  }

  private write(level: LogLevel, event: string, fields: object): void {
    // printable: the same JSON, with nothing a terminal would obey, reorder or hide (cat, tail -f).
    const line =
      printable(JSON.stringify({ ts: new Date().toISOString(), level, event: String(event), ...(redact(fields) as object) })) + '\n';
    try {
      if (this.size < 0) {
        mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
        try {
          this.size = lstatSync(this.path).size;
        } catch {
          this.size = 0;
        }
      }
      if (this.size > 0 && this.size + line.length > SERVER_LOG_ROTATE_BYTES) {
        // A folder at server.log.1 leaves the lines in server.log rather than losing every one after it.
        rotateTo(this.path);
        this.size = lstatSync(this.path, { throwIfNoEntry: false })?.size ?? 0;
      }
      appendToLog(this.path, line, 0o600);
      this.size += Buffer.byteLength(line);
      this.lastError = null;
    } catch (err) {
      const message = (err as Error).message;
      // Said once on stderr (the terminal, or the log file a background server was started with),
      // not each line: the lines themselves are lost until the file can be written again.
      if (message !== this.lastError) console.error(`opentabs: server.log lines are not written: ${message}`);
      this.lastError = message;
    }
  }

  /** Appends are synchronous, so there is nothing buffered; kept for the lifecycle contract. */
  async flush(): Promise<void> {}
}
