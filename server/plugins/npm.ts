/**
 * The managed install prefix (<configDir>/plugins) driven through the npm CLI. Every command runs
 * with install scripts disabled (--ignore-scripts): installing a plugin never runs its code.
 */
import { mkdir } from '../state/fs-async.ts';
import { existsSync } from 'node:fs';
import { readRegularFileSync } from '../protocol/regular-file.ts';
import { join, resolve } from 'node:path';
import { writeFileAtomic } from '../state/atomic.ts';
import { OpenTabsError } from '../errors.ts';
import { PACKAGE_NAME_RE, PLUGIN_NAME_RE } from '../protocol/plugin-manifest.ts';

export function installPrefix(configDir: string): string {
  return join(configDir, 'plugins');
}

export interface NpmResult {
  code: number;
  stdout: string;
  stderr: string;
}

const NPM = process.env.OPENTABS_NPM ?? 'npm';

/** npm's own error lines (`npm error …`, older `npm ERR! …`): the thrown failure carries them. */
const NPM_ERROR_LINE = /^npm (error|ERR!)( |$)/;

/**
 * Run npm; its output lines go to onLine (progress), except its error lines, which the failure
 * built from the returned output reports (npmFailure) instead of showing them twice.
 */
export async function runNpm(args: string[], cwd: string, onLine?: (line: string) => void): Promise<NpmResult> {
  // Loaded on first use: node:child_process takes ≈ 2 ms to load, which every server start would
  // pay for what only plugin installs and searches use.
  const { spawn } = await import('node:child_process');
  return new Promise((resolve) => {
    const child = spawn(NPM, args, {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      // install_links: a plugin installed from a folder is copied (packed as it would be
      // published), not linked to that folder, and stays copied when npm installs the next one.
      env: { ...process.env, npm_config_ignore_scripts: 'true', npm_config_fund: 'false', npm_config_audit: 'false', npm_config_update_notifier: 'false', npm_config_install_links: 'true' },
    });
    let stdout = '';
    let stderr = '';
    const lines = (sink: (s: string) => void) => {
      let buf = '';
      return (chunk: Buffer) => {
        const s = chunk.toString();
        sink(s);
        buf += s;
        const parts = buf.split('\n');
        buf = parts.pop() ?? '';
        for (const l of parts) if (l.trim() && onLine && !NPM_ERROR_LINE.test(l)) onLine(l.trimEnd());
      };
    };
    child.stdout.on('data', lines((s) => (stdout += s)));
    child.stderr.on('data', lines((s) => (stderr += s)));
    child.on('error', (err) => resolve({ code: -1, stdout, stderr: stderr + String(err.message) }));
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

async function ensurePrefix(prefix: string): Promise<void> {
  await mkdir(prefix, { recursive: true, mode: 0o700 });
  const pkg = join(prefix, 'package.json');
  if (!existsSync(pkg)) {
    await writeFileAtomic(pkg, JSON.stringify({ name: 'opentabs-installed-plugins', private: true, dependencies: {} }, null, 2) + '\n', 0o600);
  }
}

async function readDeps(prefix: string): Promise<Record<string, string>> {
  try {
    const pkg = JSON.parse(readRegularFileSync(join(prefix, 'package.json'))) as { dependencies?: Record<string, string> };
    return pkg.dependencies ?? {};
  } catch {
    return {};
  }
}

/**
 * Folders of the plugin packages installed in the prefix: the dependencies its package.json lists
 * (what `opentabs plugin install` saved) named like plugins (opentabs-plugin-* and
 * @scope/opentabs-plugin-*). Packages npm put in node_modules for them (their own dependencies)
 * are not plugins, whatever their names: installing one plugin must not bring in another that
 * nobody installed (which would run its adapter in the pages it names, or take the name of a
 * plugin installed before, with that plugin's permissions and settings).
 */
export async function installedPluginDirs(configDir: string): Promise<string[]> {
  const prefix = installPrefix(configDir);
  const nm = join(prefix, 'node_modules');
  // Read synchronously: one small file (or none), read before the tools are listed, where a
  // thread-pool round trip costs ≈ 3 ms of the start.
  let deps: Record<string, unknown> = {};
  try {
    // Only a regular file: a named pipe there held every start for good, a link to /dev/zero read without end.
    const pkg = JSON.parse(readRegularFileSync(join(prefix, 'package.json'))) as { dependencies?: unknown };
    if (pkg.dependencies && typeof pkg.dependencies === 'object' && !Array.isArray(pkg.dependencies)) deps = pkg.dependencies as Record<string, unknown>;
  } catch {
    return [];
  }
  return Object.keys(deps)
    .filter((name) => PACKAGE_NAME_RE.test(name))
    .sort()
    .map((name) => join(nm, ...name.split('/')))
    .filter((dir) => existsSync(join(dir, 'package.json')));
}

/**
 * The package name of a registry spec (`name`, `name@range`, `@scope/name@tag`), or null when the
 * spec is something else npm accepts (a path, tarball, URL, git or alias spec).
 */
export function registrySpecName(spec: string): string | null {
  if (/^[./~]/.test(spec) || spec.includes(':') || /\.(tgz|tar\.gz|tar)$/.test(spec)) return null;
  const m = /^((?:@[^/@\s]+\/)?[^/@\s]+)(?:@[^\s]*)?$/.exec(spec);
  return m ? m[1]! : null;
}

function npmFailure(what: string, r: NpmResult, spec?: string): OpenTabsError {
  const lines = (r.stderr || r.stdout).trim().split('\n').filter((l) => l.trim());
  const missing = missingPackage(lines);
  if (missing) {
    const asked = spec !== undefined ? registrySpecName(spec) : null;
    const where = missing.registry ? ` (${missing.registry})` : '';
    const scoped = missing.name.startsWith('@') ? ' (or it is private and npm is not logged in to its scope)' : '';
    if (asked !== null && asked === missing.name) {
      return new OpenTabsError(
        'bad_request',
        `npm has no package named "${missing.name}" in its registry${where}${scoped}. Check the name; plugin packages are named opentabs-plugin-<name> or @scope/opentabs-plugin-<name>.`,
      );
    }
    return new OpenTabsError('bad_request', `${spec} was not installed: it depends on "${missing.name}", which npm has no package of in its registry${where}${scoped}.`);
  }
  // npm's error lines say what went wrong (the pointer to its debug log last); other output is progress.
  const errors = lines.filter((l) => NPM_ERROR_LINE.test(l) && l.replace(NPM_ERROR_LINE, '').replace(/^\s*\d{3}\s*$/, '').trim());
  const tail = (errors.length ? errors : lines).slice(-6).join('\n');
  return new OpenTabsError('bad_request', `${what} failed (npm exit ${r.code})${tail ? `:\n${tail}` : ''}`);
}

/**
 * The package npm found no trace of (an E404 from the registry): its name, from the line that
 * quotes its spec (`'name@range' is not in this registry` / `The requested resource 'name@range'
 * could not be found`) or the URL npm asked for, and the registry's origin.
 */
function missingPackage(lines: string[]): { name: string; registry: string | null } | null {
  if (!lines.some((l) => /^npm (error|ERR!) code E404\b/.test(l))) return null;
  let name: string | null = null;
  let registry: string | null = null;
  for (const l of lines) {
    const quoted = /^npm (?:error|ERR!) 404 .*'((?:@[^/'\s]+\/)?[^@'\s]+)(?:@[^'\s]*)?'/.exec(l);
    if (quoted && name === null) name = quoted[1]!;
    const got = /^npm (?:error|ERR!) 404 Not Found - GET (\S+)/.exec(l);
    if (got) {
      try {
        const url = new URL(got[1]!);
        registry = url.origin;
        name ??= decodeURIComponent(url.pathname.split('/').filter(Boolean).join('/')) || null;
      } catch {
        // Not a URL: the name comes from the quoted spec.
      }
    }
  }
  return name ? { name, registry } : null;
}

/**
 * `npm install --prefix <configDir>/plugins --ignore-scripts <spec>`. Returns the installed package
 * name (found by comparing the prefix's dependencies before and after).
 */
export async function npmInstall(configDir: string, spec: string, onLine?: (line: string) => void): Promise<string> {
  if (typeof spec !== 'string' || spec.trim() === '' || spec.startsWith('-')) {
    throw new OpenTabsError('bad_request', `Install spec must be a package name, version spec or tarball path (got ${JSON.stringify(spec)})`);
  }
  // npm runs in the prefix, so a relative tarball/folder path must be made absolute first.
  if (/^\.{1,2}[\\/]/.test(spec) || ((/\.(tgz|tar\.gz)$/.test(spec) || spec.includes('/')) && !spec.startsWith('@') && existsSync(resolve(spec)))) {
    spec = resolve(spec);
  }
  // A registry spec names its package up front: refuse non-plugin names before npm downloads anything.
  const registryName = registrySpecName(spec);
  if (registryName !== null && !PACKAGE_NAME_RE.test(registryName)) {
    const bare = registryName.replace(/^@[^/]+\//, '');
    throw new OpenTabsError(
      'bad_request',
      `"${registryName}" is not an OpenTabs plugin package name: names must be opentabs-plugin-<name> or @scope/opentabs-plugin-<name>` +
        (PLUGIN_NAME_RE.test(bare) ? ` (did you mean ${registryName.replace(bare, `opentabs-plugin-${bare}`)}?)` : ''),
    );
  }
  // A bare name means the newest version: npm alone would keep the range saved by an earlier
  // install (`^1.0.0`), so installing a plugin again by name would not update it past that.
  if (registryName !== null && spec === registryName) spec = `${spec}@latest`;
  const prefix = installPrefix(configDir);
  await ensurePrefix(prefix);
  const before = await readDeps(prefix);
  onLine?.(`Installing ${spec} into ${prefix} (install scripts disabled) …`);
  const r = await runNpm(['install', '--prefix', prefix, '--ignore-scripts', '--no-audit', '--no-fund', '--save', spec], prefix, onLine);
  if (r.code !== 0) throw npmFailure(`npm install ${spec}`, r, spec);
  const after = await readDeps(prefix);
  const changed = Object.keys(after).filter((k) => before[k] !== after[k]);
  let name = changed[0];
  if (!name) {
    // Re-install of the same spec: find the dependency this spec names.
    name = Object.keys(after).find((k) => spec === k || spec.startsWith(`${k}@`) || after[k]!.endsWith(spec.replace(/^.*\//, ''))) ?? '';
  }
  if (!name) throw new OpenTabsError('internal', `npm install ${spec} succeeded but the installed package could not be identified`);
  return name;
}

export async function npmUninstall(configDir: string, packageName: string, onLine?: (line: string) => void): Promise<void> {
  const prefix = installPrefix(configDir);
  await ensurePrefix(prefix);
  const r = await runNpm(['uninstall', '--prefix', prefix, '--ignore-scripts', '--no-audit', '--no-fund', packageName], prefix, onLine);
  if (r.code !== 0) throw npmFailure(`npm uninstall ${packageName}`, r);
}

export interface SearchHit {
  name: string;
  version: string;
  description: string;
}

/** Registry search restricted to plugin packages. */
export async function npmSearch(configDir: string, query: string): Promise<SearchHit[]> {
  const prefix = installPrefix(configDir);
  await ensurePrefix(prefix);
  const q = query.trim() ? `opentabs-plugin ${query.trim()}` : 'opentabs-plugin';
  const r = await runNpm(['search', '--json', q], prefix);
  if (r.code !== 0) throw npmFailure(`npm search ${q}`, r);
  let rows: unknown;
  try {
    rows = JSON.parse(r.stdout || '[]');
  } catch {
    throw new OpenTabsError('registry_error', 'npm search returned output that is not JSON');
  }
  if (!Array.isArray(rows)) return [];
  return rows
    .filter((x): x is { name: string; version?: string; description?: string } => typeof x?.name === 'string' && PACKAGE_NAME_RE.test(x.name))
    .map((x) => ({ name: x.name, version: String(x.version ?? ''), description: String(x.description ?? '') }));
}

export interface UpdateInfo {
  name: string;
  current: string;
  latest: string;
}

/** `npm outdated` for the managed prefix (exit code 1 just means "something is outdated"). */
export async function npmOutdated(configDir: string): Promise<UpdateInfo[]> {
  const prefix = installPrefix(configDir);
  await ensurePrefix(prefix);
  const r = await runNpm(['outdated', '--json', '--prefix', prefix], prefix);
  let data: Record<string, { current?: string; latest?: string }>;
  try {
    data = JSON.parse(r.stdout || '{}');
  } catch {
    throw npmFailure('npm outdated', r);
  }
  return Object.entries(data)
    .filter(([name, d]) => PACKAGE_NAME_RE.test(name) && d.latest && d.current !== d.latest)
    .map(([name, d]) => ({ name, current: String(d.current ?? ''), latest: String(d.latest) }));
}
