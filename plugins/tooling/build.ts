/**
 * `opentabs plugin build [dir] [--watch]`:
 *   1. checks package.json (name opentabs-plugin-<name> / @scope/opentabs-plugin-<name>, version);
 *   2. loads the plugin definition in Bun (src/index.ts bundled to a temp ESM file) and derives
 *      dist/tools.json from it: names, descriptions, urlPatterns, configSchema, JSON Schemas of
 *      each tool's valibot input/output (via @valibot/to-json-schema) — validated with the same
 *      schema the server uses (server/protocol/plugin-manifest.ts), errors name the field;
 *   3. bundles src/index.ts + the SDK runtime as an IIFE (dist/adapter.js) with esbuild;
 *   4. POSTs /reload to a running server, when one is reachable.
 */
import { mkdir, readFile, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { randomBytes } from 'node:crypto';
import * as esbuild from 'esbuild';
import { toJsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import { MAX_ADAPTER_BYTES } from '../../server/protocol/limits.ts';
import { parseToolsJson, pluginNameFromPackage, type ToolsJson } from '../../server/protocol/plugin-manifest.ts';
import { writeOutput } from './write-file.ts';
import { SDK_VERSION } from '../sdk/version.ts';
import { isPluginDefinition, type PluginDefinition } from '../sdk/define.ts';
import { ROOT_NODE_MODULES, SDK_DIR } from './paths.ts';
import { notifyServerReload } from './reload.ts';
import { describeTypeErrors, typecheckPlugin } from './typecheck.ts';

export class PluginBuildError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PluginBuildError';
  }
}

export interface BuildOptions {
  watch?: boolean;
  /** POST /reload to a running server after the build (default true). */
  reload?: boolean;
  /** Config dir of the server to notify (default OPENTABS_CONFIG_DIR / ~/.opentabs). */
  configDir?: string;
  /** Progress lines (default: console.log). */
  log?: (line: string) => void;
  /**
   * Type-check with the project's tsconfig.json first and refuse to build on errors (one-shot
   * builds only; default false here, the CLI turns it on). See typecheck.ts.
   */
  typecheck?: boolean;
}

export interface BuildResult {
  name: string;
  toolsJsonPath: string;
  adapterPath: string;
  adapterBytes: number;
  tools: string[];
  warnings: string[];
  /** True when a running server accepted POST /reload. */
  reloaded: boolean;
}

export interface WatchHandle {
  /** Result of the first build (a failure rejects). */
  first: BuildResult;
  stop(): Promise<void>;
}

interface PackageInfo {
  name: string;
  version: string;
  pluginName: string;
  /** Non-fatal package.json problems, printed with the build. */
  warnings: string[];
}

async function readPackage(dir: string): Promise<PackageInfo> {
  let pkg: Record<string, unknown>;
  try {
    pkg = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8'));
  } catch (err) {
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

function entryOf(dir: string): string {
  for (const candidate of ['src/index.ts', 'src/index.tsx', 'src/index.js']) {
    const p = join(dir, candidate);
    if (existsSync(p)) return p;
  }
  throw new PluginBuildError(`entry: ${join(dir, 'src/index.ts')} is missing (the plugin's definePlugin(...) module)`);
}

/** esbuild settings shared by both bundles: the SDK and valibot resolve even outside this repo. */
function resolveOptions(dir: string): Pick<esbuild.BuildOptions, 'alias' | 'nodePaths' | 'absWorkingDir' | 'logLevel'> {
  return {
    alias: { '@opentabs/sdk': SDK_DIR },
    nodePaths: [join(dir, 'node_modules'), ROOT_NODE_MODULES],
    absWorkingDir: dir,
    logLevel: 'silent',
  };
}

function describeEsbuildFailure(err: unknown): string {
  const errors = (err as { errors?: esbuild.Message[] }).errors;
  if (errors?.length) {
    return errors
      .slice(0, 5)
      .map((e) => `${e.location ? `${e.location.file}:${e.location.line}:${e.location.column}: ` : ''}${e.text}`)
      .join('\n');
  }
  return (err as Error).message;
}

/** Bundle the plugin module for Bun and import it, to read the definition. */
async function loadDefinition(dir: string, entry: string): Promise<PluginDefinition> {
  const out = join(tmpdir(), `opentabs-plugin-def-${randomBytes(6).toString('hex')}.mjs`);
  try {
    try {
      await esbuild.build({
        ...resolveOptions(dir),
        entryPoints: [entry],
        bundle: true,
        format: 'esm',
        platform: 'neutral',
        mainFields: ['module', 'main'],
        target: 'es2022',
        outfile: out,
        write: true,
      });
    } catch (err) {
      throw new PluginBuildError(`compile failed:\n${describeEsbuildFailure(err)}`);
    }
    let mod: Record<string, unknown>;
    try {
      mod = (await import(out)) as Record<string, unknown>;
    } catch (err) {
      throw new PluginBuildError(`loading ${entry} failed (keep page access inside handlers and isReady, not at module top level): ${(err as Error).message}`);
    }
    const def = isPluginDefinition(mod.default) ? mod.default : Object.values(mod).find(isPluginDefinition);
    if (!def) throw new PluginBuildError(`${entry}: export the result of definePlugin({...}) (default export or named)`);
    return def as PluginDefinition;
  } finally {
    await rm(out, { force: true });
  }
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

/** The definition → tools.json, or a PluginBuildError naming the bad field. */
export function manifestFromDefinition(def: PluginDefinition, pkg: PackageInfo): ToolsJson {
  const d = def as unknown as Record<string, unknown>;
  if (typeof d.isReady !== 'function') throw new PluginBuildError('plugin isReady: must be a function returning true when the page is logged in and usable');
  if (!Array.isArray(d.tools)) throw new PluginBuildError('plugin tools: must be an array of defineTool(...) results');
  const tools = (d.tools as unknown[]).map((t, i) => {
    const tool = t as Record<string, unknown>;
    const label = `tools.${i}${typeof tool?.name === 'string' ? ` (${tool.name})` : ''}`;
    if (typeof tool !== 'object' || tool === null) throw new PluginBuildError(`${label}: must be a defineTool(...) result`);
    if (typeof tool.handle !== 'function') throw new PluginBuildError(`${label}.handle: must be a function`);
    if (!isValibotSchema(tool.input)) throw new PluginBuildError(`${label}.input: must be a valibot schema (v.object({...}))`);
    if (!isValibotSchema(tool.output)) throw new PluginBuildError(`${label}.output: must be a valibot schema`);
    return {
      name: tool.name as string,
      description: tool.description as string,
      inputSchema: jsonSchemaOf(tool.input, 'input'),
      outputSchema: jsonSchemaOf(tool.output, 'output'),
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
  const parsed = parseToolsJson(raw);
  if (!parsed.ok) throw new PluginBuildError(`plugin ${parsed.error}`);
  if (parsed.value.name !== pkg.pluginName) {
    throw new PluginBuildError(`plugin name: "${parsed.value.name}" does not match package.json name ${pkg.name} (expected "${pkg.pluginName}")`);
  }
  return parsed.value;
}

/** The IIFE adapter: the plugin module plus the runtime that registers it in the page. */
function adapterBuildOptions(dir: string, entry: string): esbuild.BuildOptions {
  const runtime = join(SDK_DIR, 'runtime.ts');
  return {
    ...resolveOptions(dir),
    stdin: {
      contents: `import * as plugin from ${JSON.stringify(entry)};\nimport { startAdapterFromModule } from ${JSON.stringify(runtime)};\nstartAdapterFromModule(plugin);\n`,
      resolveDir: dir,
      sourcefile: 'opentabs-adapter-entry.ts',
      loader: 'ts',
    },
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    minifySyntax: true,
    legalComments: 'none',
    write: false,
    outfile: join(dir, 'dist', 'adapter.js'),
  };
}

/** Heuristic: code that would need 'unsafe-eval' breaks on strict-CSP pages. */
function evalWarnings(code: string): string[] {
  const w: string[] = [];
  if (/\bnew Function\s*\(/.test(code)) w.push('adapter contains `new Function(...)`: it will fail on pages with a strict Content-Security-Policy');
  if (/(^|[^.\w$])eval\s*\(/.test(code)) w.push('adapter contains `eval(...)`: it will fail on pages with a strict Content-Security-Policy');
  return w;
}

async function emit(dir: string, entry: string, pkg: PackageInfo, adapterCode: string, o: BuildOptions): Promise<BuildResult> {
  const def = await loadDefinition(dir, entry);
  const manifest = manifestFromDefinition(def, pkg);
  const bytes = Buffer.byteLength(adapterCode);
  if (bytes > MAX_ADAPTER_BYTES) throw new PluginBuildError(`dist/adapter.js: ${bytes} bytes is over the ${MAX_ADAPTER_BYTES}-byte limit`);
  const warnings = [...pkg.warnings, ...evalWarnings(adapterCode)];
  const distDir = join(dir, 'dist');
  await mkdir(distDir, { recursive: true });
  const adapterPath = join(distDir, 'adapter.js');
  const toolsJsonPath = join(distDir, 'tools.json');
  // adapter first, tools.json last: a watcher that sees the new tools.json sees the new adapter too.
  await writeOutput(adapterPath, adapterCode);
  await writeOutput(toolsJsonPath, JSON.stringify(manifest, null, 2) + '\n');
  const log = o.log ?? ((l: string) => console.log(l));
  for (const w of warnings) log(`warning: ${w}`);
  log(`Built ${pkg.name}@${pkg.version}: ${manifest.tools.length === 1 ? '1 tool' : `${manifest.tools.length} tools`}, adapter ${bytes} bytes → ${distDir}`);
  let reloaded = false;
  if (o.reload !== false) {
    reloaded = await notifyServerReload(o.configDir);
    if (reloaded) log('Reloaded the running OpenTabs server');
  }
  return { name: manifest.name, toolsJsonPath, adapterPath, adapterBytes: bytes, tools: manifest.tools.map((t) => `${manifest.name}_${t.name}`), warnings, reloaded };
}

export async function buildPlugin(dirArg: string, o: BuildOptions & { watch: true }): Promise<WatchHandle>;
export async function buildPlugin(dirArg: string, o?: BuildOptions & { watch?: false }): Promise<BuildResult>;
export async function buildPlugin(dirArg: string, o?: BuildOptions): Promise<BuildResult | WatchHandle>;
export async function buildPlugin(dirArg: string, o: BuildOptions = {}): Promise<BuildResult | WatchHandle> {
  const dir = resolve(dirArg || '.');
  if (!existsSync(dir)) throw new PluginBuildError(`plugin folder ${dir} does not exist`);
  const pkg = await readPackage(dir);
  const entry = entryOf(dir);

  if (!o.watch) {
    if (o.typecheck) {
      const checked = await typecheckPlugin(dir);
      if (checked.ran && checked.errors.length > 0) throw new PluginBuildError(describeTypeErrors(dir, checked.errors));
      (o.log ?? console.log)(checked.ran ? 'Type check passed.' : `Type check skipped: ${checked.why}.`);
    }
    let out: esbuild.BuildResult;
    try {
      out = await esbuild.build(adapterBuildOptions(dir, entry));
    } catch (err) {
      throw new PluginBuildError(`compile failed:\n${describeEsbuildFailure(err)}`);
    }
    return emit(dir, entry, pkg, out.outputFiles![0]!.text, o);
  }

  // Watch: esbuild rebuilds on source changes; each successful build re-derives tools.json.
  const log = o.log ?? ((l: string) => console.log(l));
  let resolveFirst!: (r: BuildResult) => void;
  let rejectFirst!: (e: unknown) => void;
  const first = new Promise<BuildResult>((res, rej) => {
    resolveFirst = res;
    rejectFirst = rej;
  });
  let builds = 0;
  let chain: Promise<unknown> = Promise.resolve();
  const ctx = await esbuild.context({
    ...adapterBuildOptions(dir, entry),
    plugins: [
      {
        name: 'opentabs-emit',
        setup(b) {
          b.onEnd((result) => {
            const n = builds++;
            const run = async () => {
              if (result.errors.length) {
                const err = new PluginBuildError(`compile failed:\n${describeEsbuildFailure(result)}`);
                if (n === 0) rejectFirst(err);
                else log(`Build failed: ${err.message}`);
                return;
              }
              try {
                const r = await emit(dir, entry, pkg, result.outputFiles![0]!.text, o);
                if (n === 0) resolveFirst(r);
              } catch (err) {
                if (n === 0) rejectFirst(err);
                else log(`Build failed: ${(err as Error).message}`);
              }
            };
            chain = chain.then(run, run);
            return chain as Promise<void>;
          });
        },
      },
    ],
  });
  await ctx.watch();
  try {
    const r = await first;
    return {
      first: r,
      stop: async () => {
        await ctx.dispose();
      },
    };
  } catch (err) {
    await ctx.dispose();
    throw err;
  }
}
