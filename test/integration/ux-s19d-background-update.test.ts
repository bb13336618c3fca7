/**
 * `opentabs start --background` over an extension folder installed by an older version: the
 * server installs the new copy and asks the extension to reload when it connects. The foreground
 * start says so on the terminal; the background one wrote it only to server.log, where the user
 * never looks. It now shows that line too.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(180_000);

let dir: string;

beforeAll(() => {
  dir = tempDir();
});
afterAll(async () => {
  await runCli(['stop', '--force'], { configDir: dir, timeoutMs: 60_000 }).catch(() => {});
  removeDir(dir);
});

test('a background start that updates the extension folder says so on the terminal', async () => {
  const first = await runCli(['start', '--background', '--port', '0'], { configDir: dir, timeoutMs: 90_000 });
  expect(first.code).toBe(0);
  // A first install is not an update.
  expect(first.stdout).not.toContain('was updated');
  expect((await runCli(['stop'], { configDir: dir, timeoutMs: 60_000 })).code).toBe(0);

  // The folder as an older version installed it: another content hash.
  const hashFile = join(dir, 'extension', '.install-hash');
  expect(readFileSync(hashFile, 'utf8').trim()).not.toBe('');
  writeFileSync(hashFile, 'older-version\n');

  const second = await runCli(['start', '--background', '--port', '0'], { configDir: dir, timeoutMs: 90_000 });
  expect(second.code).toBe(0);
  expect(second.stdout).toContain(`The extension in ${join(dir, 'extension')} was updated: it reloads itself when it next connects`);
  // Said once, after the line naming where the server runs.
  expect(second.stdout.indexOf('started in the background')).toBeLessThan(second.stdout.indexOf('was updated'));
  expect(second.stdout.split('was updated').length).toBe(2);

  // Unchanged since: nothing to say.
  expect((await runCli(['stop'], { configDir: dir, timeoutMs: 60_000 })).code).toBe(0);
  const third = await runCli(['start', '--background', '--port', '0'], { configDir: dir, timeoutMs: 90_000 });
  expect(third.code).toBe(0);
  expect(third.stdout).not.toContain('was updated');
});

test('start --background while a server of the previous version runs: the restart it names is a background one', async () => {
  const pidPath = join(dir, 'server.pid');
  const pid = JSON.parse(readFileSync(pidPath, 'utf8')) as { pid: number; port: number; startedAt: number };
  // As if it had started before every file of this install was written (an update since).
  writeFileSync(pidPath, JSON.stringify({ ...pid, startedAt: 1 }));
  const again = await runCli(['start', '--background'], { configDir: dir, timeoutMs: 60_000 });
  expect(again.code).toBe(0);
  expect(again.stdout).toContain('runs the code it loaded then: restart it to run this version');
  expect(again.stdout).toMatch(/ stop && \S.* start --background`\)/);
  const fg = await runCli(['start'], { configDir: dir, timeoutMs: 60_000 });
  expect(fg.stdout).toMatch(/ stop && \S.* start`\)/);
});
