/**
 * `opentabs plugin build` stops on what would otherwise only fail once an agent calls the tool,
 * naming the tool and the field: an input schema the server cannot compile (a regex valid in
 * valibot but not as a Unicode JSON Schema pattern), a missing urlPatterns; the type check keeps
 * tsc's explanation lines; a plugin name whose tools would hide behind built-ins is refused; and
 * the watch loop picks up a version bump in package.json, and type-checks each rebuild (the
 * rebuild is loaded at once, the errors follow as a warning).
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildPlugin, createPlugin, PluginBuildError } from '../../plugins/tooling/index.ts';
import { describeTypeErrors, typecheckPlugin } from '../../plugins/tooling/typecheck.ts';
import { parseToolsJson, RESERVED_PLUGIN_NAMES } from '../../server/protocol/plugin-manifest.ts';
import { BROWSER_TOOLS } from '../../server/tools/builtin-defs.ts';
import { GATEWAY_TOOLS } from '../../server/mcp/tool-calls.ts';

setDefaultTimeout(120_000);

const root = mkdtempSync(join(tmpdir(), 'opentabs-build-checks-'));
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

/** A scaffold whose src/index.ts has `from` replaced by `to`. */
async function scaffold(name: string, from: string | RegExp, to: string): Promise<string> {
  const { dir } = await createPlugin(name, join(root, name));
  const src = join(dir, 'src/index.ts');
  const text = readFileSync(src, 'utf8');
  const changed = text.replace(from, to);
  expect(changed).not.toBe(text);
  writeFileSync(src, changed);
  return dir;
}

describe('input schemas the server could not compile', () => {
  test('a regex valid only without the u flag fails the build, naming the tool and the pattern', async () => {
    const dir = await scaffold('regexy', 'input: v.object({}),', 'input: v.object({ slug: v.pipe(v.string(), v.regex(/^[\\w-.]+$/)) }),');
    const message = await buildError(dir);
    expect(message).toContain('tools.0 (get_page_info).input: the JSON Schema of its arguments does not compile');
    expect(message).toContain('properties.slug.pattern "^[\\\\w-.]+$" is not a valid Unicode regular expression');
  });

  test('the same regex with the "-" escaped builds', async () => {
    const dir = await scaffold('regexok', 'input: v.object({}),', 'input: v.object({ slug: v.optional(v.pipe(v.string(), v.regex(/^[\\w\\-.]+$/))) }),');
    const built = await buildPlugin(dir, quiet);
    expect(built.tools).toEqual(['regexok_get_page_info']);
  });
});

describe('manifest fields', () => {
  test('a missing urlPatterns says what to write (build without the type check)', async () => {
    const dir = await scaffold('nourls', /\n\s*urlPatterns: \[[^\]]*\],/, '');
    expect(await buildError(dir)).toBe("plugin urlPatterns: missing; list the app's pages as Chrome match patterns, e.g. urlPatterns: ['https://app.example.com/*']");
  });

  test("the type check keeps tsc's explanation under each error", async () => {
    const dir = await scaffold('nourlstc', /\n\s*urlPatterns: \[[^\]]*\],/, '');
    const checked = await typecheckPlugin(dir);
    expect(checked.ran).toBe(true);
    if (!checked.ran) return;
    expect(checked.errors).toHaveLength(1);
    const text = describeTypeErrors(dir, checked.errors);
    expect(text).toStartWith('Type check failed (1 error):\n  src/index.ts(');
    expect(text).toContain("\n    Property 'urlPatterns' is missing in type");
  });
});

describe('names reserved for built-in tools', () => {
  test('every built-in tool name starts with a reserved plugin name', () => {
    const names = [...BROWSER_TOOLS.map((t) => t.name), ...GATEWAY_TOOLS.map((t) => t.name)];
    expect(names.length).toBeGreaterThan(10);
    const prefixes = new Set(names.map((n) => n.slice(0, n.indexOf('_'))));
    for (const p of prefixes) expect({ prefix: p, reserved: RESERVED_PLUGIN_NAMES.includes(p) }).toEqual({ prefix: p, reserved: true });
  });

  test('"plugin" is refused by create and by the manifest check, saying why', async () => {
    await expect(createPlugin('plugin', join(root, 'plugin'))).rejects.toThrow('name: "plugin" is reserved: built-in tools are named plugin_*; pick another plugin name');
    const r = parseToolsJson({
      name: 'plugin',
      displayName: 'P',
      description: 'p',
      version: '1.0.0',
      urlPatterns: ['https://a.example.com/*'],
      tools: [{ name: 'list_tabs', description: 'x', inputSchema: { type: 'object' } }],
    });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toContain('"plugin" is reserved: built-in tools are named plugin_*');
  });
});

describe('build --watch', () => {
  test('a version bump alone rebuilds dist/tools.json with the new version', async () => {
    const { dir } = await createPlugin('bumped', join(root, 'bumped'));
    const lines: string[] = [];
    const handle = await buildPlugin(dir, { watch: true, reload: false, log: (l) => lines.push(l) });
    try {
      const toolsPath = join(dir, 'dist/tools.json');
      expect(JSON.parse(readFileSync(toolsPath, 'utf8')).version).toBe('0.1.0');
      const pkgPath = join(dir, 'package.json');
      writeFileSync(pkgPath, readFileSync(pkgPath, 'utf8').replace('"version": "0.1.0"', '"version": "0.2.0"'));
      let version = '';
      for (let i = 0; i < 300 && version !== '0.2.0'; i++) {
        await Bun.sleep(50);
        version = JSON.parse(readFileSync(toolsPath, 'utf8')).version;
      }
      expect(version).toBe('0.2.0');
      expect(lines).toContain(`Built opentabs-plugin-bumped@0.2.0: 1 tool, adapter ${handle.first.adapterBytes} bytes → ${join(dir, 'dist')}`);
    } finally {
      await handle.stop();
    }
  });

  test('each rebuild is type-checked and its errors are printed as a warning, then the fix clears them', async () => {
    const { dir } = await createPlugin('typed', join(root, 'typed'));
    const lines: string[] = [];
    const handle = await buildPlugin(dir, { watch: true, reload: false, typecheck: true, log: (l) => lines.push(l) });
    const waitFor = async (pred: () => boolean, what: string) => {
      for (let i = 0; i < 1200 && !pred(); i++) await Bun.sleep(50);
      if (!pred()) throw new Error(`waited for ${what}; log: ${lines.join('\n')}`);
    };
    try {
      await waitFor(() => lines.includes('Type check passed.'), 'the first check');
      const src = join(dir, 'src/index.ts');
      const good = readFileSync(src, 'utf8');
      writeFileSync(src, good.replace('return { title: document.title,', 'return { title: document.title.length,'));
      await waitFor(() => lines.some((l) => l.startsWith('warning: Type check failed')), 'the type error');
      const warning = lines.find((l) => l.startsWith('warning: Type check failed'))!;
      expect(warning).toContain('src/index.ts(');
      expect(warning).toContain("Type 'number' is not assignable to type 'string'");
      expect(warning).toContain('watch mode loaded this build anyway');
      const passes = lines.filter((l) => l === 'Type check passed.').length;
      writeFileSync(src, good);
      await waitFor(() => lines.filter((l) => l === 'Type check passed.').length > passes, 'the check after the fix');
    } finally {
      await handle.stop();
    }
  });

  test('with keepWatching, a first build that fails is logged and the fix is built', async () => {
    const { dir } = await createPlugin('broken-first', join(root, 'broken-first'));
    const src = join(dir, 'src/index.ts');
    const good = readFileSync(src, 'utf8');
    writeFileSync(src, `${good}\nexport const x = ;\n`);
    const lines: string[] = [];
    const pending = buildPlugin(dir, { watch: true, reload: false, keepWatching: true, log: (l) => lines.push(l) });
    for (let i = 0; i < 400 && !lines.some((l) => l.startsWith('Build failed:')); i++) await Bun.sleep(25);
    expect(lines.find((l) => l.startsWith('Build failed:'))).toContain('Fix it and save: watching for changes');
    writeFileSync(src, good);
    const handle = await pending;
    try {
      expect(handle.first.tools).toEqual(['broken-first_get_page_info']);
    } finally {
      await handle.stop();
    }
  });

  test('without it, a first build that fails rejects (a one-off caller learns at once)', async () => {
    const { dir } = await createPlugin('broken-once', join(root, 'broken-once'));
    const src = join(dir, 'src/index.ts');
    writeFileSync(src, `${readFileSync(src, 'utf8')}\nexport const x = ;\n`);
    await expect(buildPlugin(dir, { watch: true, reload: false, log: () => {} })).rejects.toThrow('compile failed');
  });
});
