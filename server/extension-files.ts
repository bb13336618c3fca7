/**
 * Install extension files into <configDir>/extension, where the user loads the extension unpacked
 * once, and write the server.json {port} the extension bootstraps from. The files come from
 * extension/dist (server/extension-install.ts) or from the copy embedded in the single-file
 * executable (cli/embedded-extension.ts).
 */
import { createHash } from 'node:crypto';
import { readRegularFileSync } from './protocol/regular-file.ts';
import { mkdir, readdir, rm } from './state/fs-async.ts';
import { dirname, join } from 'node:path';
import { writeFileAtomic } from './state/atomic.ts';
import { selfCommandText } from './cli-command.ts';
import { SERVER_OWNED_NAMES } from '../extension/build.ts';

export interface EmbeddedFile {
  /** Path relative to the extension folder, e.g. "manifest.json". */
  path: string;
  /** Where Bun embedded it (a /$bunfs path readable with Bun.file). */
  file: string;
}

/** Files and folders the server owns inside the extension folder; an install never touches them. */
const SERVER_OWNED = new Set<string>(SERVER_OWNED_NAMES);
/** Content hash of the installed copy (same for the embedded and the extension/dist source). */
const HASH_FILE = '.install-hash';

/**
 * Copy extension files to <configDir>/extension when their content hash changed, then write
 * server.json {port} for the extension's bootstrap. Used for extension/dist and for the copy
 * embedded in the executable.
 */
export async function installEmbeddedExtension(files: EmbeddedFile[], configDir: string, port: number): Promise<{ dir: string; copied: boolean }> {
  const dir = join(configDir, 'extension');
  const contents = await Promise.all(
    [...files].sort((a, b) => a.path.localeCompare(b.path)).map(async (f) => ({ path: f.path, data: await Bun.file(f.file).bytes() })),
  );
  const hash = createHash('sha256');
  for (const f of contents) hash.update(f.path).update('\0').update(f.data).update('\0');
  const digest = hash.digest('hex');
  const hashPath = join(dir, HASH_FILE);
  // Not read from a FIFO or a device put in its place (the read would hold the server for good):
  // anything but a regular file there counts as no hash, and the copy below writes over it.
  let current = '';
  try {
    current = readRegularFileSync(hashPath).trim();
  } catch {}
  let copied = false;
  if (current !== digest) {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    // Remove files of an older extension version, keeping what the server wrote.
    for (const entry of await readdir(dir)) {
      if (!SERVER_OWNED.has(entry)) await rm(join(dir, entry), { recursive: true, force: true });
    }
    for (const f of contents) {
      if (f.path.includes('..') || SERVER_OWNED.has(f.path.split('/')[0])) continue;
      const target = join(dir, f.path);
      await mkdir(dirname(target), { recursive: true });
      await writeFileAtomic(target, f.data, 0o644);
    }
    await writeFileAtomic(hashPath, digest, 0o644);
    copied = true;
  }
  // cli: how the side panel names `opentabs` in what it tells the user to run (start, stop), so
  // the command runs from a terminal (the absolute command when `opentabs` is not on PATH).
  await writeFileAtomic(join(dir, 'server.json'), JSON.stringify({ port, cli: selfCommandText() }), 0o644);
  return { dir, copied };
}
