/**
 * The server's start-up bundle (cli/server-bundle.ts) is a cache: a fresh one runs the real server
 * (REST, MCP, the extension installer and plugin discovery included), and anything that makes it
 * doubtful — an edited input, another Bun, another folder, a half-written output, a corrupt stamp,
 * OPENTABS_NO_BUNDLE=1 — makes `opentabs start` run the sources instead, never fail.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { AJV_FILE, BUNDLE_FILE, VALIDATORS_FILE, buildServerBundle, bundleStaleReason, loadBundle, loadServer, type BundlePaths } from '../../cli/server-bundle.ts';
import * as source from '../../server/serve.ts';
import { BROWSER_TOOLS } from '../../server/tools/browser-catalog.ts';
import { computeLoaderKey, LOADER_FILES } from '../../server/plugins/loader-key.ts';

const ROOT = resolve(import.meta.dir, '..', '..');
let tmp: string;
let paths: BundlePaths;
const stampPath = () => join(paths.outDir!, `${BUNDLE_FILE}.stamp.json`);
let pristineStamp: string;

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'opentabs-bundle-'));
  paths = { root: ROOT, outDir: join(tmp, 'out') };
  const r = await buildServerBundle(paths);
  expect(r.inputs).toBeGreaterThan(50);
  pristineStamp = readFileSync(stampPath(), 'utf8');
}, 120_000);
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function withStamp(edit: (s: { bun: string; root: string; inputs: Record<string, [number, number]>; outputs: Record<string, number> }) => void): void {
  const s = JSON.parse(pristineStamp);
  edit(s);
  writeFileSync(stampPath(), JSON.stringify(s));
}

test('a fresh bundle is loaded instead of the sources and runs the whole server', async () => {
  expect(bundleStaleReason(paths)).toBeNull();
  const mod = await loadServer(paths);
  expect(mod.startServer).not.toBe(source.startServer); // it is the bundle's copy
  const cfg = join(tmp, 'state');
  // Two hand-made plugins whose schemas the bundled server checks with the precompiled draft-07
  // meta-schema: one naming draft 2020-12 (loads), one with a type that does not exist (refused).
  const plugin = (name: string, type: string) => {
    const dir = join(tmp, 'plugins', name);
    mkdirSync(join(dir, 'dist'), { recursive: true });
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `opentabs-plugin-${name}`, version: '1.0.0' }));
    writeFileSync(join(dir, 'dist', 'adapter.js'), '(() => {})();');
    const inputSchema = { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { q: { type } } };
    writeFileSync(join(dir, 'dist', 'tools.json'), JSON.stringify({ name, displayName: name, description: name, version: '1.0.0', urlPatterns: ['https://x.example/*'], tools: [{ name: 'find', description: 'Find', inputSchema }] }));
    return dir;
  };
  mkdirSync(cfg, { recursive: true });
  writeFileSync(join(cfg, 'config.json'), JSON.stringify({ schemaVersion: 1, localPlugins: [plugin('goodone', 'string'), plugin('badone', 'text')] }));
  const running = await mod.startServer({ port: 0, configDir: cfg, quiet: true });
  try {
    await running.ready;
    expect(running.ctx.plugins.list().map((p) => p.name)).toEqual(['goodone']);
    expect(running.ctx.plugins.failed().map((f) => f.error)).toEqual([expect.stringContaining('not a valid JSON Schema: data/properties/q/type must be')]);
    const health = await fetch(`${running.url}/health`);
    expect(health.status).toBe(200);
    const auth = { Authorization: `Bearer ${running.ctx.secret}` };
    const tools = (await (await fetch(`${running.url}/tools`, { headers: auth })).json()) as { tools: { name: string; plugin: string; description: string; inputSchema: unknown }[] };
    expect(tools.tools.map((t) => t.name)).toContain('browser_list_tabs');
    // The built-in tools' schemas were computed when the bundle was built: the same as from source.
    const builtins = tools.tools.filter((t) => t.plugin === 'browser').map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }));
    expect(builtins).toEqual(BROWSER_TOOLS.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })));
    // The plugins' schemas were checked by the precompiled meta-schema, from the validators'
    // own bundle file; built-in arguments are checked by the validators precompiled beside it:
    // the same refusal, naming the field.
    const validators = join(paths.outDir!, VALIDATORS_FILE);
    expect(require.cache[validators]).toBeDefined();
    const bad = await fetch(`${running.url}/tools/browser_click_element/call`, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ arguments: { tabId: 'seven' } }),
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await bad.json())).toContain('/tabId');
    // Ajv is a bytecode file of its own, loaded on the first compile: here a plugin tool's first
    // call, whose arguments are refused naming the field as from source.
    const ajvFile = join(paths.outDir!, AJV_FILE);
    expect(require.cache[ajvFile]).toBeUndefined();
    const badPlugin = await fetch(`${running.url}/tools/goodone_find/call`, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ arguments: { q: 7 } }),
    });
    expect(badPlugin.status).toBe(400);
    expect(JSON.stringify(await badPlugin.json())).toContain('/q');
    expect(require.cache[ajvFile]).toBeDefined();
    // MCP over the bundled front door.
    const init = await fetch(`${running.url}/mcp`, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }),
    });
    expect(init.status).toBe(200);
    expect(await init.text()).toContain('"serverInfo"');
    // The extension installer is imported from source by the bundled server (server/source-dir.ts).
    await running.ready;
    expect(existsSync(join(cfg, 'extension', 'manifest.json'))).toBe(true);
    expect(existsSync(join(cfg, 'extension', 'auth.json'))).toBe(true);
  } finally {
    await running.stop();
  }
}, 120_000);

test('the bundle carries the plugin-folder cache key computed from the loader files, which its stamp records', () => {
  const bundle = readFileSync(join(paths.outDir!, BUNDLE_FILE), 'utf8');
  expect(computeLoaderKey()).toMatch(/^[0-9a-f]{64}$/);
  expect(bundle).toContain(`return ${JSON.stringify(computeLoaderKey())};`);
  const inputs = Object.keys(JSON.parse(pristineStamp).inputs);
  for (const f of LOADER_FILES) expect(inputs).toContain(join('server', f));
});

/** `bun -e` running the CLI from the bundle in `outDir`, as cli/main.ts does for `opentabs start`. */
function bundledCliScript(outDir: string): string {
  return `require(${JSON.stringify(join(outDir, BUNDLE_FILE))}).runCli(process.argv.slice(1))`;
}

test('the bundle carries `opentabs start` itself: it starts the server, and its usage errors are the CLI message and exit code 2', async () => {
  const bundled = loadBundle(paths)!;
  expect(typeof bundled.runCli).toBe('function');
  expect(bundled.runCli).not.toBe((await import('../../cli/run.ts')).runCli);
  const cfg = join(tmp, 'cli-state');
  const env = { ...process.env, OPENTABS_CONFIG_DIR: cfg, NO_COLOR: '1' };
  const bad = spawnSync(process.execPath, ['-e', bundledCliScript(paths.outDir!), 'start', '--port', 'abc'], { env, encoding: 'utf8' });
  expect(bad.status).toBe(2);
  // The CLI's own error and usage hint, not a stack trace: CliError is the bundle's own class.
  expect(bad.stderr).toMatch(/^error: Invalid port "abc" from --port/);
  expect(bad.stderr).not.toContain('    at ');
  const proc = spawn(process.execPath, ['-e', bundledCliScript(paths.outDir!), 'start', '--port', '0'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      proc.stdout!.on('data', (d) => {
        out += String(d);
        const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
        if (m) resolve(m[1]!);
      });
      proc.once('exit', (code) => reject(new Error(`start exited with ${code} before listening: ${out}`)));
    });
    expect((await fetch(`${url}/health`)).status).toBe(200);
  } finally {
    proc.kill('SIGTERM');
    await new Promise((resolve) => proc.once('exit', resolve));
  }
}, 120_000);

test('an edited input, another Bun, another folder or a half-written output: the sources run', async () => {
  const cases: [string, () => void, RegExp][] = [
    ['edited input', () => withStamp((s) => (s.inputs['server/serve.ts']![1] -= 1000)), /server\/serve\.ts changed/],
    ['edited tool declaration (computed into the bundle)', () => withStamp((s) => (s.inputs[join('server', 'protocol', 'browser-tools', 'acting.ts')]![1] -= 1000)), /acting\.ts changed/],
    ['deleted input', () => withStamp((s) => (s.inputs['server/no-such-file.ts'] = [1, 1])), /no-such-file\.ts changed/],
    ['dependencies reinstalled', () => withStamp((s) => (s.inputs[join('node_modules', '.package-lock.json')] = [1, 1])), /package-lock\.json changed/],
    ['a dependency updated', () => withStamp((s) => (s.inputs[join('node_modules', 'hono', 'package.json')]![0] += 1)), /hono\/package\.json changed/],
    ['other Bun', () => withStamp((s) => (s.bun = '0.0.1')), /Bun 0\.0\.1/],
    ['other folder', () => withStamp((s) => (s.root = '/somewhere/else')), /built in \/somewhere\/else/],
    ['half-written bytecode', () => withStamp((s) => (s.outputs[`${BUNDLE_FILE}.jsc`]! += 1)), /\.jsc is missing or incomplete/],
    ['corrupt stamp', () => writeFileSync(stampPath(), '{"bun":'), /not built/],
  ];
  try {
    for (const [what, make, reason] of cases) {
      make();
      expect(`${what}: ${bundleStaleReason(paths)}`).toMatch(reason);
      expect(await loadServer(paths)).toBe(source);
      expect(loadBundle(paths)).toBeNull();
    }
  } finally {
    writeFileSync(stampPath(), pristineStamp);
  }
  expect(bundleStaleReason(paths)).toBeNull();
});

test('OPENTABS_NO_BUNDLE=1 runs the sources; a bundle that does not load is a miss, not a failure', async () => {
  process.env.OPENTABS_NO_BUNDLE = '1';
  try {
    expect(await loadServer(paths)).toBe(source);
  } finally {
    delete process.env.OPENTABS_NO_BUNDLE;
  }
  // A copy whose bundle has the recorded size but is not JavaScript (a fresh path: require caches).
  const other: BundlePaths = { root: ROOT, outDir: join(tmp, 'out-broken') };
  cpSync(paths.outDir!, other.outDir!, { recursive: true });
  const file = join(other.outDir!, BUNDLE_FILE);
  writeFileSync(file, Buffer.alloc(readFileSync(file).length, 0x7b)); // "{{{{…"
  rmSync(`${file}.jsc`);
  const stamp = JSON.parse(pristineStamp);
  delete stamp.outputs[`${BUNDLE_FILE}.jsc`];
  writeFileSync(join(other.outDir!, `${BUNDLE_FILE}.stamp.json`), JSON.stringify(stamp));
  expect(bundleStaleReason(other)).toBeNull();
  expect(await loadServer(other)).toBe(source);
});

test('built from another working directory, the stamp still records every source file', async () => {
  const cwd = process.cwd();
  process.chdir(tmp);
  try {
    const other: BundlePaths = { root: ROOT, outDir: join(tmp, 'out-cwd') };
    const r = await buildServerBundle(other);
    const stamp = JSON.parse(readFileSync(join(other.outDir!, `${BUNDLE_FILE}.stamp.json`), 'utf8'));
    expect(Object.keys(stamp.inputs).length).toBe(r.inputs);
    expect(Object.keys(stamp.inputs)).toContain(join('server', 'tools', 'catalog.ts'));
    expect(r.inputs).toBeGreaterThan(50);
    expect(bundleStaleReason(other)).toBeNull();
  } finally {
    process.chdir(cwd);
  }
}, 120_000);
