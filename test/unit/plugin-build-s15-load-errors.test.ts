/**
 * When the build cannot load the plugin's module (run with --no-typecheck, or a mistake the type
 * check lets through), the message points at the cause: a misspelled valibot member is named with
 * its line (its run-time error is only "(void 0) is not a function"), the page-access hint comes
 * only when a page global is what failed, and a bad regex outside [...] is told to drop the backslash.
 */
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildPlugin, createPlugin, PluginBuildError } from '../../plugins/tooling/index.ts';

setDefaultTimeout(120_000);

const root = mkdtempSync(join(tmpdir(), 'opentabs-build-s15-'));
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

async function scaffold(name: string, from: string, to: string): Promise<string> {
  const { dir } = await createPlugin(name, join(root, name));
  const src = join(dir, 'src/index.ts');
  const text = readFileSync(src, 'utf8');
  const changed = text.replace(from, to);
  expect(changed).not.toBe(text);
  writeFileSync(src, changed);
  return dir;
}

test('a misspelled valibot member is named with its place in the source, without the page-access hint', async () => {
  const dir = await scaffold('typo', 'title: v.string()', 'title: v.strin()');
  const message = await buildError(dir);
  expect(message).toContain('loading src/index.ts failed');
  expect(message).toMatch(/src\/index\.ts:\d+:\d+: Import "strin" will always be undefined/);
  expect(message).toContain('misspelled');
  expect(message).not.toContain('page access');
});

test('page access at the top level of the module gets the hint', async () => {
  const dir = await scaffold('toplevel', "import { definePlugin", "const here = document.title;\nimport { definePlugin");
  const message = await buildError(dir);
  expect(message).toContain('loading src/index.ts failed');
  expect(message).toContain('document');
  expect(message).toContain('keep page access');
});

test('an error thrown at the top level for another reason is shown as is, without the hint', async () => {
  const dir = await scaffold('throws', "import { definePlugin", "if (Math.random() < 2) throw new Error('config table is empty');\nimport { definePlugin");
  const message = await buildError(dir);
  expect(message).toContain('loading src/index.ts failed: config table is empty');
  expect(message).not.toContain('page access');
});

test('a regex with "\\-" outside [...] is told to write "-" without the backslash', async () => {
  const dir = await scaffold('dashy', 'input: v.object({}),', 'input: v.object({ code: v.optional(v.pipe(v.string(), v.regex(/^a\\-b$/))) }),');
  const message = await buildError(dir);
  expect(message).toContain('tools.0 (get_page_info).input');
  expect(message).toContain('outside [...] a backslash may only escape syntax characters');
});

test('a duplicate tool name names both tools', async () => {
  const dir = await scaffold('twice', 'tools: [getPageInfo],', 'tools: [getPageInfo, { ...getPageInfo }],');
  const message = await buildError(dir);
  expect(message).toContain('tools.1 (get_page_info).name: tools.0 is named "get_page_info" too');
  expect(message).toContain('rename one');
});

test('a camelCase tool name is shown with its snake_case form', async () => {
  const dir = await scaffold('camel', "name: 'get_page_info'", "name: 'getPageInfo'");
  const message = await buildError(dir);
  expect(message).toContain(`tools.0 (getPageInfo).name: "getPageInfo" is not lowercase snake_case`);
  expect(message).toContain("e.g. name: 'get_page_info'");
});

test('a URL pattern without a path or scheme is shown with the pattern that works', async () => {
  const noPath = await scaffold('nopath', '"https://example.com/*"', '"http://127.0.0.1:9851"');
  expect(await buildError(noPath)).toContain('plugin urlPatterns.0: "http://127.0.0.1:9851" is not a Chrome match pattern (scheme://host/path, e.g. "https://app.example.com/*"). Did you mean "http://127.0.0.1:9851/*"?');
  const noScheme = await scaffold('noscheme', '"https://example.com/*"', '"app.example.com/*"');
  expect(await buildError(noScheme)).toContain('Did you mean "https://app.example.com/*"?');
  await expect(createPlugin('created', join(root, 'created'), { urlPattern: 'example.com' })).rejects.toThrow('Did you mean "https://example.com/*"?');
});

test('an input that JSON arguments can never be (v.date(), v.bigint() …) fails the build naming the field and what to use', async () => {
  const dated = await scaffold('dated', 'input: v.object({}),', 'input: v.object({ filter: v.optional(v.object({ since: v.date() })) }),');
  const message = await buildError(dated);
  expect(message).toContain('tools.0 (get_page_info).input.filter.since: v.date() cannot come in JSON arguments');
  expect(message).toContain('v.isoDate()');
  const listed = await scaffold('listed', 'input: v.object({}),', 'input: v.object({ ids: v.array(v.bigint()) }),');
  expect(await buildError(listed)).toContain('input.ids[]: v.bigint() cannot come in JSON arguments');
  // A union with a JSON option, and a date in the output (sent as its JSON text), build.
  const either = await scaffold('either', 'input: v.object({}),', 'input: v.object({ at: v.optional(v.union([v.date(), v.string()])) }),');
  expect((await buildPlugin(either, quiet)).tools).toEqual(['either_get_page_info']);
});
