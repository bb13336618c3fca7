/**
 * Opening the files of the config dir (config.json, extension/auth.json, server.pid, server.log,
 * audit.log) only when they are regular files. Something else in a file's place — a named pipe
 * (FIFO), a socket, a device, a folder, or a link to one — would otherwise hold the opener: open()
 * of a FIFO waits for its other end for good (the server never started, `opentabs audit --file`
 * and `opentabs logs` never returned), and reading /dev/zero never ends. Files are opened
 * non-blocking, then their type is checked on the descriptor, so nothing waits and nothing is
 * read from what is not a regular file.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, type Stats } from 'node:fs';

/** 0 where the platform has no O_NONBLOCK (Windows has no FIFOs in the file system either). */
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;

/** What a file system entry is, in words ("a named pipe (FIFO)"). */
export function fileKind(st: Stats): string {
  if (st.isFIFO()) return 'a named pipe (FIFO)';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isDirectory()) return 'a folder';
  if (st.isSymbolicLink()) return 'a symbolic link';
  return 'not a regular file';
}

/** `path` holds something other than a regular file; `kind` says what (fileKind). */
export class NotRegularFileError extends Error {
  readonly code = 'ENOTREG';
  constructor(
    readonly path: string,
    readonly kind: string,
    readonly isFolder = false,
  ) {
    super(`${path} is ${kind}, not a regular file: OpenTabs neither reads nor writes it. Remove it and try again.`);
  }
}

function kindAt(path: string): { kind: string; isFolder: boolean } {
  try {
    const st = lstatSync(path);
    return { kind: fileKind(st), isFolder: st.isDirectory() };
  } catch {
    return { kind: 'not a regular file', isFolder: false };
  }
}

/**
 * openSync(path, flags, mode) for a regular file only: a NotRegularFileError naming what is there
 * otherwise (without waiting on a FIFO). Other errors (ENOENT, ELOOP with O_NOFOLLOW) are
 * openSync's own.
 */
export function openRegularSync(path: string, flags: number, mode?: number): number {
  let fd: number;
  try {
    fd = openSync(path, flags | O_NONBLOCK, mode);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // ENXIO: a socket, or a FIFO opened for writing that no one reads. EISDIR: a folder opened for writing.
    if (code === 'ENXIO' || code === 'EISDIR' || code === 'EOPNOTSUPP') {
      const { kind, isFolder } = kindAt(path);
      throw new NotRegularFileError(path, kind, isFolder);
    }
    throw err;
  }
  let st: Stats;
  try {
    st = fstatSync(fd);
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  if (!st.isFile()) {
    closeSync(fd);
    throw new NotRegularFileError(path, fileKind(st), st.isDirectory());
  }
  return fd;
}

/** The whole of a regular file at `path`, as text (readFileSync's errors, or NotRegularFileError). */
export function readRegularFileSync(path: string): string {
  return readRegularFileBytesSync(path).toString('utf8');
}

/** The whole of a regular file at `path`, as bytes (readFileSync's errors, or NotRegularFileError). */
export function readRegularFileBytesSync(path: string): Buffer {
  const fd = openRegularSync(path, constants.O_RDONLY);
  try {
    const chunks: Buffer[] = [];
    let size = Math.max(fstatSync(fd).size, 0);
    for (;;) {
      const buf = Buffer.allocUnsafe(Math.max(size, 64 * 1024));
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      chunks.push(buf.subarray(0, n));
      size = 0;
    }
    return Buffer.concat(chunks);
  } finally {
    closeSync(fd);
  }
}
