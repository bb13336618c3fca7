import { describe, expect, test } from 'bun:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { npmInstall, registrySpecName } from '../../server/plugins/npm.ts';

describe('install spec checks', () => {
  test('registrySpecName finds the package name of registry specs only', () => {
    expect(registrySpecName('opentabs-plugin-foo')).toBe('opentabs-plugin-foo');
    expect(registrySpecName('opentabs-plugin-foo@1.2.3')).toBe('opentabs-plugin-foo');
    expect(registrySpecName('@acme/opentabs-plugin-foo@latest')).toBe('@acme/opentabs-plugin-foo');
    expect(registrySpecName('left-pad@^1')).toBe('left-pad');
    // Paths, tarballs, URLs and git specs are only known after npm has fetched them.
    for (const other of ['./x', '../a/b.tgz', '/abs/pkg', 'pkg.tgz', 'https://h/x.tgz', 'github:o/r', 'file:../p', 'a/b']) {
      expect(registrySpecName(other)).toBeNull();
    }
  });

  test('a registry name that is not a plugin package is refused before npm runs', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ot-npmspec-'));
    try {
      await expect(npmInstall(dir, 'left-pad')).rejects.toThrow('"left-pad" is not an OpenTabs plugin package name');
      await expect(npmInstall(dir, 'my-app@1.0.0')).rejects.toThrow('did you mean opentabs-plugin-my-app?');
      await expect(npmInstall(dir, '@acme/thing')).rejects.toThrow('did you mean @acme/opentabs-plugin-thing?');
      // Nothing was set up or downloaded: the install prefix was never created.
      expect(existsSync(join(dir, 'plugins'))).toBe(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
