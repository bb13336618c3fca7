/**
 * `opentabs config show` lists every setting `config set` takes, mcpSessionsPerMinute included
 * (set, it showed nowhere but in config.json), with the default when unset.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { join } from 'node:path';
import { removeDir, runCli, tempDir } from './cli-support.ts';

let root: string;
let cfg: string;

beforeAll(() => {
  root = tempDir();
  cfg = join(root, 'config');
});

afterAll(() => removeDir(root));

test('config show prints mcpSessionsPerMinute: the default, then the value set', async () => {
  const before = await runCli(['config', 'show'], { configDir: cfg });
  expect(before.code).toBe(0);
  expect(before.stdout).toMatch(/MCP sessions +5 \(default\) new per minute \(mcpSessionsPerMinute\)/);
  expect((await runCli(['config', 'set', 'mcpSessionsPerMinute', '30'], { configDir: cfg })).code).toBe(0);
  const after = await runCli(['config', 'show'], { configDir: cfg });
  expect(after.stdout).toMatch(/MCP sessions +30 new per minute/);
});
