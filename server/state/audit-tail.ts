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

const TAIL_CHUNK_BYTES = 64 * 1024;

/** Splits chunks read backwards from a file's end into lines, newest first. */
class LinesFromEnd {
  private carry = Buffer.alloc(0);
  constructor(private readonly visit: (line: string) => boolean) {}

  /** The chunk just before the previous one; false once `visit` asked to stop. */
  chunk(buf: Buffer): boolean {
    const data = Buffer.concat([buf, this.carry]);
    // Complete lines from the end; what precedes the first newline may be a partial line and is
    // carried into the next (earlier) chunk.
    let end = data.length;
    for (let i = data.length - 1; i >= 0; i--) {
      if (data[i] !== 0x0a) continue;
      const line = data.subarray(i + 1, end).toString('utf8');
      end = i;
      if (line.trim() !== '' && !this.visit(line)) return false;
    }
    this.carry = data.subarray(0, end);
    return true;
  }

  /** The start of the file was reached: what is carried is its first line. */
  finish(): void {
    const line = this.carry.toString('utf8');
    if (line.trim() !== '') this.visit(line);
  }
}

/**
 * Calls `visit` with each non-empty line, newest first, of the file's first `endOffset` bytes
 * (default: all of it), until `visit` returns false. A missing file has no lines.
 */
export async function forEachLineFromEnd(path: string, visit: (line: string) => boolean, endOffset?: number): Promise<void> {
  let fd: number;
  try {
    fd = await open(path, constants.O_RDONLY | O_NOFOLLOW);
  } catch (err) {
    // A symbolic link in the log's place (ELOOP) is not read: its target is some other file.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ELOOP') return;
    throw err;
  }
  try {
    const lines = new LinesFromEnd(visit);
    let pos = Math.min((await fstat(fd)).size, endOffset ?? Infinity);
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
    fd = openSync(path, constants.O_RDONLY | O_NOFOLLOW);
  } catch (err) {
    // A symbolic link in the log's place (ELOOP) is not read: its target is some other file.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ELOOP') return;
    throw err;
  }
  try {
    const lines = new LinesFromEnd(visit);
    let pos = Math.min(fstatSync(fd).size, endOffset ?? Infinity);
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
