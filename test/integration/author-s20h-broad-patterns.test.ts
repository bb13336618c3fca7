/**
 * An author who writes a pattern for every site (`<all_urls>`, any host) learns it at build
 * time, not only when `opentabs plugin add` refuses it; the refusal's command that turns the
 * tools on runs as printed.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliEnv, removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(180_000);

let root: string;
let cfg: string;
let dir: string;
let sample: string;

beforeAll(async () => {
  root = tempDir();
  cfg = join(root, 'state');
  dir = join(root, 'opentabs-plugin-wide');
  expect((await runCli(['plugin', 'create', 'wide', '--dir', dir, '--url', 'http://127.0.0.1:45031/*'], { configDir: cfg })).code).toBe(0);
  sample = readFileSync(join(dir, 'src', 'index.ts'), 'utf8');
});
afterAll(() => removeDir(root));

async function buildWith(pattern: string) {
  writeFileSync(join(dir, 'src', 'index.ts'), sample.replace('http://127.0.0.1:45031/*', pattern));
  const built = await runCli(['plugin', 'build', dir, '--no-typecheck'], { configDir: cfg, timeoutMs: 120_000 });
  expect(built.code).toBe(0);
  return `${built.stdout}${built.stderr}`;
}

test('<all_urls> and *://*/* build with a warning saying add refuses them and what to list instead', async () => {
  for (const pattern of ['<all_urls>', '*://*/*']) {
    const out = await buildWith(pattern);
    expect(out).toContain(`warning: plugin urlPatterns.0: ${JSON.stringify(pattern)} matches every site, so the adapter would run in all those pages`);
    expect(out).toContain('refuse it without --allow-broad-patterns');
    expect(out).toContain("List the app's own pages instead, e.g. 'https://app.example.com/*'");
  }
  expect(await buildWith('http://127.0.0.1:45031/*')).not.toContain('warning:');
});

test("add refuses it; with consent the tools start off, and the refusal's command turns them on as printed", async () => {
  await buildWith('*://*/*');
  const refused = await runCli(['plugin', 'add', dir], { configDir: cfg });
  expect(refused.code).toBe(1);
  const command = /or with `([^`]+)`\./.exec(refused.stderr)?.[1];
  expect(command).toEndWith('config set permission.wide ask');
  expect((await runCli(['plugin', 'add', dir, '--allow-broad-patterns'], { configDir: cfg })).code).toBe(0);
  const proc = Bun.spawn(['sh', '-c', command!], { cwd: root, env: cliEnv(cfg, { OPENTABS_CONFIG_DIR: undefined }), stdout: 'pipe', stderr: 'pipe' });
  expect(await proc.exited).toBe(0);
  const saved = JSON.parse(readFileSync(join(cfg, 'config.json'), 'utf8')) as { permissions: Record<string, { default?: string }> };
  expect(saved.permissions.wide?.default).toBe('ask');
});
