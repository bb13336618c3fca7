/**
 * dist/tools.json is written by the build from the plugin's source; edited by hand (a tool added
 * or renamed, an input changed) it no longer matches dist/adapter.js, whose calls would then fail
 * in the page as an unknown tool or with arguments it refuses. The folder does not load, and
 * says why and which build to run; a description edited by hand, or an adapter built before the
 * check existed, loads as before.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildPlugin, createPlugin } from '../../plugins/tooling/index.ts';
import { loadPluginFolder } from '../../server/plugins/load.ts';
import { cliEnv, removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(180_000);

let root: string;
let dir: string;
let toolsPath: string;
let built: string;

beforeAll(async () => {
  root = tempDir();
  ({ dir } = await createPlugin('handmade', join(root, 'opentabs-plugin-handmade'), { urlPattern: 'http://127.0.0.1:45041/*' }));
  await buildPlugin(dir, { reload: false, log: () => {} });
  toolsPath = join(dir, 'dist', 'tools.json');
  built = readFileSync(toolsPath, 'utf8');
});
afterAll(() => removeDir(root));

const edit = (change: (m: { tools: Record<string, unknown>[] }) => void) => {
  const m = JSON.parse(built);
  change(m);
  writeFileSync(toolsPath, JSON.stringify(m, null, 2));
};

const MISMATCH = "dist/tools.json does not match dist/adapter.js (its tools' names or inputs differ from the ones the adapter was built with)";

test('as built it loads; a tool added by hand fails naming the mismatch and the build to run', async () => {
  expect((await loadPluginFolder(dir, 'local')).ok).toBe(true);
  edit((m) => m.tools.push({ ...m.tools[0], name: 'ghost' }));
  const r = await loadPluginFolder(dir, 'local');
  expect(r.ok).toBe(false);
  if (r.ok) return;
  expect(r.name).toBe('handmade');
  expect(r.error).toStartWith(MISMATCH);
  expect(r.error).toContain(`it is written by the build from src/, so change the tools there and run \`opentabs plugin build ${dir}\``);
});

test('an input changed by hand fails too; a description changed by hand still loads', async () => {
  edit((m) => {
    const input = m.tools[0]!.inputSchema as { properties: Record<string, unknown> };
    input.properties = { ...input.properties, limit: { type: 'number' } };
  });
  const r = await loadPluginFolder(dir, 'local');
  expect(r.ok || r.error).toStartWith(MISMATCH);
  edit((m) => {
    m.tools[0]!.description = 'Reworded by hand.';
  });
  expect((await loadPluginFolder(dir, 'local')).ok).toBe(true);
});

test('plugin add says so, and the build it names makes the folder load', async () => {
  edit((m) => {
    m.tools[0]!.name = 'renamed_by_hand';
  });
  const cfg = join(root, 'state');
  const added = await runCli(['plugin', 'add', dir], { configDir: cfg });
  expect(added.code).toBe(0);
  expect(added.stderr).toContain(`warning: ${dir} does not load yet: ${MISMATCH}`);
  const command = /and run `([^`]+)`/.exec(added.stderr)?.[1];
  expect(command).toContain('plugin build');
  const proc = Bun.spawn(['sh', '-c', `${command} --no-typecheck`], { cwd: root, env: cliEnv(cfg), stdout: 'pipe', stderr: 'pipe' });
  expect(await proc.exited).toBe(0);
  expect((await loadPluginFolder(dir, 'local')).ok).toBe(true);
});

test('an adapter built without the digest (an older build) loads with any tools.json', async () => {
  const adapterPath = join(dir, 'dist', 'adapter.js');
  writeFileSync(adapterPath, readFileSync(adapterPath, 'utf8').replace(/\n\/\/# opentabsTools=[0-9a-f]{16}\n$/, '\n'));
  edit((m) => m.tools.push({ ...m.tools[0], name: 'ghost' }));
  expect((await loadPluginFolder(dir, 'local')).ok).toBe(true);
});
