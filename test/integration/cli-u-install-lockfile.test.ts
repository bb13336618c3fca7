/**
 * `npm install` in a fresh clone (README "Two commands") leaves the tree clean: npm records
 * `hasInstallScript` on the root package when package.json has an install script (postinstall
 * builds the start-up bundle), so a lockfile without it was rewritten by every first install.
 */
import { expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './cli-support.ts';

test("package-lock.json's root entry says whether package.json has an install script, as npm install writes it", () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { hasInstallScript?: boolean }> };
  const hasInstallScript = ['preinstall', 'install', 'postinstall'].some((s) => pkg.scripts?.[s] !== undefined);
  expect(lock.packages[''].hasInstallScript === true).toBe(hasInstallScript);
});
