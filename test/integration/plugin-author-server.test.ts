/**
 * How the server and CLI treat a plugin author's package: a version bump shows in /health and
 * `opentabs plugin list` after a reload; an npm package published without dist/ says so (a
 * build command would not help its user); and `plugin add` next to a server of another config
 * dir on the default port saves the change and says that server was not reloaded, instead of
 * failing with exit 1 after the change was written; a second folder with the same plugin name is
 * refused by `plugin add` (it would be ignored), and `plugin list` shows a server's notes about
 * ignored folders.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import fs, { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadPluginFolder } from '../../server/plugins/load.ts';
import { reloadIfRunning } from '../../cli/settings.ts';
import { CliError } from '../../cli/output.ts';
import type { Target } from '../../cli/server-client.ts';
import { loadOrCreateSecret } from '../../server/state/secret.ts';
import type { TestServer } from '../harness/server.ts';
import { startPluginServer, writeTestConfig, writeTestPlugin } from '../harness/fake-extension.ts';
import { startTestServer } from '../harness/server.ts';
import { addLocalPlugin } from '../../server/plugins/local.ts';
import { runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(60_000);

let srv: TestServer;
let root: string;

beforeAll(async () => {
  root = tempDir('opentabs-author-server-');
  srv = await startPluginServer({ plugins: [{ name: 'notes', tools: [{ name: 'list' }] }] });
});
afterAll(async () => {
  await srv?.stop();
  rmSync(root, { recursive: true, force: true });
});

const health = async () => (await (await fetch(`${srv.url}/health`, { headers: srv.auth })).json()) as any;

describe('a version bump', () => {
  test('shows in /health and in `opentabs plugin list` once the server reloads', async () => {
    expect((await health()).pluginDetails[0]).toMatchObject({ name: 'notes', version: '1.0.0' });
    const pkgPath = join(srv.ctx.plugins.list()[0]!.path, 'package.json');
    writeFileSync(pkgPath, readFileSync(pkgPath, 'utf8').replace('"version":"1.0.0"', '"version":"1.1.0"'));
    const reload = await fetch(`${srv.url}/reload`, { method: 'POST', headers: srv.auth });
    expect(reload.status).toBe(200);
    expect((await health()).pluginDetails[0]).toMatchObject({ name: 'notes', version: '1.1.0' });
    const r = await runCli(['plugin', 'list', '--port', String(srv.port)], { configDir: srv.configDir });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(/^NAME\s+VERSION\s+DISPLAY NAME/);
    expect(r.stdout).toMatch(/\nnotes\s+1\.1\.0\s+Notes/);
  });
});

describe('a package without its build output', () => {
  const write = (dir: string) => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'opentabs-plugin-nodist', version: '1.0.0', files: ['src'] }));
    return dir;
  };

  test('installed from npm: says it was published without dist/, not to run a build', async () => {
    const r = await loadPluginFolder(write(join(root, 'npm-nodist')), 'npm');
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error).toContain('dist/tools.json (the package was published without its build output');
      expect(r.error).toContain('list "dist" in package.json "files"');
    }
  });

  test('a local folder: says to build it', async () => {
    const r = await loadPluginFolder(write(join(root, 'local-nodist')), 'local');
    expect(r.ok).toBe(false);
    // The folder is named: `opentabs plugin build` alone builds whatever folder the user is in.
    if (!r.ok) expect(r.error).toStartWith(`dist/tools.json (run \`opentabs plugin build ${join(root, 'local-nodist')}\`) is missing`);
  });
});

describe('the CLI reloading after a change', () => {
  const otherDir = () => {
    const dir = join(root, 'other-config');
    mkdirSync(dir, { recursive: true });
    return dir;
  };

  test("a server of another config dir on the default port is left alone: no error, a note", async () => {
    const dir = otherDir();
    await loadOrCreateSecret(dir);
    const t: Target = { configDir: dir, port: srv.port, url: srv.url, portSource: 'default' };
    // The CLI writes stderr with fs.writeSync(2, …): caught here for the duration of the call.
    const lines: string[] = [];
    const writeSync = fs.writeSync;
    (fs as { writeSync: unknown }).writeSync = (fd: number, data: unknown, ...rest: unknown[]) => {
      if (fd !== 2) return (writeSync as (...a: unknown[]) => number)(fd, data, ...rest);
      lines.push(Buffer.from(data as Uint8Array).toString());
      return (data as Uint8Array).length;
    };
    let reloaded: boolean;
    try {
      reloaded = await reloadIfRunning(t);
    } finally {
      (fs as { writeSync: unknown }).writeSync = writeSync;
    }
    expect(reloaded).toBe(false);
    expect(lines.join('')).toContain(`note: the server on ${srv.url} is not this config dir's (it does not know the secret of ${dir}; an OpenTabs server of another config dir?), so it was not reloaded`);
  });

  test('the server recorded for this config dir refusing the secret is still an error', async () => {
    const dir = otherDir();
    await loadOrCreateSecret(dir);
    const t: Target = { configDir: dir, port: srv.port, url: srv.url, portSource: 'pidfile' };
    await expect(reloadIfRunning(t)).rejects.toBeInstanceOf(CliError);
  });
});

describe('two folders with one plugin name', () => {
  test('plugin add refuses the second, naming the first and how to switch; config.json is unchanged', async () => {
    const cfg = join(root, 'twin-config');
    writeTestConfig(cfg, {});
    const first = writeTestPlugin(join(root, 'twin-a'), 'twin', [{ name: 'x' }]);
    const second = writeTestPlugin(join(root, 'twin-b'), 'twin', [{ name: 'x' }]);
    await addLocalPlugin(cfg, first);
    const before = readFileSync(join(cfg, 'config.json'), 'utf8');
    const refused = await addLocalPlugin(cfg, second).then(
      () => '',
      (e: Error) => e.message,
    );
    expect(refused).toStartWith(`plugin "twin" is already added from ${first}, which would be loaded instead of ${second}; remove that folder first (\``);
    expect(refused).toContain(` plugin remove ${first}\`) or give this plugin another name`);
    expect(readFileSync(join(cfg, 'config.json'), 'utf8')).toBe(before);
    // Adding the same folder again is fine.
    await addLocalPlugin(cfg, first);
  });

  test('plugin list shows the running server\'s note about the ignored folder', async () => {
    const cfg = join(root, 'twin-listed');
    const a = writeTestPlugin(join(root, 'listed-a'), 'twin', [{ name: 'x' }]);
    const b = writeTestPlugin(join(root, 'listed-b'), 'twin', [{ name: 'x' }]);
    writeTestConfig(cfg, { localPlugins: [a, b] });
    const s2 = await startTestServer({ configDir: cfg });
    try {
      const r = await runCli(['plugin', 'list', '--port', String(s2.port)], { configDir: cfg });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`note Plugin "twin" at ${b} ignored: a plugin with that name is already loaded from ${a}`);
      const j = await runCli(['plugin', 'list', '--json', '--port', String(s2.port)], { configDir: cfg });
      expect(JSON.parse(j.stdout).discoveryErrors).toEqual([`Plugin "twin" at ${b} ignored: a plugin with that name is already loaded from ${a}`]);
    } finally {
      await s2.stop();
    }
  });
});
