/**
 * Reading audit.log from its end: NDJSON lines newest first, in 64 KB steps, so a 10 MB log costs
 * a few reads when only its end is wanted. Used to refill the /audit ring and to count the last
 * 24 hours at start-up.
 */
import { close, fstat, open, read } from './fs-async.ts';

const TAIL_CHUNK_BYTES = 64 * 1024;

/**
 * Calls `visit` with each non-empty line, newest first, of the file's first `endOffset` bytes
 * (default: all of it), until `visit` returns false. A missing file has no lines.
 */
export async function forEachLineFromEnd(path: string, visit: (line: string) => boolean, endOffset?: number): Promise<void> {
  let fd: number;
  try {
    fd = await open(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  try {
    const { size } = await fstat(fd);
    let pos = Math.min(size, endOffset ?? size);
    let carry = Buffer.alloc(0);
    while (pos > 0) {
      const len = Math.min(TAIL_CHUNK_BYTES, pos);
      pos -= len;
      const buf = Buffer.alloc(len);
      await read(fd, buf, 0, len, pos);
      const data = Buffer.concat([buf, carry]);
      // Complete lines from the end; what precedes the first newline may be a partial line and is
      // carried into the next (earlier) chunk.
      let end = data.length;
      for (let i = data.length - 1; i >= 0; i--) {
        if (data[i] !== 0x0a) continue;
        const line = data.subarray(i + 1, end).toString('utf8');
        end = i;
        if (line.trim() !== '' && !visit(line)) return;
      }
      carry = data.subarray(0, end);
    }
    if (carry.length > 0) {
      const line = carry.toString('utf8');
      if (line.trim() !== '') visit(line);
    }
  } finally {
    await close(fd);
  }
}
