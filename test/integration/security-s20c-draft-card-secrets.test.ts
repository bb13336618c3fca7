/**
 * A drafted plugin holds none of the credentials the recorded traffic carried. Values under keys
 * naming a password or a token were redacted, but a PIN, a one-time code, a card's number and
 * security code, an account number or a social security number went into the draft's recorded
 * samples (its tests, its inferred schemas) as they were typed: a login with a PIN and an SMS
 * code, a checkout with a card, a profile answer carrying a card number. Each is now replaced by
 * "<redacted>" in every file of the draft; what is no secret (an order number, a shipping field)
 * stays.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { TestServer } from '../harness/server.ts';
import { FakeExtension, startPluginServer } from '../harness/fake-extension.ts';

let srv: TestServer;
let ext: FakeExtension;
const O = 'https://shop.example.com';
const SECRETS = ['482915', '739204', '4111 1111 1111 1111', '5500005555555559', '8317', '00012345678', '123-45-6789', 'DE89370400440532013000'];
const request = (method: string, path: string, body: unknown, answer: unknown) => ({
  method,
  url: `${O}${path}`,
  status: 200,
  mimeType: 'application/json',
  requestHeaders: { 'content-type': 'application/json' },
  responseHeaders: { 'content-type': 'application/json' },
  ...(body === undefined ? {} : { requestBody: { text: JSON.stringify(body) } }),
  responseBody: { text: JSON.stringify(answer) },
});
const capture = {
  requests: [
    request('POST', '/api/login', { email: 'ann@example.com', pin: '482915', otpCode: '739204' }, { ok: true }),
    request('POST', '/api/checkout', { orderNumber: 'A-1001', shippingMethod: 'express', card: { number: '4111 1111 1111 1111', cvc: '8317' }, accountNumber: '00012345678', iban: 'DE89370400440532013000' }, { ok: true, orderNumber: 'A-1001' }),
    request('GET', '/api/profile', undefined, { name: 'Ann', savedCard: '5500005555555559', ssn: '123-45-6789', shipping: 'express' }),
  ],
};

beforeAll(async () => {
  srv = await startPluginServer({ permissions: { browser: { tools: { plugin_draft_from_capture: 'auto' } } } });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.onDispatch('browser_get_network_requests', () => ({ value: capture }));
});
afterAll(async () => {
  await ext?.close();
  await srv?.stop();
});

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

test('PINs, one-time codes, card and account numbers do not reach the draft', async () => {
  const r = await fetch(`${srv.url}/tools/plugin_draft_from_capture/call`, {
    method: 'POST',
    headers: { ...srv.auth, 'content-type': 'application/json' },
    body: JSON.stringify({ arguments: { tabId: 3, name: 'shop' } }),
  });
  expect(r.status).toBe(200);
  const dir = join(srv.configDir, 'drafts', 'opentabs-plugin-shop');
  let all = '';
  for (const file of filesUnder(dir)) {
    if (file.includes('node_modules')) continue;
    const text = readFileSync(file, 'utf8');
    all += text;
    for (const s of SECRETS) expect({ file, secret: s, has: text.includes(s) }).toEqual({ file, secret: s, has: false });
  }
  // The samples are there, with what is no secret in them.
  expect(all).toContain('<redacted>');
  expect(all).toContain('A-1001');
  expect(all).toContain('express');
  expect(all).toContain('ann@example.com');
});
