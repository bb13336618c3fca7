/**
 * plugins/sdk/README.md followed to the letter: its first TypeScript block ("One declaration")
 * and its typed-settings block each pass the type check and build in a scaffold, and the
 * settings block's tool sends the pageSize setting (its default, then a saved value) to the
 * app's API. Also: the schema without `as const`, as the README warns, fails the type check.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir, ROOT, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(240_000);

const SDK_README = readFileSync(join(ROOT, 'plugins', 'sdk', 'README.md'), 'utf8');
const tsBlocks = [...SDK_README.matchAll(/```ts\n([\s\S]*?)\n```/g)].map((m) => m[1]!);
const declaration = tsBlocks[0]!;
const settings = tsBlocks.find((b) => b.includes('ToolContext<Config>'))!;

let root: string;
let cfg: string;
let dir: string;

beforeAll(async () => {
  root = tempDir();
  cfg = join(root, 'state');
  dir = join(root, 'opentabs-plugin-my-app');
  expect((await runCli(['plugin', 'create', 'my-app', '--dir', dir, '--url', 'https://app.example.com/*'], { configDir: cfg })).code).toBe(0);
});
afterAll(() => removeDir(root));

async function build(source: string): Promise<{ code: number; out: string }> {
  writeFileSync(join(dir, 'src', 'index.ts'), source);
  const r = await runCli(['plugin', 'build', dir], { configDir: cfg, timeoutMs: 200_000 });
  return { code: r.code, out: `${r.stdout}\n${r.stderr}` };
}

test('the "One declaration" block builds with the type check', async () => {
  const r = await build(declaration);
  expect(r.out).toContain('Type check passed.');
  expect(r.code).toBe(0);
});

test('the typed-settings block builds, and its tool sends the setting: the default, then a saved value', async () => {
  expect(settings).toContain('as const');
  const r = await build(settings);
  expect(r.out).toContain('Type check passed.');
  expect(r.code).toBe(0);
  // The scaffold's own test file, next to the sample test, run with `npm test`'s bun test.
  writeFileSync(
    join(dir, 'test', 'settings.test.ts'),
    `import { expect, test } from 'bun:test';
import { runTool } from '@opentabs/sdk/testing';
import plugin from '../src/index.ts';
test('pageSize reaches the API', async () => {
  for (const [config, limit] of [[undefined, '20'], [{ pageSize: 5 }, '5']] as const) {
    const requests: Request[] = [];
    const { outcome } = await runTool(plugin, 'list_items', {}, { config, routes: { 'GET /api/items': () => ({ items: [] }) }, requests });
    expect(outcome).toEqual({ ok: true, value: { items: [] } });
    expect(new URL(requests[0]!.url).searchParams.get('limit')).toBe(limit);
  }
});
`,
  );
  const proc = Bun.spawn([process.execPath, 'test'], { cwd: dir, stdout: 'pipe', stderr: 'pipe', env: { ...process.env, NO_COLOR: '1' } });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  expect(`${out}${err}`).toContain('(pass) pageSize reaches the API');
  expect(code).toBe(0);
});

test('without `as const` the type check refuses the schema, as the README says', async () => {
  const r = await build(settings.replace(' } as const;', ' };'));
  expect(r.code).toBe(1);
  expect(r.out).toContain('Type check failed');
  expect(r.out).toContain("Type 'string' is not assignable to type");
});
