/**
 * `opentabs tool call` of a local plugin whose sources changed after its last build says, on
 * stderr, that the call runs the previous build and names the build command; after the build it
 * says nothing. stdout stays the result alone.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { utimesSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../harness/server.ts';
import { removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(180_000);

let root: string;
let cfg: string;
let srv: TestServer;
const cli = (args: string[]) => runCli(args, { configDir: cfg, timeoutMs: 120_000 });

beforeAll(async () => {
  root = tempDir();
  cfg = join(root, 'state');
  srv = await startTestServer({ configDir: cfg });
});
afterAll(async () => {
  await srv?.stop();
  removeDir(root);
});

test('an edit after the build is named; the build clears it', async () => {
  const dir = join(root, 'opentabs-plugin-fresh');
  expect((await cli(['plugin', 'create', 'fresh', '--dir', dir])).code).toBe(0);
  expect((await cli(['plugin', 'build', dir, '--no-typecheck'])).code).toBe(0);
  expect((await cli(['plugin', 'add', dir])).code).toBe(0);

  const built = await cli(['tool', 'call', 'fresh_get_page_info']);
  expect(built.stderr).not.toContain('changed after its last build');

  // An edit saved after the build (a minute later, so no clock granularity matters).
  const later = new Date(Date.now() + 60_000);
  utimesSync(join(dir, 'src', 'index.ts'), later, later);
  const stale = await cli(['tool', 'call', 'fresh_get_page_info']);
  expect(stale.stderr).toContain(`note: ${dir} changed after its last build, so this call runs the previous build`);
  expect(stale.stderr).toContain(`plugin build ${dir}\``);
  expect(stale.stdout).not.toContain('changed after');

  // Another plugin's tool (or a built-in) gets no such note.
  expect((await cli(['tool', 'call', 'browser_list_tabs'])).stderr).not.toContain('changed after its last build');

  expect((await cli(['plugin', 'build', dir, '--no-typecheck'])).code).toBe(0);
  // The build wrote dist/tools.json now; a build is newer than the sources once they are not in the future.
  utimesSync(join(dir, 'src', 'index.ts'), new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
  const rebuilt = await cli(['tool', 'call', 'fresh_get_page_info']);
  expect(rebuilt.stderr).not.toContain('changed after its last build');
});
