/**
 * `opentabs plugin build [dir] [--watch]`:
 *   1. checks package.json (name opentabs-plugin-<name> / @scope/opentabs-plugin-<name>, version);
 *   2. loads the plugin definition in Bun (src/index.ts bundled to a temp ESM file) and derives
 *      dist/tools.json from it (manifest.ts);
 *   3. bundles src/index.ts + the SDK runtime as an IIFE (dist/adapter.js) with esbuild;
 *   4. POSTs /reload to a running server, when one is reachable.
 */
import { mkdir, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { randomBytes } from 'node:crypto';
import * as esbuild from 'esbuild';
import { MAX_ADAPTER_BYTES } from '../../server/protocol/limits.ts';
import { toolsDigest, toolsDigestComment } from '../../server/protocol/tools-digest.ts';
import { PLUGIN_FILES, pluginFileProblem, pluginFilesProblem, toolsJsonSizeProblem } from '../../server/protocol/plugin-package.ts';
import { writeOutput } from './write-file.ts';
import { isPluginDefinition, type PluginDefinition } from '../sdk/define.ts';
import { ROOT_NODE_MODULES, SDK_DIR } from './paths.ts';
import { notifyServerReload } from './reload.ts';
import { describeTypeErrors, typecheckPlugin } from './typecheck.ts';
import { missingModuleHint } from './module-hints.ts';
import { PluginBuildError } from './build-error.ts';
import { manifestFromDefinition, patternWarnings, readPackage, toolNameWarnings, type PackageInfo } from './manifest.ts';

export { PluginBuildError } from './build-error.ts';
export { manifestFromDefinition } from './manifest.ts';


export interface BuildOptions {
  watch?: boolean;
  /** POST /reload to a running server after the build (default true). */
  reload?: boolean;
  /** Config dir of the server to notify (default OPENTABS_CONFIG_DIR / ~/.opentabs). */
  configDir?: string;
  /** Progress lines (default: console.log). */
  log?: (line: string) => void;
  /**
   * Type-check with the project's tsconfig.json (default false here, the CLI turns it on; see
   * typecheck.ts). One-shot builds check first and refuse to build on errors. Watch builds emit at
   * once (hot reload stays fast) and check after each rebuild, logging the errors as a warning.
   */
  typecheck?: boolean;
  /**
   * Watch builds: a first build that fails is logged and watching goes on (the returned promise
   * resolves with the first build that succeeds) instead of rejecting. The CLI turns it on.
   */
  keepWatching?: boolean;
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

function describeEsbuildFailure(err: unknown, dir: string): string {
  const errors = (err as { errors?: esbuild.Message[] }).errors;
  if (errors?.length) {
    return errors
      .slice(0, 5)
      .map((e) => {
        const line = `${e.location ? `${e.location.file}:${e.location.line}:${e.location.column}: ` : ''}${e.text}`;
        const hint = esbuildHint(e.text, dir);
        return hint ? `${line}\n  ${hint}` : line;
      })
      .join('\n');
  }
  return (err as Error).message;
}

/**
 * What to do about the bundler errors plugin authors meet (esbuild's own notes speak of its
 * options, "platform: 'node'" or "mark the path as external", which are no fix for an adapter).
 */
function esbuildHint(text: string, dir: string): string | undefined {
  if (/^Top-level await is currently not supported with the "iife" output format/.test(text)) {
    return 'dist/adapter.js is a plain script run in the page, so the module cannot await at its top level: move the await into a handler or isReady.';
  }
  const missing = /^Could not resolve "([^"]+)"/.exec(text)?.[1];
  return missing === undefined ? undefined : missingModuleHint(missing, dir);
}

/** Names a module can only use in a page: the build runs the module outside one to read its tools. */
const PAGE_GLOBALS = /\b(document|window|location|navigator|localStorage|sessionStorage|history|customElements|HTMLElement|Element|Node|MutationObserver|getComputedStyle)\b/;

/**
 * Why importing the plugin's module failed, with what points at the cause: esbuild's warnings
 * about imports that do not exist (`v.numbr()` becomes `(void 0)()`, whose message names nothing
 * of the source), and the page-access hint only when the error is about a page global.
 */
function loadFailure(dir: string, entry: string, err: unknown, warnings: esbuild.Message[]): string {
  const message = err instanceof Error ? err.message : String(err);
  const lines = [`loading ${relative(dir, entry)} failed: ${message}`];
  const undefinedImports = warnings.filter((w) => w.id === 'import-is-undefined' || /will always be undefined/.test(w.text)).slice(0, 5);
  for (const w of undefinedImports) {
    lines.push(`  ${w.location ? `${w.location.file}:${w.location.line}:${w.location.column}: ` : ''}${w.text}`);
  }
  if (undefinedImports.length) lines.push('  (a misspelled import or member, e.g. v.numbr for v.number: the type check names it too)');
  if ((err instanceof ReferenceError || /is not defined|Can't find variable/.test(message)) && PAGE_GLOBALS.test(message)) {
    lines.push('  The build runs the module outside the page to read its tools: keep page access (document, window, location …) inside handlers and isReady, not at the module\'s top level.');
  }
  return lines.join('\n');
}

/** Bundle the plugin module for Bun and import it, to read the definition. */
async function loadDefinition(dir: string, entry: string): Promise<PluginDefinition> {
  const out = join(tmpdir(), `opentabs-plugin-def-${randomBytes(6).toString('hex')}.mjs`);
  try {
    let warnings: esbuild.Message[] = [];
    try {
      ({ warnings } = await esbuild.build({
        ...resolveOptions(dir),
        entryPoints: [entry],
        bundle: true,
        format: 'esm',
        platform: 'neutral',
        mainFields: ['module', 'main'],
        target: 'es2022',
        outfile: out,
        write: true,
      }));
    } catch (err) {
      throw new PluginBuildError(`compile failed:\n${describeEsbuildFailure(err, dir)}`);
    }
    let mod: Record<string, unknown>;
    try {
      mod = (await import(out)) as Record<string, unknown>;
    } catch (err) {
      throw new PluginBuildError(loadFailure(dir, entry, err, warnings));
    }
    const def = isPluginDefinition(mod.default) ? mod.default : Object.values(mod).find(isPluginDefinition);
    if (!def) throw new PluginBuildError(`${entry}: export the result of definePlugin({...}) (default export or named)`);
    return def as PluginDefinition;
  } finally {
    await rm(out, { force: true });
  }
}

/**
 * The IIFE adapter: the plugin module plus the runtime that registers it in the page. The module
 * is imported after the runtime (esbuild inlines the import()), so a module that throws while
 * loading in the page still leaves a handle that answers calls with that error.
 */
function adapterBuildOptions(dir: string, entry: string, pluginName: string): esbuild.BuildOptions {
  const runtime = join(SDK_DIR, 'runtime.ts');
  return {
    ...resolveOptions(dir),
    stdin: {
      contents:
        `import { startAdapterFromModule, startFailedAdapter } from ${JSON.stringify(runtime)};\n` +
        `import(${JSON.stringify(entry)}).then(startAdapterFromModule).catch((err) => startFailedAdapter(${JSON.stringify(pluginName)}, err));\n`,
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
    metafile: true,
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

/** The inputs that take most of the adapter, for the message of an adapter over the size limit. */
function largestInputs(dir: string, metafile: esbuild.Metafile | undefined): string {
  const output = metafile ? Object.values(metafile.outputs)[0] : undefined;
  if (!output) return '';
  const top = Object.entries(output.inputs)
    .sort((a, b) => b[1].bytesInOutput - a[1].bytesInOutput)
    .slice(0, 3)
    .map(([file, i]) => {
      // esbuild names inputs relative to the plugin folder: those outside it are shown absolute.
      const abs = resolve(dir, file.replace(/^[a-z-]+:/, ''));
      return `${abs.startsWith(dir + '/') ? relative(dir, abs) : abs} (${i.bytesInOutput} bytes)`;
    });
  return top.length ? `; the largest parts: ${top.join(', ')}` : '';
}

/**
 * The server loads a plugin only from regular files inside its folder (plugin-package.ts): a
 * package.json, dist/tools.json or dist/adapter.js that is a link leading out of the folder, or
 * something other than a file, fails the build as it would fail `opentabs plugin add`.
 */
async function refuseNotOwnFiles(dir: string, rels?: readonly string[]): Promise<void> {
  const problem = await pluginFilesProblem(dir, rels);
  if (problem) throw new PluginBuildError(problem);
}

async function emit(dir: string, entry: string, pkg: PackageInfo, adapterCode: string, o: BuildOptions, metafile?: esbuild.Metafile): Promise<BuildResult> {
  const def = await loadDefinition(dir, entry);
  const manifest = manifestFromDefinition(def, pkg);
  // The server checks tools.json against this (a tools.json edited by hand no longer loads).
  adapterCode += toolsDigestComment(toolsDigest(manifest.tools));
  const bytes = Buffer.byteLength(adapterCode);
  if (bytes > MAX_ADAPTER_BYTES) {
    throw new PluginBuildError(
      `dist/adapter.js: ${bytes} bytes is over the ${MAX_ADAPTER_BYTES}-byte limit (the extension injects it into every page of the app)${largestInputs(dir, metafile)}. ` +
        'Bundle less: fetch data from the app at call time instead of embedding it, or use a smaller dependency.',
    );
  }
  const toolsJsonText = JSON.stringify(manifest, null, 2) + '\n';
  const toolsTooLarge = toolsJsonSizeProblem(Buffer.byteLength(toolsJsonText));
  if (toolsTooLarge) throw new PluginBuildError(toolsTooLarge);
  // Read again before every write: in watch mode a file may have become a link since the start.
  await refuseNotOwnFiles(dir);
  // A dist/ that is a link out of the folder would put the outputs outside it: refused before writing.
  const distProblem = await pluginFileProblem(dir, 'dist', 'folder');
  if (distProblem) throw new PluginBuildError(distProblem);
  const warnings = [...pkg.warnings, ...patternWarnings(manifest.urlPatterns), ...toolNameWarnings(manifest), ...evalWarnings(adapterCode)];
  const distDir = join(dir, 'dist');
  await mkdir(distDir, { recursive: true });
  const adapterPath = join(distDir, 'adapter.js');
  const toolsJsonPath = join(distDir, 'tools.json');
  // adapter first, tools.json last: a watcher that sees the new tools.json sees the new adapter too.
  await writeOutput(adapterPath, adapterCode);
  await writeOutput(toolsJsonPath, toolsJsonText);
  // Checked again once written: a dist/ swapped for a link meanwhile.
  await refuseNotOwnFiles(dir, [PLUGIN_FILES.toolsJson, PLUGIN_FILES.adapter]);
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
  await refuseNotOwnFiles(dir);
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
      out = await esbuild.build(adapterBuildOptions(dir, entry, pkg.pluginName));
    } catch (err) {
      throw new PluginBuildError(`compile failed:\n${describeEsbuildFailure(err, dir)}`);
    }
    return emit(dir, entry, pkg, out.outputFiles![0]!.text, o, out.metafile);
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
  let firstSettled = false;
  let chain: Promise<unknown> = Promise.resolve();
  // One tsc at a time; edits made while it runs get one more check, whose result is the one shown.
  let checking: Promise<void> | null = null;
  let checkAgain = false;
  // Stopping the watch ends a type check in flight rather than waiting for it.
  const stopChecks = new AbortController();
  const checkTypes = () => {
    if (!o.typecheck) return;
    if (checking) {
      checkAgain = true;
      return;
    }
    checking = (async () => {
      do {
        checkAgain = false;
        const checked = await typecheckPlugin(dir, stopChecks.signal);
        if (stopChecks.signal.aborted) return;
        if (checkAgain) continue;
        if (!checked.ran) log(`Type check skipped: ${checked.why}.`);
        else if (checked.errors.length === 0) log('Type check passed.');
        else log(`warning: ${describeTypeErrors(dir, checked.errors)}\n  (watch mode loaded this build anyway; fix them, the tools may misbehave until then)`);
      } while (checkAgain);
    })().finally(() => {
      checking = null;
    });
  };
  const ctx = await esbuild.context({
    ...adapterBuildOptions(dir, entry, pkg.pluginName),
    plugins: [
      {
        name: 'opentabs-emit',
        setup(b) {
          // package.json is no import, but a version bump or rename must rebuild tools.json too.
          const escaped = entry.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
          b.onResolve({ filter: new RegExp(`^${escaped}$`) }, (args) => ({ path: args.path, watchFiles: [join(dir, 'package.json')] }));
          b.onEnd((result) => {
            const n = builds++;
            const failed = (err: unknown) => {
              if (!firstSettled && !o.keepWatching) {
                firstSettled = true;
                rejectFirst(err);
              } else log(`Build failed: ${(err as Error).message}${firstSettled ? '' : '\nFix it and save: watching for changes …'}`);
            };
            const run = async () => {
              if (result.errors.length) return failed(new PluginBuildError(`compile failed:\n${describeEsbuildFailure(result, dir)}`));
              try {
                // Read again on every rebuild: the version (or anything else) may have changed.
                const current = n === 0 ? pkg : await readPackage(dir);
                const r = await emit(dir, entry, current, result.outputFiles![0]!.text, o, result.metafile);
                if (!firstSettled) {
                  firstSettled = true;
                  resolveFirst(r);
                }
                checkTypes();
              } catch (err) {
                failed(err);
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
        stopChecks.abort();
        await ctx.dispose();
        checkAgain = false;
        await checking;
      },
    };
  } catch (err) {
    await ctx.dispose();
    throw err;
  }
}
