/**
 * What a plugin folder must hold for the server to load it, beyond the shape of its manifest
 * (plugin-manifest.ts): its files are regular files inside the folder, dist/tools.json is at most
 * PLUGIN_TOOLS_JSON_MAX_BYTES, and each tool schema is small enough to compile a validator for.
 * Plugin discovery (server/plugins/load.ts) and `opentabs plugin build` (plugins/tooling/) both
 * apply these, so a build refuses what discovery would, in the same words.
 */
import { join, sep } from 'node:path';
import { realpath, stat } from '../state/fs-async.ts';
import { PLUGIN_SCHEMA_MAX_DEPTH, PLUGIN_SCHEMA_MAX_NODES, PLUGIN_TOOLS_JSON_MAX_BYTES } from './limits.ts';

/** The three files a plugin folder is made of, relative to the folder. */
export const PLUGIN_FILES = { packageJson: 'package.json', toolsJson: join('dist', 'tools.json'), adapter: join('dist', 'adapter.js') } as const;

/**
 * Why `schema` is too large to compile a validator for (nested more than `maxDepth` levels of
 * objects and arrays, or more than `maxNodes` of them), or null. The walk stops at either bound, so
 * it costs at most `maxNodes` steps and never recurses deeper than `maxDepth` + 1.
 */
export function schemaSizeProblem(schema: unknown, maxDepth: number, maxNodes: number): string | null {
  let nodes = 0;
  let problem: string | null = null;
  const visit = (node: unknown, depth: number): void => {
    if (problem !== null || node === null || typeof node !== 'object') return;
    if (depth > maxDepth) {
      problem = `nested more than ${maxDepth} levels deep`;
      return;
    }
    if (++nodes > maxNodes) {
      problem = `more than ${maxNodes} objects and arrays`;
      return;
    }
    for (const v of Array.isArray(node) ? node : Object.values(node)) visit(v, depth + 1);
  };
  visit(schema, 1);
  return problem;
}

/**
 * Why a plugin tool's input or output schema is refused for its size (PLUGIN_SCHEMA_MAX_DEPTH,
 * PLUGIN_SCHEMA_MAX_NODES), or null. Callers put the file, tool and key in front.
 */
export function pluginSchemaSizeProblem(schema: unknown): string | null {
  const tooLarge = schemaSizeProblem(schema, PLUGIN_SCHEMA_MAX_DEPTH, PLUGIN_SCHEMA_MAX_NODES);
  if (tooLarge === null) return null;
  return `the schema is too large to check calls against (${tooLarge}; at most ${PLUGIN_SCHEMA_MAX_DEPTH} levels and ${PLUGIN_SCHEMA_MAX_NODES} objects and arrays)`;
}

/** Why a dist/tools.json of `bytes` bytes is refused, or null. */
export function toolsJsonSizeProblem(bytes: number): string | null {
  return bytes > PLUGIN_TOOLS_JSON_MAX_BYTES ? `dist/tools.json is ${bytes} bytes, over the ${PLUGIN_TOOLS_JSON_MAX_BYTES}-byte limit` : null;
}

/**
 * Why the plugin file `rel` of `dir` is not one of the folder's own regular files, or null (also
 * when it is missing: its reader, or the build that writes it, deals with that). A link in a
 * plugin folder (a git checkout can hold one) to /dev/zero held discovery for good, reading
 * without end until memory ran out, and a link to any file of the user's (dist/adapter.js →
 * ~/.aws/credentials) had that file copied into the extension and injected into the plugin's
 * pages as its adapter. A link that stays inside the folder is followed. `kind` 'folder': `rel` is
 * a folder (the build's dist/), checked for leading outside only.
 */
export async function pluginFileProblem(dir: string, rel: string, kind: 'file' | 'folder' = 'file'): Promise<string | null> {
  const path = join(dir, rel);
  let real: string;
  let root: string;
  try {
    [real, root] = await Promise.all([realpath(path), realpath(dir)]);
  } catch {
    return null;
  }
  if (!real.startsWith(root + sep)) return `${rel} leads outside the plugin folder (to ${real}): a plugin is loaded only from files inside its folder`;
  const st = await stat(real).catch(() => null);
  if (kind === 'folder') return st && !st.isDirectory() ? `${rel} is not a folder` : null;
  if (st && !st.isFile()) return `${rel} is not a regular file: a plugin is loaded only from regular files`;
  return null;
}

/** The first of `rels` (default: all PLUGIN_FILES) that pluginFileProblem refuses, or null. */
export async function pluginFilesProblem(dir: string, rels: readonly string[] = Object.values(PLUGIN_FILES)): Promise<string | null> {
  return (await Promise.all(rels.map((rel) => pluginFileProblem(dir, rel)))).find((p) => p !== null) ?? null;
}
