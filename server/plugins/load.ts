/**
 * Load one plugin folder (local or npm-installed): package.json + dist/tools.json +
 * dist/adapter.js. Never throws; returns either the plugin with its adapter source or the reason
 * it cannot be loaded, so one broken plugin never stops the others.
 */
import { readFile, stat } from '../state/fs-async.ts';
import { join } from 'node:path';
import { shellWord } from '../cli-command.ts';
import { schemaProblem } from '../tools/schema-check.ts';
import { MAX_ADAPTER_BYTES } from '../limits.ts';
import { PLUGIN_FILES, pluginFilesProblem, pluginSchemaSizeProblem, toolsJsonSizeProblem } from '../protocol/plugin-package.ts';
import { parseToolsJson, pluginNameFromPackage, type ToolsJson } from '../protocol/plugin-manifest.ts';
import type { LoadedPlugin, LoadedTool } from './types.ts';
import { manifestHash, type CheckedManifests } from './schema-cache.ts';
import { adapterToolsDigest, toolsDigest } from '../protocol/tools-digest.ts';

export { PLUGIN_FILES } from '../protocol/plugin-package.ts';

export type LoadResult =
  | { ok: true; plugin: LoadedPlugin; adapterSource: string }
  | { ok: false; error: string; name?: string };

/** Short content hash naming the adapter file (adapters/<name>-<hash>.js). */
export function adapterHashOf(source: string): string {
  return Bun.SHA256.hash(source, 'hex').slice(0, 12);
}

async function readText(path: string, what: string): Promise<{ ok: true; text: string } | { ok: false; error: string }> {
  try {
    return { ok: true, text: await readFile(path, 'utf8') };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { ok: false, error: code === 'ENOENT' ? `${what} is missing (${path})` : `cannot read ${what}: ${(err as Error).message}` };
  }
}

function parseJson(text: string, what: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return { ok: false, error: `${what} is not valid JSON: ${(err as Error).message}` };
  }
}

async function readJson(path: string, what: string): Promise<{ ok: true; value: unknown } | { ok: false; error: string }> {
  const read = await readText(path, what);
  return read.ok ? parseJson(read.text, what) : read;
}

/**
 * `checked`: manifests already checked, and what they parsed to (schema-cache.ts); without it every
 * manifest is parsed and every schema checked.
 */
export async function loadPluginFolder(dir: string, source: 'local' | 'npm', checked?: CheckedManifests): Promise<LoadResult> {
  const linked = await pluginFilesProblem(dir);
  if (linked) return { ok: false, error: linked };
  const pkgRead = await readJson(join(dir, PLUGIN_FILES.packageJson), 'package.json');
  if (!pkgRead.ok) return { ok: false, error: pkgRead.error };
  const pkg = pkgRead.value as Record<string, unknown>;
  if (typeof pkg !== 'object' || pkg === null) return { ok: false, error: 'package.json must be a JSON object' };
  const packageName = typeof pkg.name === 'string' ? pkg.name : '';
  const nameFromPkg = pluginNameFromPackage(packageName);
  if (!nameFromPkg) {
    return { ok: false, error: `package.json name: ${JSON.stringify(pkg.name ?? null)} must be opentabs-plugin-<name> or @scope/opentabs-plugin-<name>` };
  }
  const version = typeof pkg.version === 'string' && pkg.version !== '' ? pkg.version : null;
  if (!version) return { ok: false, name: nameFromPkg, error: 'package.json version: must be a non-empty string' };

  // An installed package cannot be built here: it was published without its build output.
  const TOOLS_JSON =
    source === 'npm'
      ? 'dist/tools.json (the package was published without its build output: its author must run `opentabs plugin build` before publishing and list "dist" in package.json "files")'
      : `dist/tools.json (run \`opentabs plugin build ${shellWord(dir)}\`)`;
  const toolsSize = await stat(join(dir, PLUGIN_FILES.toolsJson)).then((st) => st.size, () => 0);
  const toolsTooLarge = toolsJsonSizeProblem(toolsSize);
  if (toolsTooLarge) return { ok: false, name: nameFromPkg, error: toolsTooLarge };
  const toolsRead = await readText(join(dir, PLUGIN_FILES.toolsJson), TOOLS_JSON);
  if (!toolsRead.ok) return { ok: false, name: nameFromPkg, error: toolsRead.error };
  const nameMismatch = (m: ToolsJson): LoadResult | null =>
    m.name === nameFromPkg ? null : { ok: false, name: nameFromPkg, error: `dist/tools.json name: "${m.name}" does not match package name ${packageName} (expected "${nameFromPkg}")` };
  const hash = checked ? manifestHash(toolsRead.text) : '';
  // The same text passed every check before, under the same rules: its parsed form is reused.
  let m = checked?.parsed(hash, toolsRead.text);
  if (m) {
    const mismatch = nameMismatch(m);
    if (mismatch) return mismatch;
  } else {
    const raw = parseJson(toolsRead.text, TOOLS_JSON);
    if (!raw.ok) return { ok: false, name: nameFromPkg, error: raw.error };
    const parsed = parseToolsJson(raw.value);
    if (!parsed.ok) return { ok: false, name: nameFromPkg, error: `dist/tools.json ${parsed.error}` };
    m = parsed.value;
    const mismatch = nameMismatch(m);
    if (mismatch) return mismatch;
    if (!checked?.has(hash)) {
      for (const [i, t] of m.tools.entries()) {
        for (const key of ['inputSchema', 'outputSchema'] as const) {
          const schema = t[key];
          if (!schema) continue;
          // Bounded first: the meta-schema check and Ajv's compile recurse through the whole schema.
          const tooLarge = pluginSchemaSizeProblem(schema);
          if (tooLarge) return { ok: false, name: m.name, error: `dist/tools.json tools.${i}.${key} (${t.name}): ${tooLarge}` };
          const problem = schemaProblem(schema);
          if (problem) return { ok: false, name: m.name, error: `dist/tools.json tools.${i}.${key} (${t.name}): not a valid JSON Schema: ${problem}` };
        }
      }
      checked?.add(hash);
    }
    checked?.addParsed(hash, m, toolsRead.text);
  }

  const adapterPath = join(dir, PLUGIN_FILES.adapter);
  let size: number;
  try {
    size = (await stat(adapterPath)).size;
  } catch {
    return { ok: false, name: m.name, error: `dist/adapter.js is missing (${adapterPath}); run \`opentabs plugin build\`` };
  }
  if (size > MAX_ADAPTER_BYTES) {
    return { ok: false, name: m.name, error: `dist/adapter.js is ${size} bytes, over the ${MAX_ADAPTER_BYTES}-byte limit` };
  }
  if (size === 0) return { ok: false, name: m.name, error: 'dist/adapter.js is empty' };
  const adapterRead = await readText(adapterPath, 'dist/adapter.js');
  if (!adapterRead.ok) return { ok: false, name: m.name, error: adapterRead.error };
  const adapterSource = adapterRead.text;
  const builtFor = adapterToolsDigest(adapterSource);
  if (builtFor !== undefined && builtFor !== toolsDigest(m.tools)) {
    return {
      ok: false,
      name: m.name,
      error:
        source === 'npm'
          ? "dist/tools.json does not match dist/adapter.js (its tools' names or inputs differ from the ones the adapter was built with): the package's two files come from different builds; its author must run `opentabs plugin build` and publish again"
          : `dist/tools.json does not match dist/adapter.js (its tools' names or inputs differ from the ones the adapter was built with): tools.json was edited by hand or comes from another build; it is written by the build from src/, so change the tools there and run \`opentabs plugin build ${shellWord(dir)}\``,
    };
  }
  const adapterHash = adapterHashOf(adapterSource);

  const plugin: LoadedPlugin = {
    name: m.name,
    displayName: m.displayName,
    description: m.description,
    version,
    packageName,
    urlPatterns: m.urlPatterns,
    excludePatterns: m.excludePatterns,
    homepage: m.homepage,
    iconSvg: m.iconSvg,
    configSchema: m.configSchema,
    source,
    path: dir,
    sdkVersion: m.sdkVersion ?? null,
    adapterFile: `adapters/${m.name}-${adapterHash}.js`,
    adapterHash,
    tools: m.tools.map((t) => {
      const tool: LoadedTool = { name: t.name, fullName: `${m.name}_${t.name}`, description: t.description, inputSchema: t.inputSchema, outputSchema: t.outputSchema };
      if (t.annotations) tool.annotations = t.annotations;
      return tool;
    }),
  };
  return { ok: true, plugin, adapterSource };
}
