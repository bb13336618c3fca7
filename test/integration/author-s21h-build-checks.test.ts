/**
 * `opentabs plugin build` refuses what plugin discovery refuses, in the same words, so an author
 * learns it at the build rather than at `opentabs plugin add`: a tool schema nested deeper than
 * PLUGIN_SCHEMA_MAX_DEPTH or holding more than PLUGIN_SCHEMA_MAX_NODES objects and arrays, and a
 * package.json, dist/tools.json or dist/adapter.js that is a link out of the folder or not a
 * regular file.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { lstatSync, mkdirSync, readFileSync, readdirSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PLUGIN_SCHEMA_MAX_DEPTH, PLUGIN_SCHEMA_MAX_NODES } from '../../server/limits.ts';
import { loadPluginFolder } from '../../server/plugins/load.ts';
import { removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(180_000);

let root: string;
let cfg: string;
let dir: string;
let sample: string;

beforeAll(async () => {
  root = tempDir();
  cfg = join(root, 'state');
  dir = join(root, 'opentabs-plugin-checks');
  expect((await runCli(['plugin', 'create', 'checks', '--dir', dir, '--url', 'http://127.0.0.1:45061/*'], { configDir: cfg })).code).toBe(0);
  sample = readFileSync(join(dir, 'src', 'index.ts'), 'utf8');
});
afterAll(() => removeDir(root));

async function build(): Promise<{ code: number; out: string }> {
  const r = await runCli(['plugin', 'build', dir, '--no-typecheck'], { configDir: cfg, timeoutMs: 120_000 });
  return { code: r.code, out: `${r.stdout}\n${r.stderr}` };
}

/** The sample plugin with one more tool, whose input and output are given as valibot source. */
function withTool(input: string, output: string): string {
  const tool = `
let nested: v.GenericSchema = v.string();
for (let i = 0; i < 40; i++) nested = v.object({ inner: nested });
const wideFields = Object.fromEntries(Array.from({ length: ${PLUGIN_SCHEMA_MAX_NODES + 50} }, (_, i) => ['f' + i, v.string()]));
const bigTool = defineTool({
  name: 'big_search',
  description: 'Search with a large filter.',
  input: ${input},
  output: ${output},
  async handle() { return {} as never; },
});
`;
  return sample.replace('tools: [getPageInfo]', 'tools: [getPageInfo, bigTool]').replace('export default definePlugin', `${tool}\nexport default definePlugin`);
}

const TOO_LARGE = `the schema is too large to check calls against`;
const BOUNDS = `at most ${PLUGIN_SCHEMA_MAX_DEPTH} levels and ${PLUGIN_SCHEMA_MAX_NODES} objects and arrays`;

test('an input nested too deep fails the build, naming the tool and the limit; the server says the same of such a tools.json', async () => {
  writeFileSync(join(dir, 'src', 'index.ts'), withTool('v.object({ filter: nested })', 'v.object({})'));
  const { code, out } = await build();
  expect(code).toBe(1);
  expect(out).toContain(`tools.1 (big_search).input: ${TOO_LARGE} (nested more than ${PLUGIN_SCHEMA_MAX_DEPTH} levels deep; ${BOUNDS})`);
  expect(out).not.toContain('Built ');

  // The same schema in a tools.json fails discovery with the same words.
  writeFileSync(join(dir, 'src', 'index.ts'), sample);
  expect((await build()).code).toBe(0);
  const toolsPath = join(dir, 'dist', 'tools.json');
  const built = readFileSync(toolsPath, 'utf8');
  const m = JSON.parse(built);
  let deep: Record<string, unknown> = { type: 'string' };
  for (let i = 0; i < 40; i++) deep = { type: 'object', properties: { inner: deep } };
  m.tools[0].inputSchema = { type: 'object', properties: { filter: deep } };
  writeFileSync(toolsPath, JSON.stringify(m));
  const loaded = await loadPluginFolder(dir, 'local');
  expect(loaded.ok || loaded.error).toBe(`dist/tools.json tools.0.inputSchema (get_page_info): ${TOO_LARGE} (nested more than ${PLUGIN_SCHEMA_MAX_DEPTH} levels deep; ${BOUNDS})`);
  writeFileSync(toolsPath, built);
});

test('an output with too many objects fails the build, naming the tool and the limit', async () => {
  writeFileSync(join(dir, 'src', 'index.ts'), withTool('v.object({})', 'v.object(wideFields)'));
  const { code, out } = await build();
  expect(code).toBe(1);
  expect(out).toContain(`tools.1 (big_search).output: ${TOO_LARGE} (more than ${PLUGIN_SCHEMA_MAX_NODES} objects and arrays; ${BOUNDS})`);
  writeFileSync(join(dir, 'src', 'index.ts'), sample);
});

test('a dist/adapter.js linked out of the folder fails the build and is left as it is', async () => {
  const outside = join(root, 'users-file.txt');
  writeFileSync(outside, 'not an adapter\n');
  const adapter = join(dir, 'dist', 'adapter.js');
  mkdirSync(join(dir, 'dist'), { recursive: true });
  rmSync(adapter, { force: true });
  symlinkSync(outside, adapter);
  const { code, out } = await build();
  expect(code).toBe(1);
  expect(out).toContain(`dist/adapter.js leads outside the plugin folder (to ${realpathSync(outside)}): a plugin is loaded only from files inside its folder`);
  expect(lstatSync(adapter).isSymbolicLink()).toBe(true);
  expect(readFileSync(outside, 'utf8')).toBe('not an adapter\n');
  rmSync(adapter);
  expect((await build()).code).toBe(0);
});

test('a package.json linked out of the folder, and a named pipe as dist/tools.json, fail the build', async () => {
  const pkgPath = join(dir, 'package.json');
  const moved = join(root, 'package-elsewhere.json');
  renameSync(pkgPath, moved);
  symlinkSync(moved, pkgPath);
  const linked = await build();
  expect(linked.code).toBe(1);
  expect(linked.out).toContain('package.json leads outside the plugin folder');
  rmSync(pkgPath);
  renameSync(moved, pkgPath);

  const toolsPath = join(dir, 'dist', 'tools.json');
  rmSync(toolsPath, { force: true });
  expect(Bun.spawnSync(['mkfifo', toolsPath]).exitCode).toBe(0);
  const fifo = await build();
  expect(fifo.code).toBe(1);
  expect(fifo.out).toContain('dist/tools.json is not a regular file: a plugin is loaded only from regular files');
  rmSync(toolsPath);
  expect((await build()).code).toBe(0);
});

test('a dist folder linked out of the plugin folder fails the build before anything is written there', async () => {
  const elsewhere = join(root, 'dist-elsewhere');
  mkdirSync(elsewhere);
  rmSync(join(dir, 'dist'), { recursive: true, force: true });
  symlinkSync(elsewhere, join(dir, 'dist'));
  const { code, out } = await build();
  expect(code).toBe(1);
  expect(out).toContain(`dist leads outside the plugin folder (to ${realpathSync(elsewhere)})`);
  expect(readdirSync(elsewhere)).toEqual([]);
  rmSync(join(dir, 'dist'));
});
