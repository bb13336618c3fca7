/**
 * browser_upload_file, checked by the server before it asks the user or dispatches. The server runs
 * on the computer whose Chrome reads the files, so it resolves each path (symlinks included) and
 * refuses a relative path, a missing file, a folder, a file that really lies in the OpenTabs
 * config folder (auth.json holds the secret), and a file outside the folders the user allowed
 * (config.json uploadFolders, set with `opentabs config set uploadFolders …`; none by default, so
 * an agent steered by a page cannot send ~/.ssh or other private files anywhere), and a hidden file
 * or folder below an allowed folder (configuration and credentials), and a file whose content holds
 * the OpenTabs secret or client token wherever it lies (a project's opencode.json, which `opentabs
 * setup opencode` writes with the client token in it, a copy or a hard link of auth.json: no path
 * rule sees those), and a
 * file with more than one name (a hard link: another name may be a hidden file's). The
 * extension checks the path as written again (extension/tools/upload.ts); only the server can see
 * where a link leads.
 */
import { closeSync, openSync, readSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, relative, sep } from 'node:path';
import { OpenTabsError } from '../errors.ts';
import { configPath } from '../state/config.ts';
import { readClientTokenSync, readSecretSync } from '../state/secret.ts';

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

/** Bytes read at a time when looking for the secret in a file. */
const SCAN_CHUNK_BYTES = 1 << 20;

/**
 * Whether the file holds `needle` (ASCII) anywhere: read in chunks, each searched with the end of
 * the one before (so a match across two chunks is found). A file that cannot be read counts as
 * holding it (the upload is refused rather than sent unchecked).
 */
function fileContains(path: string, needle: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return true;
  }
  try {
    const buf = Buffer.alloc(SCAN_CHUNK_BYTES + needle.length);
    let carry = 0;
    for (;;) {
      const n = readSync(fd, buf, carry, SCAN_CHUNK_BYTES, null);
      if (n <= 0) return false;
      const filled = carry + n;
      if (buf.subarray(0, filled).includes(needle, 0, 'latin1')) return true;
      carry = Math.min(needle.length - 1, filled);
      buf.copyWithin(0, filled - carry, filled);
    }
  } catch {
    return true;
  } finally {
    closeSync(fd);
  }
}

/** Why the paths may not be uploaded, or null. */
export function uploadPathsError(configDir: string, paths: readonly string[], uploadFolders: readonly string[] = []): OpenTabsError | null {
  const config = real(configDir);
  const secret = readSecretSync(configDir);
  const clientToken = readClientTokenSync(configDir);
  const allowed = uploadFolders.map(real);
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
    let names = 1;
    try {
      const st = statSync(target);
      isFile = st.isFile();
      names = st.nlink;
    } catch {}
    if (!isFile) return new OpenTabsError('not_found', `"${p}" is not a file (a folder or a device?)`, { category: 'not_found' });
    // A hard link is the same file under another name, which no path says: a visible name in an
    // allowed folder can be ~/.ssh/id_rsa's or auth.json's (file:// pages refuse them likewise).
    if (names > 1) {
      return new OpenTabsError(
        'permission_denied',
        `"${p}" cannot be uploaded: the file has ${names} names (hard links), and another of them may be a hidden file or lie in the OpenTabs config folder. Copy it to a file of its own first if it really is meant to be uploaded.`,
        { category: 'auth' },
      );
    }
    // Where the file really is decides, so a link inside an allowed folder cannot reach outside it.
    const home = allowed.find((folder) => inside(folder, target));
    if (home === undefined) {
      const now = allowed.length ? `it is not inside an allowed folder (${uploadFolders.join(', ')})` : 'no folder is allowed yet';
      return new OpenTabsError(
        'permission_denied',
        `"${p}" cannot be uploaded: ${now}. Only the user can allow a folder: \`opentabs config set uploadFolders <folder>[,<folder>…]\` (uploadFolders in ${configPath(configDir)}).`,
        { category: 'auth' },
      );
    }
    // Hidden files and folders below an allowed folder are configuration and credentials: an MCP
    // client's config holds the OpenTabs secret (~/.claude.json), ~/.ssh and ~/.aws hold keys.
    // Allowing the home folder for uploads must not let an agent send them to a site.
    const hidden = relative(home, target).split(sep).find((part) => part.startsWith('.'));
    if (hidden !== undefined) {
      return new OpenTabsError(
        'permission_denied',
        `"${p}" cannot be uploaded: it is a hidden file or inside a hidden folder (${hidden}), where configuration and credentials live. Copy it to a visible folder first if it really is meant to be uploaded.`,
        { category: 'auth' },
      );
    }
    // The page would get the file's bytes: none of them may be the secret, however the file came to hold it.
    if (secret !== null && fileContains(target, secret)) {
      return new OpenTabsError(
        'permission_denied',
        `"${p}" cannot be uploaded: it contains the OpenTabs secret (an MCP client's config, or a copy of auth.json). Take the secret out of it, or upload another file.`,
        { category: 'auth' },
      );
    }
    // Nor the client token MCP client configs hold.
    if (clientToken !== null && fileContains(target, clientToken)) {
      return new OpenTabsError(
        'permission_denied',
        `"${p}" cannot be uploaded: it contains the OpenTabs client token (an MCP client's config). Take the token out of it, or upload another file.`,
        { category: 'auth' },
      );
    }
  }
  return null;
}
