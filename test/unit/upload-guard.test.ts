/** The server's check of browser_upload_file paths: real locations, symlinks resolved. */
import { afterAll, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { uploadPathsError } from '../../server/tools/upload-guard.ts';

const root = mkdtempSync(join(tmpdir(), 'opentabs-upload-guard-'));
const config = join(root, 'config');
const files = join(root, 'files');
mkdirSync(config);
mkdirSync(files);
writeFileSync(join(config, 'auth.json'), '{}');
writeFileSync(join(files, 'ok.txt'), 'ok');
symlinkSync(join(config, 'auth.json'), join(files, 'link.txt'));
symlinkSync(config, join(files, 'cfg'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

test('an ordinary file passes', () => {
  expect(uploadPathsError(config, [join(files, 'ok.txt')])).toBeNull();
});

test('refused: relative, missing, folder, config folder directly, through .., through a file or folder link', () => {
  expect(uploadPathsError(config, ['ok.txt'])?.status).toBe(400);
  expect(uploadPathsError(config, [join(files, 'missing.txt')])?.status).toBe(404);
  expect(uploadPathsError(config, [files])?.status).toBe(404);
  expect(uploadPathsError(config, [join(config, 'auth.json')])?.status).toBe(403);
  expect(uploadPathsError(config, [`${files}/../config/auth.json`])?.status).toBe(403);
  expect(uploadPathsError(config, [join(files, 'link.txt')])?.status).toBe(403);
  expect(uploadPathsError(config, [join(files, 'cfg', 'auth.json')])?.code).toBe('permission_denied');
  // One bad path refuses the call.
  expect(uploadPathsError(config, [join(files, 'ok.txt'), join(files, 'link.txt')])?.status).toBe(403);
});
