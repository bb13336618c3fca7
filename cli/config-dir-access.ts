/**
 * Whether this process can read the config dir. One it cannot (another user's, or mode 0) hides
 * the secret, server.pid and the extension folder: they are not missing, and `opentabs start`
 * would not make them. Commands say so once instead of naming each file as missing.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { shellWord } from './self.ts';

export interface UnreadableConfigDir {
  /** Why, e.g. "/x belongs to another user (uid 0)". */
  why: string;
  /** What to do about it. */
  fix: string;
}

/** Why `dir` exists but cannot be read by this process, with the fix; null when it can (or does not exist). */
export function unreadableConfigDir(dir: string): UnreadableConfigDir | null {
  let st;
  try {
    st = statSync(dir);
  } catch {
    return null;
  }
  if (!st.isDirectory()) return null;
  try {
    accessSync(dir, constants.R_OK | constants.X_OK);
    return null;
  } catch {
    // Not readable: said below.
  }
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) {
    return { why: `${dir} belongs to another user (uid ${st.uid}) and you cannot read it`, fix: 'Set OPENTABS_CONFIG_DIR to a folder of yours.' };
  }
  return { why: `you cannot read ${dir} (mode ${(st.mode & 0o777).toString(8).padStart(4, '0')})`, fix: `\`chmod 700 ${shellWord(dir)}\`, or set OPENTABS_CONFIG_DIR to a folder you can read and write.` };
}
