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
 * file with more than one name (a hard link: another name may be a hidden file's). These rules
 * are said before the user is asked; the call then hands Chrome copies made from the files as
 * checked again (upload-staging.ts), and the extension takes only those
 * (extension/tools/upload.ts); only the server can see where a link leads.
 */
import { closeSync, openSync, readSync, realpathSync, statSync, type Stats } from 'node:fs';
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
export const SCAN_CHUNK_BYTES = 1 << 20;

/**
 * Looks for any of a few ASCII strings in bytes given in pieces: each piece is searched with the
 * end of the ones before, so a string split across two pieces is found too.
 */
export class NeedleScan {
  private carry = Buffer.alloc(0);
  private readonly keep: number;
  constructor(private readonly needles: readonly string[]) {
    this.keep = Math.max(0, ...needles.map((n) => n.length - 1));
  }
  /** The first needle found so far, counting this piece, or null. */
  feed(piece: Uint8Array): string | null {
    const joined = this.carry.length ? Buffer.concat([this.carry, piece]) : Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
    const found = this.needles.find((n) => joined.includes(n, 0, 'latin1')) ?? null;
    // Copied: `piece` is a read buffer its owner reuses.
    this.carry = Buffer.from(joined.subarray(Math.max(0, joined.length - this.keep)));
    return found;
  }
}

/**
 * Whether the file holds `needle` (ASCII) anywhere, read in chunks. A file that cannot be read
 * counts as holding it (the upload is refused rather than sent unchecked).
 */
function fileContains(path: string, needle: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return true;
  }
  try {
    const scan = new NeedleScan([needle]);
    const buf = Buffer.alloc(SCAN_CHUNK_BYTES);
    for (;;) {
      const n = readSync(fd, buf, 0, SCAN_CHUNK_BYTES, null);
      if (n <= 0) return false;
      if (scan.feed(buf.subarray(0, n)) !== null) return true;
    }
  } catch {
    return true;
  } finally {
    closeSync(fd);
  }
}

/** What an upload is checked against, read once per call. */
export interface UploadRules {
  configDir: string;
  /** The config folder, as the file system resolves it. */
  config: string;
  /** The allowed folders as the user wrote them, and resolved. */
  uploadFolders: readonly string[];
  allowed: string[];
  secret: string | null;
  clientToken: string | null;
}

export function uploadRules(configDir: string, uploadFolders: readonly string[] = []): UploadRules {
  return { configDir, config: real(configDir), uploadFolders, allowed: uploadFolders.map(real), secret: readSecretSync(configDir), clientToken: readClientTokenSync(configDir) };
}

/**
 * Why a file that really lies at `target` (links resolved) may not be uploaded, or null: inside the
 * config folder, outside the allowed folders, hidden below one. `p` is the path as the caller wrote it.
 */
export function placeError(rules: UploadRules, p: string, target: string): OpenTabsError | null {
  if (inside(rules.config, target) || inside(rules.config, p)) {
    return new OpenTabsError('permission_denied', `"${p}" is inside the OpenTabs config folder (holds the secret); it cannot be uploaded`, { category: 'auth' });
  }
  // Where the file really is decides, so a link inside an allowed folder cannot reach outside it.
  const home = rules.allowed.find((folder) => inside(folder, target));
  if (home === undefined) {
    const now = rules.allowed.length ? `it is not inside an allowed folder (${rules.uploadFolders.join(', ')})` : 'no folder is allowed yet';
    return new OpenTabsError(
      'permission_denied',
      `"${p}" cannot be uploaded: ${now}. Only the user can allow a folder: \`opentabs config set uploadFolders <folder>[,<folder>…]\` (uploadFolders in ${configPath(rules.configDir)}).`,
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
  return null;
}

/**
 * A hard link is the same file under another name, which no path says: a visible name in an
 * allowed folder can be ~/.ssh/id_rsa's or auth.json's (file:// pages refuse them likewise).
 */
export function hardLinkError(p: string, names: number): OpenTabsError {
  return new OpenTabsError(
    'permission_denied',
    `"${p}" cannot be uploaded: the file has ${names} names (hard links), and another of them may be a hidden file or lie in the OpenTabs config folder. Copy it to a file of its own first if it really is meant to be uploaded.`,
    { category: 'auth' },
  );
}

/** The refusal for a file whose bytes hold the secret (`which` = the secret) or the client token. */
export function heldSecretError(rules: UploadRules, p: string, which: string): OpenTabsError {
  return which === rules.secret
    ? new OpenTabsError(
        'permission_denied',
        `"${p}" cannot be uploaded: it contains the OpenTabs secret (an MCP client's config, or a copy of auth.json). Take the secret out of it, or upload another file.`,
        { category: 'auth' },
      )
    : new OpenTabsError(
        'permission_denied',
        `"${p}" cannot be uploaded: it contains the OpenTabs client token (an MCP client's config). Take the token out of it, or upload another file.`,
        { category: 'auth' },
      );
}

/** The strings no uploaded byte may hold: the secret and the client token MCP client configs hold. */
export function secretsOf(rules: UploadRules): string[] {
  return [rules.secret, rules.clientToken].filter((s): s is string => s !== null && s !== '');
}

/** A file the path rules let through: where it really is and which file it was when checked. */
export interface CheckedUpload {
  target: string;
  dev: number;
  ino: number;
}

/** The path rules for one path (not its content): the file it leads to, or why it may not be uploaded. */
export function checkUploadPath(rules: UploadRules, p: string): CheckedUpload | OpenTabsError {
  if (!isAbsolute(p)) return new OpenTabsError('invalid_arguments', `"${p}" is not an absolute path; pass the full path of the file`, { category: 'validation', path: '/paths' });
  let target: string;
  try {
    target = realpathSync(p);
  } catch {
    return new OpenTabsError('not_found', `No file at "${p}"`, { category: 'not_found' });
  }
  if (inside(rules.config, target) || inside(rules.config, p)) return placeError(rules, p, target)!;
  let st: Stats | undefined;
  try {
    st = statSync(target);
  } catch {}
  if (st === undefined || !st.isFile()) return new OpenTabsError('not_found', `"${p}" is not a file (a folder or a device?)`, { category: 'not_found' });
  if (st.nlink > 1) return hardLinkError(p, st.nlink);
  const place = placeError(rules, p, target);
  if (place) return place;
  return { target, dev: st.dev, ino: st.ino };
}

/**
 * Why the paths may not be uploaded, or null: the path rules, and each file's content read through
 * its path. Said before the user is asked; the call itself uploads copies made from the files as
 * checked again then (upload-staging.ts).
 */
export function uploadPathsError(configDir: string, paths: readonly string[], uploadFolders: readonly string[] = []): OpenTabsError | null {
  const rules = uploadRules(configDir, uploadFolders);
  for (const p of paths) {
    const checked = checkUploadPath(rules, p);
    if (checked instanceof OpenTabsError) return checked;
    // The page would get the file's bytes: none of them may be the secret, however the file came to hold it.
    for (const s of secretsOf(rules)) if (fileContains(checked.target, s)) return heldSecretError(rules, p, s);
  }
  return null;
}
