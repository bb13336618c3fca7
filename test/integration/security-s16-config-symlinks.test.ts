/**
 * The server appends to server.log and audit.log in the config dir and rotates them to `.1`. A
 * symbolic link planted in their place (audit.log → ~/.bashrc) had every line appended to its
 * target. Links are not followed now: each is replaced by a regular file (only the link is
 * removed; its target is left as it was), with a line on stderr naming it.
 */
import { afterAll, beforeAll, expect, spyOn, test } from 'bun:test';
import { lstatSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeTempConfigDir, removeDir, startTestServer, type TestServer } from '../harness/server.ts';

let dir: string;
let outside: string;
let srv: TestServer | undefined;
const NAMES = ['audit.log', 'audit.log.1', 'server.log', 'server.log.1'];
const ORIGINAL = '# a shell rc file\nexport PATH=$HOME/bin:$PATH\n';
const stderr: string[] = [];

beforeAll(() => {
  dir = makeTempConfigDir('opentabs-s16-links-');
  outside = mkdtempSync(join(tmpdir(), 'opentabs-s16-targets-'));
  for (const name of NAMES) {
    writeFileSync(join(outside, `rc-for-${name}`), ORIGINAL);
    symlinkSync(join(outside, `rc-for-${name}`), join(dir, name));
  }
});

afterAll(async () => {
  await srv?.stop();
  removeDir(dir);
  removeDir(outside);
});

test('lines meant for server.log and audit.log (and their rotations) do not reach a linked file', async () => {
  const spy = spyOn(console, 'error').mockImplementation((...args: unknown[]) => void stderr.push(args.join(' ')));
  try {
    // A small rotation size: a few calls rotate audit.log onto the audit.log.1 link.
    srv = await startTestServer({ configDir: dir, limits: { auditRotateBytes: 400 } });
    for (let i = 0; i < 6; i++) {
      // Refused (no extension), and audited.
      const r = await fetch(`${srv.url}/tools/browser_list_tabs/call`, { method: 'POST', headers: { ...srv.auth, 'Content-Type': 'application/json' }, body: '{}' });
      await r.body?.cancel();
    }
    await srv.stop();
  } finally {
    spy.mockRestore();
  }
  for (const name of NAMES) expect([name, readFileSync(join(outside, `rc-for-${name}`), 'utf8')]).toEqual([name, ORIGINAL]);
  // The logs were still written, to regular files in the config dir.
  for (const name of ['audit.log', 'audit.log.1', 'server.log']) expect([name, lstatSync(join(dir, name)).isFile()]).toEqual([name, true]);
  expect(readFileSync(join(dir, 'server.log'), 'utf8')).toContain('"event":"listening"');
  const audited = `${readFileSync(join(dir, 'audit.log.1'), 'utf8')}${readFileSync(join(dir, 'audit.log'), 'utf8')}`;
  expect(audited.split('\n').filter((l) => l.includes('"tool":"browser_list_tabs"')).length).toBeGreaterThanOrEqual(2);
  // One line on stderr for each link replaced, naming it.
  expect(stderr.some((l) => l.includes(join(dir, 'audit.log')) && l.includes('symbolic link'))).toBe(true);
  expect(stderr.some((l) => l.includes(join(dir, 'server.log')) && l.includes('symbolic link'))).toBe(true);
});
