/**
 * Shipping a plugin to other people: `npm pack`, then `opentabs plugin install` from the tarball,
 * from an unpacked folder and from a registry on 127.0.0.1, and an update while the server runs.
 * The update says what changed (version, tools gone, inputs changed) and that permissions and
 * settings are kept, names a new required setting with a command that runs as printed, and the
 * running server's catalog has the new tools without a restart. A folder install is a copy: the
 * folder can go away, and installing the next plugin does not turn it into a link.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { createHash } from 'node:crypto';
import { cpSync, lstatSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../harness/server.ts';
import { cliEnv, removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(240_000);

let root: string;
let cfg: string;
let srv: TestServer;
/** A registry on 127.0.0.1 holding what `packages` has (name → version → tarball path). */
const packages = new Map<string, Map<string, string>>();
let registry: ReturnType<typeof Bun.serve>;

beforeAll(async () => {
  root = tempDir('opentabs-author-s19e-upgrade-');
  cfg = join(root, 'state');
  registry = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(req) {
      const u = new URL(req.url);
      const tgz = /^\/-\/(.+)$/.exec(u.pathname);
      if (tgz) return new Response(Bun.file(join(root, 'registry', tgz[1]!)));
      const name = decodeURIComponent(u.pathname.slice(1));
      const versions = packages.get(name);
      if (!versions) return Response.json({ error: 'Not found' }, { status: 404 });
      const doc: Record<string, unknown> = {};
      for (const [version, file] of versions) {
        const data = readFileSync(file);
        const manifest = JSON.parse(readFileSync(join(file, '..', `${name}-${version}.json`), 'utf8'));
        cpSync(file, join(root, 'registry', `${name}-${version}.tgz`));
        doc[version] = {
          ...manifest,
          dist: {
            tarball: `http://127.0.0.1:${registry.port}/-/${name}-${version}.tgz`,
            shasum: createHash('sha1').update(data).digest('hex'),
            integrity: `sha512-${createHash('sha512').update(data).digest('base64')}`,
          },
        };
      }
      const latest = [...versions.keys()].pop()!;
      return Response.json({ name, 'dist-tags': { latest }, versions: doc });
    },
  });
  mkdirSync(join(root, 'registry'), { recursive: true });
  srv = await startTestServer({ configDir: cfg });
});
afterAll(async () => {
  await srv?.stop();
  registry?.stop(true);
  removeDir(root);
});

const npmEnv = () => ({ npm_config_registry: `http://127.0.0.1:${registry.port}/`, npm_config_cache: join(root, 'npm-cache') });
const cli = (args: string[]) => runCli(args, { configDir: cfg, timeoutMs: 150_000, env: npmEnv() });

interface Version {
  version: string;
  tools: { name: string; inputSchema: Record<string, unknown> }[];
  configSchema?: Record<string, unknown>;
}

/** A built plugin folder (dist/ written directly: this test is about shipping, not the build), packed. */
function packed(name: string, v: Version): { folder: string; tarball: string } {
  const folder = join(root, 'src', `${name}-${v.version}`);
  mkdirSync(join(folder, 'dist'), { recursive: true });
  const manifest = { name: `opentabs-plugin-${name}`, version: v.version, files: ['dist'] };
  writeFileSync(join(folder, 'package.json'), JSON.stringify(manifest));
  writeFileSync(
    join(folder, 'dist', 'tools.json'),
    JSON.stringify({
      name, displayName: 'Shop', description: 'test', version: v.version, sdkVersion: '0.1.0',
      urlPatterns: ['http://127.0.0.1:45998/*'], excludePatterns: [],
      ...(v.configSchema ? { configSchema: v.configSchema } : {}),
      tools: v.tools.map((t) => ({ ...t, description: t.name })),
    }),
  );
  writeFileSync(join(folder, 'dist', 'adapter.js'), '(() => {})();\n');
  const out = join(root, 'packs');
  mkdirSync(out, { recursive: true });
  const pack = Bun.spawnSync(['npm', 'pack', '--silent', '--ignore-scripts', '--pack-destination', out], { cwd: folder, stdout: 'pipe', stderr: 'pipe', env: { ...process.env, ...npmEnv() } });
  expect(pack.exitCode).toBe(0);
  const tarball = join(out, pack.stdout.toString().trim().split('\n').pop()!);
  writeFileSync(join(out, `opentabs-plugin-${name}-${v.version}.json`), JSON.stringify(manifest));
  return { folder, tarball };
}

const empty = { type: 'object', properties: {}, additionalProperties: false };
const v1: Version = {
  version: '1.0.0',
  tools: [{ name: 'list_orders', inputSchema: empty }, { name: 'whoami', inputSchema: empty }],
  configSchema: { pageSize: { type: 'number', default: 20 } },
};
const v2: Version = {
  version: '2.0.0',
  tools: [
    { name: 'list_orders', inputSchema: { type: 'object', properties: { status: { type: 'string', enum: ['open', 'shipped'] } }, additionalProperties: false } },
    { name: 'export_csv', inputSchema: empty },
  ],
  configSchema: { pageSize: { type: 'number', default: 20 }, region: { type: 'select', options: ['eu', 'us'], required: true } },
};

async function tools(): Promise<{ name: string; permission: string; inputSchema: Record<string, unknown> }[]> {
  const r = await fetch(`${srv.url}/tools?plugin=shop`, { headers: srv.auth });
  return ((await r.json()) as { tools: { name: string; permission: string; inputSchema: Record<string, unknown> }[] }).tools;
}

test('install the tarball, then an update while the server runs: says what changed, keeps permissions and settings, names a new required setting', async () => {
  const one = packed('shop', v1);
  const two = packed('shop', v2);
  const first = await cli(['plugin', 'install', one.tarball]);
  expect(first.code).toBe(0);
  expect(first.stdout).toContain('Installed opentabs-plugin-shop → plugin "shop" (2 tools; permission ask');
  expect(first.stdout).not.toContain('Updated');
  expect((await cli(['config', 'set', 'permission.shop.list_orders', 'auto'])).code).toBe(0);
  expect((await cli(['plugin', 'configure', 'shop', 'pageSize=5'])).code).toBe(0);

  const second = await cli(['plugin', 'install', two.tarball]);
  expect(second.code).toBe(0);
  expect(second.stdout).toContain('The running server loaded it.');
  expect(second.stdout).toContain('Updated from 1.0.0 to 2.0.0 (new: shop_export_csv; gone: shop_whoami; input changed: shop_list_orders); permissions and settings are kept.');
  expect(second.stdout).toContain('Setting "region" (one of eu, us) is required and not set');

  // The running server's catalog, without a restart: new schema, the kept permission.
  const listed = await tools();
  expect(listed.map((t) => t.name).sort()).toEqual(['shop_export_csv', 'shop_list_orders']);
  const orders = listed.find((t) => t.name === 'shop_list_orders')!;
  expect(orders.permission).toBe('auto');
  expect(JSON.stringify(orders.inputSchema)).toContain('shipped');
  expect(listed.find((t) => t.name === 'shop_export_csv')!.permission).toBe('ask');

  // The printed command runs as printed, from a shell without OPENTABS_CONFIG_DIR.
  const command = /`([^`]*plugin configure shop region=[^`]*)`/.exec(second.stdout)?.[1];
  expect(command).toBeDefined();
  const proc = Bun.spawn(['sh', '-c', command!], { cwd: root, env: cliEnv(cfg, { OPENTABS_CONFIG_DIR: undefined }), stdout: 'pipe', stderr: 'pipe' });
  const [out, errText, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  expect({ code, errText }).toEqual({ code: 0, errText: '' });
  expect(out).toContain('region="eu"');
  expect(JSON.parse(readFileSync(join(cfg, 'config.json'), 'utf8')).pluginSettings.shop).toEqual({ pageSize: 5, region: 'eu' });
});

test('install from a folder copies it: the folder can go, and the next install leaves it a copy', async () => {
  const three = packed('shop', { ...v2, version: '3.0.0' });
  const folder = join(root, 'unpacked-3');
  cpSync(three.folder, folder, { recursive: true });
  const r = await cli(['plugin', 'install', folder]);
  expect(r.code).toBe(0);
  expect(r.stdout).toContain('Updated from 2.0.0 to 3.0.0; permissions and settings are kept.');
  const installed = join(cfg, 'plugins', 'node_modules', 'opentabs-plugin-shop');
  expect(lstatSync(installed).isSymbolicLink()).toBe(false);
  rmSync(folder, { recursive: true, force: true });

  // Another plugin installed next: npm runs over the whole prefix again.
  const other = packed('shelf', { version: '1.0.0', tools: [{ name: 'get', inputSchema: empty }] });
  const folder2 = join(root, 'unpacked-shelf');
  cpSync(other.folder, folder2, { recursive: true });
  expect((await cli(['plugin', 'install', folder2])).code).toBe(0);
  expect(lstatSync(installed).isSymbolicLink()).toBe(false);
  expect(lstatSync(join(cfg, 'plugins', 'node_modules', 'opentabs-plugin-shelf')).isSymbolicLink()).toBe(false);
  const list = JSON.parse((await cli(['plugin', 'list', '--json'])).stdout) as { plugins: { name: string; version: string }[] };
  expect(list.plugins.map((p) => `${p.name}@${p.version}`).sort()).toEqual(['shelf@1.0.0', 'shop@3.0.0']);
});

test('install name@version from a registry on 127.0.0.1, and back to the newest', async () => {
  const four = packed('shop', { ...v2, version: '4.0.0' });
  const five = packed('shop', { ...v2, version: '5.0.0', tools: [...v2.tools, { name: 'refund', inputSchema: empty }] });
  packages.set('opentabs-plugin-shop', new Map([['4.0.0', four.tarball], ['5.0.0', five.tarball]]));
  const pinned = await cli(['plugin', 'install', 'opentabs-plugin-shop@4.0.0']);
  expect(pinned.code).toBe(0);
  expect(pinned.stdout).toContain('Updated from 3.0.0 to 4.0.0; permissions and settings are kept.');
  const latest = await cli(['plugin', 'install', 'opentabs-plugin-shop']);
  expect(latest.code).toBe(0);
  expect(latest.stdout).toContain('Updated from 4.0.0 to 5.0.0 (new: shop_refund); permissions and settings are kept.');
  expect((await tools()).find((t) => t.name === 'shop_list_orders')!.permission).toBe('auto');
});

test("plugin configure's 'Change with' line runs as printed", async () => {
  const shown = await cli(['plugin', 'configure', 'shop']);
  expect(shown.code).toBe(0);
  const command = /Change with: `([^`]+)`/.exec(shown.stdout)?.[1];
  expect(command).toBeDefined();
  const proc = Bun.spawn(['sh', '-c', command!], { cwd: root, env: cliEnv(cfg, { OPENTABS_CONFIG_DIR: undefined }), stdout: 'pipe', stderr: 'pipe' });
  const [out, errText, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  expect({ code, errText }).toEqual({ code: 0, errText: '' });
  expect(out).toContain('Saved settings for shop: pageSize=5');
});
