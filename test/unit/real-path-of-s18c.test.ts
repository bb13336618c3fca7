/** realPathOf (server/hub/handlers.ts): where a file:// path leads, for the extension's URL policy. */
import { afterAll, describe, expect, test } from 'bun:test';
import { linkSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasOtherNames, realPathOf } from '../../server/hub/handlers.ts';

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

  test('hasOtherNames: a regular file with a hard link, by either name and through a symbolic link; not a file of one name, a folder, a missing path', () => {
    mkdirSync(join(root, 'h'));
    writeFileSync(join(root, 'h', 'secret'), 's');
    linkSync(join(root, 'h', 'secret'), join(root, 'h', 'visible.txt'));
    symlinkSync('visible.txt', join(root, 'h', 'via-link'));
    writeFileSync(join(root, 'h', 'single.txt'), 'x');
    expect(hasOtherNames(join(root, 'h', 'visible.txt'))).toBe(true);
    expect(hasOtherNames(join(root, 'h', 'secret'))).toBe(true);
    expect(hasOtherNames(join(root, 'h', 'via-link'))).toBe(true);
    expect(hasOtherNames(join(root, 'h', 'single.txt'))).toBe(false);
    expect(hasOtherNames(join(root, 'h'))).toBe(false);
    expect(hasOtherNames(join(root, 'h', 'missing'))).toBe(false);
    expect(hasOtherNames('relative/x')).toBe(false);
  });
});
