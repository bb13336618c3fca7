/**
 * The plugin's package.json checks and the definition → dist/tools.json step of
 * `opentabs plugin build`: names, descriptions, urlPatterns, configSchema and the JSON Schemas of
 * each tool's valibot input/output, validated with the same schema the server uses
 * (server/protocol/plugin-manifest.ts); every error names the field.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { toJsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import { isBroadPattern, parseToolsJson, pluginNameFromPackage, TOOL_NAME_RE, type ToolsJson } from '../../server/protocol/plugin-manifest.ts';
import { SDK_VERSION } from '../sdk/version.ts';
import type { PluginDefinition } from '../sdk/define.ts';
import { PluginBuildError } from './build-error.ts';
import { SchemaValidators } from '../../server/tools/validate.ts';
import { isMatchPattern } from '../../server/protocol/match-pattern.ts';
import { pluginSchemaSizeProblem } from '../../server/protocol/plugin-package.ts';

export interface PackageInfo {
  name: string;
  version: string;
  pluginName: string;
  /** Non-fatal package.json problems, printed with the build. */
  warnings: string[];
}

export async function readPackage(dir: string): Promise<PackageInfo> {
  let pkg: Record<string, unknown>;
  try {
    pkg = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      // Most often `opentabs plugin build` run outside the plugin's folder.
      throw new PluginBuildError(
        `${dir} is not a plugin folder: it has no package.json. Run the build in the plugin's folder, or name it: \`opentabs plugin build <folder>\` (\`opentabs plugin create <name>\` makes a new one).`,
      );
    }
    throw new PluginBuildError(`package.json: cannot read ${join(dir, 'package.json')} (${(err as Error).message})`);
  }
  const name = typeof pkg.name === 'string' ? pkg.name : '';
  const pluginName = pluginNameFromPackage(name);
  if (!pluginName) throw new PluginBuildError(`package.json name: ${JSON.stringify(pkg.name ?? null)} must be opentabs-plugin-<name> or @scope/opentabs-plugin-<name>`);
  if (typeof pkg.version !== 'string' || pkg.version === '') throw new PluginBuildError('package.json version: must be a non-empty string like "0.1.0"');
  const warnings: string[] = [];
  if (Array.isArray(pkg.files) && !pkg.files.some((f) => typeof f === 'string' && /^(\.\/)?dist(\/|$)/.test(f))) {
    warnings.push('package.json files: does not include "dist", so a published package would have no adapter');
  }
  const scripts = (pkg.scripts ?? {}) as Record<string, unknown>;
  for (const hook of ['preinstall', 'install', 'postinstall']) {
    if (hook in scripts) warnings.push(`package.json scripts.${hook}: OpenTabs installs plugins with scripts disabled; this never runs for users`);
  }
  return { name, version: pkg.version, pluginName, warnings };
}

const isValibotSchema = (x: unknown): x is v.GenericSchema =>
  typeof x === 'object' && x !== null && (x as { kind?: unknown }).kind === 'schema' && typeof (x as Record<string, unknown>)['~run'] === 'function';

function jsonSchemaOf(schema: v.GenericSchema, mode: 'input' | 'output'): Record<string, unknown> {
  // errorMode 'ignore': actions like trim() have no JSON Schema form; the page validates with valibot anyway.
  // Inputs: a plain v.object rejects unknown keys, so a misspelled optional filter is an error
  // naming the key instead of a silently unfiltered result. v.looseObject / v.objectWithRest opt out.
  const js = toJsonSchema(schema, {
    errorMode: 'ignore',
    typeMode: mode,
    overrideSchema: (ctx) =>
      mode === 'input' && (ctx.valibotSchema as { type?: string }).type === 'object' ? { ...ctx.jsonSchema, additionalProperties: false } : undefined,
  }) as Record<string, unknown>;
  delete js.$schema;
  return js;
}

/** valibot types no JSON argument can ever be: a tool whose input needs one can never be called. */
const NON_JSON_TYPES: Record<string, string> = {
  date: 'v.pipe(v.string(), v.isoDate()) or v.isoTimestamp() (then new Date(input.x) in the handler)',
  bigint: 'v.number() or a string of digits',
  map: 'v.record(v.string(), …)',
  set: 'v.array(…)',
  blob: 'a string (base64) or a URL',
  file: 'a string (base64) or a URL',
  function: 'plain data',
  promise: 'plain data',
  symbol: 'a string',
  instance: 'plain data (v.object / v.string …)',
  nan: 'v.number()',
};

/**
 * valibot types a result cannot be sent as: a BigInt fails every call that returns one
 * (unserializable_result); a Map, Set, Blob or Promise becomes {} and a function or symbol is
 * dropped, without an error. A Date is sent as its ISO string, which is fine.
 */
const NON_JSON_OUTPUT_TYPES: Record<string, string> = {
  bigint: 'v.number(), or v.string() with String(value) in the handler',
  map: 'v.record(v.string(), …), with Object.fromEntries(map) in the handler',
  set: 'v.array(…), with [...set] in the handler',
  blob: 'a string (base64) or a URL',
  file: 'a string (base64) or a URL',
  function: 'plain data',
  promise: 'the awaited value',
  symbol: 'a string',
};

/** The first place in a schema whose valibot type JSON cannot carry (`types`), as "a.b" and its type. */
function nonJsonInput(schema: unknown, path: string, depth = 0, types: Record<string, string> = NON_JSON_TYPES): { path: string; type: string } | null {
  if (depth > 32 || typeof schema !== 'object' || schema === null) return null;
  const s = schema as Record<string, unknown>;
  if (s.kind === 'schema' && typeof s.type === 'string' && Object.hasOwn(types, s.type)) return { path, type: s.type };
  const at = (child: unknown, key: string) => nonJsonInput(child, path ? `${path}.${key}` : key, depth + 1, types);
  if (s.entries && typeof s.entries === 'object') {
    for (const [k, child] of Object.entries(s.entries as Record<string, unknown>)) {
      const bad = at(child, k);
      if (bad) return bad;
    }
  }
  for (const key of ['wrapped', 'item', 'value', 'rest'] as const) {
    const bad = s[key] !== undefined ? nonJsonInput(s[key], key === 'item' ? `${path}[]` : key === 'value' ? `${path}{}` : path, depth + 1, types) : null;
    if (bad) return bad;
  }
  for (const key of ['options', 'items'] as const) {
    if (!Array.isArray(s[key])) continue;
    for (const [i, child] of (s[key] as unknown[]).entries()) {
      // A union that also allows a JSON type can still be called; only report when every option is unusable.
      const bad = nonJsonInput(child, key === 'items' ? `${path}[${i}]` : path, depth + 1, types);
      if (bad && key === 'items') return bad;
      if (!bad && key === 'options') return null;
      if (bad && key === 'options' && i === (s[key] as unknown[]).length - 1) return bad;
    }
  }
  return null;
}

/** The first `pattern` in a JSON Schema that is no Unicode regular expression (what Ajv compiles), with its path. */
function badPattern(node: unknown, path: string): { path: string; pattern: string } | null {
  if (typeof node !== 'object' || node === null) return null;
  for (const [k, val] of Object.entries(node)) {
    const here = path ? `${path}.${k}` : k;
    if (k === 'pattern' && typeof val === 'string') {
      try {
        new RegExp(val, 'u');
      } catch {
        return { path: here, pattern: val };
      }
    }
    const deeper = badPattern(val, here);
    if (deeper) return deeper;
  }
  return null;
}

/**
 * Why the server could not compile this input schema (it checks every call's arguments with it,
 * compiled with Ajv on the first call), or null. valibot accepts some things Ajv refuses, e.g. a
 * regex that is valid only without the `u` flag.
 */
const validators = new SchemaValidators();
function inputSchemaProblem(schema: Record<string, unknown>): string | null {
  const problem = validators.problem('build', schema);
  if (!problem) return null;
  const bad = badPattern(schema, '');
  if (!bad) return problem;
  return `${bad.path} ${JSON.stringify(bad.pattern)} is not a valid Unicode regular expression (${problem}); JSON Schema patterns use the u flag: inside [...] escape a literal "-" (e.g. /^[\\w\\-.]+$/), and outside [...] a backslash may only escape syntax characters (^ $ \\ . * + ? ( ) [ ] { } | /), so write "-", "_", "@", "#" … without one`;
}

/** ` Did you mean "…"?` for a URL pattern that lacks a path or a scheme, else ''. */
export function patternSuggestion(pattern: string): string {
  const noScheme = !/^[a-z*][a-z0-9+.-]*:\/\//i.test(pattern);
  // A local app (localhost, 127.x.x.x) is served over http, any other site over https.
  const scheme = /^(localhost|127\.\d+\.\d+\.\d+)(:\d+)?(\/|$)/i.test(pattern) ? 'http' : 'https';
  const candidates = [
    `${pattern.replace(/\/+$/, '')}/*`,
    ...(noScheme ? [`${scheme}://${pattern}`, `${scheme}://${pattern.replace(/\/+$/, '')}/*`] : []),
  ];
  const fit = candidates.find((c) => isMatchPattern(c));
  return fit ? ` Did you mean ${JSON.stringify(fit)}?` : '';
}

/**
 * Build warnings about valid urlPatterns that likely do not say what was meant: one that matches
 * every site (`<all_urls>`, a `*` host, a whole top-level domain), which users must consent to
 * when adding the plugin; a path without "*" matches that one URL only (no page under it, no query string), so
 * the plugin's tools find no tab on any other page of the app.
 */
/**
 * The longest tool name Cursor shows for a server named `opentabs` (as the README configures it):
 * Cursor hides a tool whose server name and tool name together reach 60 characters.
 */
export const CURSOR_TOOL_NAME_MAX = 60 - 1 - 'opentabs'.length;

/** Tools whose prefixed name is within MCP's 64 characters but too long for Cursor. */
export function toolNameWarnings(manifest: { name: string; tools: readonly { name: string }[] }): string[] {
  return manifest.tools
    .map((t) => `${manifest.name}_${t.name}`)
    .filter((full) => full.length > CURSOR_TOOL_NAME_MAX)
    .map(
      (full) =>
        `tool "${full}" is ${full.length} characters: Cursor hides a tool whose name and its server's name ("opentabs") together reach 60 characters, ` +
        `so there it needs at most ${CURSOR_TOOL_NAME_MAX}; shorten the tool or the plugin name`,
    );
}

export function patternWarnings(urlPatterns: readonly string[]): string[] {
  const warnings: string[] = [];
  urlPatterns.forEach((p, i) => {
    if (isBroadPattern(p)) {
      warnings.push(
        `plugin urlPatterns.${i}: ${JSON.stringify(p)} matches every site${p.startsWith('file:') ? ' or local file' : ''}, so the adapter would run in all those pages and their scripts could read the plugin's settings; ` +
          '`opentabs plugin add` and `install` refuse it without --allow-broad-patterns, and its tools then start off. ' +
          "List the app's own pages instead, e.g. 'https://app.example.com/*'",
      );
      return;
    }
    const path = /^[^:]+:\/\/[^/]*(\/.*)$/.exec(p)?.[1];
    if (path === undefined || path.includes('*')) return;
    warnings.push(
      `plugin urlPatterns.${i}: ${JSON.stringify(p)} has no "*" in its path, so it matches that one URL only ` +
        `(not ${path === '/' ? 'any other page' : `${path}/… or ${path}?…`}); write ${JSON.stringify(`${p}*`)} for every page under it`,
    );
  });
  return warnings;
}

/** Why an input schema that is not an object cannot be a tool's arguments, and what to write. */
function notObjectInput(schema: Record<string, unknown>): string {
  const type = typeof schema.type === 'string' ? schema.type : undefined;
  const alternatives = Array.isArray(schema.anyOf) || Array.isArray(schema.oneOf);
  const options = [...((schema.anyOf as unknown[]) ?? []), ...((schema.oneOf as unknown[]) ?? [])] as { type?: unknown }[];
  if (options.length === 2 && options.some((o) => o?.type === 'null') && options.some((o) => o?.type === 'object')) {
    return 'a nullable object, but a tool\'s arguments are always one JSON object (no arguments come as {}); drop v.nullable(...) and write v.object({...})';
  }
  const what = type ? `a schema of type "${type}"` : alternatives ? 'a schema with alternatives (a union or variant)' : 'a schema that is not an object';
  const fix = alternatives
    ? "write one v.object({...}) with the alternatives' fields as v.optional(...), and check the combination in handle"
    : type === 'array'
      ? 'write v.object({ items: v.array(...) })'
      : type === 'string' || type === 'number' || type === 'boolean'
        ? `write v.object({ value: v.${type}() })`
        : type === 'integer'
          ? 'write v.object({ value: v.pipe(v.number(), v.integer()) })'
          : 'write v.object({...})';
  return `${what}, but a tool's arguments are one JSON object; ${fix}`;
}

/** The definition → tools.json, or a PluginBuildError naming the bad field. */
export function manifestFromDefinition(def: PluginDefinition, pkg: PackageInfo): ToolsJson {
  const d = def as unknown as Record<string, unknown>;
  if (typeof d.isReady !== 'function') throw new PluginBuildError('plugin isReady: must be a function returning true when the page is logged in and usable');
  if (!Array.isArray(d.tools)) throw new PluginBuildError('plugin tools: must be an array of defineTool(...) results');
  if (d.urlPatterns === undefined) {
    throw new PluginBuildError("plugin urlPatterns: missing; list the app's pages as Chrome match patterns, e.g. urlPatterns: ['https://app.example.com/*']");
  }
  const tools = (d.tools as unknown[]).map((t, i) => {
    const tool = t as Record<string, unknown>;
    const label = `tools.${i}${typeof tool?.name === 'string' ? ` (${tool.name})` : ''}`;
    if (typeof tool !== 'object' || tool === null) throw new PluginBuildError(`${label}: must be a defineTool(...) result`);
    if (typeof tool.name !== 'string' || tool.name === '') throw new PluginBuildError(`${label}.name: missing; give each tool a lowercase snake_case name, e.g. name: 'list_items'`);
    if (!TOOL_NAME_RE.test(tool.name)) {
      const fixed = tool.name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^[_0-9]+|_+$/g, '');
      throw new PluginBuildError(
        `${label}.name: ${JSON.stringify(tool.name)} is not lowercase snake_case (a-z, 0-9 and _, starting with a letter)${TOOL_NAME_RE.test(fixed) ? `; e.g. name: '${fixed}'` : ''}`,
      );
    }
    const earlier = (d.tools as unknown[]).findIndex((o) => (o as Record<string, unknown> | null)?.name === tool.name);
    if (earlier !== i) throw new PluginBuildError(`${label}.name: tools.${earlier} is named "${tool.name}" too; tool names must be unique within the plugin, rename one`);
    if (typeof tool.description !== 'string' || tool.description.trim() === '') {
      throw new PluginBuildError(`${label}.description: missing; say what the tool does and what it returns, for the agent choosing it, e.g. description: 'List items, newest first.'`);
    }
    if (typeof tool.handle !== 'function') throw new PluginBuildError(`${label}.handle: must be a function`);
    if (!isValibotSchema(tool.input)) throw new PluginBuildError(`${label}.input: must be a valibot schema (v.object({...}))`);
    if (!isValibotSchema(tool.output)) throw new PluginBuildError(`${label}.output: must be a valibot schema`);
    const notJson = nonJsonInput(tool.input, '');
    if (notJson) {
      throw new PluginBuildError(
        `${label}.input${notJson.path ? `.${notJson.path}` : ''}: v.${notJson.type}() cannot come in JSON arguments, so no agent could call the tool; use ${NON_JSON_TYPES[notJson.type]}`,
      );
    }
    const notJsonOut = nonJsonInput(tool.output, '', 0, NON_JSON_OUTPUT_TYPES);
    if (notJsonOut) {
      throw new PluginBuildError(
        `${label}.output${notJsonOut.path ? `.${notJsonOut.path}` : ''}: v.${notJsonOut.type}() cannot be sent as JSON (${notJsonOut.type === 'bigint' ? 'every call returning one would fail' : 'the agent would get {} or nothing'}); use ${NON_JSON_OUTPUT_TYPES[notJsonOut.type]}`,
      );
    }
    const inputSchema = jsonSchemaOf(tool.input, 'input');
    // MCP tool arguments are one JSON object: the input must be a v.object (or looseObject …).
    if (inputSchema.type !== 'object') throw new PluginBuildError(`${label}.input: ${notObjectInput(inputSchema)}`);
    const outputSchema = jsonSchemaOf(tool.output, 'output');
    // The server refuses these at discovery (plugin-package.ts); checked before Ajv compiles the input.
    for (const [key, schema] of [['input', inputSchema], ['output', outputSchema]] as const) {
      const tooLarge = pluginSchemaSizeProblem(schema);
      if (tooLarge) throw new PluginBuildError(`${label}.${key}: ${tooLarge}`);
    }
    const problem = inputSchemaProblem(inputSchema);
    if (problem) throw new PluginBuildError(`${label}.input: the JSON Schema of its arguments does not compile: ${problem}`);
    return {
      name: tool.name as string,
      description: tool.description as string,
      inputSchema,
      outputSchema,
      ...(tool.annotations !== undefined ? { annotations: tool.annotations } : {}),
    };
  });
  const raw = {
    name: d.name,
    displayName: d.displayName,
    description: d.description,
    version: pkg.version,
    sdkVersion: SDK_VERSION,
    urlPatterns: d.urlPatterns,
    excludePatterns: d.excludePatterns ?? [],
    ...(d.homepage !== undefined ? { homepage: d.homepage } : {}),
    ...(d.iconSvg !== undefined ? { iconSvg: d.iconSvg } : {}),
    ...(d.configSchema !== undefined ? { configSchema: d.configSchema } : {}),
    tools,
  };
  for (const key of ['urlPatterns', 'excludePatterns'] as const) {
    const list = raw[key];
    if (!Array.isArray(list)) continue;
    list.forEach((p: unknown, i: number) => {
      if (typeof p === 'string' && !isMatchPattern(p)) {
        throw new PluginBuildError(`plugin ${key}.${i}: ${JSON.stringify(p)} is not a Chrome match pattern (scheme://host/path, e.g. "https://app.example.com/*").${patternSuggestion(p)}`);
      }
    });
  }
  const parsed = parseToolsJson(raw);
  if (!parsed.ok) throw new PluginBuildError(`plugin ${parsed.error}`);
  if (parsed.value.name !== pkg.pluginName) {
    throw new PluginBuildError(`plugin name: "${parsed.value.name}" does not match package.json name ${pkg.name} (expected "${pkg.pluginName}")`);
  }
  return parsed.value;
}
