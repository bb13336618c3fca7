/**
 * Upgrading: `opentabs start` copies a new extension over the one Chrome loaded, but Chrome keeps
 * running the copy it loaded until the extension is reloaded. When this start replaced an older
 * copy, the extension is told to reload itself the first time it connects; a start that changed
 * nothing tells it nothing.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeExtension } from '../harness/fake-extension.ts';
import { killPid, removeDir, runCli, tempDir, waitFor } from './cli-support.ts';

setDefaultTimeout(180_000);

let root: string;
const started: number[] = [];

beforeAll(() => {
  root = tempDir('opentabs-ux-s18e-ext-update-');
});
afterAll(async () => {
  for (const pid of started) await killPid(pid);
  removeDir(root);
});

function pidFile(cfg: string): { pid: number; port: number } {
  return JSON.parse(readFileSync(join(cfg, 'server.pid'), 'utf8')) as { pid: number; port: number };
}
/** The installed copy's hash; '' while there is none (an install removes the old copy first). */
function hashOf(cfg: string): string {
  try {
    return readFileSync(join(cfg, 'extension', '.install-hash'), 'utf8').trim();
  } catch {
    return '';
  }
}
const secretOf = (cfg: string) => (JSON.parse(readFileSync(join(cfg, 'extension', 'auth.json'), 'utf8')) as { secret: string }).secret;

test('a start that replaced an older extension copy tells the extension to reload when it connects; an unchanged one does not', async () => {
  const cfg = join(root, 'cfg');
  const first = await runCli(['start', '--background', '--port', '0'], { configDir: cfg, timeoutMs: 90_000 });
  expect(first.code).toBe(0);
  started.push(pidFile(cfg).pid);
  await waitFor(() => hashOf(cfg).length > 0, 60_000, 'the extension copy installed');
  const current = hashOf(cfg);
  expect((await runCli(['stop'], { configDir: cfg })).code).toBe(0);

  // Unchanged copy: the extension connects and is not told to reload.
  const same = await runCli(['start', '--background', '--port', '0'], { configDir: cfg, timeoutMs: 90_000 });
  expect(same.code).toBe(0);
  const samePid = pidFile(cfg);
  started.push(samePid.pid);
  let ext = await FakeExtension.connect(`http://127.0.0.1:${samePid.port}`, secretOf(cfg));
  // The start's last step (the install check) has run once server.json names this port.
  await waitFor(() => (JSON.parse(readFileSync(join(cfg, 'extension', 'server.json'), 'utf8')) as { port: number }).port === samePid.port, 60_000, 'server.json');
  ext.ws.close();
  // (Unless the extension's sources were edited meanwhile, which makes this start install a new copy.)
  if (hashOf(cfg) === current) {
    expect(ext.sent('extension.reload')).toEqual([]);
    expect(readFileSync(join(cfg, 'server.log'), 'utf8')).not.toContain('was updated');
  }
  expect((await runCli(['stop'], { configDir: cfg })).code).toBe(0);

  // What an earlier version left installed: another copy.
  writeFileSync(join(cfg, 'extension', '.install-hash'), 'an-earlier-version');
  const upgraded = await runCli(['start', '--background', '--port', '0'], { configDir: cfg, timeoutMs: 90_000 });
  expect(upgraded.code).toBe(0);
  const up = pidFile(cfg);
  started.push(up.pid);
  await waitFor(() => hashOf(cfg) !== '' && hashOf(cfg) !== 'an-earlier-version', 60_000, 'the new copy installed');
  ext = await FakeExtension.connect(`http://127.0.0.1:${up.port}`, secretOf(cfg));
  await ext.waitFor('extension.reload', undefined, 60_000);
  ext.ws.close();
  // The server logs the reload right after sending it; the line can reach server.log a moment
  // after the frame reaches the extension.
  const logged = () => readFileSync(join(cfg, 'server.log'), 'utf8');
  await waitFor(() => logged().includes('extension_reload_after_update'), 10_000, 'the reload in server.log');
  expect(logged()).toContain(`The extension in ${join(cfg, 'extension')} was updated`);
  expect((await runCli(['stop'], { configDir: cfg })).code).toBe(0);
});
