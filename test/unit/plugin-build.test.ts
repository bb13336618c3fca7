/** `opentabs plugin create` + `opentabs plugin build` on temp folders. */
import { afterAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildPlugin, createPlugin, PluginBuildError } from '../../plugins/tooling/index.ts';
import { loadPluginFolder } from '../../server/plugins/load.ts';

// Child processes (bun test, esbuild) on a shared 2-core machine: generous per-test limit.
setDefaultTimeout(60_000);

const root = mkdtempSync(join(tmpdir(), 'opentabs-build-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const quiet = { reload: false, log: () => {} } as const;

async function buildError(dir: string): Promise<string> {
  try {
    await buildPlugin(dir, quiet);
  } catch (err) {
    expect(err).toBeInstanceOf(PluginBuildError);
    return (err as Error).message;
  }
  throw new Error('expected the build to fail');
}

describe('create', () => {
  test('scaffold builds, loads in the server and passes its own test', async () => {
    const { dir, packageName, files } = await createPlugin('my-app', join(root, 'my-app'), { urlPattern: 'https://my.example.com/*' });
    expect(packageName).toBe('opentabs-plugin-my-app');
    expect(files).toContain('test/plugin.test.ts');
    const built = await buildPlugin(dir, quiet);
    expect(built.tools).toEqual(['my-app_get_page_info']);
    expect(built.reloaded).toBe(false);
    const tools = JSON.parse(readFileSync(join(dir, 'dist/tools.json'), 'utf8'));
    expect(tools).toMatchObject({ name: 'my-app', displayName: 'My App', version: '0.1.0', urlPatterns: ['https://my.example.com/*'] });
    expect(tools.tools[0].inputSchema).toEqual({ type: 'object', properties: {}, required: [], additionalProperties: false });
    const loaded = await loadPluginFolder(dir, 'local');
    expect(loaded.ok).toBe(true);
    const t = spawnSync(process.execPath, ['test'], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
    expect(`${t.stdout}${t.stderr}`).toMatch(/2 pass/);
    expect(t.status).toBe(0);
  });

  test('bad names and non-empty folders are refused', async () => {
    await expect(createPlugin('My App', join(root, 'x'))).rejects.toThrow(/name: "My App" is not a valid plugin name/);
    await expect(createPlugin('browser', join(root, 'y'))).rejects.toThrow(/reserved/);
    await expect(createPlugin('my-app', join(root, 'my-app'))).rejects.toThrow(/already exists and is not empty/);
    await expect(createPlugin('other', join(root, 'z'), { urlPattern: 'localhost:3000/*' })).rejects.toThrow(/url: "localhost:3000\/\*" is not a Chrome match pattern/);
    await expect(createPlugin('other', join(root, 'z'), { urlPattern: 'example.com' })).rejects.toThrow(/url: "example.com" is not a Chrome match pattern/);
    expect(existsSync(join(root, 'z'))).toBe(false);
  });
});

describe('build derives tools.json from the definition', () => {
  test('JSON Schemas from valibot (descriptions, optional, defaults, enums) and configSchema', async () => {
    const { dir } = await createPlugin('schemas', join(root, 'schemas'));
    writeFileSync(
      join(dir, 'src/index.ts'),
      `import * as v from 'valibot';
import { definePlugin, defineTool } from '@opentabs/sdk';
export const plugin = definePlugin({
  name: 'schemas', displayName: 'Schemas', description: 'd', urlPatterns: ['https://*.example.com/*'],
  excludePatterns: ['https://admin.example.com/*'],
  configSchema: { mode: { type: 'select', options: ['a', 'b'], default: 'a' }, site: { type: 'url', required: true } },
  isReady: () => true,
  tools: [defineTool({
    name: 'search', description: 'Search things',
    input: v.object({ q: v.pipe(v.string(), v.trim(), v.minLength(1), v.description('query text')), kind: v.optional(v.picklist(['x', 'y']), 'x'), n: v.optional(v.number()) }),
    output: v.object({ hits: v.array(v.string()) }),
    handle: async () => ({ hits: [] }),
  })],
});
`,
    );
    await buildPlugin(dir, quiet);
    const m = JSON.parse(readFileSync(join(dir, 'dist/tools.json'), 'utf8'));
    expect(m.excludePatterns).toEqual(['https://admin.example.com/*']);
    expect(m.configSchema).toEqual({ mode: { type: 'select', options: ['a', 'b'], default: 'a' }, site: { type: 'url', required: true } });
    expect(m.tools[0].inputSchema).toEqual({
      type: 'object',
      properties: {
        q: { type: 'string', minLength: 1, description: 'query text' },
        kind: { type: 'string', enum: ['x', 'y'], default: 'x' },
        n: { type: 'number' },
      },
      required: ['q'],
      additionalProperties: false,
    });
    expect(m.tools[0].outputSchema).toEqual({ type: 'object', properties: { hits: { type: 'array', items: { type: 'string' } } }, required: ['hits'] });
    const adapter = readFileSync(join(dir, 'dist/adapter.js'), 'utf8');
    expect(adapter.startsWith('(() => {')).toBe(true);
    expect(adapter).toContain('__OPENTABS_ADAPTER_HASH__');
    expect(adapter).not.toMatch(/new Function\(|\beval\(/);
  });

  const badCases: [string, (src: string) => string, RegExp][] = [
    ['bad urlPatterns', (s) => s.replace(`urlPatterns: ["https://example.com/*"]`, `urlPatterns: ["localhost:3000"]`), /plugin urlPatterns\.0: "localhost:3000" is not a Chrome match pattern/],
    ['bad tool name', (s) => s.replace(`name: 'get_page_info'`, `name: 'Get Page'`), /tools\.0 \(Get Page\)\.name: "Get Page" is not lowercase snake_case .*; e\.g\. name: 'get_page'/],
    ['plugin name ≠ package name', (s) => s.replace(`name: 'bad'`, `name: 'other'`), /plugin name: "other" does not match package.json name opentabs-plugin-bad/],
    ['missing isReady', (s) => s.replace(/isReady: .*\n/, ''), /plugin isReady: must be a function/],
    ['input not a valibot schema', (s) => s.replace('input: v.object({})', 'input: {} as never'), /tools\.0 \(get_page_info\)\.input: must be a valibot schema/],
    ['empty description', (s) => s.replace(/description: 'Title, URL[^']*'/, `description: ' '`), /tools\.0 \(get_page_info\)\.description: missing; say what the tool does/],
    ['no definePlugin export', (s) => s.replace('export default definePlugin', 'const unused = definePlugin'), /export the result of definePlugin/],
    ['compile error', (s) => s + '\nconst = ;\n', /compile failed:\n.*src\/index\.ts:\d+:\d+/],
  ];
  for (const [what, edit, re] of badCases) {
    test(`rejects: ${what}`, async () => {
      const dir = join(root, `bad-${what.replace(/\W+/g, '-')}`);
      await createPlugin('bad', dir);
      const src = join(dir, 'src/index.ts');
      writeFileSync(src, edit(readFileSync(src, 'utf8')));
      expect(await buildError(dir)).toMatch(re);
      expect(existsSync(join(dir, 'dist/tools.json'))).toBe(false);
    });
  }

  test('rejects a bad package name or version, naming the field', async () => {
    const dir = join(root, 'badpkg');
    await createPlugin('badpkg', dir);
    const pkgPath = join(dir, 'package.json');
    const pkg = JSON.parse(readFileSync(pkgPath, 'utf8'));
    writeFileSync(pkgPath, JSON.stringify({ ...pkg, name: 'badpkg' }));
    expect(await buildError(dir)).toBe('package.json name: "badpkg" must be opentabs-plugin-<name> or @scope/opentabs-plugin-<name>');
    writeFileSync(pkgPath, JSON.stringify({ ...pkg, version: '' }));
    expect(await buildError(dir)).toBe('package.json version: must be a non-empty string like "0.1.0"');
  });

  test('package.json problems that do not stop the build are warnings', async () => {
    const dir = join(root, 'warned');
    await createPlugin('warned', dir);
    const pkgPath = join(dir, 'package.json');
    const pkg = JSON.parse(readFileSync(pkgPath, 'utf8'));
    writeFileSync(pkgPath, JSON.stringify({ ...pkg, files: ['lib'], scripts: { postinstall: 'node x.js' } }));
    const lines: string[] = [];
    const r = await buildPlugin(dir, { reload: false, log: (l) => lines.push(l) });
    expect(r.warnings).toEqual([
      'package.json files: does not include "dist", so a published package would have no adapter',
      'package.json scripts.postinstall: OpenTabs installs plugins with scripts disabled; this never runs for users',
    ]);
    expect(lines.filter((l) => l.startsWith('warning: '))).toHaveLength(2);
  });

  test('a missing folder or entry is a clear error', async () => {
    expect(await buildError(join(root, 'nope'))).toMatch(/does not exist/);
    const dir = join(root, 'noentry');
    await createPlugin('noentry', dir);
    rmSync(join(dir, 'src'), { recursive: true });
    expect(await buildError(dir)).toMatch(/entry: .*src\/index\.ts is missing/);
  });
});

describe('build --watch', () => {
  test('rebuilds dist when the source changes, and stops', async () => {
    const { dir } = await createPlugin('watched', join(root, 'watched'));
    const lines: string[] = [];
    const handle = await buildPlugin(dir, { watch: true, reload: false, log: (l) => lines.push(l) });
    try {
      expect(handle.first.tools).toEqual(['watched_get_page_info']);
      const toolsPath = join(dir, 'dist/tools.json');
      const before = statSync(toolsPath).mtimeMs;
      const src = join(dir, 'src/index.ts');
      writeFileSync(src, readFileSync(src, 'utf8').replace("name: 'get_page_info'", "name: 'get_info'"));
      let tools: string[] = [];
      for (let i = 0; i < 200 && !tools.includes('get_info'); i++) {
        await Bun.sleep(50);
        if (statSync(toolsPath).mtimeMs !== before) tools = JSON.parse(readFileSync(toolsPath, 'utf8')).tools.map((t: { name: string }) => t.name);
      }
      expect(tools).toEqual(['get_info']);
      expect(lines.filter((l) => l.startsWith('Built opentabs-plugin-watched')).length).toBeGreaterThanOrEqual(2);
    } finally {
      await handle.stop();
    }
  });
});
