/**
 * audit.log rotates into audit.log.1 only, by size. An agent making many cheap calls (here, a
 * plugin's auto tool; argument errors and tools that are off are audited too) pushed its earlier
 * calls out of both files: the call the user approved was gone from every file within minutes,
 * and the entries never said which calls the user had answered. Now an entry says how the user
 * answered (allowed, always allowed, denied), those entries are kept apart in
 * audit-decisions.log as well, and `opentabs audit --file` shows them, each call once.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeExtension, startPluginServer } from '../harness/fake-extension.ts';
import type { TestServer } from '../harness/server.ts';
import { runCli } from './cli-support.ts';

setDefaultTimeout(120_000);
let srv: TestServer;
let ext: FakeExtension;
const ROTATE_BYTES = 6_000;

beforeAll(async () => {
  srv = await startPluginServer({
    plugins: [{ name: 'mail', tools: [{ name: 'delete_all' }, { name: 'read' }] }],
    permissions: { mail: { default: 'auto', tools: { delete_all: 'ask' } } },
    limits: { auditRotateBytes: ROTATE_BYTES },
  });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.onDispatch('mail_read', () => ({ value: { unread: 2 } }));
  ext.onDispatch('mail_delete_all', () => ({ value: { deleted: 1200 } }));
});

afterAll(async () => {
  await ext?.close().catch(() => {});
  await srv?.stop();
});

const call = (tool: string) =>
  fetch(`${srv.url}/tools/${tool}/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: '{"arguments":{}}' }).then(
    (r) => r.json() as Promise<{ error?: { code: string } }>,
  );

/** Calls mail_delete_all and answers its card as `decision`. */
async function asked(decision: 'allow' | 'deny', alwaysAllow?: boolean): Promise<{ error?: { code: string } }> {
  const pending = call('mail_delete_all');
  let id: string | undefined;
  for (let i = 0; i < 500 && !id; i++) {
    id = srv.ctx.hub.confirmations.list()[0]?.id;
    if (!id) await Bun.sleep(10);
  }
  ext.confirm(id!, decision, alwaysAllow);
  return pending;
}

const lines = (name: string) => {
  const p = join(srv.configDir, name);
  return existsSync(p) ? readFileSync(p, 'utf8').split('\n').filter((l) => l !== '') : [];
};

interface Entry {
  tool: string;
  success: boolean;
  approval?: string;
}

async function auditFile(...args: string[]): Promise<Entry[]> {
  const r = await runCli(['audit', '--file', '--json', ...args], { configDir: srv.configDir, timeoutMs: 60_000 });
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as Entry[];
}

test('a call the user approved stays in the record after thousands of bytes of cheap calls; each call shown once', async () => {
  expect((await asked('allow')).error).toBeUndefined();
  expect((await asked('deny')).error?.code).toBe('permission_denied');

  // Before any rotation: the decisions are in audit.log and audit-decisions.log, shown once each.
  const before = await auditFile('--tool', 'mail_delete_all');
  expect(before.map((e) => [e.success, e.approval])).toEqual([
    [false, 'denied'],
    [true, 'allowed'],
  ]);
  // /audit says so too.
  const viaServer = (await (await fetch(`${srv.url}/audit?tool=mail_delete_all`, { headers: srv.auth })).json()) as Entry[];
  expect(viaServer.map((e) => e.approval)).toEqual(['denied', 'allowed']);

  // The flood: auto calls until audit.log has rotated twice over.
  let flood = 0;
  while (flood < 2_000 && lines('audit.log').concat(lines('audit.log.1')).some((l) => l.includes('mail_delete_all'))) {
    expect((await call('mail_read')).error).toBeUndefined();
    flood++;
  }
  expect(flood).toBeLessThan(2_000);
  // Gone from audit.log and audit.log.1 …
  expect(lines('audit.log').concat(lines('audit.log.1')).filter((l) => l.includes('mail_delete_all'))).toEqual([]);
  // … kept in audit-decisions.log, which the flood did not touch.
  const kept = lines('audit-decisions.log').map((l) => JSON.parse(l) as Entry);
  expect(kept.map((e) => [e.tool, e.approval])).toEqual([
    ['mail_delete_all', 'allowed'],
    ['mail_delete_all', 'denied'],
  ]);

  // `opentabs audit --file` still shows both, in time order among the calls audit.log kept.
  const after = await auditFile('--limit', '100000');
  expect(after.filter((e) => e.tool === 'mail_delete_all').map((e) => e.approval)).toEqual(['denied', 'allowed']);
  expect(after.length).toBe(lines('audit.log').length + lines('audit.log.1').length + 2);
  expect(after.at(-1)?.approval).toBe('allowed');
});

test('"Always allow" is recorded as such; the table has an ASKED column', async () => {
  expect((await asked('allow', true)).error).toBeUndefined();
  const kept = lines('audit-decisions.log').map((l) => JSON.parse(l) as Entry);
  expect(kept.at(-1)?.approval).toBe('always');
  const r = await runCli(['audit', '--file', '--tool', 'mail_delete_all'], { configDir: srv.configDir, timeoutMs: 60_000 });
  expect(r.code).toBe(0);
  const [head, ...rows] = r.stdout.split('\n').filter((l) => l.trim() !== '');
  expect(head).toMatch(/TIME\s+TOOL\s+RESULT\s+ASKED\s+DURATION\s+ERROR/);
  expect(rows.map((l) => /always allowed|allowed|denied/.exec(l)?.[0])).toEqual(['always allowed', 'denied', 'allowed']);
});
