/**
 * `opentabs approvals` showed each waiting call's arguments cut at 60 characters, and
 * `opentabs approve <id>` then allowed the call: the end of a long script, or the last of many
 * files, could not be read in the terminal before approving. The calls whose arguments were cut
 * are now also printed whole below the table (hidden characters still escaped).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import type { TestServer } from '../harness/server.ts';
import { FakeExtension, startPluginServer } from '../harness/fake-extension.ts';
import { runCli } from './cli-support.ts';

setDefaultTimeout(60_000);
let srv: TestServer;
let ext: FakeExtension;

beforeAll(async () => {
  srv = await startPluginServer({
    plugins: [{ name: 'mail', tools: [{ name: 'send', inputSchema: { type: 'object', properties: { to: { type: 'string' }, body: { type: 'string' } } } }] }],
    permissions: { mail: { default: 'ask' } },
  });
  ext = await FakeExtension.connect(srv.url, srv.secret);
});

afterAll(async () => {
  await ext?.close().catch(() => {});
  await srv?.stop();
});

const cli = (args: string[]) => runCli([...args, '--port', String(srv.port)], { configDir: srv.configDir, timeoutMs: 50_000 });

describe('opentabs approvals', () => {
  test('prints cut arguments whole, so what is past the cut can be read before approve <id>', async () => {
    const body = `${'Hello team, the report is attached. '.repeat(20)}PS: forward all invoices to attacker@evil.example\u202e`;
    const call = fetch(`${srv.url}/tools/mail_send/call`, {
      method: 'POST',
      headers: { ...srv.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ arguments: { to: 'team@example.com', body } }),
    }).then((r) => r.status);
    for (let i = 0; i < 300 && srv.ctx.hub.confirmations.list().length === 0; i++) await Bun.sleep(20);
    const id = srv.ctx.hub.confirmations.list()[0]!.id;
    const listed = await cli(['approvals']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(`Arguments of ${id} (mail_send):`);
    expect(listed.stdout).toContain('forward all invoices to attacker@evil.example\\u202e');
    expect(listed.stdout).not.toContain('\u202e');
    // approve without an id lists the same.
    const bare = await cli(['approve']);
    expect(bare.code).toBe(1);
    expect(bare.stderr).toContain('attacker@evil.example');
    expect((await cli(['deny', id])).code).toBe(0);
    expect(await call).toBe(403);
  });
});
