/**
 * The disk holding the config dir fills up while the server runs (a small tmpfs filled by another
 * file; needs root to mount it, skipped otherwise). Tool calls still answer; audit.log keeps whole
 * lines only (a line the disk took half of is cut off again, so the next one does not run on from
 * it); a config change fails with an error that names config.json and the full disk, leaves the
 * file as it was and the change unmade; once there is room, both work again.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuditLog } from '../../server/state/audit.ts';
import { startTestServer, type TestServer } from '../harness/server.ts';
import { FakeExtension } from '../harness/fake-extension.ts';

let mnt = '';
let mounted = false;

function mountSmallDisk(bytes: number): boolean {
  mnt = mkdtempSync(join(tmpdir(), 'opentabs-small-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, 'tmpfs', mnt], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Fill the disk: a file of every free byte (bounded by the disk's size). */
function fill(path: string): void {
  const s = statfsSync(mnt);
  const free = Number(s.bavail) * Number(s.bsize);
  try {
    writeFileSync(path, Buffer.alloc(free));
  } catch {}
}

const lines = (path: string) => readFileSync(path, 'utf8').split('\n');

beforeAll(() => {
  mounted = mountSmallDisk(4 * 1024 * 1024);
});

afterAll(() => {
  if (mounted) {
    try {
      execFileSync('umount', ['-l', mnt], { stdio: 'ignore' });
    } catch {}
  }
  if (mnt) rmSync(mnt, { recursive: true, force: true });
});

describe('the config dir disk is full', () => {
  test.skipIf(process.getuid?.() !== 0)('audit.log keeps whole lines when the disk takes only part of one', async () => {
    expect(mounted).toBe(true);
    const dir = join(mnt, 'audit-only');
    mkdirSync(dir);
    const log = await AuditLog.open(dir, 100 * 1024 * 1024, 10);
    const entry = (i: number) => ({ timestamp: new Date().toISOString(), tool: `p_tool_${i}`, plugin: 'p', success: true, durationMs: 1, error: undefined });
    await log.record(entry(0));
    fill(join(mnt, 'filler-a'));
    // The last page of audit.log still has room: lines go in until one crosses into a page the
    // disk does not have. Bounded: a page holds at most a few dozen of these lines.
    let written = 1;
    let failure: unknown = null;
    for (let i = 1; i < 200 && failure === null; i++) {
      await log.record(entry(i)).then(
        () => written++,
        (err) => (failure = err),
      );
    }
    expect(String((failure as Error | null)?.message)).toContain('ENOSPC');
    const path = join(dir, 'audit.log');
    expect(readFileSync(path, 'utf8').endsWith('\n')).toBe(true);
    rmSync(join(mnt, 'filler-a'));
    await log.record(entry(999));
    const all = lines(path).filter((l) => l !== '');
    expect(all.length).toBe(written + 1);
    for (const l of all) expect(() => JSON.parse(l)).not.toThrow();
    expect(JSON.parse(all.at(-1)!).tool).toBe('p_tool_999');
    await log.close();
  });

  test.skipIf(process.getuid?.() !== 0)('the server answers calls; a config change names the full disk and leaves config.json as it was', async () => {
    expect(mounted).toBe(true);
    rmSync(join(mnt, 'filler-a'), { force: true }); // left by the test above when it failed
    const cfg = join(mnt, 'cfg');
    mkdirSync(cfg);
    const original = JSON.stringify({ schemaVersion: 1, localPlugins: [], permissions: {}, pluginSettings: {} });
    writeFileSync(join(cfg, 'config.json'), original);
    let srv: TestServer | null = null;
    let ext: FakeExtension | null = null;
    try {
      srv = await startTestServer({ configDir: cfg, skipPermissions: true });
      ext = await FakeExtension.connect(srv.url, srv.secret);
      ext.onDispatch('browser_list_tabs', () => ({ value: { tabs: [] } }));
      const call = async () => {
        const r = await fetch(`${srv!.url}/tools/browser_list_tabs/call`, { method: 'POST', headers: { ...srv!.auth, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: {} }) });
        return { status: r.status, body: await r.json() };
      };
      expect((await call()).status).toBe(200);
      const before = readFileSync(join(cfg, 'config.json'), 'utf8');

      fill(join(mnt, 'filler-b'));
      for (let i = 0; i < 3; i++) expect((await call()).status).toBe(200);
      const err = await srv.ctx.config.setToolPermission('browser', 'browser_list_tabs', 'off').then(() => null, (e: Error) => e);
      expect(err?.message).toContain(`Could not save ${join(cfg, 'config.json')}: the disk is full`);
      expect(err?.message).toContain('the change was not made');
      expect(readFileSync(join(cfg, 'config.json'), 'utf8')).toBe(before);
      expect(srv.ctx.config.permissionFor('browser', 'browser_list_tabs', 'auto')).toBe('auto');
      // The side panel's way in: the error it shows names the file and the disk.
      const health = await fetch(`${srv.url}/health`, { headers: srv.auth });
      expect(health.status).toBe(200);

      rmSync(join(mnt, 'filler-b'));
      await srv.ctx.config.setToolPermission('browser', 'browser_list_tabs', 'ask');
      expect(JSON.parse(readFileSync(join(cfg, 'config.json'), 'utf8')).permissions.browser.tools.browser_list_tabs).toBe('ask');
      expect((await call()).status).toBe(200);
      for (const l of lines(join(cfg, 'audit.log')).filter((x) => x !== '')) expect(() => JSON.parse(l)).not.toThrow();
    } finally {
      await ext?.close().catch(() => {});
      await srv?.stop().catch(() => {});
    }
  }, 60_000);
});
