/** The server's check of browser_upload_file paths: real locations, symlinks resolved, only from folders the user allowed. */
import { afterAll, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { uploadPathsError } from '../../server/tools/upload-guard.ts';

const root = mkdtempSync(join(tmpdir(), 'opentabs-upload-guard-'));
const config = join(root, 'config');
const files = join(root, 'files');
const elsewhere = join(root, 'elsewhere');
mkdirSync(config);
mkdirSync(files);
mkdirSync(elsewhere);
writeFileSync(join(elsewhere, 'private.key'), 'secret');
symlinkSync(join(elsewhere, 'private.key'), join(files, 'out.txt'));
const allowed = [files];
writeFileSync(join(config, 'auth.json'), '{}');
writeFileSync(join(files, 'ok.txt'), 'ok');
symlinkSync(join(config, 'auth.json'), join(files, 'link.txt'));
symlinkSync(config, join(files, 'cfg'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

test('an ordinary file in an allowed folder passes', () => {
  expect(uploadPathsError(config, [join(files, 'ok.txt')], allowed)).toBeNull();
});

test('no folder allowed: every file is refused, naming the command only the user can run', () => {
  const e = uploadPathsError(config, [join(files, 'ok.txt')]);
  expect(e?.code).toBe('permission_denied');
  expect(e?.message).toContain('no folder is allowed yet');
  expect(e?.message).toContain('config set uploadFolders');
});

test('outside the allowed folders: refused, also through a link inside an allowed folder', () => {
  expect(uploadPathsError(config, [join(elsewhere, 'private.key')], allowed)?.message).toContain('not inside an allowed folder');
  expect(uploadPathsError(config, [join(files, 'out.txt')], allowed)?.code).toBe('permission_denied');
  // Allowing a parent of the config folder still never lets the secret out.
  expect(uploadPathsError(config, [join(config, 'auth.json')], [root])?.message).toContain('config folder');
});

test('refused: relative, missing, folder, config folder directly, through .., through a file or folder link', () => {
  expect(uploadPathsError(config, ['ok.txt'], allowed)?.status).toBe(400);
  expect(uploadPathsError(config, [join(files, 'missing.txt')], allowed)?.status).toBe(404);
  expect(uploadPathsError(config, [files], allowed)?.status).toBe(404);
  expect(uploadPathsError(config, [join(config, 'auth.json')], allowed)?.status).toBe(403);
  expect(uploadPathsError(config, [`${files}/../config/auth.json`], allowed)?.status).toBe(403);
  expect(uploadPathsError(config, [join(files, 'link.txt')], allowed)?.status).toBe(403);
  expect(uploadPathsError(config, [join(files, 'cfg', 'auth.json')], allowed)?.code).toBe('permission_denied');
  // One bad path refuses the call.
  expect(uploadPathsError(config, [join(files, 'ok.txt'), join(files, 'link.txt')], allowed)?.status).toBe(403);
});

test('hidden files and folders below an allowed folder are refused: allowing the home folder does not let out ~/.claude.json or ~/.ssh', () => {
  const home = join(root, 'home');
  mkdirSync(join(home, '.ssh'), { recursive: true });
  mkdirSync(join(home, 'docs'), { recursive: true });
  writeFileSync(join(home, '.claude.json'), '{"mcpServers":{"opentabs":{"headers":{"Authorization":"Bearer x"}}}}');
  writeFileSync(join(home, '.ssh', 'id_ed25519'), 'key');
  writeFileSync(join(home, 'docs', 'report.pdf'), 'pdf');
  symlinkSync(join(home, '.ssh', 'id_ed25519'), join(home, 'docs', 'innocent.txt'));
  const e = uploadPathsError(config, [join(home, '.claude.json')], [home]);
  expect(e?.code).toBe('permission_denied');
  expect(e?.message).toContain('hidden file or inside a hidden folder (.claude.json)');
  expect(uploadPathsError(config, [join(home, '.ssh', 'id_ed25519')], [home])?.message).toContain('(.ssh)');
  // A visible link to a hidden file: where the file really is decides.
  expect(uploadPathsError(config, [join(home, 'docs', 'innocent.txt')], [home])?.code).toBe('permission_denied');
  expect(uploadPathsError(config, [join(home, 'docs', 'report.pdf')], [home])).toBeNull();
  // A hidden folder the user named itself is theirs to allow.
  expect(uploadPathsError(config, [join(home, '.ssh', 'id_ed25519')], [join(home, '.ssh')])).toBeNull();
});
