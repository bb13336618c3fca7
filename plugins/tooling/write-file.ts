/**
 * Build outputs are written beside their final name and renamed into place, so a server
 * rediscovering plugins (or an interrupted build) never sees half a file.
 */
import { randomBytes } from 'node:crypto';
import { rename, rm, writeFile } from 'node:fs/promises';

export async function writeOutput(path: string, data: string, mode = 0o644): Promise<void> {
  const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writeFile(tmp, data, { mode });
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}
