/**
 * A failed call is recorded in audit.log (and `opentabs audit`, GET /audit) with its error
 * message, and messages quote arguments: a plugin's input check in its page answers
 * `otp: Invalid format: Expected /^\d{6}$/ but received "492817-x"`, a plugin's own error repeats
 * the token it was given. The one-time code, the password or the API key an agent passed was
 * written to audit.log in clear. Values of arguments that look like secrets (by key or by form,
 * the side panel's rule) are now masked in what the audit records; other values are kept.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeExtension, FakeToolError, startPluginServer } from '../harness/fake-extension.ts';
import type { TestServer } from '../harness/server.ts';

setDefaultTimeout(60_000);
let srv: TestServer;
let ext: FakeExtension;

const OTP = '492817-x';
const PASSWORD = 'correct horse "battery" staple';
const API_KEY = 'sk_live_51Hx9aQ2eZvKYlo2C8r4TmWq';

beforeAll(async () => {
  srv = await startPluginServer({ plugins: [
      {
        name: 'bank',
        tools: [
          { name: 'login', inputSchema: { type: 'object', properties: { otp: { type: 'string' }, password: { type: 'string' } } } },
          { name: 'search', inputSchema: { type: 'object', properties: { query: { type: 'string' }, account: { type: 'string' } } } },
        ],
      },
    ], permissions: { bank: { default: 'auto' } } });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  // As the SDK answers a failed input check in the page (valibot's message quotes the value).
  ext.onDispatch('bank_login', (p) => {
    const input = p.input as { otp: string; password: string };
    throw new FakeToolError('invalid_arguments', `Invalid arguments for bank_login: otp: Invalid format: Expected /^\\d{6}$/ but received ${JSON.stringify(input.otp)}; password ${JSON.stringify(input.password)} refused`);
  });
  // A plugin's own error repeating what it was given: a key by its form, a word as it is.
  ext.onDispatch('bank_search', (p) => {
    const input = p.input as { query: string; account: string };
    throw new FakeToolError('upstream_error', `The bank refused query "${input.query}" with key ${input.account}`);
  });
});

afterAll(async () => {
  await ext?.close().catch(() => {});
  await srv?.stop();
});

async function call(tool: string, args: Record<string, unknown>): Promise<void> {
  const r = await fetch(`${srv.url}/tools/${tool}/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: args }) });
  expect(r.status).toBeGreaterThanOrEqual(400);
  await r.body?.cancel();
}

test('audit.log and GET /audit keep the message without the secret values the call was given', async () => {
  await call('bank_login', { otp: OTP, password: PASSWORD });
  await call('bank_search', { query: 'rent march', account: API_KEY });
  const audit = (await (await fetch(`${srv.url}/audit?limit=10`, { headers: srv.auth })).json()) as { entries?: { tool: string; error?: { message: string } }[] } | { tool: string; error?: { message: string } }[];
  const entries = Array.isArray(audit) ? audit : (audit.entries ?? []);
  const file = readFileSync(join(srv.ctx.configDir, 'audit.log'), 'utf8');
  const served = JSON.stringify(entries);
  for (const text of [file, served]) {
    expect(text).toContain('bank_login');
    expect(text).toContain('but received \\"•••\\"');
    expect(text).toContain('rent march');
    expect(text).toContain('with key •••');
    for (const secret of [OTP, API_KEY, 'correct horse', 'battery']) expect(text).not.toContain(secret);
  }
});
