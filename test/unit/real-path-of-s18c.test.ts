/** realPathOf (server/hub/handlers.ts): where a file:// path leads, for the extension's URL policy. */
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realPathOf } from '../../server/hub/handlers.ts';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'opentabs-realpath-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('realPathOf', () => {
  test('links followed, for files there, not there yet, and links pointing nowhere yet', () => {
    mkdirSync(join(root, '.ssh'));
    writeFileSync(join(root, '.ssh', 'id_rsa'), 'k');
    mkdirSync(join(root, 'p'));
    symlinkSync('../.ssh/id_rsa', join(root, 'p', 'notes.txt'));
    symlinkSync('../.ssh', join(root, 'p', 'keys'));
    symlinkSync('../.ssh/later', join(root, 'p', 'dangling'));
    symlinkSync('../.nothing-yet', join(root, 'p', 'gone-dir'));
    expect(realPathOf(join(root, 'p', 'notes.txt'))).toBe(join(root, '.ssh', 'id_rsa'));
    expect(realPathOf(join(root, 'p', 'keys', 'id_rsa'))).toBe(join(root, '.ssh', 'id_rsa'));
    expect(realPathOf(join(root, 'p', 'keys', 'not-there', 'x'))).toBe(join(root, '.ssh', 'not-there', 'x'));
    expect(realPathOf(join(root, 'p', 'dangling'))).toBe(join(root, '.ssh', 'later'));
    expect(realPathOf(join(root, 'p', 'gone-dir', 'a.html'))).toBe(join(root, '.nothing-yet', 'a.html'));
    expect(realPathOf(join(root, 'p', 'plain.html'))).toBe(join(root, 'p', 'plain.html'));
    expect(realPathOf('relative/x')).toBe('relative/x');
  });

  test('a loop of links ends', () => {
    symlinkSync('loop-b', join(root, 'loop-a'));
    symlinkSync('loop-a', join(root, 'loop-b'));
    expect(typeof realPathOf(join(root, 'loop-a'))).toBe('string');
  });
});
