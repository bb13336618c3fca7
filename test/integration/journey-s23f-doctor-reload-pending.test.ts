/**
 * After an update the server tells the extension to reload itself; Chrome leaves an unpacked
 * extension off after such a reload while Developer mode is off, so it never connects again.
 * `opentabs doctor` then says it was told to reload and how to turn it back on, instead of only
 * "not connected" with how to load it. A reload followed by a connection, or one logged by an
 * earlier run of the server, is not named.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { killPid, removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(180_000);

type Check = { check: string; status: string; detail: string; fix?: string };

let root: string;
let cfg: string;
beforeAll(() => {
  root = tempDir('opentabs-journey-s23f-reload-');
  cfg = join(root, 'cfg');
});
afterAll(async () => {
  try {
    await killPid((JSON.parse(readFileSync(join(cfg, 'server.pid'), 'utf8')) as { pid: number }).pid);
  } catch {
    // Not running.
  }
  removeDir(root);
});

const line = (event: string, extra: Record<string, unknown> = {}) => JSON.stringify({ ts: new Date().toISOString(), level: 'info', event, ...extra }) + '\n';

test('a reload after an update with no connection since is named, with how to turn the extension on', async () => {
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') });
  const port = probe.port!;
  probe.stop(true);
  const env = { HOME: root };
  expect((await runCli(['start', '--background', '--port', String(port)], { configDir: cfg, env, timeoutMs: 120_000 })).code).toBe(0);
  const log = join(cfg, 'server.log');
  const extension = async () => {
    const r = await runCli(['doctor', '--json'], { configDir: cfg, env });
    return (JSON.parse(r.stdout) as Check[]).find((c) => c.check === 'extension')!;
  };
  expect((await extension()).detail).toBe('the Chrome extension is not connected');

  appendFileSync(log, line('extension_connected', { conn: 1 }) + line('extension_reload_after_update') + line('extension_disconnected', { conn: 1, code: 1001 }));
  const pending = await extension();
  expect(pending.status).toBe('fail');
  expect(pending.detail).toContain('the server told it to reload after an update');
  expect(pending.fix).toContain('turn on Developer mode');

  // It came back: the plain check again.
  appendFileSync(log, line('extension_connected', { conn: 2 }));
  expect((await extension()).detail).toBe('the Chrome extension is not connected');

  // A reload logged by another run (another pid) says nothing about this one.
  appendFileSync(log, line('listening', { pid: 1, url: 'http://127.0.0.1:1' }) + line('extension_reload_after_update'));
  expect((await extension()).detail).toBe('the Chrome extension is not connected');
});
