/**
 * extension/build.ts and the page library: page-lib.js puts the library under a global name that
 * carries the version and the hash of the library's own code, the worker calls it by exactly that
 * name (another build's library left in a document's isolated world is never called), and the
 * library's sources are inputs of the build (a change to them makes the build stale).
 */
import { afterAll, expect, test } from 'bun:test';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pkg from '../../package.json' with { type: 'json' };
import { buildExtension } from '../../extension/build.ts';

const dir = mkdtempSync(join(tmpdir(), 'opentabs-page-lib-build-'));

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

test('the library\'s global name is the version and its code\'s hash, and the worker uses that name', async () => {
  const { outDir } = await buildExtension({ outDir: join(dir, 'dist') });
  const lib = readFileSync(join(outDir, 'page-lib.js'), 'utf8');
  const worker = readFileSync(join(outDir, 'background.js'), 'utf8');
  const names = [...new Set(lib.match(/__opentabs_page_lib_[0-9A-Za-z_]+/g))];
  expect(names.length).toBe(1);
  const key = names[0]!;
  expect(key.startsWith(`__opentabs_page_lib_${pkg.version.replace(/[^0-9A-Za-z]/g, '_')}_`)).toBe(true);
  // The hash is of the library's code as built before its name was put in.
  const hash = createHash('sha256').update(lib.replaceAll(key, '__opentabs_page_lib_key_placeholder__')).digest('hex').slice(0, 16);
  expect(key.endsWith(`_${hash}`)).toBe(true);
  expect(worker).toContain(JSON.stringify(key));
  // Built alone: the worker carries none of the library's code, the library none of the worker's.
  expect(worker).not.toContain('function snapshotPage');
  expect(lib).not.toContain('chrome.');
  const inputs = Object.keys((JSON.parse(readFileSync(join(outDir, '.build-info.json'), 'utf8')) as { inputs: Record<string, string> }).inputs);
  for (const f of ['extension/page/main.ts', 'extension/page/index.ts', 'extension/page/snapshot.ts', 'extension/page/dom.ts']) expect(inputs).toContain(f);
});
