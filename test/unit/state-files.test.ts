import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFileAtomic, writeFileAtomicSync } from '../../server/state/atomic.ts';
import { ensureStateDirs, resolveConfigDir } from '../../server/state/paths.ts';
import { loadOrCreateSecret, readSecretSync, rotateSecret, secretPath } from '../../server/state/secret.ts';
import { ServerLog, redact } from '../../server/state/server-log.ts';
import { homeDir } from '../../server/protocol/local-files.ts';
import { close, fstat, mkdir, open, read, readFile, rename, rm, stat, writeAll } from '../../server/state/fs-async.ts';
import { homedir } from 'node:os';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'opentabs-state-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const mode = (p: string) => statSync(p).mode & 0o777;

describe('paths', () => {
  test('OPENTABS_CONFIG_DIR overrides ~/.opentabs', () => {
    const saved = process.env.OPENTABS_CONFIG_DIR;
    try {
      process.env.OPENTABS_CONFIG_DIR = dir;
      expect(resolveConfigDir()).toBe(dir);
      delete process.env.OPENTABS_CONFIG_DIR;
      expect(resolveConfigDir().endsWith('.opentabs')).toBe(true);
    } finally {
      if (saved === undefined) delete process.env.OPENTABS_CONFIG_DIR;
      else process.env.OPENTABS_CONFIG_DIR = saved;
    }
  });

  test('ensureStateDirs creates dir, extension/ and plugins/ with mode 0700', async () => {
    const root = join(dir, 'state');
    await ensureStateDirs(root);
    for (const d of [root, join(root, 'extension'), join(root, 'plugins')]) expect(mode(d)).toBe(0o700);
  });

  test('a file where the state dir should be: a clear error naming the path', async () => {
    const file = join(dir, 'not-a-dir');
    writeFileSync(file, 'x');
    await expect(ensureStateDirs(file)).rejects.toThrow(`Cannot use ${file} as an OpenTabs state directory`);
  });
});

describe('paths: home', () => {
  test('homeDir() is os.homedir() ($HOME on POSIX, read without node:os)', () => {
    expect(homeDir()).toBe(homedir());
    const saved = process.env.HOME;
    try {
      process.env.HOME = '/somewhere/else';
      expect(homeDir()).toBe(process.platform === 'win32' ? homedir() : '/somewhere/else');
    } finally {
      process.env.HOME = saved;
    }
  });
});

describe('fs-async (node:fs callbacks as promises)', () => {
  test("errors are node:fs's own, with their code", async () => {
    const missing = join(dir, 'missing');
    await expect(readFile(missing, 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(stat(missing)).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(open(missing, 'r')).rejects.toMatchObject({ code: 'ENOENT' });
    await rm(missing, { force: true }); // force: no error
  });

  test('a large write is written whole and read back at any position; mkdir, rename, stat', async () => {
    await mkdir(join(dir, 'a', 'b'), { recursive: true });
    const file = join(dir, 'a', 'b', 'big.bin');
    const data = Buffer.alloc(3 * 1024 * 1024 + 17, 0);
    for (let i = 0; i < data.length; i++) data[i] = (i * 31) & 0xff;
    const fd = await open(file, 'w', 0o600);
    await writeAll(fd, data);
    await close(fd);
    await rename(file, join(dir, 'a', 'moved.bin'));
    expect((await stat(join(dir, 'a', 'moved.bin'))).size).toBe(data.length);
    const rd = await open(join(dir, 'a', 'moved.bin'), 'r');
    try {
      expect((await fstat(rd)).size).toBe(data.length);
      const tail = Buffer.alloc(100);
      expect(await read(rd, tail, 0, 100, data.length - 100)).toBe(100);
      expect(tail.equals(data.subarray(data.length - 100))).toBe(true);
    } finally {
      await close(rd);
    }
    expect(readFileSync(join(dir, 'a', 'moved.bin')).equals(data)).toBe(true);
  });
});

describe('atomic writes', () => {
  test('async write: content, mode 0600, no temp file left', async () => {
    const p = join(dir, 'x.json');
    await writeFileAtomic(p, '{"a":1}');
    expect(readFileSync(p, 'utf8')).toBe('{"a":1}');
    expect(mode(p)).toBe(0o600);
    await writeFileAtomic(p, '{"a":2}');
    expect(readFileSync(p, 'utf8')).toBe('{"a":2}');
    expect(readdirSync(dir)).toEqual(['x.json']);
  });

  test('sync write honours an explicit mode and replaces the file', () => {
    const p = join(dir, 'y.txt');
    writeFileAtomicSync(p, 'one', 0o644);
    expect(mode(p)).toBe(0o644);
    writeFileAtomicSync(p, new TextEncoder().encode('two'));
    expect(readFileSync(p, 'utf8')).toBe('two');
    expect(readdirSync(dir)).toEqual(['y.txt']);
  });

  test('a failed write throws and leaves neither target nor temp file', async () => {
    const p = join(dir, 'missing-dir', 'z.json');
    await expect(writeFileAtomic(p, 'x')).rejects.toThrow();
    expect(() => writeFileAtomicSync(p, 'x')).toThrow();
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('secret', () => {
  test('created on first use as 64 hex chars, 0600, then reused', async () => {
    await ensureStateDirs(dir);
    expect(readSecretSync(dir)).toBeNull();
    const s = await loadOrCreateSecret(dir);
    expect(s).toMatch(/^[0-9a-f]{64}$/);
    expect(mode(secretPath(dir))).toBe(0o600);
    expect(JSON.parse(readFileSync(secretPath(dir), 'utf8'))).toEqual({ secret: s });
    expect(await loadOrCreateSecret(dir)).toBe(s);
    expect(readSecretSync(dir)).toBe(s);
  });

  test('creates extension/ itself when missing', async () => {
    const s = await loadOrCreateSecret(dir);
    expect(existsSync(secretPath(dir))).toBe(true);
    expect(mode(join(dir, 'extension'))).toBe(0o700);
    expect(readSecretSync(dir)).toBe(s);
  });

  test('a corrupt or invalid auth.json is replaced by a fresh secret', async () => {
    await ensureStateDirs(dir);
    writeFileSync(secretPath(dir), '{not json');
    expect(readSecretSync(dir)).toBeNull();
    const s = await loadOrCreateSecret(dir);
    expect(s).toMatch(/^[0-9a-f]{64}$/);
    writeFileSync(secretPath(dir), JSON.stringify({ secret: 'short' }));
    expect(readSecretSync(dir)).toBeNull();
  });

  test('rotateSecret writes a different secret', async () => {
    const a = await loadOrCreateSecret(dir);
    const b = await rotateSecret(dir);
    expect(b).not.toBe(a);
    expect(readSecretSync(dir)).toBe(b);
    expect(mode(secretPath(dir))).toBe(0o600);
  });
});

describe('server log', () => {
  test('one JSON line per event, 0600, secrets redacted', async () => {
    const p = join(dir, 'server.log');
    const log = new ServerLog(p);
    const secret = 'ab'.repeat(32);
    log.info('listening', { url: 'http://127.0.0.1:1' });
    log.error('request_error', { error: `bad token ${secret}`, authorization: 'Bearer xyz', nested: { secret: 'x', ok: 1 } });
    await log.flush();
    const text = readFileSync(p, 'utf8');
    expect(text).not.toContain(secret);
    expect(text).not.toContain('xyz');
    const lines = text.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.length).toBe(2);
    expect(lines[0]).toMatchObject({ level: 'info', event: 'listening', url: 'http://127.0.0.1:1' });
    expect(lines[1]).toMatchObject({ level: 'error', event: 'request_error', authorization: '[redacted]', nested: { secret: '[redacted]', ok: 1 } });
    expect(mode(p)).toBe(0o600);
  });

  test('redact masks bearer tokens inside strings', () => {
    expect(redact('Authorization: Bearer abc.def')).toBe('Authorization: Bearer [redacted]');
  });

  test('a log in an unwritable place records the failure instead of throwing', () => {
    writeFileSync(join(dir, 'file'), 'x');
    const log = new ServerLog(join(dir, 'file', 'server.log'));
    expect(() => log.info('x')).not.toThrow();
    expect(log.lastError).not.toBeNull();
  });
});

describe('modes of reused files', () => {
  test('an existing auth.json with loose permissions is tightened to 0600', async () => {
    await ensureStateDirs(dir);
    const s = 'c'.repeat(64);
    writeFileSync(secretPath(dir), JSON.stringify({ secret: s }), { mode: 0o644 });
    expect(await loadOrCreateSecret(dir)).toBe(s);
    expect(mode(secretPath(dir))).toBe(0o600);
  });
});
