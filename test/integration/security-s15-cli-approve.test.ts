/**
 * `opentabs approve` in a terminal. The agent decides when its calls wait for approval and can
 * cancel one and make another at any moment: `opentabs approve` without an id allowed "the one
 * waiting call" as the command ran, which could be a call put in place of the one the user had
 * looked at (in the side panel, `opentabs approvals`, or a `tool call` status line). It now lists
 * the call and allows nothing; `opentabs approve <id>` allows exactly that call. Arguments and
 * targets in the list show direction-changing and invisible characters as \uXXXX, as the side
 * panel's card does (a terminal that reorders text would show code in another order than it runs).
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
  ext.onDispatch('mail_send', (p) => ({ value: { sent: (p.input as { to?: string }).to ?? null } }));
});

afterAll(async () => {
  await ext?.close().catch(() => {});
  await srv?.stop();
});

const cli = (args: string[]) => runCli([...args, '--port', String(srv.port)], { configDir: srv.configDir, timeoutMs: 50_000 });

async function waitingCount(n: number): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (srv.ctx.hub.confirmations.list().length === n) return;
    await Bun.sleep(20);
  }
  throw new Error(`expected ${n} waiting calls`);
}

const call = (args: Record<string, unknown>, signal?: AbortSignal) =>
  fetch(`${srv.url}/tools/mail_send/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: args }), signal })
    .then(async (r) => ({ status: r.status, body: (await r.json()) as any }))
    .catch(() => null);

describe('opentabs approve', () => {
  test('without an id it allows nothing, even with one call waiting: the call the user saw may have been swapped', async () => {
    // The user saw this one …
    const seenAbort = new AbortController();
    const seen = call({ to: 'friend@example.com' }, seenAbort.signal);
    await waitingCount(1);
    const listed = await cli(['approvals']);
    expect(listed.stdout).toContain('friend@example.com');
    // … the agent cancels it and asks for another before the user types `opentabs approve`.
    seenAbort.abort();
    await seen;
    await waitingCount(0);
    const swapped = call({ to: 'attacker@evil.example' });
    await waitingCount(1);
    const swappedId = srv.ctx.hub.confirmations.list()[0]!.id;
    const r = await cli(['approve']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('attacker@evil.example');
    expect(r.stderr).toContain(`approve ${swappedId}`);
    expect(srv.ctx.hub.confirmations.list().map((c) => c.id)).toEqual([swappedId]);
    // Deny without an id still answers the one waiting call (refusing is always safe).
    const denied = await cli(['deny']);
    expect(denied.code).toBe(0);
    expect((await swapped)?.status).toBe(403);
  });

  test('with the id it allows that call', async () => {
    const pending = call({ to: 'friend@example.com' });
    await waitingCount(1);
    const id = srv.ctx.hub.confirmations.list()[0]!.id;
    const r = await cli(['approve', id]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Allowed ${id}`);
    expect((await pending)?.body.result).toEqual({ sent: 'friend@example.com' });
  });

  test('arguments are listed with direction-changing and invisible characters as \\uXXXX', async () => {
    const pending = call({ to: 'a@example.com', body: 'ok \u202e;)eikooc(lave\u2066 \u200b\u2028end' });
    await waitingCount(1);
    const listed = await cli(['approvals']);
    for (const c of ['\u202e', '\u2066', '\u200b', '\u2028']) {
      expect(listed.stdout).not.toContain(c);
      expect(listed.stdout).toContain(`\\u${c.codePointAt(0)!.toString(16).padStart(4, '0')}`);
    }
    expect((await cli(['deny'])).code).toBe(0);
    expect((await pending)?.status).toBe(403);
  });
});
