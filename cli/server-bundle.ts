/**
 * The start-up bundle: `opentabs start` — the CLI's start command and server/serve.ts with
 * everything they import (hono, valibot, ajv …) — as one CommonJS file with JSC bytecode beside it
 * (`bun build --bytecode`), so start skips transpiling, resolving and parsing ≈ 120 modules: ≈ 60 ms
 * less until the tools are listed. The other commands are not in it (a build plugin leaves their
 * imports to the source files); cli/main.ts uses it for `start` only.
 *
 * It is a cache, never the only way to run: `npm install` builds it (postinstall, in place: the
 * bundler writes `import.meta.dir` as an absolute path), and `opentabs start` uses it only while it
 * is fresh: same Bun version, same folder, every source file it holds and every dependency's
 * package.json unchanged (size and mtime recorded when it was built). Otherwise, as after editing
 * a source file in a checkout, start imports the sources as before. OPENTABS_NO_BUNDLE=1 forces the
 * sources. Two lazily loaded parts stay outside the bundle and are imported from source when used
 * (server/source-dir.ts): the extension installer (esbuild cannot be bundled) and the plugin
 * drafter.
 */
import { mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { shellWord } from '../server/cli-command.ts';
import { AJV_FILE, BUNDLE_FILE, DEFAULT_PATHS, DEPENDENCY_MARKER, ROOT, STAMP_FILE, VALIDATORS_FILE, dirOf, fileState, type BundlePaths, type Stamp } from './bundle-load.ts';

export { AJV_FILE, BUNDLE_FILE, VALIDATORS_FILE, bundleStaleReason, loadBundle, loadServer, type BundlePaths, type StartBundle } from './bundle-load.ts';

/**
 * Imports the bundle leaves to the source files (absolute paths: the bundle is used only in the
 * folder it was built in): the CLI commands other than start, which never run from it, and the
 * compiled binary's embedded extension, which loads the extension build and esbuild.
 */
function sourceImports(root: string): import('bun').BunPlugin {
  const commands = join(root, 'cli', 'commands');
  return {
    name: 'opentabs-source-imports',
    setup(build) {
      build.onResolve({ filter: /^\.\.?\/.*\.ts$/ }, (args) => {
        const path = resolve(args.resolveDir, args.path);
        const command = dirname(path) === commands && basename(path) !== 'start.ts';
        return command || path === join(root, 'cli', 'embedded-extension.ts') ? { path, external: true } : undefined;
      });
    },
  };
}

/** A build plugin that gives modules (by absolute path) the contents computed for them. */
function replacing(name: string, contents: Map<string, string>): import('bun').BunPlugin {
  const escape = (path: string) => path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return {
    name,
    setup(build) {
      build.onLoad({ filter: new RegExp(`^(${[...contents.keys()].map(escape).join('|')})$`) }, (args) => ({ contents: contents.get(args.path)!, loader: 'js' }));
    },
  };
}

/**
 * Two modules replaced by what they compute, computed here at build time, so a bundled server does
 * neither at run time: server/tools/builtin-defs.ts by its data (no valibot schemas built or
 * converted at start-up) and server/tools/builtin-validators.ts by Ajv's standalone validators for
 * those schemas (no compile on a built-in's first call), with the draft-07 meta-schema's validator
 * (schema-check.ts). The validators, ≈ 300 KB of code, are a bundle of their own (VALIDATORS_FILE)
 * that the server loads on its first built-in call or schema check: inside the start-up bundle
 * they would cost every start ≈ 3 ms. What the two were computed from is then not in the bundle,
 * so those files are returned for the stamp (an edited declaration makes the bundle stale like any
 * other input).
 */
async function precomputedBuiltins(root: string, dir: string, tmp: string): Promise<{ plugin: import('bun').BunPlugin; inputs: string[]; outputs: string[] }> {
  const tools = join(root, 'server', 'tools');
  const defsFile = join(tools, 'builtin-defs.ts');
  const validatorsFile = join(tools, 'builtin-validators.ts');
  const generator = join(tools, 'builtin-validators-source.ts');
  const { BROWSER_TOOLS } = (await import(defsFile)) as typeof import('../server/tools/builtin-defs.ts');
  const { standaloneValidatorsSource } = (await import(generator)) as typeof import('../server/tools/builtin-validators-source.ts');
  const json = JSON.stringify(BROWSER_TOOLS);
  // Only plain JSON survives the trip; anything else (undefined, a function) fails the build.
  if (!Bun.deepEquals(JSON.parse(json), BROWSER_TOOLS, true)) throw new Error(`${defsFile}: BROWSER_TOOLS is not plain JSON data`);
  // The validators' own bundle: built from the real module path, so its imports of Ajv's runtime
  // helpers resolve from server/tools/ as the source's would.
  const validators = await Bun.build({
    entrypoints: [validatorsFile],
    plugins: [replacing('opentabs-builtin-validators', new Map([[validatorsFile, standaloneValidatorsSource(BROWSER_TOOLS)]]))],
    outdir: tmp,
    target: 'bun',
    format: 'cjs',
    bytecode: true,
    minify: { whitespace: true, syntax: true },
    naming: { entry: VALIDATORS_FILE },
  });
  if (!validators.success) throw new Error(validators.logs.map((l) => String(l)).join('\n') || `bun build of the built-in validators failed`);

  const graph = await Bun.build({ entrypoints: [defsFile, generator], target: 'bun', metafile: true });
  if (!graph.success) throw new Error(graph.logs.map((l) => String(l)).join('\n') || `bun build of ${defsFile} failed`);
  const loader = [
    '// The precompiled validators are a bundle of their own beside this one, loaded on the first built-in',
    '// call or schema check; if it cannot be loaded, each validator is compiled as it would be from source.',
    `const file = ${JSON.stringify(join(dir, VALIDATORS_FILE))};`,
    'let loaded = {};',
    'try { loaded = require(file); } catch {}',
    'export const PRECOMPILED_BUILTINS = loaded.PRECOMPILED_BUILTINS ?? {};',
    'export const PRECOMPILED_META_SCHEMA = loaded.PRECOMPILED_META_SCHEMA;',
    '',
  ].join('\n');
  return {
    plugin: replacing('opentabs-precomputed-builtins', new Map([
      [defsFile, `export const BROWSER_TOOLS = JSON.parse(${JSON.stringify(json)});\n`],
      [validatorsFile, loader],
    ])),
    inputs: Object.keys(graph.metafile?.inputs ?? {}),
    outputs: validators.outputs.map((o) => o.path),
  };
}

/**
 * Ajv (with fast-uri and its other dependencies, ≈ 240 KB of the bundle's 650 KB) as a bytecode
 * file of its own beside the bundle, which the bundle requires where server/tools/ajv.ts loads Ajv:
 * on the first schema compile (a plugin or page tool's first call, a plugin folder checked afresh),
 * never on a start that finds its plugins unchanged. Inside the bundle its bytecode was loaded by
 * every start all the same (≈ 2 ms of the start's time until the tools are listed). The files it
 * was built from are returned for the stamp.
 */
async function ajvApart(root: string, dir: string, tmp: string): Promise<{ plugin: import('bun').BunPlugin; inputs: string[]; outputs: string[] }> {
  const loader = join(root, 'server', 'tools', 'ajv.ts');
  const built = await Bun.build({
    entrypoints: [require.resolve('ajv', { paths: [dirname(loader)] })],
    outdir: tmp,
    target: 'bun',
    format: 'cjs',
    bytecode: true,
    metafile: true,
    naming: { entry: AJV_FILE },
  });
  if (!built.success) throw new Error(built.logs.map((l) => String(l)).join('\n') || 'bun build of Ajv failed');
  const file = join(dir, AJV_FILE);
  return {
    plugin: {
      name: 'opentabs-ajv-apart',
      setup(build) {
        build.onResolve({ filter: /^ajv$/ }, (args) => (args.importer === loader ? { path: file, external: true } : undefined));
      },
    },
    inputs: Object.keys(built.metafile?.inputs ?? {}),
    outputs: built.outputs.map((o) => o.path),
  };
}

/**
 * server/plugins/loader-key.ts replaced by the key it computes, computed here from the same files:
 * the bundle is used only while they are unchanged, so a bundled start neither reads nor hashes
 * them. Those files are returned for the stamp.
 */
async function precomputedLoaderKey(root: string): Promise<{ plugin: import('bun').BunPlugin; inputs: string[] }> {
  const file = join(root, 'server', 'plugins', 'loader-key.ts');
  const { LOADER_FILES, computeLoaderKey } = (await import(file)) as typeof import('../server/plugins/loader-key.ts');
  const key = JSON.stringify(computeLoaderKey());
  const contents = [
    `export const LOADER_FILES = ${JSON.stringify(LOADER_FILES)};`,
    `export function computeLoaderKey() { return ${key}; }`,
    `export function loaderKey() { return ${key}; }`,
    '',
  ].join('\n');
  return {
    plugin: replacing('opentabs-precomputed-loader-key', new Map([[file, contents]])),
    inputs: LOADER_FILES.map((f) => join(root, 'server', f)),
  };
}

/**
 * Build the bundle (and its stamp, written last). Outputs are written beside their final names and
 * renamed into place; the stamp lists every input the bundler read.
 */
export async function buildServerBundle(p: BundlePaths = DEFAULT_PATHS): Promise<{ file: string; inputs: number; bytes: number }> {
  const dir = dirOf(p);
  const tmp = join(dir, `.bundle-${process.pid}-${Date.now()}`);
  mkdirSync(dir, { recursive: true });
  rmSync(join(dir, STAMP_FILE), { force: true });
  try {
    const builtins = await precomputedBuiltins(p.root, dir, tmp);
    const loaderKey = await precomputedLoaderKey(p.root);
    const ajv = await ajvApart(p.root, dir, tmp);
    const result = await Bun.build({
      entrypoints: [join(p.root, 'cli', 'start-bundle.ts')],
      plugins: [sourceImports(p.root), builtins.plugin, loaderKey.plugin, ajv.plugin],
      outdir: tmp,
      target: 'bun',
      format: 'cjs',
      bytecode: true,
      naming: { entry: BUNDLE_FILE },
      metafile: true,
    });
    if (!result.success) throw new Error(result.logs.map((l) => String(l)).join('\n') || 'bun build failed');
    const outputs: Record<string, number> = {};
    for (const path of [...result.outputs.map((o) => o.path), ...builtins.outputs, ...ajv.outputs]) {
      const name = relative(tmp, path);
      renameSync(path, join(dir, name));
      outputs[name] = statSync(join(dir, name)).size;
    }
    if (!(BUNDLE_FILE in outputs)) throw new Error(`bun build wrote ${Object.keys(outputs).join(', ')}, not ${BUNDLE_FILE}`);
    const inputs: Stamp['inputs'] = {};
    const metaInputs = [...Object.keys(result.metafile?.inputs ?? {}), ...builtins.inputs, ...loaderKey.inputs, ...ajv.inputs];
    if (metaInputs.length === 0) throw new Error('bun build reported no inputs');
    for (const input of metaInputs) {
      // The bundler names inputs relative to the working directory.
      const rel = relative(p.root, resolve(process.cwd(), input));
      // A dependency's files stand for themselves through its package.json (the version) and
      // npm's install marker, so a check stats a dozen files, not every file of hono and ajv.
      const parts = rel.split(/[\\/]/);
      const nm = parts.lastIndexOf('node_modules');
      const file = nm < 0 ? rel : join(...parts.slice(0, nm + (parts[nm + 1]?.startsWith('@') ? 3 : 2)), 'package.json');
      if (file in inputs) continue;
      const state = fileState(join(p.root, file));
      if (state) inputs[file] = state;
    }
    // Never a stamp that would vouch for sources it did not record.
    if (!inputs[join('server', 'serve.ts')]) throw new Error(`the bundler's inputs do not include server/serve.ts (${metaInputs[0]} …)`);
    const marker = fileState(join(p.root, DEPENDENCY_MARKER));
    if (marker) inputs[DEPENDENCY_MARKER] = marker;
    const stamp: Stamp = { bun: Bun.version, root: p.root, inputs, outputs };
    await writeFile(join(dir, STAMP_FILE), JSON.stringify(stamp));
    return { file: join(dir, BUNDLE_FILE), inputs: Object.keys(inputs).length, bytes: outputs[BUNDLE_FILE]! };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** Remove the bundle and its stamp (start then runs from source). */
function removeServerBundle(p: BundlePaths = DEFAULT_PATHS): void {
  const dir = dirOf(p);
  for (const name of [STAMP_FILE, BUNDLE_FILE, `${BUNDLE_FILE}.jsc`, VALIDATORS_FILE, `${VALIDATORS_FILE}.jsc`, AJV_FILE, `${AJV_FILE}.jsc`]) rmSync(join(dir, name), { force: true });
}

/** The command that (re)builds it, runnable from any folder. */
export const SERVER_BUNDLE_BUILD_COMMAND = [process.execPath, join(ROOT, 'cli', 'server-bundle.ts')].map(shellWord).join(' ');

// `bun cli/server-bundle.ts` (npm run build:server, and postinstall): never fails the install.
if (import.meta.main && (process.argv.includes('--help') || process.argv.includes('-h'))) {
  console.log('Usage: bun cli/server-bundle.ts\n\nBuild the server\'s start-up bundle (server/serve.bundle.cjs) that `opentabs start` loads while it matches the sources.');
} else if (import.meta.main) {
  const t0 = performance.now();
  try {
    const r = await buildServerBundle();
    console.log(`Server start-up bundle: ${relative(ROOT, r.file)} (${(r.bytes / 1024).toFixed(0)} KB, ${r.inputs} inputs) in ${Math.round(performance.now() - t0)} ms`);
  } catch (e) {
    removeServerBundle();
    console.warn(`warning: the server start-up bundle was not built (${(e as Error).message.split('\n')[0]}); \`opentabs start\` runs from source, which works the same and starts ≈ 60 ms slower.`);
  }
}
