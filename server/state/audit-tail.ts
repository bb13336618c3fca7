/**
 * Reading audit.log from its end: NDJSON lines newest first, in 64 KB steps, so a 10 MB log costs
 * a few reads when only its end is wanted. Used to refill the /audit ring when the server starts
 * (synchronously: a few hundred lines at most, read before the port is bound, where a thread-pool
 * round trip per read costs more than the read) and to count the last 24 hours after it started
 * (asynchronously: it can be 20 MB).
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { close, fstat, open, read } from './fs-async.ts';
import { O_NOFOLLOW } from './log-file.ts';

const O_NONBLOCK = constants.O_NONBLOCK ?? 0;
const NO_LINES = new Set(['ENOENT', 'ELOOP', 'ENXIO']);

const TAIL_CHUNK_BYTES = 64 * 1024;
/**
 * Longest line read. The server writes far shorter ones (audit.ts bounds every field of an
 * entry); a longer line (a file written by hand, or by a version that did not bound them) is
 * skipped without being put together: gathering a 20 MB line by copying it once per 64 KB read
 * held the start-up ≈ 24 s.
 */
export const MAX_LINE_BYTES = 1024 * 1024;

/** Splits chunks read backwards from a file's end into lines, newest first. */
class LinesFromEnd {
  /** The end of a line whose start lies in earlier chunks, in file order (each chunk is its own buffer). */
  private pieces: Buffer[] = [];
  private pieceBytes = 0;
  /** The line being gathered is over MAX_LINE_BYTES: its pieces are dropped until its start. */
  private overlong = false;
  constructor(private readonly visit: (line: string) => boolean) {}

  /** The chunk just before the previous one; false once `visit` asked to stop. */
  chunk(buf: Buffer): boolean {
    // Complete lines from the end; what precedes the first newline may be a partial line and is
    // held for the next (earlier) chunk.
    let end = buf.length;
    for (let i = buf.lastIndexOf(0x0a, end - 1); i >= 0; i = end > 0 ? buf.lastIndexOf(0x0a, end - 1) : -1) {
      if (!this.emit(buf.subarray(i + 1, end))) return false;
      end = i;
    }
    this.hold(buf.subarray(0, end));
    return true;
  }

  /** The start of the file was reached: what is held is its first line. */
  finish(): void {
    this.emit(Buffer.alloc(0));
  }

  private hold(part: Buffer): void {
    if (part.length === 0 || this.overlong) return;
    if (this.pieceBytes + part.length > MAX_LINE_BYTES) {
      this.overlong = true;
      this.pieces = [];
      this.pieceBytes = 0;
      return;
    }
    this.pieces.unshift(part);
    this.pieceBytes += part.length;
  }

  /** The line that starts with `head` and goes on with what is held; false once `visit` asked to stop. */
  private emit(head: Buffer): boolean {
    const skip = this.overlong || head.length + this.pieceBytes > MAX_LINE_BYTES;
    const parts = this.pieces.length === 0 ? [head] : [head, ...this.pieces];
    this.pieces = [];
    this.pieceBytes = 0;
    this.overlong = false;
    if (skip) return true;
    const line = (parts.length === 1 ? parts[0]! : Buffer.concat(parts)).toString('utf8');
    return line.trim() === '' || this.visit(line);
  }
}

/**
 * Calls `visit` with each non-empty line, newest first, of the file's first `endOffset` bytes
 * (default: all of it), until `visit` returns false. A missing file has no lines.
 */
export async function forEachLineFromEnd(path: string, visit: (line: string) => boolean, endOffset?: number): Promise<void> {
  let fd: number;
  try {
    fd = await open(path, constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (err) {
    // A symbolic link in the log's place (ELOOP) is not read: its target is some other file. A
    // socket there (ENXIO) has no lines either.
    if (NO_LINES.has((err as NodeJS.ErrnoException).code ?? '')) return;
    throw err;
  }
  try {
    const st = await fstat(fd);
    // A FIFO, socket or device in the log's place has no lines (reading a FIFO waits for a writer).
    if (!st.isFile()) return;
    const lines = new LinesFromEnd(visit);
    let pos = Math.min(st.size, endOffset ?? Infinity);
    while (pos > 0) {
      const len = Math.min(TAIL_CHUNK_BYTES, pos);
      pos -= len;
      const buf = Buffer.alloc(len);
      await read(fd, buf, 0, len, pos);
      if (!lines.chunk(buf)) return;
    }
    lines.finish();
  } finally {
    await close(fd);
  }
}

/** forEachLineFromEnd, synchronously. */
export function forEachLineFromEndSync(path: string, visit: (line: string) => boolean, endOffset?: number): void {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (err) {
    // A symbolic link in the log's place (ELOOP) is not read: its target is some other file. A
    // socket there (ENXIO) has no lines either.
    if (NO_LINES.has((err as NodeJS.ErrnoException).code ?? '')) return;
    throw err;
  }
  try {
    const st = fstatSync(fd);
    // A FIFO, socket or device in the log's place has no lines (reading a FIFO waits for a writer).
    if (!st.isFile()) return;
    const lines = new LinesFromEnd(visit);
    let pos = Math.min(st.size, endOffset ?? Infinity);
    while (pos > 0) {
      const len = Math.min(TAIL_CHUNK_BYTES, pos);
      pos -= len;
      const buf = Buffer.alloc(len);
      readSync(fd, buf, 0, len, pos);
      if (!lines.chunk(buf)) return;
    }
    lines.finish();
  } finally {
    closeSync(fd);
  }
}
