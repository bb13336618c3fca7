/**
 * Finding and loading the start-up bundle that cli/server-bundle.ts builds: whether it is fresh
 * (its stamp against the sources), and the bundle itself. Kept apart from the builder, with no
 * imports but node:fs and node:path (which the server loads anyway), because `opentabs start`
 * runs this before anything else: the builder's own imports (node:fs/promises, node:module, the
 * shell quoting) cost ≈ 3 ms on every start.
 */
import { readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

type ServeModule = typeof import('../server/serve.ts');
/** What the bundle exports (cli/start-bundle.ts): the server module, and the CLI to run `start` with. */
export type StartBundle = ServeModule & { runCli(argv: string[]): Promise<void> };

export const ROOT = resolve(import.meta.dir, '..');
export const BUNDLE_FILE = 'serve.bundle.cjs';
/** The built-in tools' precompiled validators, loaded by the bundle on the first built-in call. */
export const VALIDATORS_FILE = `${BUNDLE_FILE}.validators.cjs`;
/** Ajv and its dependencies, loaded by the bundle when a schema is first compiled (server/tools/ajv.ts). */
export const AJV_FILE = `${BUNDLE_FILE}.ajv.cjs`;
export const STAMP_FILE = `${BUNDLE_FILE}.stamp.json`;
/** Stands for every npm dependency: npm rewrites it on each install, update or removal. */
export const DEPENDENCY_MARKER = join('node_modules', '.package-lock.json');

export interface Stamp {
  bun: string;
  /** The root it was built in: the bundler writes `import.meta.dir` as an absolute path. */
  root: string;
  /** Input files relative to the root: [size, mtimeMs] when the bundle was built. */
  inputs: Record<string, [number, number]>;
  /** The outputs' sizes: a half-copied bundle is not used. */
  outputs: Record<string, number>;
}

export interface BundlePaths {
  /** The package root whose cli/start-bundle.ts is bundled. */
  root: string;
  /** Where the bundle and its stamp are (default <root>/server). */
  outDir?: string;
}

export const DEFAULT_PATHS: BundlePaths = { root: ROOT };
export const dirOf = (p: BundlePaths) => p.outDir ?? join(p.root, 'server');

export function fileState(path: string): [number, number] | null {
  try {
    const s = statSync(path);
    return [s.size, s.mtimeMs];
  } catch {
    return null;
  }
}

/** Why the bundle cannot be used now, or null when it is fresh. */
export function bundleStaleReason(p: BundlePaths = DEFAULT_PATHS): string | null {
  const dir = dirOf(p);
  let stamp: Stamp;
  try {
    stamp = JSON.parse(readFileSync(join(dir, STAMP_FILE), 'utf8')) as Stamp;
  } catch {
    return 'not built';
  }
  if (stamp.bun !== Bun.version) return `built with Bun ${stamp.bun}, running ${Bun.version}`;
  if (stamp.root !== p.root) return `built in ${stamp.root}`;
  for (const [name, size] of Object.entries(stamp.outputs ?? {})) {
    if (fileState(join(dir, name))?.[0] !== size) return `${name} is missing or incomplete`;
  }
  for (const [file, [size, mtime]] of Object.entries(stamp.inputs ?? {})) {
    const now = fileState(join(p.root, file));
    if (!now || now[0] !== size || now[1] !== mtime) return `${file} changed`;
  }
  return null;
}

/** The fresh bundle, loaded; null when there is none (stale, OPENTABS_NO_BUNDLE=1, or it does not load). */
export function loadBundle(p: BundlePaths = DEFAULT_PATHS): StartBundle | null {
  if (process.env.OPENTABS_NO_BUNDLE === '1' || bundleStaleReason(p) !== null) return null;
  try {
    return require(join(dirOf(p), BUNDLE_FILE)) as StartBundle;
  } catch {
    // A bundle that does not load is a cache miss, not a failure: the sources follow.
    return null;
  }
}

/** server/serve.ts: from the fresh bundle when there is one, else from source. */
export async function loadServer(p: BundlePaths = DEFAULT_PATHS): Promise<ServeModule> {
  return loadBundle(p) ?? import('../server/serve.ts');
}
