/**
 * GET /approvals carried each waiting call's arguments whole: up to 10 calls of up to 10 MB each in
 * one answer, built again for every listing. A listing now carries at most
 * APPROVALS_LIST_PARAMS_MAX_CHARS of one call's arguments, says how long they are and where to read
 * them whole (GET /approvals/:id); `opentabs approvals` still prints every call's arguments whole.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import type { TestServer } from '../harness/server.ts';
import { FakeExtension, startPluginServer } from '../harness/fake-extension.ts';
import { APPROVALS_LIST_PARAMS_MAX_CHARS } from '../../server/limits.ts';
import { runCli } from './cli-support.ts';

setDefaultTimeout(90_000);
let srv: TestServer;
let ext: FakeExtension;

beforeAll(async () => {
  srv = await startPluginServer({
    plugins: [{ name: 'mail', tools: [{ name: 'send', inputSchema: { type: 'object', properties: { body: { type: 'string' } } } }] }],
    permissions: { mail: { default: 'ask' } },
  });
  ext = await FakeExtension.connect(srv.url, srv.secret);
});

afterAll(async () => {
  await ext?.close().catch(() => {});
  await srv?.stop();
});

const cli = (args: string[]) => runCli([...args, '--port', String(srv.port)], { configDir: srv.configDir, timeoutMs: 60_000 });

describe('GET /approvals with large arguments', () => {
  test('a listing carries a bounded part of each call; the whole is read by id and printed by the CLI', async () => {
    // Three calls (the REST caller's share) of 2 MB each; each ends with its own words.
    const bodies = [0, 1, 2].map((i) => `${'x'.repeat(2 * 1024 * 1024)} END-OF-CALL-${i}`);
    const calls = bodies.map((body) =>
      fetch(`${srv.url}/tools/mail_send/call`, {
        method: 'POST',
        headers: { ...srv.auth, 'content-type': 'application/json' },
        body: JSON.stringify({ arguments: { body } }),
      }).then((r) => r.status),
    );
    for (let i = 0; i < 500 && srv.ctx.hub.confirmations.list().length < 3; i++) await Bun.sleep(20);
    expect(srv.ctx.hub.confirmations.list().length).toBe(3);

    const res = await fetch(`${srv.url}/approvals`, { headers: srv.auth });
    const text = await res.text();
    expect(res.status).toBe(200);
    // The whole listing is smaller than one call's arguments.
    expect(text.length).toBeLessThan(3 * APPROVALS_LIST_PARAMS_MAX_CHARS + 4096);
    const listed = (JSON.parse(text) as { approvals: { id: string; params?: unknown; paramsCut?: { chars: number; preview: string; whole: string } }[] }).approvals;
    expect(listed.length).toBe(3);
    for (const a of listed) {
      expect(a.params).toBeUndefined();
      const whole = srv.ctx.hub.confirmations.list().find((w) => w.id === a.id)!;
      const json = JSON.stringify(whole.params);
      expect(a.paramsCut).toEqual({ chars: json.length, preview: json.slice(0, APPROVALS_LIST_PARAMS_MAX_CHARS), whole: `GET /approvals/${a.id}` });
      // One approval by id: its arguments whole.
      const one = await fetch(`${srv.url}/approvals/${a.id}`, { headers: srv.auth });
      expect(one.status).toBe(200);
      expect(((await one.json()) as { approval: { params: unknown } }).approval.params).toEqual(whole.params as object);
    }
    expect((await fetch(`${srv.url}/approvals/nope`, { headers: srv.auth })).status).toBe(404);
    expect((await fetch(`${srv.url}/approvals/${listed[0]!.id}`)).status).toBe(401);

    // The terminal listing prints every call's arguments to their end.
    const r = await cli(['approvals']);
    expect(r.code).toBe(0);
    for (let i = 0; i < 3; i++) expect(r.stdout).toContain(`END-OF-CALL-${i}`);
    const j = await cli(['approvals', '--json']);
    for (let i = 0; i < 3; i++) expect(j.stdout).toContain(`END-OF-CALL-${i}`);

    for (const a of listed) expect((await cli(['deny', a.id])).code).toBe(0);
    expect(await Promise.all(calls)).toEqual([403, 403, 403]);
  });

  test('short arguments are listed whole, as before', async () => {
    const call = fetch(`${srv.url}/tools/mail_send/call`, {
      method: 'POST',
      headers: { ...srv.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ arguments: { body: 'hi' } }),
    }).then((r) => r.status);
    for (let i = 0; i < 300 && srv.ctx.hub.confirmations.list().length === 0; i++) await Bun.sleep(20);
    const listed = (await (await fetch(`${srv.url}/approvals`, { headers: srv.auth })).json()) as { approvals: { id: string; params?: unknown; paramsCut?: unknown }[] };
    expect(listed.approvals[0]!.params).toEqual({ body: 'hi' });
    expect(listed.approvals[0]!.paramsCut).toBeUndefined();
    expect((await cli(['deny', listed.approvals[0]!.id])).code).toBe(0);
    expect(await call).toBe(403);
  });
});
