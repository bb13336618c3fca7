/**
 * `opentabs plugin build` says once that it built (stdout's summary), not again on stderr in the
 * build's own words, and says nothing of a reload for a folder the server does not load.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../harness/server.ts';
import { removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(180_000);

let root: string;
let cfg: string;
let srv: TestServer;

beforeAll(async () => {
  root = tempDir();
  cfg = join(root, 'state');
  srv = await startTestServer({ configDir: cfg });
});
afterAll(async () => {
  await srv?.stop();
  removeDir(root);
});

test('one "Built" line, before and after the folder is added', async () => {
  const dir = join(root, 'opentabs-plugin-once');
  expect((await runCli(['plugin', 'create', 'once', '--dir', dir], { configDir: cfg })).code).toBe(0);
  const first = await runCli(['plugin', 'build', dir, '--no-typecheck'], { configDir: cfg, timeoutMs: 120_000 });
  expect(first.code).toBe(0);
  const all = `${first.stdout}\n${first.stderr}`;
  expect(all.match(/^Built /gm)?.length).toBe(1);
  expect(all).toContain('does not load it yet');
  expect(all).not.toMatch(/reloaded/i);
  expect((await runCli(['plugin', 'add', dir], { configDir: cfg })).code).toBe(0);
  const second = await runCli(['plugin', 'build', dir, '--no-typecheck'], { configDir: cfg, timeoutMs: 120_000 });
  expect(second.code).toBe(0);
  const again = `${second.stdout}\n${second.stderr}`;
  expect(again.match(/^Built /gm)?.length).toBe(1);
  expect(second.stdout).toContain('the running server reloaded it');
  expect(again.match(/reloaded/gi)?.length).toBe(1);
});
