/**
 * Builds the MV3 extension from extension/ into extension/dist with esbuild.
 *
 *   bun extension/build.ts            build once
 *   import { buildExtension, ensureExtensionBuilt } from './extension/build.ts'
 *
 * `ensureExtensionBuilt()` rebuilds only when the recorded inputs (every file esbuild read plus
 * the static files) changed, so `opentabs start` on a fresh clone works without a separate step
 * and a warm start costs a few file hashes.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pkg from '../package.json' with { type: 'json' };

/** The extension's version is the package's (one number for server, CLI and extension). */
const VERSION: string = pkg.version;

export const EXTENSION_SRC_DIR = dirname(fileURLToPath(import.meta.url));
export const EXTENSION_DIST_DIR = join(EXTENSION_SRC_DIR, 'dist');
const ROOT_DIR = resolve(EXTENSION_SRC_DIR, '..');
/** Written into dist; lists every input with its content hash (staleness check). */
export const BUILD_INFO_FILE = '.build-info.json';
/** Names the server owns inside the installed folder; a build must never produce them. */
export const SERVER_OWNED_NAMES = ['auth.json', 'server.json', 'adapters'] as const;

const ENTRIES: Record<string, string> = {
  background: 'background/main.ts',
  'tab-bridge': 'bridge/tab-bridge.ts',
  sidepanel: 'sidepanel/main.ts',
  // Page tools (WebMCP): registered as document_start content scripts by background/page-tools.ts.
  'page-tools-main': 'bridge/page-tools-main.ts',
  'page-tools-bridge': 'bridge/page-tools-bridge.ts',
  // Which closed shadow roots the page attached (dom.ts's pageOwnsClosedRoot): manifest content scripts below.
  'closed-roots-main': 'bridge/closed-roots-main.ts',
  'closed-roots-isolated': 'bridge/closed-roots-isolated.ts',
};
/**
 * The page library (extension/page/), injected by the worker into tabs' documents; built apart
 * because its global name carries the hash of its own content (pageLibKey).
 */
const PAGE_LIB_ENTRY = 'page/main.ts';
const PAGE_LIB_FILE = 'page-lib.js';
/** Stands for the library's global name while the library is built; replaced in its output. */
const PAGE_LIB_KEY_PLACEHOLDER = '__opentabs_page_lib_key_placeholder__';
/** The constant that names the library's global in the library and in the worker. */
const PAGE_LIB_KEY_CONSTANT = '__OPENTABS_PAGE_LIB_KEY__';

/**
 * The library's global name in the isolated world: this version and a hash of the library's code,
 * so that after an extension update or reload a document still holding another build's library
 * (under that build's name) is never called with this build's arguments.
 */
function pageLibKey(code: string): string {
  return `__opentabs_page_lib_${VERSION.replace(/[^0-9A-Za-z]/g, '_')}_${sha(code).slice(0, 16)}`;
}

const STATIC_FILES: Record<string, string> = {
  'sidepanel.html': 'sidepanel/sidepanel.html',
  'sidepanel.css': 'sidepanel/sidepanel.css',
  'icon.png': 'icon.png',
};

export function manifest(): Record<string, unknown> {
  return {
    manifest_version: 3,
    name: 'OpenTabs',
    description: 'Lets your AI agent use the web apps open in this browser, through the local OpenTabs server.',
    // Chrome wants 1-4 dot-separated integers.
    version: VERSION.replace(/[^0-9.].*$/, '') || '0.0.0',
    minimum_chrome_version: '120',
    background: { service_worker: 'background.js' },
    permissions: ['tabs', 'scripting', 'storage', 'sidePanel', 'alarms', 'webNavigation', 'debugger', 'cookies', 'tabGroups', 'sessions', 'history', 'bookmarks', 'downloads', 'browsingData'],
    host_permissions: ['<all_urls>'],
    action: { default_title: 'OpenTabs', default_icon: { '128': 'icon.png' } },
    icons: { '128': 'icon.png' },
    side_panel: { default_path: 'sidepanel.html' },
    // In every frame before any page script: the MAIN half first, so that it listens when the
    // isolated half tells it the agreed event type (closed-roots-main.ts).
    content_scripts: [
      { matches: ['<all_urls>'], js: ['closed-roots-main.js'], run_at: 'document_start', all_frames: true, match_origin_as_fallback: true, world: 'MAIN' },
      { matches: ['<all_urls>'], js: ['closed-roots-isolated.js'], run_at: 'document_start', all_frames: true, match_origin_as_fallback: true, world: 'ISOLATED' },
    ],
  };
}

interface BuildInfo {
  version: 1;
  inputs: Record<string, string>;
}

const sha = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex');

function hashInputs(paths: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of paths.sort()) {
    const abs = resolve(ROOT_DIR, p);
    out[relative(ROOT_DIR, abs)] = existsSync(abs) ? sha(readFileSync(abs)) : 'missing';
  }
  return out;
}

/** True when dist is missing or any input recorded by the last build changed. */
export function isExtensionBuildStale(outDir = EXTENSION_DIST_DIR): boolean {
  let info: BuildInfo;
  try {
    info = JSON.parse(readFileSync(join(outDir, BUILD_INFO_FILE), 'utf8')) as BuildInfo;
  } catch {
    return true;
  }
  if (info.version !== 1 || typeof info.inputs !== 'object') return true;
  const now = hashInputs(Object.keys(info.inputs));
  for (const [k, h] of Object.entries(info.inputs)) if (now[k] !== h) return true;
  return false;
}

/**
 * Build into a temporary folder next to outDir, then swap it in, so a reader (installExtension in
 * another process) never sees half a build.
 */
export async function buildExtension(opts: { outDir?: string; minify?: boolean } = {}): Promise<{ outDir: string }> {
  const outDir = opts.outDir ?? EXTENSION_DIST_DIR;
  const tmp = `${outDir}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
  mkdirSync(tmp, { recursive: true });
  try {
    // Loaded only to build: the server checks the build on every start, and esbuild's JS API costs
    // ≈ 10 ms of module evaluation that a fresh build never needs.
    const esbuild = await import('esbuild');
    const common = {
      absWorkingDir: ROOT_DIR,
      bundle: true,
      format: 'iife',
      platform: 'browser',
      target: 'chrome120',
      minify: opts.minify ?? false,
      sourcemap: false,
      metafile: true,
      logLevel: 'silent',
      legalComments: 'none',
    } as const;
    const lib = await esbuild.build({
      ...common,
      entryPoints: [join(EXTENSION_SRC_DIR, PAGE_LIB_ENTRY)],
      write: false,
      define: { [PAGE_LIB_KEY_CONSTANT]: JSON.stringify(PAGE_LIB_KEY_PLACEHOLDER) },
    });
    const libCode = lib.outputFiles[0]!.text;
    const key = pageLibKey(libCode);
    writeFileSync(join(tmp, PAGE_LIB_FILE), libCode.replaceAll(PAGE_LIB_KEY_PLACEHOLDER, key));
    const result = await esbuild.build({
      ...common,
      entryPoints: Object.fromEntries(Object.entries(ENTRIES).map(([k, v]) => [k, join(EXTENSION_SRC_DIR, v)])),
      outdir: tmp,
      jsx: 'automatic',
      jsxImportSource: 'hono/jsx/dom',
      define: { [PAGE_LIB_KEY_CONSTANT]: JSON.stringify(key) },
    });
    const inputs = [...Object.keys(lib.metafile.inputs), ...Object.keys(result.metafile.inputs)].map((p) => resolve(ROOT_DIR, p));
    for (const [name, src] of Object.entries(STATIC_FILES)) {
      const abs = join(EXTENSION_SRC_DIR, src);
      copyFileSync(abs, join(tmp, name));
      inputs.push(abs);
    }
    inputs.push(join(ROOT_DIR, 'package.json'), fileURLToPath(import.meta.url));
    writeFileSync(join(tmp, 'manifest.json'), JSON.stringify(manifest(), null, 2) + '\n');
    const info: BuildInfo = {
      version: 1,
      inputs: hashInputs(inputs.filter((p) => !p.includes('node_modules')).map((p) => relative(ROOT_DIR, p))),
    };
    writeFileSync(join(tmp, BUILD_INFO_FILE), JSON.stringify(info, null, 1));
    const old = `${outDir}.old-${process.pid}-${Math.random().toString(36).slice(2)}`;
    if (existsSync(outDir)) renameSync(outDir, old);
    renameSync(tmp, outDir);
    rmSync(old, { recursive: true, force: true });
    return { outDir };
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
}

let building: Promise<string> | null = null;

/**
 * The built extension folder, building it first when missing or stale. When the sources are not
 * there (a packaged install ships only dist), the existing dist is used as is.
 */
export function ensureExtensionBuilt(outDir = EXTENSION_DIST_DIR): Promise<string> {
  building ??= (async () => {
    try {
      const haveSources = existsSync(join(EXTENSION_SRC_DIR, ENTRIES.background));
      if (haveSources && isExtensionBuildStale(outDir)) await buildExtension({ outDir });
      if (!existsSync(join(outDir, 'manifest.json'))) {
        throw new Error(`The extension is not built (${outDir}/manifest.json missing) and its sources are not available; run \`npm run build:extension\`.`);
      }
      return outDir;
    } finally {
      building = null;
    }
  })();
  return building;
}

if (import.meta.main) {
  const t0 = performance.now();
  const { outDir } = await buildExtension();
  console.log(`Extension built into ${outDir} in ${Math.round(performance.now() - t0)} ms`);
}
