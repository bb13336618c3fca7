/**
 * Promise forms of the node:fs calls the server makes, over node:fs's callback API. Bun builds
 * node:fs/promises (and node:util, for promisify) as modules of their own, ≈ 3 ms of loading on
 * every `opentabs start` and every CLI command that reads state; node:fs is loaded anyway. Errors
 * are node:fs's own (with `code`, e.g. ENOENT), as from node:fs/promises.
 */
import * as fs from 'node:fs';

type Done<T> = (err: NodeJS.ErrnoException | null, value: T) => void;

function call<T>(start: (done: Done<T>) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => start((err, value) => (err ? reject(err) : resolve(value))));
}

export const readFile = (path: string, encoding: BufferEncoding): Promise<string> => call<string>((d) => fs.readFile(path, encoding, d));
export const stat = (path: string): Promise<fs.Stats> => call<fs.Stats>((d) => fs.stat(path, d));
export const realpath = (path: string): Promise<string> => call<string>((d) => fs.realpath(path, d));
export const readdir = (path: string): Promise<string[]> => call<string[]>((d) => fs.readdir(path, d));
export const mkdir = (path: string, opts: fs.MakeDirectoryOptions & { recursive: true }): Promise<string | undefined> =>
  call<string | undefined>((d) => fs.mkdir(path, opts, d));
export const chmod = (path: string, mode: number): Promise<void> => call<void>((d) => fs.chmod(path, mode, (err) => d(err, undefined)));
export const rename = (from: string, to: string): Promise<void> => call<void>((d) => fs.rename(from, to, (err) => d(err, undefined)));
export const rm = (path: string, opts: fs.RmOptions): Promise<void> => call<void>((d) => fs.rm(path, opts, (err) => d(err, undefined)));

/** File descriptors, for what needs one open across several calls (atomic writes, reading a file's end). */
export const open = (path: string, flags: string | number, mode?: number): Promise<number> => call<number>((d) => fs.open(path, flags, mode, d));
export const fstat = (fd: number): Promise<fs.Stats> => call<fs.Stats>((d) => fs.fstat(fd, d));
export const fchmod = (fd: number, mode: number): Promise<void> => call<void>((d) => fs.fchmod(fd, mode, (err) => d(err, undefined)));
export const fsync = (fd: number): Promise<void> => call<void>((d) => fs.fsync(fd, (err) => d(err, undefined)));
export const close = (fd: number): Promise<void> => call<void>((d) => fs.close(fd, (err) => d(err, undefined)));
/** Reads `length` bytes at `position` into `buf` from `offset`; resolves with the bytes read. */
export const read = (fd: number, buf: Uint8Array, offset: number, length: number, position: number): Promise<number> =>
  call<number>((d) => fs.read(fd, buf, offset, length, position, (err, n) => d(err, n)));

/** Writes all of `data` (a short write is continued). */
export async function writeAll(fd: number, data: string | Uint8Array): Promise<void> {
  const buf = typeof data === 'string' ? Buffer.from(data) : data;
  let off = 0;
  while (off < buf.length) off += await call<number>((d) => fs.write(fd, buf, off, buf.length - off, null, (err, n) => d(err, n)));
}
