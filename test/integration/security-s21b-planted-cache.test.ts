/**
 * Another program of the user puts a named pipe (FIFO), or a link to /dev/zero, at the cache files
 * of the config dir (cache/loaded-plugins.json, cache/checked-manifests.json) or at the list of
 * installed plugin packages (plugins/package.json). The server read them with a blocking read at
 * start: on the pipe it waited for a writer for good, holding the port
 * bound and answering nothing (`opentabs start --background` gave up, `stop` found a server that
 * did not answer). They are now read only when they are regular files, as the other files of the
 * config dir are; anything else is an empty cache.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { execFileSync } from 'node:child_process';
import { lstatSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { writeTestConfig, writeTestPlugin } from '../harness/fake-extension.ts';
import { killPid, removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(180_000);
let root: string;
const started: number[] = [];

function freePort(): number {
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') });
  const p = probe.port!;
  probe.stop(true);
  return p;
}

function pidOf(dir: string): number | null {
  try {
    const pid = (JSON.parse(readFileSync(join(dir, 'server.pid'), 'utf8')) as { pid: number }).pid;
    return Number.isInteger(pid) ? pid : null;
  } catch {
    return null;
  }
}

beforeAll(() => {
  root = tempDir('opentabs-s21b-cache-');
});

afterAll(async () => {
  for (const pid of started) await killPid(pid);
  removeDir(root);
});

for (const [label, plant] of [
  ['a named pipe', (path: string) => execFileSync('mkfifo', [path])],
  ['a link to /dev/zero', (path: string) => symlinkSync('/dev/zero', path)],
] as const) {
  test(`${label} at each cache file and at plugins/package.json: the server starts, loads its plugin and answers`, async () => {
    const dir = join(root, label.replace(/\W+/g, '-'));
    mkdirSync(join(dir, 'cache'), { recursive: true, mode: 0o700 });
    mkdirSync(join(dir, 'plugins'), { recursive: true, mode: 0o700 });
    const plugin = writeTestPlugin(join(root, `plugins-${label.replace(/\W+/g, '-')}`), 'notes', [{ name: 'list' }]);
    writeTestConfig(dir, { localPlugins: [plugin] });
    for (const f of ['cache/loaded-plugins.json', 'cache/checked-manifests.json', 'plugins/package.json']) plant(join(dir, f));
    const port = freePort();
    const start = await runCli(['start', '--background', '--port', String(port)], { configDir: dir, timeoutMs: 60_000 });
    const pid = pidOf(dir);
    if (pid) started.push(pid);
    expect(start.code).toBe(0);
    const secret = (JSON.parse(readFileSync(join(dir, 'extension', 'auth.json'), 'utf8')) as { secret: string }).secret;
    const health = (await (await fetch(`http://127.0.0.1:${port}/health`, { headers: { Authorization: `Bearer ${secret}` }, signal: AbortSignal.timeout(20_000) })).json()) as { plugins?: unknown[]; pluginDetails?: { name: string }[] };
    expect(JSON.stringify(health)).toContain('"notes"');
    expect((await runCli(['stop'], { configDir: dir, timeoutMs: 30_000 })).code).toBe(0);
    // What was there is not read; /dev/zero is still what it was.
    expect(lstatSync('/dev/zero').isCharacterDevice()).toBe(true);
  });
}
