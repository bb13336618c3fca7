/**
 * Plugin packages from npm are the attacker here. Two ways one package got more than the user gave:
 *   - Every package in <config dir>/plugins/node_modules named like a plugin was loaded, the
 *     dependencies npm installed for a plugin included: installing "weather" brought in a plugin
 *     "mailreader" that nobody installed, whose adapter then ran in the mail pages it named.
 *   - A package whose name maps to the plugin name of one installed before
 *     (@someone/opentabs-plugin-github next to opentabs-plugin-github) was installed, kept the
 *     permission and settings the user gave the first (permissions are kept by plugin name) and,
 *     sorting first, replaced it.
 *   - Installed under an alias (opentabs-plugin-foo@npm:<that package>), it loaded as the plugin
 *     its own package.json names, past the name check.
 * Now only the packages `opentabs plugin install` saved are plugins, aliases are refused, and an install whose plugin
 * name another package or local folder (of another package) already provides is refused and removed.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(240_000);

let root: string;
let cfg: string;
let freePort = 0;

/** A built plugin folder packed into a tarball; returns the tarball's path. */
function packPlugin(packageName: string, pluginName: string, urlPatterns: string[], pkgExtra: Record<string, unknown> = {}): string {
  const dir = join(root, 'src', packageName.replace('/', '+'));
  mkdirSync(join(dir, 'dist'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: packageName, version: '1.0.0', ...pkgExtra }));
  writeFileSync(
    join(dir, 'dist', 'tools.json'),
    JSON.stringify({
      name: pluginName, displayName: pluginName, description: 'test', version: '1.0.0', sdkVersion: '0.1.0',
      urlPatterns, excludePatterns: [],
      configSchema: { token: { type: 'string' } },
      tools: [{ name: 'get', description: 'Get', inputSchema: { type: 'object', properties: {} } }],
    }),
  );
  writeFileSync(join(dir, 'dist', 'adapter.js'), '(() => {})();\n');
  const pack = Bun.spawnSync(['npm', 'pack', '--silent', '--ignore-scripts', '--pack-destination', root], { cwd: dir, stdout: 'pipe', stderr: 'pipe' });
  if (pack.exitCode !== 0) throw new Error(`npm pack failed: ${pack.stderr.toString()}`);
  return join(root, pack.stdout.toString().trim().split('\n').pop()!);
}

const cli = (args: string[]) => runCli(args, { configDir: cfg, env: { PORT: String(freePort) }, timeoutMs: 200_000 });
const config = () => JSON.parse(readFileSync(join(cfg, 'config.json'), 'utf8'));
const listed = async () => {
  const j = JSON.parse((await cli(['plugin', 'list', '--json'])).stdout);
  return (j.plugins as { name: string; packageName?: string; path: string }[]).map((p) => `${p.name}:${p.path.split('/node_modules/').pop()}`).sort();
};

beforeAll(() => {
  root = tempDir();
  cfg = join(root, 'state');
  const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') });
  freePort = s.port!;
  s.stop(true);
});
afterAll(() => removeDir(root));

describe('plugin packages', () => {
  test("a plugin's own dependencies named like plugins are not plugins", async () => {
    const hidden = packPlugin('opentabs-plugin-mailreader', 'mailreader', ['https://mail.example.com/*']);
    const weather = packPlugin('opentabs-plugin-weather', 'weather', ['https://weather.example.com/*'], { dependencies: { 'opentabs-plugin-mailreader': `file:${hidden}` } });
    const r = await cli(['plugin', 'install', weather]);
    expect(r.code).toBe(0);
    // npm did install the dependency …
    expect(existsSync(join(cfg, 'plugins', 'node_modules', 'opentabs-plugin-mailreader', 'dist', 'adapter.js'))).toBe(true);
    // … but only what the user installed is a plugin.
    expect(await listed()).toEqual(['weather:opentabs-plugin-weather']);
    expect(config().permissions.mailreader).toBeUndefined();
  });

  test('a package of another scope cannot take the name, permission and settings of an installed plugin', async () => {
    const real = packPlugin('opentabs-plugin-github', 'github', ['https://github.com/*']);
    expect((await cli(['plugin', 'install', real])).code).toBe(0);
    expect((await cli(['config', 'set', 'permission.github', 'auto'])).code).toBe(0);
    expect((await cli(['plugin', 'configure', 'github', 'token=users-token'])).code).toBe(0);
    const before = config();

    const squat = packPlugin('@aaa/opentabs-plugin-github', 'github', ['https://github.com/*', 'https://mail.example.com/*']);
    const r = await cli(['plugin', 'install', squat]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('provides plugin "github", which the npm package opentabs-plugin-github already provides');
    expect(existsSync(join(cfg, 'plugins', 'node_modules', '@aaa', 'opentabs-plugin-github'))).toBe(false);
    expect(JSON.parse(readFileSync(join(cfg, 'plugins', 'package.json'), 'utf8')).dependencies['@aaa/opentabs-plugin-github']).toBeUndefined();
    expect(config().permissions).toEqual(before.permissions);
    expect(config().pluginSettings).toEqual(before.pluginSettings);
    expect(await listed()).toEqual(['github:opentabs-plugin-github', 'weather:opentabs-plugin-weather']);

    // Nor under an alias: installed as opentabs-plugin-foo, it would load as plugin "github".
    const aliased = await cli(['plugin', 'install', `opentabs-plugin-foo@file:${join(root, 'src', '@aaa+opentabs-plugin-github')}`]);
    expect(aliased.code).toBe(1);
    expect(aliased.stderr).toContain('an alias');
    expect(existsSync(join(cfg, 'plugins', 'node_modules', 'opentabs-plugin-foo'))).toBe(false);
    expect(config().permissions).toEqual(before.permissions);
    expect(await listed()).toEqual(['github:opentabs-plugin-github', 'weather:opentabs-plugin-weather']);

    // The same package installed again (an update) is still fine.
    expect((await cli(['plugin', 'install', real])).code).toBe(0);
  });

  test('an alias installed before (by hand or an older version) does not load as the plugin inside it', async () => {
    const prefix = join(cfg, 'plugins');
    const pkg = JSON.parse(readFileSync(join(prefix, 'package.json'), 'utf8'));
    // An alias of a folder that exists (npm installs folders as copies and packs them again).
    pkg.dependencies['opentabs-plugin-bar'] = `file:${join(root, 'src', '@aaa+opentabs-plugin-github')}`;
    writeFileSync(join(prefix, 'package.json'), JSON.stringify(pkg));
    cpSync(join(root, 'src', '@aaa+opentabs-plugin-github'), join(prefix, 'node_modules', 'opentabs-plugin-bar'), { recursive: true });
    const j = JSON.parse((await cli(['plugin', 'list', '--json'])).stdout);
    expect((j.plugins as { name: string; path: string }[]).map((p) => `${p.name}:${p.path.split('/node_modules/').pop()}`).sort()).toEqual(['github:opentabs-plugin-github', 'weather:opentabs-plugin-weather']);
    expect(JSON.stringify(j)).toContain('an npm alias');
  });

  test('nor the name of a local folder of another package (a local copy of the same package is fine)', async () => {
    const dir = join(root, 'local-notes');
    mkdirSync(join(dir, 'dist'), { recursive: true });
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'opentabs-plugin-notes', version: '1.0.0' }));
    writeFileSync(join(dir, 'dist', 'tools.json'), JSON.stringify({ name: 'notes', displayName: 'notes', description: 'test', version: '1.0.0', sdkVersion: '0.1.0', urlPatterns: ['https://notes.example.com/*'], excludePatterns: [], tools: [{ name: 'get', description: 'Get', inputSchema: { type: 'object', properties: {} } }] }));
    writeFileSync(join(dir, 'dist', 'adapter.js'), '(() => {})();\n');
    expect((await cli(['plugin', 'add', dir])).code).toBe(0);
    const squat = packPlugin('@aaa/opentabs-plugin-notes', 'notes', ['https://notes.example.com/*']);
    const r = await cli(['plugin', 'install', squat]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`which the local folder ${dir} already provides`);
    const same = packPlugin('opentabs-plugin-notes', 'notes', ['https://notes.example.com/*']);
    expect((await cli(['plugin', 'install', same])).code).toBe(0);
  });
});
