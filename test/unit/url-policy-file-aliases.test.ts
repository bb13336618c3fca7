/**
 * file:// names that reach the config folder without spelling its path: Linux's /proc
 * (/proc/self/root/<path>, /proc/<pid>/cwd, /proc/<pid>/fd/<n>) and /dev/fd into it. The policy
 * sees only the URL, so both trees are refused outright, for tools and for plugin injection.
 */
import { afterEach, describe, expect, test } from 'bun:test';
import { insideProtectedFolder, refusalReason, resolveFileUrls, setFileResolver, setUrlPolicy } from '../../extension/tools/url-policy.ts';

afterEach(() => setUrlPolicy({}));

const aliases = [
  'file:///proc/self/root/home/u/.opentabs/extension/auth.json',
  'file:///proc/thread-self/root/home/u/.opentabs/extension/auth.json',
  'file:///proc/1/root/home/u/.opentabs/config.json',
  'file:///proc/self/cwd/auth.json',
  'file:///proc/self/fd/3',
  'file:///proc/self/map_files/',
  'file:///proc',
  'file:///proc/',
  'file:///%70roc/self/root/home/u/.opentabs/extension/auth.json',
  'file:///tmp/../proc/self/root/home/u/.opentabs/extension/auth.json',
  'file://localhost/proc/self/root/home/u/.opentabs/extension/auth.json',
  'file:///dev/fd/3',
  'file:///dev/stdin',
];

describe('file:// aliases of the config folder', () => {
  test('refused for tools even with file:// allowed, with the reason', async () => {
    setUrlPolicy({ allowFileUrls: true, protectedPaths: ['/home/u/.opentabs'] });
    for (const u of aliases) expect(refusalReason(u) ?? `allowed: ${u}`).toMatch(/\/proc and \/dev/);
    // Neighbours that only look alike stay allowed (none of them a link).
    const neighbours = ['file:///home/u/proc/self/root/x.html', 'file:///procfs/x.html', 'file:///device/x.html', 'file:///home/u/notes.html'];
    setFileResolver(async (paths) => ({ real: paths }));
    await resolveFileUrls(neighbours);
    for (const u of neighbours) expect(refusalReason(u)).toBeNull();
  });

  test('no plugin adapter is injected there, whatever its patterns', () => {
    setUrlPolicy({ allowFileUrls: false, protectedPaths: ['/home/u/.opentabs'] });
    for (const u of aliases) expect(insideProtectedFolder(u)).toBe(true);
    expect(insideProtectedFolder('file:///home/u/notes.html')).toBe(false);
  });
});
