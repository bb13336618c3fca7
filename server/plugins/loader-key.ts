/**
 * The key of the loaded-plugin-folders cache (folder-cache.ts): a hash of the code that decides
 * what a plugin folder loads to (LOADER_FILES) and of the Ajv and valibot versions, so a change to
 * any check, to the loader or to the cache's own format makes every folder be loaded afresh.
 *
 * The start-up bundle (cli/server-bundle.ts) replaces this module by the hash computed when it is
 * built from these same files: the bundle is only used while they are unchanged, and a start then
 * does not read and hash them (≈ 3 ms). From source the hash is computed on first use. The
 * single-file binary has no source files to hash: null, and the cache is not used.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isCompiled } from '../cli-command.ts';

/**
 * Relative to server/: plugins/load.ts, plugins/folder-cache.ts and plugins/types.ts, and every
 * module they import (test/unit/folder-cache.test.ts follows the imports to check).
 */
export const LOADER_FILES = [
  'cli-command.ts',
  'limits.ts',
  'plugins/folder-cache.ts',
  'plugins/load.ts',
  'plugins/loader-key.ts',
  'plugins/schema-cache.ts',
  'plugins/types.ts',
  'protocol/limits.ts',
  'protocol/local-files.ts',
  'protocol/regular-file.ts',
  'protocol/tools-digest.ts',
  'protocol/match-pattern.ts',
  'protocol/plugin-manifest.ts',
  'protocol/plugin-name.ts',
  'protocol/plugin-package.ts',
  'protocol/wildcard.ts',
  'state/atomic.ts',
  'state/fs-async.ts',
  'state/paths.ts',
  'tools/ajv.ts',
  'tools/schema-check.ts',
  'tools/validate.ts',
];

/** The hash, computed from the files (null when they cannot be read). */
export function computeLoaderKey(): string | null {
  try {
    if (isCompiled()) return null;
    const serverDir = join(import.meta.dir, '..');
    const version = (pkg: string) => String((require(`${pkg}/package.json`) as { version?: unknown }).version ?? '');
    const parts = [`ajv ${version('ajv')}`, `valibot ${version('valibot')}`, ...LOADER_FILES.map((f) => `${f}\0${readFileSync(join(serverDir, f), 'utf8')}`)];
    return Bun.SHA256.hash(parts.join('\0'), 'hex');
  } catch {
    return null;
  }
}

let key: string | null | undefined;
export function loaderKey(): string | null {
  if (key === undefined) key = computeLoaderKey();
  return key;
}
