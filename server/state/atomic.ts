/**
 * Atomic file writes: a reader (or a crash) sees either the old file or the new one, never a
 * half-written one. Temp file next to the target (same filesystem, so rename is atomic),
 * created with the final mode so a secret is never briefly world-readable, fsynced, renamed.
 */
import { closeSync, fchmodSync, fsyncSync, linkSync, lstatSync, openSync, renameSync, rmSync, writeSync, constants } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { FILE_MODE } from './paths.ts';
import { close, fchmod, fsync, open, rename, rm, writeAll } from './fs-async.ts';
import { NotRegularFileError } from '../protocol/regular-file.ts';

let tempCount = 0;

/**
 * Temp files are `.<name>.<hex>.tmp` beside the target; never a name a reader would open. The hex
 * is this process's pid, the time and a counter: unique among writers (server and CLI) without
 * the CSPRNG, whose first use costs ≈ 2 ms, which every start paid for its pid file. They are
 * created with O_EXCL, so a clash fails instead of writing into another writer's file.
 */
export function tempPathFor(path: string): string {
  const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');
  return join(dirname(path), `.${basename(path)}.${hex(process.pid, 8)}${hex(Date.now(), 12)}${hex(tempCount++ & 0xffff, 4)}.tmp`);
}

const CREATE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL;

/**
 * Create `path` holding `text` only if nothing is there (no file, no link), complete or not at
 * all: written to a temp file (tempPathFor), then hard-linked to its name, which fails when another
 * process made it first. True when this call created it, false when the name was taken meanwhile,
 * null when the filesystem has no hard links (the caller falls back to a plain atomic write).
 */
export function createFileOnceSync(path: string, text: string, mode: number = FILE_MODE): boolean | null {
  const tmp = tempPathFor(path);
  const fd = openSync(tmp, CREATE_FLAGS, mode);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(tmp, path);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EEXIST' ? false : null;
  } finally {
    rmSync(tmp, { force: true });
  }
}

/**
 * A rename onto a folder fails (EISDIR; ENOTEMPTY or EEXIST on some systems): the error then names
 * the file and what to do (NotRegularFileError), not the temp file's rename. A folder planted at
 * extension/auth.json or server.pid stopped the server with "EISDIR: illegal operation on a
 * directory, rename '…/.auth.json.….tmp' -> …".
 */
function renameError(err: unknown, path: string): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  if (code !== 'EISDIR' && code !== 'ENOTEMPTY' && code !== 'EEXIST' && code !== 'ENOTDIR') return err;
  try {
    if (lstatSync(path).isDirectory()) return new NotRegularFileError(path, 'a folder', true);
  } catch {}
  return err;
}

export async function writeFileAtomic(path: string, data: string | Uint8Array, mode: number = FILE_MODE): Promise<void> {
  const tmp = tempPathFor(path);
  let fd: number | undefined;
  try {
    fd = await open(tmp, CREATE_FLAGS, mode);
    await fchmod(fd, mode); // exact mode regardless of umask
    await writeAll(fd, data);
    await fsync(fd);
    const closing = fd;
    fd = undefined;
    await close(closing);
    await rename(tmp, path);
  } catch (err) {
    if (fd !== undefined) await close(fd).catch(() => {});
    await rm(tmp, { force: true }).catch(() => {});
    throw renameError(err, path);
  }
}

/**
 * `durable: false` skips the fsync, for files that mean nothing after a crash (the pid file): the
 * rename still makes the write atomic for readers.
 */
export function writeFileAtomicSync(path: string, data: string | Uint8Array, mode: number = FILE_MODE, opts: { durable?: boolean } = {}): void {
  const tmp = tempPathFor(path);
  let fd: number | undefined;
  try {
    fd = openSync(tmp, CREATE_FLAGS, mode);
    fchmodSync(fd, mode); // exact mode regardless of umask
    const buf = typeof data === 'string' ? Buffer.from(data) : data;
    let off = 0;
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
    if (opts.durable !== false) fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(tmp, path);
  } catch (err) {
    if (fd !== undefined) {
      try {
        closeSync(fd);
      } catch {}
    }
    rmSync(tmp, { force: true });
    throw renameError(err, path);
  }
}
