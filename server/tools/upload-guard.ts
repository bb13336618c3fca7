/**
 * browser_upload_file, checked by the server before it asks the user or dispatches. The server runs
 * on the computer whose Chrome reads the files, so it resolves each path (symlinks included) and
 * refuses a relative path, a missing file, a folder, and a file that really lies in the OpenTabs
 * config folder (auth.json holds the secret). The extension checks the path as written again
 * (extension/tools/upload.ts); only the server can see where a link leads.
 */
import { realpathSync, statSync } from 'node:fs';
import { isAbsolute, relative } from 'node:path';
import { OpenTabsError } from '../errors.ts';

const caseInsensitive = process.platform === 'darwin' || process.platform === 'win32';

function real(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

function inside(folder: string, file: string): boolean {
  const a = caseInsensitive ? folder.toLowerCase() : folder;
  const b = caseInsensitive ? file.toLowerCase() : file;
  const rel = relative(a, b);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** Why the paths may not be uploaded, or null. */
export function uploadPathsError(configDir: string, paths: readonly string[]): OpenTabsError | null {
  const config = real(configDir);
  for (const p of paths) {
    if (!isAbsolute(p)) return new OpenTabsError('invalid_arguments', `"${p}" is not an absolute path; pass the full path of the file`, { category: 'validation', path: '/paths' });
    let target: string;
    try {
      target = realpathSync(p);
    } catch {
      return new OpenTabsError('not_found', `No file at "${p}"`, { category: 'not_found' });
    }
    if (inside(config, target) || inside(config, p)) {
      return new OpenTabsError('permission_denied', `"${p}" is inside the OpenTabs config folder (holds the secret); it cannot be uploaded`, { category: 'auth' });
    }
    let isFile = false;
    try {
      isFile = statSync(target).isFile();
    } catch {}
    if (!isFile) return new OpenTabsError('not_found', `"${p}" is not a file (a folder or a device?)`, { category: 'not_found' });
  }
  return null;
}
