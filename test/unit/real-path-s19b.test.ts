/**
 * realPathOf (server/hub/handlers.ts) answers file.realPaths for up to 256 paths of 8 KB at once.
 * It walked up one folder at a time, one realpath call per level: a path of 4,000 missing levels
 * took 4,000 calls (0.4 s of the server's thread per path). The deepest existing folder is now
 * found by halving; loops of links end at their first repeat.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realPathOf } from '../../server/hub/handlers.ts';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'opentabs-realpath-s19b-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function counting(): { calls: number; fn: (p: string) => string } {
  const c = { calls: 0, fn: (p: string) => (c.calls++, realpathSync(p)) };
  return c;
}

describe('realPathOf on long paths', () => {
  test('a path of 4,000 missing levels takes a few realpath calls, and ends where its folder leads', () => {
    mkdirSync(join(root, 'docs'));
    symlinkSync(join(root, 'docs'), join(root, 'shown'));
    const missing = Array.from({ length: 4000 }, () => 'a').join('/');
    const c = counting();
    expect(realPathOf(join(root, 'shown', missing), c.fn)).toBe(join(root, 'docs', missing));
    expect(c.calls).toBeGreaterThan(0);
    expect(c.calls).toBeLessThan(40);
  });

  test('a loop of links through a missing level ends after the loop, not after thousands of calls', () => {
    symlinkSync('loop-b', join(root, 'loop-a'));
    symlinkSync('loop-a', join(root, 'loop-b'));
    const c = counting();
    const p = join(root, 'loop-a', Array.from({ length: 2000 }, () => 'x').join('/'));
    expect(realPathOf(p, c.fn)).toBe(p);
    expect(c.calls).toBeGreaterThan(0);
    expect(c.calls).toBeLessThan(100);
  });

  test('a backslash is part of a name on POSIX, not a separator', () => {
    if (process.platform === 'win32') return;
    mkdirSync(join(root, 'w'));
    symlinkSync(join(root, 'docs'), join(root, 'w', 'a\\b'));
    expect(realPathOf(join(root, 'w', 'a\\b', 'f.html'))).toBe(join(root, 'docs', 'f.html'));
  });
});
