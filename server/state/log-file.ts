/**
 * Opening the log files of the config dir (server.log, audit.log) without following a symbolic
 * link. A link planted in a log's place (audit.log → ~/.bashrc) would otherwise have every line
 * appended to its target. Such a link is removed — only the link, its target is not touched —
 * and a regular file is created in its place, with one line on stderr naming it: the logs keep
 * being written, so planting a link cannot switch the audit trail off either. A named pipe, a
 * socket or a device node in a log's place is removed the same way (opening a FIFO to write
 * waited for a reader for good: the server never started); a folder there is an error naming it.
 */
import { closeSync, constants, fstatSync, ftruncateSync, lstatSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { FILE_MODE } from './paths.ts';
import { NotRegularFileError, openRegularSync } from '../protocol/regular-file.ts';

/** 0 where the platform has no O_NOFOLLOW (the lstat check below still applies). */
export const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const APPEND_FLAGS = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | O_NOFOLLOW;

function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/** A descriptor appending to `path`, a regular file (created with `mode` when missing), never a link's target. */
export function openLogForAppend(path: string, mode: number = FILE_MODE): number {
  let what = 'a symbolic link';
  let detail = ' (its target is left as it was)';
  try {
    if (!isSymlink(path)) return openRegularSync(path, APPEND_FLAGS, mode);
  } catch (err) {
    if (err instanceof NotRegularFileError) {
      if (err.isFolder) throw err;
      what = err.kind;
      detail = '';
    } else if (!isSymlink(path)) throw err;
  }
  unlinkSync(path);
  console.error(`opentabs: ${path} was ${what}; removed it${detail} and writing to a new file there`);
  // One retry: a link or pipe planted again in between makes this open fail and throw.
  return openRegularSync(path, APPEND_FLAGS, mode);
}

/**
 * Writes all of `buf` to `fd` (opened for appending), or none of it. A full disk can take the
 * first bytes of a line and refuse the rest: the line would stay cut in the file, and the next
 * line appended once there is room again would run on from it, so that neither parses. On a
 * failure after part of it was written, those bytes are cut off the end again, then the error is
 * thrown.
 */
export function appendWhole(fd: number, buf: Uint8Array): void {
  let off = 0;
  try {
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
  } catch (err) {
    if (off > 0) {
      try {
        ftruncateSync(fd, Math.max(0, fstatSync(fd).size - off));
      } catch {}
    }
    throw err;
  }
}

/** Appends `data` to `path` through openLogForAppend, whole or not at all (appendWhole). */
export function appendToLog(path: string, data: string | Uint8Array, mode: number = FILE_MODE): void {
  const buf = typeof data === 'string' ? Buffer.from(data) : data;
  const fd = openLogForAppend(path, mode);
  try {
    appendWhole(fd, buf);
  } finally {
    closeSync(fd);
  }
}

/**
 * Renames `path` to `path.1`. A folder another program put at `path.1` makes the rename fail for
 * good: the entries then go on being appended to `path` (past its size) rather than being lost,
 * with a line on stderr naming the folder.
 */
const warnedRotation = new Set<string>();
export function rotateTo(path: string): void {
  try {
    renameSync(path, `${path}.1`);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EISDIR' && code !== 'ENOTEMPTY' && code !== 'EEXIST' && code !== 'ENOTDIR') throw err;
    if (!warnedRotation.has(path)) console.error(`opentabs: cannot rotate ${path}: ${path}.1 is a folder; remove it. Entries are appended to ${path} meanwhile`);
    warnedRotation.add(path);
  }
}
