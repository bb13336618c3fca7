/**
 * URL pattern mistakes of a plugin for a local app: a pattern without a scheme is answered with
 * the http pattern a local app needs (not https), and a path without "*" (one URL only) builds
 * with a warning that names the pattern to write instead.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { patternSuggestion } from '../../plugins/tooling/manifest.ts';
import { removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(180_000);

let root: string;
let cfg: string;

beforeAll(() => {
  root = tempDir();
  cfg = join(root, 'state');
});
afterAll(() => removeDir(root));

test('create --url 127.0.0.1:PORT suggests http://127.0.0.1:PORT/*, and that suggestion is taken as written', async () => {
  const dir = join(root, 'opentabs-plugin-local');
  const bad = await runCli(['plugin', 'create', 'local', '--dir', dir, '--url', '127.0.0.1:45021'], { configDir: cfg });
  expect(bad.code).toBe(2);
  const suggested = /Did you mean "([^"]+)"\?/.exec(bad.stderr)?.[1];
  expect(suggested).toBe('http://127.0.0.1:45021/*');
  const good = await runCli(['plugin', 'create', 'local', '--dir', dir, '--url', suggested!], { configDir: cfg });
  expect(good.code).toBe(0);
  expect(readFileSync(join(dir, 'src', 'index.ts'), 'utf8')).toContain('http://127.0.0.1:45021/*');
});

test('localhost gets http too; a public host keeps https', () => {
  expect(patternSuggestion('localhost:3000')).toBe(' Did you mean "http://localhost:3000/*"?');
  expect(patternSuggestion('127.0.0.1')).toBe(' Did you mean "http://127.0.0.1/*"?');
  expect(patternSuggestion('app.example.com')).toBe(' Did you mean "https://app.example.com/*"?');
  expect(patternSuggestion('localhost.example.com')).toBe(' Did you mean "https://localhost.example.com/*"?');
});

test('a path without "*" builds with a warning naming the pattern for every page under it', async () => {
  const dir = join(root, 'opentabs-plugin-exact');
  expect((await runCli(['plugin', 'create', 'exact', '--dir', dir, '--url', 'http://127.0.0.1:45021/*'], { configDir: cfg })).code).toBe(0);
  const src = join(dir, 'src', 'index.ts');
  const sample = readFileSync(src, 'utf8');
  writeFileSync(src, sample.replace('http://127.0.0.1:45021/*', 'http://127.0.0.1:45021/app'));
  const built = await runCli(['plugin', 'build', dir, '--no-typecheck'], { configDir: cfg, timeoutMs: 120_000 });
  expect(built.code).toBe(0);
  expect(built.stdout).toContain(
    'warning: plugin urlPatterns.0: "http://127.0.0.1:45021/app" has no "*" in its path, so it matches that one URL only (not /app/… or /app?…); write "http://127.0.0.1:45021/app*" for every page under it',
  );
  // The pattern the warning names builds without it.
  writeFileSync(src, sample.replace('http://127.0.0.1:45021/*', 'http://127.0.0.1:45021/app*'));
  const again = await runCli(['plugin', 'build', dir, '--no-typecheck'], { configDir: cfg, timeoutMs: 120_000 });
  expect(again.code).toBe(0);
  expect(`${again.stdout}${again.stderr}`).not.toContain('warning:');
  expect(JSON.parse(readFileSync(join(dir, 'dist', 'tools.json'), 'utf8')).urlPatterns).toEqual(['http://127.0.0.1:45021/app*']);
});
