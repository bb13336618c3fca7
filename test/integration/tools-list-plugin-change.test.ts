/**
 * MCP `tools/list` is served from a payload cached per catalog version: adding a plugin, removing
 * it, or rebuilding it with another tool set must change what a connected client lists (the same
 * session, no reconnect), and a list asked twice without a change is the same.
 */
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startTestServer, type TestServer } from '../harness/server.ts';
import { connectMcp, writeTestConfig } from '../harness/fake-extension.ts';
import { addLocalPlugin, removeLocalPlugin } from '../../server/plugins/local.ts';

setDefaultTimeout(60_000);

const work = mkdtempSync(join(tmpdir(), 'opentabs-list-change-'));
const configDir = join(work, 'state');
let srv: TestServer;
let client: Client;

function writePlugin(name: string, tools: string[]): string {
  const dir = join(work, name);
  mkdirSync(join(dir, 'dist'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `opentabs-plugin-${name}`, version: '1.0.0' }));
  writeFileSync(
    join(dir, 'dist', 'tools.json'),
    JSON.stringify({
      name,
      displayName: name,
      description: `Plugin ${name}`,
      version: '1.0.0',
      urlPatterns: [`https://${name}.example.com/*`],
      tools: tools.map((t) => ({ name: t, description: `${t} of ${name}`, inputSchema: { type: 'object', properties: {} } })),
    }),
  );
  writeFileSync(join(dir, 'dist', 'adapter.js'), `(() => { /* ${name} ${tools.join(',')} */ })();\n`);
  return dir;
}

async function listed(): Promise<string[]> {
  return (await client.listTools()).tools.map((t) => t.name).filter((n) => n.startsWith('alpha_') || n.startsWith('beta_'));
}

async function reload(): Promise<void> {
  const r = await fetch(`${srv.url}/reload`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: '{}' });
  expect(r.status).toBe(200);
  await r.text();
}

beforeAll(async () => {
  const alpha = writePlugin('alpha', ['ping']);
  writeTestConfig(configDir, { localPlugins: [alpha] });
  srv = await startTestServer({ configDir });
  client = await connectMcp(srv.url, srv.secret);
});

afterAll(async () => {
  await client?.close().catch(() => {});
  await srv?.stop();
  rmSync(work, { recursive: true, force: true });
});

test('a plugin added, rebuilt with other tools, then removed changes tools/list in the same session', async () => {
  expect(await listed()).toEqual(['alpha_ping']);
  // Asked again with no change: the cached payload, same content.
  expect(await listed()).toEqual(['alpha_ping']);

  const beta = writePlugin('beta', ['pong']);
  await addLocalPlugin(configDir, beta);
  await reload();
  expect((await listed()).sort()).toEqual(['alpha_ping', 'beta_pong']);

  writePlugin('beta', ['pong', 'volley']);
  await reload();
  expect((await listed()).sort()).toEqual(['alpha_ping', 'beta_pong', 'beta_volley']);

  await removeLocalPlugin(configDir, 'beta');
  await reload();
  expect(await listed()).toEqual(['alpha_ping']);
});

test('REST GET /tools follows the same changes', async () => {
  const rest = async () =>
    ((await (await fetch(`${srv.url}/tools`, { headers: srv.auth })).json()) as { tools: { name: string }[] }).tools
      .map((t) => t.name)
      .filter((n) => n.startsWith('alpha_') || n.startsWith('beta_'))
      .sort();
  expect(await rest()).toEqual(['alpha_ping']);
  await addLocalPlugin(configDir, writePlugin('beta', ['pong']));
  await reload();
  expect(await rest()).toEqual(['alpha_ping', 'beta_pong']);
  expect((await listed()).sort()).toEqual(['alpha_ping', 'beta_pong']);
  await removeLocalPlugin(configDir, 'beta');
  await reload();
  expect(await rest()).toEqual(['alpha_ping']);
});
