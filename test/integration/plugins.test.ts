/**
 * PluginManager inside the real server (port 0, temp config dir) with a scripted fake extension:
 * discovery with broken plugins beside a good one, adapter files, settings, install from an npm
 * tarball with scripts disabled, local-over-npm precedence, remove, and dev-mode hot reload.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, makeTempConfigDir, removeDir, type TestServer } from '../harness/server.ts';
import { FakeExtension, connectMcp, writeTestConfig } from '../harness/fake-extension.ts';
import { buildTestapp, TESTAPP_DIR } from '../fixtures/app/testapp.ts';
import { buildPlugin, createPlugin } from '../../plugins/tooling/index.ts';
import { addLocalPlugin, removeLocalPlugin } from '../../server/plugins/local.ts';
import { ADAPTER_HASH_PLACEHOLDER } from '../../server/protocol/page-channel.ts';
import { MAX_ADAPTER_BYTES } from '../../server/limits.ts';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

// npm, Chromium and child processes on a shared 2-core machine: generous per-test limit.
setDefaultTimeout(120_000);

const work = mkdtempSync(join(tmpdir(), 'opentabs-plugins-it-'));
let tarball = '';
const quiet = { reload: false, log: () => {} } as const;

beforeAll(async () => {
  await buildTestapp();
  const packDir = join(work, 'pack');
  mkdirSync(packDir);
  const r = spawnSync('npm', ['pack', '--pack-destination', packDir, '--ignore-scripts'], { cwd: TESTAPP_DIR, encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`npm pack failed: ${r.stderr}`);
  tarball = join(packDir, readdirSync(packDir).find((f) => f.endsWith('.tgz'))!);
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A hand-made plugin folder (package.json + dist), optionally broken. */
function writePlugin(dir: string, o: { pkgName?: string; tools?: unknown; adapter?: string | null; toolsJson?: unknown } = {}): string {
  mkdirSync(join(dir, 'dist'), { recursive: true });
  const name = o.pkgName ?? 'opentabs-plugin-handmade';
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, version: '1.2.3' }));
  const manifest = o.toolsJson ?? {
    name: name.replace(/^.*opentabs-plugin-/, ''),
    displayName: 'Hand made',
    description: 'A hand-made plugin',
    version: '1.2.3',
    urlPatterns: ['https://hand.example.com/*'],
    tools: o.tools ?? [{ name: 'ping', description: 'Ping', inputSchema: { type: 'object', properties: {} } }],
  };
  writeFileSync(join(dir, 'dist', 'tools.json'), typeof manifest === 'string' ? manifest : JSON.stringify(manifest));
  if (o.adapter !== null) writeFileSync(join(dir, 'dist', 'adapter.js'), o.adapter ?? `(() => { const hash = "${ADAPTER_HASH_PLACEHOLDER}"; })();`);
  return dir;
}

async function withServer(localPlugins: string[], fn: (srv: TestServer) => Promise<void>, opts: { dev?: boolean } = {}) {
  const configDir = makeTempConfigDir('opentabs-plugins-');
  writeTestConfig(configDir, { localPlugins });
  const srv = await startTestServer({ configDir, ...opts });
  try {
    await fn(srv);
  } finally {
    await srv.stop();
    removeDir(configDir);
  }
}

describe('discovery', () => {
  test('a schema naming another draft ($schema 2020-12) is checked as draft-07 and never stops discovery; an invalid, too deep or unreadable one is refused, named', async () => {
    const d = join(work, 'drafts');
    const draft2020 = 'https://json-schema.org/draft/2020-12/schema';
    const good = writePlugin(join(d, 'good'), {
      pkgName: 'opentabs-plugin-newdraft',
      tools: [{ name: 'find', description: 'Find', inputSchema: { $schema: draft2020, type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } }],
    });
    const bad = writePlugin(join(d, 'bad'), {
      pkgName: 'opentabs-plugin-baddraft',
      tools: [{ name: 'find', description: 'Find', inputSchema: { $schema: draft2020, type: 'object', properties: { q: { type: 'text' } } } }],
    });
    // Nested deeper than the checker's recursion goes: refused, never a throw out of discovery.
    const depth = 20_000;
    const deep = writePlugin(join(d, 'deep'), {
      pkgName: 'opentabs-plugin-deepschema',
      toolsJson: `{"name":"deepschema","displayName":"Deep","description":"d","version":"1.2.3","urlPatterns":["https://deep.example.com/*"],"tools":[{"name":"t","description":"d","inputSchema":${'{"type":"object","properties":{"a":'.repeat(depth)}{"type":"string"}${'}}'.repeat(depth)}}]}`,
    });
    // An adapter that is not a regular file (a folder): refused, never a throw.
    const unreadable = writePlugin(join(d, 'unreadable'), { pkgName: 'opentabs-plugin-unreadable', adapter: null });
    mkdirSync(join(unreadable, 'dist', 'adapter.js'));
    await withServer([TESTAPP_DIR, good, bad, deep, unreadable], async (srv) => {
      expect(srv.ctx.plugins.list().map((p) => p.name)).toEqual(['testapp', 'newdraft']);
      const failed = srv.ctx.plugins.failed();
      expect(failed.map((f) => f.path)).toEqual([bad, deep, unreadable]);
      expect(failed[2]!.error).toBe('dist/adapter.js is not a regular file: a plugin is loaded only from regular files');
      expect(failed[0]!.error).toMatch(/^dist\/tools.json tools\.0\.inputSchema \(find\): not a valid JSON Schema: data\/properties\/q\/type must be/);
      expect(failed[1]!.error).toMatch(/^dist\/tools.json tools\.0\.inputSchema \(t\): the schema is too large to check calls against \(nested more than 64 levels deep/);
      // The 2020-12 tool validates its arguments (with draft-07 semantics).
      const c = srv.ctx.catalog.current();
      expect(c.validate(c.get('newdraft_find')!, {})).toMatchObject({ path: '/q', message: 'is required' });
      expect(c.validate(c.get('newdraft_find')!, { q: 'x' })).toBeNull();
    });
  });

  test('broken plugins land in failed() and /health with path and reason; the good one loads', async () => {
    const b = join(work, 'broken');
    const cases = {
      badManifest: writePlugin(join(b, 'bad-manifest'), { pkgName: 'opentabs-plugin-badmanifest', toolsJson: { name: 'badmanifest', displayName: 'x', description: 'x', version: '1', urlPatterns: [], tools: [] } }),
      notJson: writePlugin(join(b, 'not-json'), { pkgName: 'opentabs-plugin-notjson', toolsJson: '{ nope' }),
      noBuild: writePlugin(join(b, 'no-build'), { pkgName: 'opentabs-plugin-nobuild', adapter: null }),
      huge: writePlugin(join(b, 'huge'), { pkgName: 'opentabs-plugin-huge', adapter: 'x'.repeat(MAX_ADAPTER_BYTES + 1) }),
      badSchema: writePlugin(join(b, 'bad-schema'), {
        pkgName: 'opentabs-plugin-badschema',
        tools: [{ name: 'ping', description: 'p', inputSchema: { type: 'object', properties: { a: { type: 'nonsense' } } } }],
      }),
      badPkg: writePlugin(join(b, 'bad-pkg'), { pkgName: 'not-a-plugin' }),
      missing: join(b, 'does-not-exist'),
    };
    await withServer([TESTAPP_DIR, ...Object.values(cases)], async (srv) => {
      const m = srv.ctx.plugins;
      expect(m.list().map((p) => p.name)).toEqual(['testapp']);
      const failed = new Map(m.failed().map((f) => [f.path, f]));
      expect(failed.size).toBe(7);
      expect(failed.get(cases.badManifest)!.error).toBe('dist/tools.json urlPatterns: urlPatterns must list at least one match pattern');
      expect(failed.get(cases.notJson)!.error).toStartWith(`dist/tools.json (run \`opentabs plugin build ${cases.notJson}\`) is not valid JSON`);
      expect(failed.get(cases.noBuild)!.error).toMatch(/^dist\/adapter.js is missing/);
      expect(failed.get(cases.huge)!.error).toBe(`dist/adapter.js is ${MAX_ADAPTER_BYTES + 1} bytes, over the ${MAX_ADAPTER_BYTES}-byte limit`);
      expect(failed.get(cases.badSchema)!.error).toMatch(/^dist\/tools.json tools\.0\.inputSchema \(ping\): not a valid JSON Schema/);
      expect(failed.get(cases.badPkg)!.error).toMatch(/^package.json name: "not-a-plugin" must be opentabs-plugin-<name>/);
      expect(failed.get(cases.missing)!.error).toMatch(/^package.json is missing/);
      expect(failed.get(cases.huge)!.name).toBe('huge');

      const health = await (await fetch(`${srv.url}/health`, { headers: srv.auth })).json();
      expect(health.failedPlugins).toHaveLength(7);
      expect(health.failedPlugins.find((f: { path: string }) => f.path === cases.noBuild).error).toMatch(/adapter.js is missing/);
      const detail = health.pluginDetails.find((p: { name: string }) => p.name === 'testapp');
      expect(detail.tools).toContain('testapp_list_items');
      expect(detail.source).toBe('local');
      expect(detail.sdkVersion).toBe('0.1.0');

      // The adapter file is written under extension/adapters with its hash filled in.
      const p = m.get('testapp')!;
      expect(p.adapterFile).toMatch(/^adapters\/testapp-[0-9a-f]{12}\.js$/);
      const written = readFileSync(join(srv.configDir, 'extension', p.adapterFile), 'utf8');
      expect(written).not.toContain(ADAPTER_HASH_PLACEHOLDER);
      expect(written).toContain(`"${p.adapterHash}"`);

      const tools = await (await fetch(`${srv.url}/tools?plugin=testapp`, { headers: srv.auth })).json();
      expect(tools.tools.map((t: { name: string }) => t.name).sort()).toEqual(p.tools.map((t) => t.fullName).sort());
    });
  });

  test('stale adapter files are pruned on rediscovery', async () => {
    const dir = writePlugin(join(work, 'prune', 'handmade'));
    await withServer([dir], async (srv) => {
      const first = srv.ctx.plugins.get('handmade')!.adapterFile;
      writeFileSync(join(dir, 'dist', 'adapter.js'), '(() => { /* v2 */ })();');
      await srv.ctx.reload();
      const second = srv.ctx.plugins.get('handmade')!.adapterFile;
      expect(second).not.toBe(first);
      expect(readdirSync(join(srv.configDir, 'extension', 'adapters'))).toEqual([second.replace('adapters/', '')]);
    });
  });
});

describe('settings', () => {
  test('POST /plugin-settings validates against configSchema; resolved settings reach the dispatch', async () => {
    await withServer([TESTAPP_DIR], async (srv) => {
      const post = (settings: unknown) =>
        fetch(`${srv.url}/plugin-settings`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: JSON.stringify({ plugin: 'testapp', settings }) });
      let r = await post({ sortOrder: 'sideways' });
      expect(r.status).toBe(400);
      expect((await r.json()).error).toMatchObject({ code: 'invalid_settings', message: 'Invalid settings for testapp: sortOrder: must be one of "asc", "desc"' });
      r = await post({ pageSize: 'ten' });
      expect((await r.json()).error.message).toMatch(/pageSize: must be a number/);
      r = await post({ colour: 'red' });
      expect((await r.json()).error.message).toMatch(/colour: unknown setting/);
      r = await fetch(`${srv.url}/plugin-settings`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: JSON.stringify({ plugin: 'ghost', settings: {} }) });
      expect(r.status).toBe(404);

      const ext = await FakeExtension.connect(srv.url, srv.secret);
      try {
        const update = ext.waitFor('plugin.update', (p) => p.plugin.name === 'testapp');
        r = await post({ sortOrder: 'desc', titlePrefix: 'AI: ' });
        expect(r.status).toBe(200);
        expect((await update).plugin.settings).toEqual({ pageSize: 5, sortOrder: 'desc', includeArchived: false, titlePrefix: 'AI: ' });
        // A second change keeps the first (merge), null clears a field.
        await post({ includeArchived: true, titlePrefix: null });
        expect(srv.ctx.plugins.resolvedSettings('testapp')).toEqual({ pageSize: 5, sortOrder: 'desc', includeArchived: true });
        const saved = JSON.parse(readFileSync(join(srv.configDir, 'config.json'), 'utf8'));
        expect(saved.pluginSettings.testapp).toEqual({ sortOrder: 'desc', includeArchived: true });

        await srv.ctx.config.setPluginPermission('testapp', 'auto');
        srv.ctx.catalog.rebuild();
        ext.onDispatch('testapp_list_items', (p) => ({ value: { settings: p.settings } }));
        const call = await fetch(`${srv.url}/tools/testapp_list_items/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: '{"arguments":{}}' });
        const body = await call.json();
        expect(JSON.stringify(body)).toContain('"sortOrder":"desc"');
        const dispatch = ext.sent('tool.dispatch').at(-1)!;
        expect(dispatch.params.settings).toEqual({ pageSize: 5, sortOrder: 'desc', includeArchived: true });
      } finally {
        await ext.close();
      }
    });
  });
});

describe('install / remove', () => {
  test('install from a tarball never runs install scripts; new plugin starts at ask; local wins; remove', async () => {
    const marker = join(work, 'postinstall-marker.txt');
    process.env.OPENTABS_POSTINSTALL_MARKER = marker;
    const localCopy = join(work, 'local-testapp');
    cpSync(TESTAPP_DIR, localCopy, { recursive: true, filter: (src) => !src.includes('node_modules') && !src.endsWith('.tgz') });
    try {
      await withServer([], async (srv) => {
        const ext = await FakeExtension.connect(srv.url, srv.secret);
        try {
          const lines: string[] = [];
          const changed = ext.waitFor('plugins.changed', undefined, 60_000);
          const sync = ext.waitFor('sync.full', (p) => p.plugins.some((x: { name: string }) => x.name === 'testapp'), 60_000);
          const { name } = await srv.ctx.plugins.install(tarball, (l) => lines.push(l));
          expect(name).toBe('testapp');
          expect(lines[0]).toMatch(/install scripts disabled/);
          expect(lines.at(-1)).toBe('Plugin "testapp" ready (9 tools)');
          const pkgDir = join(srv.configDir, 'plugins', 'node_modules', 'opentabs-plugin-testapp');
          expect(existsSync(join(pkgDir, 'dist', 'adapter.js'))).toBe(true);
          // The postinstall script would have written either marker.
          expect(existsSync(marker)).toBe(false);
          expect(existsSync(join(pkgDir, 'postinstall-ran.txt'))).toBe(false);
          expect(srv.ctx.plugins.get('testapp')!.source).toBe('npm');
          expect(srv.ctx.config.get().permissions.testapp?.default).toBe('ask');
          await changed;
          const info = (await sync).plugins.find((x: { name: string }) => x.name === 'testapp');
          expect(info.tools.every((t: { permission: string }) => t.permission === 'ask')).toBe(true);

          // A local plugin of the same name wins, reported in discoveryErrors.
          await addLocalPlugin(srv.configDir, localCopy);
          await srv.ctx.reload();
          expect(srv.ctx.plugins.get('testapp')!.source).toBe('local');
          expect(srv.ctx.plugins.discoveryErrors()).toEqual([
            `Plugin "testapp" installed from npm (${pkgDir}) is shadowed by the local plugin at ${localCopy}`,
          ]);
          const health = await (await fetch(`${srv.url}/health`, { headers: srv.auth })).json();
          expect(health.discoveryErrors).toHaveLength(1);
          expect(await removeLocalPlugin(srv.configDir, 'testapp')).toBe(localCopy);
          await srv.ctx.reload();
          expect(srv.ctx.plugins.get('testapp')!.source).toBe('npm');

          // Remove uninstalls the package and tells the extension.
          const uninstall = ext.waitFor('plugin.uninstall', (p) => p.name === 'testapp', 60_000);
          await srv.ctx.plugins.remove('testapp');
          expect((await uninstall).name).toBe('testapp');
          expect(srv.ctx.plugins.get('testapp')).toBeUndefined();
          expect(existsSync(pkgDir)).toBe(false);
          await expect(srv.ctx.plugins.remove('testapp')).rejects.toThrow(/No plugin named "testapp"/);
        } finally {
          await ext.close();
        }
      });
    } finally {
      delete process.env.OPENTABS_POSTINSTALL_MARKER;
    }
  });

  test('a package that is not a plugin is refused and removed again; bad specs are clear errors', async () => {
    const notPlugin = join(work, 'not-plugin');
    mkdirSync(notPlugin, { recursive: true });
    writeFileSync(join(notPlugin, 'package.json'), JSON.stringify({ name: 'left-pad-ish', version: '1.0.0' }));
    await withServer([], async (srv) => {
      await expect(srv.ctx.plugins.install(notPlugin)).rejects.toThrow(/left-pad-ish is not an OpenTabs plugin/);
      expect(existsSync(join(srv.configDir, 'plugins', 'node_modules', 'left-pad-ish'))).toBe(false);
      await expect(srv.ctx.plugins.install('--global')).rejects.toThrow(/Install spec must be/);
      await expect(srv.ctx.plugins.install(join(work, 'no-such.tgz'))).rejects.toThrow(/npm install .* failed/);
    });
  });

  test('addLocalPlugin refuses folders that are not plugins', async () => {
    const dir = makeTempConfigDir();
    try {
      await expect(addLocalPlugin(dir, join(work, 'nope'))).rejects.toThrow(/is not a folder/);
      const junk = join(work, 'junk');
      mkdirSync(junk, { recursive: true });
      await expect(addLocalPlugin(dir, junk)).rejects.toThrow(/has no package.json/);
      writeFileSync(join(junk, 'package.json'), '{"name":"junk","version":"1.0.0"}');
      await expect(addLocalPlugin(dir, junk)).rejects.toThrow(/is not an OpenTabs plugin: package.json name/);
      // An unbuilt plugin is added with a warning (the build may come later).
      const { dir: fresh } = await createPlugin('fresh', join(work, 'fresh'));
      const r = await addLocalPlugin(dir, fresh);
      expect(r).toMatchObject({ path: fresh, name: 'fresh' });
      expect(r.warning).toMatch(/tools.json/);
    } finally {
      removeDir(dir);
    }
  });
});

describe('build → running server', () => {
  test('a build POSTs /reload to the server found through server.pid; no server is fine', async () => {
    const { dir } = await createPlugin('reloaded', join(work, 'reloaded'));
    const none = makeTempConfigDir();
    try {
      expect((await buildPlugin(dir, { log: () => {}, configDir: none })).reloaded).toBe(false);
    } finally {
      removeDir(none);
    }
    await withServer([dir], async (srv) => {
      expect(srv.ctx.plugins.get('reloaded')).toBeDefined();
      const src = join(dir, 'src', 'index.ts');
      writeFileSync(src, readFileSync(src, 'utf8').replace("name: 'get_page_info'", "name: 'get_title'"));
      const before = srv.ctx.reloadCount;
      const lines: string[] = [];
      const r = await buildPlugin(dir, { log: (l) => lines.push(l), configDir: srv.configDir });
      expect(r.reloaded).toBe(true);
      expect(lines.at(-1)).toBe('Reloaded the running OpenTabs server');
      expect(srv.ctx.reloadCount).toBe(before + 1);
      expect(srv.ctx.plugins.get('reloaded')!.tools.map((t) => t.name)).toEqual(['get_title']);
    });
  });
});

describe('dev mode', () => {
  test('a rebuild reaches the extension (plugin.update) and MCP clients (list_changed) without a restart', async () => {
    const { dir } = await createPlugin('hot', join(work, 'hot'));
    await buildPlugin(dir, quiet);
    await withServer(
      [dir],
      async (srv) => {
        expect(srv.ctx.plugins.watcherStatus()).toMatchObject({ watchedPlugins: 1, pendingPlugins: 0 });
        const ext = await FakeExtension.connect(srv.url, srv.secret);
        const mcp = await connectMcp(srv.url, srv.secret);
        try {
          let listChanged = 0;
          mcp.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
            listChanged++;
          });
          const before = srv.ctx.plugins.get('hot')!.adapterHash;
          const src = join(dir, 'src', 'index.ts');
          writeFileSync(src, readFileSync(src, 'utf8').replace("name: 'get_page_info'", "name: 'get_info'"));
          const update = ext.waitFor('plugin.update', (p) => p.plugin.name === 'hot' && p.plugin.adapterHash !== before, 15_000);
          await buildPlugin(dir, quiet);
          const info = (await update).plugin;
          expect(info.tools.map((t: { fullName: string }) => t.fullName)).toEqual(['hot_get_info']);
          expect(existsSync(join(srv.configDir, 'extension', info.adapterFile))).toBe(true);
          const listed = await mcp.listTools();
          expect(listed.tools.map((t) => t.name)).toContain('hot_get_info');
          expect(listed.tools.map((t) => t.name)).not.toContain('hot_get_page_info');
          for (let i = 0; i < 100 && listChanged === 0; i++) await Bun.sleep(50);
          expect(listChanged).toBeGreaterThan(0);
          // The mtime poller runs beside fs.watch.
          for (let i = 0; i < 100 && srv.ctx.plugins.watcherStatus().lastPollAt === null; i++) await Bun.sleep(50);
          const health = await (await fetch(`${srv.url}/health`, { headers: srv.auth })).json();
          expect(health.mode).toBe('dev');
          expect(health.fileWatcher.watchedPlugins).toBe(1);
          expect(typeof health.fileWatcher.lastPollAt).toBe('number');
        } finally {
          await mcp.close();
          await ext.close();
        }
      },
      { dev: true },
    );
  });

  test('a plugin folder without dist/ is pending until its first build', async () => {
    const { dir } = await createPlugin('later', join(work, 'later'));
    await withServer(
      [dir],
      async (srv) => {
        expect(srv.ctx.plugins.watcherStatus()).toMatchObject({ watchedPlugins: 0, pendingPlugins: 1 });
        expect(srv.ctx.plugins.failed()[0]!.error).toMatch(/tools.json/);
        await buildPlugin(dir, quiet);
        for (let i = 0; i < 200 && !srv.ctx.plugins.get('later'); i++) await Bun.sleep(50);
        expect(srv.ctx.plugins.get('later')?.tools.map((t) => t.name)).toEqual(['get_page_info']);
        expect(srv.ctx.plugins.failed()).toEqual([]);
        expect(srv.ctx.plugins.watcherStatus().watchedPlugins).toBe(1);
      },
      { dev: true },
    );
  });
});
