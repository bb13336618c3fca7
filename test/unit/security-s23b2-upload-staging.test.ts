/**
 * The copies browser_upload_file hands Chrome (server/tools/upload-staging.ts): made from the file
 * as checked, in 0700 folders as 0600 files under the original name, scanned for the secret as
 * they are copied, refused above the per-call cap, removed after a day and at stop. And a file
 * (or a folder on its path) flipped to a link to a key by another process while calls run: no copy
 * ever holds the key.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OpenTabsError } from '../../server/errors.ts';
import { UPLOAD_STAGING_MAX_BYTES } from '../../server/limits.ts';
import { NeedleScan } from '../../server/tools/upload-guard.ts';
import { clearUploadStaging, stageUploads, sweepUploadStaging, UPLOAD_STAGING_KEEP_MS, uploadStagingRoot } from '../../server/tools/upload-staging.ts';

const root = mkdtempSync(join(tmpdir(), 'opentabs-s23b2-staging-'));
const config = join(root, 'config');
const files = join(root, 'files');
const SECRET = 'a1'.repeat(32);
mkdirSync(join(config, 'extension'), { recursive: true });
mkdirSync(join(files, 'a'), { recursive: true });
mkdirSync(join(files, 'b'));
writeFileSync(join(config, 'extension', 'auth.json'), JSON.stringify({ secret: SECRET }));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const stagedFolders = () => (existsSync(uploadStagingRoot(config)) ? readdirSync(uploadStagingRoot(config)) : []);

async function refusal(p: Promise<unknown>): Promise<OpenTabsError> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(OpenTabsError);
  return e as OpenTabsError;
}

describe('copies', () => {
  test('each file copied under its own name into a folder of its own (two files may share a name); 0700 folders, 0600 files', async () => {
    writeFileSync(join(files, 'a', 'report.txt'), 'first');
    writeFileSync(join(files, 'b', 'report.txt'), 'second');
    const staged = await stageUploads(config, [join(files, 'a', 'report.txt'), join(files, 'b', 'report.txt')], [files]);
    expect(staged.length).toBe(2);
    expect(staged.map((p) => p.split('/').pop())).toEqual(['report.txt', 'report.txt']);
    expect(staged.map((p) => readFileSync(p, 'utf8'))).toEqual(['first', 'second']);
    expect(statSync(uploadStagingRoot(config)).mode & 0o777).toBe(0o700);
    for (const p of staged) {
      expect(p.startsWith(uploadStagingRoot(config) + '/')).toBe(true);
      expect(statSync(p).mode & 0o777).toBe(0o600);
      expect(statSync(join(p, '..')).mode & 0o777).toBe(0o700);
      expect(p.split('/').at(-2)).toMatch(/^[0-9a-f]{32}$/);
    }
  });

  test('the rules of the check apply to the copy: the secret found while copying (across read chunks) is refused and nothing stays', async () => {
    clearUploadStaging(config);
    const big = Buffer.alloc((1 << 20) + 64, 0x20);
    big.write(SECRET, (1 << 20) - 10, 'latin1');
    writeFileSync(join(files, 'big.txt'), big);
    writeFileSync(join(files, 'fine.txt'), 'fine');
    const e = await refusal(stageUploads(config, [join(files, 'fine.txt'), join(files, 'big.txt')], [files]));
    expect(e.code).toBe('permission_denied');
    expect(e.message).toContain('contains the OpenTabs secret');
    expect(stagedFolders()).toEqual([]);
    // Nor outside the allowed folders, a hidden file, or the config folder.
    for (const p of [join(config, 'extension', 'auth.json'), join(root, 'elsewhere.txt')]) {
      writeFileSync(join(root, 'elsewhere.txt'), 'x');
      expect((await refusal(stageUploads(config, [p], [files]))).code).toBe('permission_denied');
    }
  });

  test(`more than the cap per call (${UPLOAD_STAGING_MAX_BYTES / (1024 * 1024)} MB; here 1 KB) is refused naming it, and nothing is copied`, async () => {
    writeFileSync(join(files, 'half1.bin'), Buffer.alloc(600));
    writeFileSync(join(files, 'half2.bin'), Buffer.alloc(600));
    expect((await stageUploads(config, [join(files, 'half1.bin')], [files], 1024)).length).toBe(1);
    clearUploadStaging(config);
    const e = await refusal(stageUploads(config, [join(files, 'half1.bin'), join(files, 'half2.bin')], [files], 1024));
    expect(e.code).toBe('invalid_arguments');
    expect(e.message).toContain('1024 bytes in all');
    expect(e.message).toContain('1200 bytes');
    expect(stagedFolders()).toEqual([]);
  });

  test('the scan finds a string split across the pieces it is fed', () => {
    const s = new NeedleScan(['abcdef', 'xyz']);
    expect(s.feed(Buffer.from('---abc'))).toBeNull();
    expect(s.feed(Buffer.from('def---'))).toBe('abcdef');
    const t = new NeedleScan(['xyz']);
    expect(t.feed(Buffer.from('x'))).toBeNull();
    expect(t.feed(Buffer.from('y'))).toBeNull();
    expect(t.feed(Buffer.from('z'))).toBe('xyz');
  });
});

describe('removal', () => {
  test('folders older than a day go, newer ones stay; all of them at stop', async () => {
    clearUploadStaging(config);
    writeFileSync(join(files, 'keep.txt'), 'k');
    const [old] = await stageUploads(config, [join(files, 'keep.txt')], [files]);
    const [fresh] = await stageUploads(config, [join(files, 'keep.txt')], [files]);
    const oldDir = join(old!, '..');
    const when = (Date.now() - UPLOAD_STAGING_KEEP_MS - 60_000) / 1000;
    utimesSync(oldDir, when, when);
    expect(await sweepUploadStaging(config)).toBe(1);
    expect(existsSync(oldDir)).toBe(false);
    expect(readFileSync(fresh!, 'utf8')).toBe('k');
    clearUploadStaging(config);
    expect(existsSync(uploadStagingRoot(config))).toBe(false);
    // Nothing to sweep is no error.
    expect(await sweepUploadStaging(config)).toBe(0);
  });
});

describe('a file swapped for a link while calls run', () => {
  const KEY = 'PRIVATE-KEY-s23b2-race\n';
  let flipper: ChildProcess | undefined;
  const race = join(files, 'race');
  /** Calls per path: without the checks on the open file, a copy of the key came within a few hundred. */
  const ROUNDS = 1500;
  beforeAll(() => {
    mkdirSync(join(root, 'home', '.ssh'), { recursive: true });
    writeFileSync(join(root, 'home', '.ssh', 'id_ed25519'), KEY);
    mkdirSync(join(race, 'sub'), { recursive: true });
  });
  afterAll(() => {
    if (flipper?.pid !== undefined && flipper.exitCode === null) process.kill(flipper.pid);
  });

  test('another process flips the file, and a folder on its path, between the real thing and a link to a key: no copy holds the key', async () => {
    const key = join(root, 'home', '.ssh', 'id_ed25519');
    const stop = join(root, 'stop-flipping');
    // Bounded either way: it stops at the stop file or after its last round.
    const script = `
      const fs = require('node:fs'); const path = require('node:path');
      const [race, key, stop] = process.argv.slice(1);
      const file = path.join(race, 'doc.txt'), sub = path.join(race, 'sub');
      const tmpLink = path.join(race, 'tmp-link'), tmpFile = path.join(race, 'tmp-file'), tmpDir = path.join(race, 'tmp-dir');
      // Each state is put in place whole (a rename), so the file is always the innocent text or the link.
      for (let i = 0; i < 200000 && !fs.existsSync(stop); i++) {
        try { fs.rmSync(tmpLink, { force: true }); fs.symlinkSync(key, tmpLink); fs.renameSync(tmpLink, file); } catch {}
        try { fs.writeFileSync(tmpFile, 'innocent text\\n'); fs.renameSync(tmpFile, file); } catch {}
        try { fs.rmSync(sub, { recursive: true, force: true }); fs.symlinkSync(path.dirname(key), sub); } catch {}
        try { fs.rmSync(tmpDir, { recursive: true, force: true }); fs.mkdirSync(tmpDir); fs.writeFileSync(path.join(tmpDir, 'id_ed25519'), 'innocent text\\n'); fs.rmSync(sub, { recursive: true, force: true }); fs.renameSync(tmpDir, sub); } catch {}
      }`;
    flipper = spawn(process.execPath, ['-e', script, race, key, stop], { stdio: 'ignore' });
    let copied = 0;
    let refused = 0;
    try {
      for (let i = 0; i < ROUNDS; i++) {
        for (const p of [join(race, 'doc.txt'), join(race, 'sub', 'id_ed25519')]) {
          try {
            const [staged] = await stageUploads(config, [p], [files]);
            expect(readFileSync(staged!, 'utf8')).toBe('innocent text\n');
            copied++;
          } catch (err) {
            if (!(err instanceof OpenTabsError)) throw err;
            refused++;
          }
        }
      }
    } finally {
      writeFileSync(stop, '');
    }
    expect(copied + refused).toBe(2 * ROUNDS);
    clearUploadStaging(config);
  }, 120_000);
});
