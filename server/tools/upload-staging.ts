/**
 * browser_upload_file hands Chrome copies, not the user's files. Chrome opens a path itself, at
 * DOM.setFileInputFiles and again whenever the page reads the File (lazily: at a form's submit,
 * minutes later), following links. A path checked by the server (upload-guard.ts) could be swapped
 * by whoever can write in the allowed folder — a sandboxed agent — for a link to auth.json or
 * ~/.ssh/id_ed25519 between the check and Chrome's read. So the server opens each checked file
 * once (a final link refused, O_NOFOLLOW), makes sure the open file is the one it checked (fstat:
 * a regular file with one name, the same device and inode; on Linux also where the open file
 * really lies), copies its bytes, scanning them for the secret and the client token, into
 * <config dir>/upload-staging/<random>/<the file's name> (folders 0700, files 0600, created
 * exclusively), and Chrome gets those paths: files nobody else can write, under the name the page
 * should see.
 *
 * The copies stay as long as a page may read them: a folder older than UPLOAD_STAGING_KEEP_MS is
 * removed at start-up and every UPLOAD_STAGING_SWEEP_MS, and all of them when the server stops.
 */
import { randomBytes } from 'node:crypto';
import { constants, readlinkSync, rmSync } from 'node:fs';
import { chmod, lstat, mkdir, open, readdir, rm, type FileHandle } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { OpenTabsError } from '../errors.ts';
import { UPLOAD_STAGING_DIR, UPLOAD_STAGING_MAX_BYTES } from '../limits.ts';
import { checkUploadPath, hardLinkError, heldSecretError, NeedleScan, placeError, SCAN_CHUNK_BYTES, secretsOf, uploadRules, type UploadRules } from './upload-guard.ts';

/** How long a copy is kept: a page reads a chosen file when it submits, which may be much later. */
export const UPLOAD_STAGING_KEEP_MS = 24 * 60 * 60 * 1000;
/** How often copies older than that are removed while the server runs. */
export const UPLOAD_STAGING_SWEEP_MS = 60 * 60 * 1000;

export function uploadStagingRoot(configDir: string): string {
  return join(configDir, UPLOAD_STAGING_DIR);
}

const MiB = 1024 * 1024;
const sizeText = (bytes: number) => (bytes >= MiB ? `${Math.round((bytes / MiB) * 10) / 10} MB` : `${bytes} bytes`);

/** The staging folder, made 0700 if missing; refused when something else (a link) stands in its place. */
async function stagingRoot(configDir: string): Promise<string> {
  const root = uploadStagingRoot(configDir);
  await mkdir(root, { mode: 0o700 }).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
  });
  const st = await lstat(root);
  if (!st.isDirectory()) throw new OpenTabsError('internal', `${root} is not a folder; remove it so that uploads can be copied there`, { category: 'internal' });
  // mkdir's mode is masked by umask and ignored for a folder that exists already.
  if ((st.mode & 0o777) !== 0o700) await chmod(root, 0o700);
  return root;
}

/** Where an open file really lies, as the kernel says (Linux); null where there is no way to ask. */
function openFilePath(fd: number): string | null {
  if (process.platform !== 'linux') return null;
  try {
    return readlinkSync(`/proc/self/fd/${fd}`).replace(/ \(deleted\)$/, '');
  } catch {
    return null;
  }
}

/**
 * Open the checked file without following a final link, and make sure it is the file that was
 * checked: a regular file with one name, the same device and inode, and (Linux) lying where the
 * rules allow (a folder of the path swapped for a link after the check leads elsewhere).
 */
async function openChecked(rules: UploadRules, p: string, checked: { target: string; dev: number; ino: number }): Promise<FileHandle> {
  let fh: FileHandle;
  try {
    // O_NONBLOCK: a FIFO put in the file's place must not hold the call (it is refused just below).
    fh = await open(checked.target, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw changedError(p, 'became a symbolic link');
    if (code === 'ENOENT') throw changedError(p, 'was removed');
    throw new OpenTabsError('permission_denied', `Cannot read "${p}" (${code ?? String(err)})`, { category: 'auth' });
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw changedError(p, 'is no longer a regular file');
    if (st.nlink > 1) throw hardLinkError(p, st.nlink);
    if (st.dev !== checked.dev || st.ino !== checked.ino) throw changedError(p, 'was replaced by another file');
    const where = openFilePath(fh.fd);
    if (where !== null && where !== checked.target) {
      const refused = placeError(rules, p, where);
      if (refused) throw refused;
    }
    return fh;
  } catch (err) {
    await fh.close().catch(() => {});
    throw err;
  }
}

function changedError(p: string, what: string): OpenTabsError {
  return new OpenTabsError('permission_denied', `"${p}" ${what} while it was being checked; it was not uploaded. Try again once nothing changes it.`, { category: 'auth' });
}

/**
 * Copy one open file into `dest` (created exclusively, 0600), scanning the bytes as they are
 * copied. Returns how many bytes it copied; refuses past `budget`.
 */
async function copyScanned(rules: UploadRules, p: string, src: FileHandle, dest: string, budget: number, maxBytes: number): Promise<number> {
  const out = await open(dest, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0), 0o600);
  try {
    const scan = new NeedleScan(secretsOf(rules));
    const buf = Buffer.alloc(SCAN_CHUNK_BYTES);
    let copied = 0;
    for (;;) {
      const { bytesRead } = await src.read(buf, 0, buf.length, null);
      if (bytesRead <= 0) break;
      copied += bytesRead;
      // The file grew since its size was added up.
      if (copied > budget) throw tooLargeError(maxBytes);
      const piece = buf.subarray(0, bytesRead);
      const held = scan.feed(piece);
      if (held !== null) throw heldSecretError(rules, p, held);
      let off = 0;
      while (off < bytesRead) off += (await out.write(piece, off, bytesRead - off)).bytesWritten;
    }
    // Exactly 0600 whatever the umask.
    await out.chmod(0o600);
    return copied;
  } finally {
    await out.close().catch(() => {});
  }
}

function tooLargeError(maxBytes: number, total?: number): OpenTabsError {
  const size = total === undefined ? 'more than that' : sizeText(total);
  return new OpenTabsError(
    'invalid_arguments',
    `The files of one browser_upload_file call may hold ${sizeText(maxBytes)} in all; these hold ${size}. Upload fewer or smaller files per call.`,
    { category: 'validation', path: '/paths' },
  );
}

/**
 * Check the files again as they are now and copy them into the staging folder: the paths Chrome
 * should be given, in the same order, each named as the original. Throws OpenTabsError (nothing is
 * left staged then).
 */
export async function stageUploads(configDir: string, paths: readonly string[], uploadFolders: readonly string[] = [], maxBytes = UPLOAD_STAGING_MAX_BYTES): Promise<string[]> {
  const rules = uploadRules(configDir, uploadFolders);
  const opened: { p: string; fh: FileHandle; size: number }[] = [];
  const made: string[] = [];
  try {
    for (const p of paths) {
      const checked = checkUploadPath(rules, p);
      if (checked instanceof OpenTabsError) throw checked;
      const fh = await openChecked(rules, p, checked);
      const entry = { p, fh, size: 0 };
      opened.push(entry);
      entry.size = (await fh.stat()).size;
    }
    const total = opened.reduce((n, f) => n + f.size, 0);
    if (total > maxBytes) throw tooLargeError(maxBytes, total);
    const root = await stagingRoot(configDir);
    const staged: string[] = [];
    let budget = maxBytes;
    for (const { p, fh } of opened) {
      // A folder per file: two files of one call may have the same name.
      const dir = join(root, randomBytes(16).toString('hex'));
      await mkdir(dir, { mode: 0o700 });
      made.push(dir);
      await chmod(dir, 0o700);
      const dest = join(dir, basename(p));
      budget -= await copyScanned(rules, p, fh, dest, budget, maxBytes);
      staged.push(dest);
    }
    return staged;
  } catch (err) {
    await Promise.all(made.map((d) => rm(d, { recursive: true, force: true }).catch(() => {})));
    if (err instanceof OpenTabsError) throw err;
    throw new OpenTabsError('internal', `Could not copy the files for the upload: ${String((err as Error)?.message ?? err)}`, { category: 'internal' });
  } finally {
    await Promise.all(opened.map((f) => f.fh.close().catch(() => {})));
  }
}

/** Remove staged copies older than `keepMs` (every one with keepMs 0). Returns how many folders went. */
export async function sweepUploadStaging(configDir: string, keepMs = UPLOAD_STAGING_KEEP_MS, now = Date.now()): Promise<number> {
  const root = uploadStagingRoot(configDir);
  let names: string[];
  try {
    names = await readdir(root);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const entry = join(root, name);
    try {
      const st = await lstat(entry);
      if (now - st.mtimeMs < keepMs) continue;
      await rm(entry, { recursive: true, force: true });
      removed++;
    } catch {}
  }
  return removed;
}

/** Every staged copy, at once (the server is stopping: no page gets a file from it any more). */
export function clearUploadStaging(configDir: string): void {
  rmSync(uploadStagingRoot(configDir), { recursive: true, force: true });
}

/** Old copies removed now and every UPLOAD_STAGING_SWEEP_MS until stop(). */
export function startUploadStagingSweeper(configDir: string, onError: (err: unknown) => void = () => {}): { stop(): void } {
  const sweep = () => void sweepUploadStaging(configDir).catch(onError);
  sweep();
  const timer = setInterval(sweep, UPLOAD_STAGING_SWEEP_MS);
  timer.unref?.();
  return { stop: () => clearInterval(timer) };
}
