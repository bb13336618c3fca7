/**
 * browser_upload_file hands a file's bytes to the page. The user may allow a folder for uploads
 * (uploadFolders), and files in it can hold the OpenTabs secret where no path rule sees it: the
 * project's opencode.json that `opentabs setup opencode` itself writes (not a hidden file), or a
 * copy or hard link of auth.json. Such a file is refused before anything is asked or dispatched;
 * other files in the folder still go. And the files are checked again once the user allowed the
 * call: a file replaced by a link to auth.json while the card waited is not sent.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { copyFileSync, linkSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestServer } from '../harness/server.ts';
import { FakeExtension, startPluginServer } from '../harness/fake-extension.ts';
import { runCli } from './cli-support.ts';

let srv: TestServer;
let ext: FakeExtension;
let folder = '';
const uploads: unknown[] = [];

beforeAll(async () => {
  srv = await startPluginServer({ permissions: { browser: { tools: { browser_upload_file: 'auto' } } } });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.onDispatch('browser_upload_file', (p) => {
    uploads.push(p.input);
    return { value: { uploaded: true } };
  });
  folder = mkdtempSync(join(tmpdir(), 'opentabs-s15-uploads-'));
  mkdirSync(join(folder, 'app'));
  await srv.ctx.config.update((d) => {
    d.uploadFolders = [folder];
  });
});

afterAll(async () => {
  await ext?.close();
  await srv?.stop();
  rmSync(folder, { recursive: true, force: true });
});

async function upload(path: string): Promise<{ status: number; body: any }> {
  const r = await fetch(`${srv.url}/tools/browser_upload_file/call`, {
    method: 'POST',
    headers: { ...srv.auth, 'content-type': 'application/json' },
    body: JSON.stringify({ arguments: { tabId: 1, selector: 'input[type=file]', paths: [path] } }),
  });
  return { status: r.status, body: await r.json() };
}

describe('files holding the secret are not uploaded', () => {
  test("the project's opencode.json written by `opentabs setup opencode`", async () => {
    const setup = await runCli(['setup', 'opencode', '--dir', join(folder, 'app'), '--port', String(srv.port)], { configDir: srv.configDir });
    expect(setup.code).toBe(0);
    const r = await upload(join(folder, 'app', 'opencode.json'));
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe('permission_denied');
    // setup writes the client token there, not the secret: neither goes to a page.
    expect(r.body.error.message).toContain('contains the OpenTabs client token');
    expect(JSON.stringify(r.body)).not.toContain(srv.clientToken);
    expect(JSON.stringify(r.body)).not.toContain(srv.secret);
  });

  test('a hard link and a copy of auth.json, and a file with the secret deep inside', async () => {
    const auth = join(srv.configDir, 'extension', 'auth.json');
    linkSync(auth, join(folder, 'linked.json'));
    copyFileSync(auth, join(folder, 'copied.json'));
    // Past the first read chunk, and across the chunk boundary.
    const big = Buffer.alloc((1 << 20) + 64, 0x20);
    big.write(srv.secret, (1 << 20) - 10, 'latin1');
    writeFileSync(join(folder, 'big.txt'), big);
    for (const f of ['linked.json', 'copied.json', 'big.txt']) {
      const r = await upload(join(folder, f));
      expect([f, r.status, r.body.error?.code]).toEqual([f, 403, 'permission_denied']);
    }
    expect(uploads).toEqual([]);
  });

  test('an ordinary file in the folder is still uploaded', async () => {
    writeFileSync(join(folder, 'report.txt'), 'quarterly numbers');
    const r = await upload(join(folder, 'report.txt'));
    expect(r.status).toBe(200);
    expect(uploads.length).toBe(1);
  });

  test('a file replaced by a link to auth.json while the card waits is not sent', async () => {
    await srv.ctx.config.setToolPermission('browser', 'browser_upload_file', 'ask');
    srv.ctx.catalog.rebuild();
    try {
      const file = join(folder, 'invoice.txt');
      writeFileSync(file, 'invoice 42');
      const before = uploads.length;
      const call = upload(file);
      let pending: { id: string } | undefined;
      for (let i = 0; i < 300 && !pending; i++) {
        pending = srv.ctx.hub.confirmations.list()[0];
        if (!pending) await Bun.sleep(20);
      }
      expect(pending).toBeDefined();
      unlinkSync(file);
      symlinkSync(join(srv.configDir, 'extension', 'auth.json'), file);
      srv.ctx.hub.confirmations.respond(pending!.id, 'allow');
      const r = await call;
      expect([r.status, r.body.error?.code]).toEqual([403, 'permission_denied']);
      expect(uploads.length).toBe(before);
    } finally {
      await srv.ctx.config.setToolPermission('browser', 'browser_upload_file', 'auto');
      srv.ctx.catalog.rebuild();
    }
  });
});
