/**
 * server.log and audit.log are JSON lines a person also reads with cat or tail -f. JSON escapes C0
 * controls, but left C1 controls (U+009B is CSI to terminals that obey C1), bidi overrides and
 * invisible characters as they were: a plugin package's name in a plugin_failed line, or a page's
 * error text in an audit entry, reached the terminal of whoever read the file. Lines are now
 * written with those as \uXXXX (server/shown-text.ts printable): the same JSON, the same values.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempConfigDir, startTestServer, type TestServer } from '../harness/server.ts';
import { FakeExtension, FakeToolError, writeTestConfig, writeTestPlugin } from '../harness/fake-extension.ts';

setDefaultTimeout(60_000);
const HOSTILE = 'x\x9b2J\u202eevil\u200d\u{e0041}';
const UNSHOWN = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]|\udb40[\udc00-\udc7f]/;

let srv: TestServer;
let ext: FakeExtension;

beforeAll(async () => {
  const dir = makeTempConfigDir('opentabs-s19b-logs-');
  const parent = join(dir, 'plugins-here');
  const docs = writeTestPlugin(parent, 'docs', [{ name: 'get' }]);
  const odd = join(parent, 'odd');
  mkdirSync(join(odd, 'dist'), { recursive: true });
  writeFileSync(join(odd, 'package.json'), JSON.stringify({ name: `opentabs-plugin-${HOSTILE}`, version: '1.0.0' }));
  writeTestConfig(dir, { localPlugins: [docs, odd], permissions: { docs: { default: 'auto' } } });
  srv = await startTestServer({ skipPermissions: false, configDir: dir });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.onDispatch('docs_get', () => {
    throw new FakeToolError('tool_error', `upstream said ${HOSTILE}`);
  });
});

afterAll(async () => {
  await ext?.close().catch(() => {});
  await srv?.stop();
});

test('server.log: a plugin package\'s name in plugin_failed is escaped, and parses back to itself', () => {
  const text = readFileSync(join(srv.configDir, 'server.log'), 'utf8');
  const line = text.split('\n').find((l) => l.includes('plugin_failed') && l.includes('odd'));
  expect(line).toBeDefined();
  expect(text).not.toMatch(UNSHOWN);
  expect(line).toContain('\\u009b2J\\u202eevil\\u200d\\udb40\\udc41');
  expect((JSON.parse(line!) as { error: string }).error).toContain(HOSTILE);
});

test('audit.log: a page\'s error text is escaped, and parses back to itself', async () => {
  const r = await fetch(`${srv.url}/tools/docs_get/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: '{"arguments":{}}' });
  expect(r.status).toBe(502);
  const text = readFileSync(join(srv.configDir, 'audit.log'), 'utf8');
  expect(text).toContain('upstream said');
  expect(text).not.toMatch(UNSHOWN);
  const entry = JSON.parse(text.trim().split('\n').at(-1)!) as { error: { message: string } };
  expect(entry.error.message).toContain(HOSTILE);
});
