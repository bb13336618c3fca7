/**
 * `opentabs setup claude-desktop --file F` writes the stdio bridge's command, which holds no token:
 * it does not tell the user the file holds the client token (HTTP clients' files do).
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(120_000);

let root: string;
beforeAll(() => {
  root = tempDir('opentabs-journey-s23f-desktop-');
});
afterAll(() => removeDir(root));

test('claude-desktop: no claim of a token in the file; cursor: the claim stays', async () => {
  const cfg = join(root, 'cfg');
  const home = join(root, 'home');
  mkdirSync(home, { recursive: true });
  const env = { HOME: home, PORT: '1' };
  expect((await runCli(['config', 'rotate-secret'], { configDir: cfg, env })).code).toBe(0);
  const token = (JSON.parse(readFileSync(join(cfg, 'client-token.json'), 'utf8')) as { clientToken: string }).clientToken;

  const file = join(home, 'claude_desktop_config.json');
  const desktop = await runCli(['setup', 'claude-desktop', '--file', file], { configDir: cfg, env });
  expect(desktop.code).toBe(0);
  expect(readFileSync(file, 'utf8')).not.toContain(token);
  expect(desktop.stdout).toContain(`${file} is mode 0600 (only you can read it).`);
  expect(desktop.stdout).not.toContain('client token');

  const cursor = await runCli(['setup', 'cursor'], { configDir: cfg, env });
  expect(cursor.code).toBe(0);
  expect(cursor.stdout).toContain(`${join(home, '.cursor', 'mcp.json')} is mode 0600 (only you can read it): it holds your OpenTabs client token.`);
});
