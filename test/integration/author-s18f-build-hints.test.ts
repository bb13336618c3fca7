/**
 * `opentabs plugin build` on the bundler errors authors meet says what to do, instead of
 * esbuild's own notes ("platform: 'node'", "mark the path as external"), which are no fix for an
 * adapter: a Node module imported, a package not installed, an await at the module's top level.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(180_000);

let root: string;
let cfg: string;
let dir: string;
let sample: string;

beforeAll(async () => {
  root = tempDir();
  cfg = join(root, 'state');
  dir = join(root, 'opentabs-plugin-hints');
  expect((await runCli(['plugin', 'create', 'hints', '--dir', dir, '--url', 'http://127.0.0.1:45021/*'], { configDir: cfg })).code).toBe(0);
  sample = readFileSync(join(dir, 'src', 'index.ts'), 'utf8');
});
afterAll(() => removeDir(root));

async function buildWith(prefix: string, suffix = ''): Promise<{ code: number; out: string }> {
  writeFileSync(join(dir, 'src', 'index.ts'), `${prefix}\n${sample}\n${suffix}\n`);
  const r = await runCli(['plugin', 'build', dir, '--no-typecheck'], { configDir: cfg, timeoutMs: 120_000 });
  return { code: r.code, out: `${r.stdout}\n${r.stderr}` };
}

test('a Node module: the adapter runs in the page, use fetch or the SDK helpers', async () => {
  for (const spec of ['node:fs', 'fs', 'path/posix']) {
    const { code, out } = await buildWith(`import * as m from '${spec}';\nexport const used = m;`);
    expect(code).toBe(1);
    expect(out).toContain(`Could not resolve "${spec}"`);
    expect(out).toContain(`The adapter runs in the web page, where Node's modules ("${spec}") do not exist`);
    expect(out).not.toContain("platform: 'node'");
  }
});

test('a package that is not installed: the npm install to run, in the plugin folder; with it there the build passes', async () => {
  const { code, out } = await buildWith(`import pad from '@acme/pad-s18f/deep';\nexport const used = pad;`);
  expect(code).toBe(1);
  expect(out).toContain('Could not resolve "@acme/pad-s18f/deep"');
  expect(out).toContain(`Install it in the plugin folder: \`cd ${dir} && npm install @acme/pad-s18f\``);
  expect(out).not.toContain('as external');
  // Where the hint says the build looks: the plugin's own node_modules.
  const pkg = join(dir, 'node_modules', '@acme', 'pad-s18f');
  mkdirSync(join(pkg), { recursive: true });
  writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: '@acme/pad-s18f', version: '1.0.0', type: 'module', exports: { './deep': './deep.js' } }));
  writeFileSync(join(pkg, 'deep.js'), 'export default (s) => s.padStart(3);\n');
  const again = await buildWith(`import pad from '@acme/pad-s18f/deep';\nexport const used = pad;`);
  expect(again.out).toContain('Built plugin "hints"');
  expect(again.code).toBe(0);
});

test('an await at the top level: move it into a handler or isReady', async () => {
  const { code, out } = await buildWith('', 'await Promise.resolve(1);');
  expect(code).toBe(1);
  expect(out).toContain('Top-level await is currently not supported');
  expect(out).toContain('move the await into a handler or isReady');
});

test('a relative import that does not exist gets no install hint', async () => {
  const { code, out } = await buildWith(`import { x } from './nowhere.ts';\nexport const used = x;`);
  expect(code).toBe(1);
  expect(out).toContain('Could not resolve "./nowhere.ts"');
  expect(out).not.toContain('npm install');
});

test('with the type check on, a package that is not installed gets the same npm install', async () => {
  writeFileSync(join(dir, 'src', 'index.ts'), `import pad from 'pad-s18f-absent';\nexport const used = pad;\n${sample}\n`);
  const r = await runCli(['plugin', 'build', dir], { configDir: cfg, timeoutMs: 120_000 });
  expect(r.code).toBe(1);
  expect(r.stderr).toContain("Cannot find module 'pad-s18f-absent'");
  expect(r.stderr).toContain(`Install it in the plugin folder: \`cd ${dir} && npm install pad-s18f-absent\``);
});

test('an adapter over the size limit names its largest parts and what to do', async () => {
  writeFileSync(join(dir, 'src', 'big-table.ts'), `export const TABLE = ${JSON.stringify('q'.repeat(5_300_000))};\n`);
  const { code, out } = await buildWith(`import { TABLE } from './big-table.ts';\nexport const used = TABLE.length;`);
  expect(code).toBe(1);
  expect(out).toMatch(/dist\/adapter\.js: \d+ bytes is over the 5242880-byte limit/);
  expect(out).toMatch(/the largest parts: src\/big-table\.ts \(\d+ bytes\), \/\S+\/valibot\//);
  expect(out).toContain('fetch data from the app at call time instead of embedding it');
});
