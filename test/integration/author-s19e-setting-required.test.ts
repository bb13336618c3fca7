/**
 * A call of a plugin whose required setting is not set is refused by the server before anyone is
 * asked (no approval card for a call that cannot run), naming the setting with a configure
 * command that runs as printed; once set, the call goes on to the approval step.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../harness/server.ts';
import { cliEnv, removeDir, tempDir } from './cli-support.ts';

setDefaultTimeout(120_000);

let root: string;
let srv: TestServer;

beforeAll(async () => {
  root = tempDir('opentabs-author-s19e-setting-');
  const dir = join(root, 'opentabs-plugin-shop');
  mkdirSync(join(dir, 'dist'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'opentabs-plugin-shop', version: '1.0.0' }));
  writeFileSync(
    join(dir, 'dist', 'tools.json'),
    JSON.stringify({
      name: 'shop', displayName: 'Shop', description: 'test', version: '1.0.0', sdkVersion: '0.1.0',
      urlPatterns: ['http://127.0.0.1:45996/*'], excludePatterns: [],
      configSchema: { region: { type: 'select', label: 'Region', options: ['eu', 'us'], required: true } },
      tools: [{ name: 'list_orders', description: 'Orders', inputSchema: { type: 'object', properties: {} } }],
    }),
  );
  writeFileSync(join(dir, 'dist', 'adapter.js'), '(() => {})();\n');
  const cfg = join(root, 'state');
  mkdirSync(cfg, { recursive: true });
  writeFileSync(join(cfg, 'config.json'), JSON.stringify({ schemaVersion: 1, localPlugins: [dir], permissions: { shop: { default: 'ask' } }, pluginSettings: {} }));
  srv = await startTestServer({ configDir: cfg });
});
afterAll(async () => {
  await srv?.stop();
  removeDir(root);
});

const call = () => fetch(`${srv.url}/tools/shop_list_orders/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: {} }) });

test('refused before asking, named, with a command that sets it as printed', async () => {
  const r = await call();
  expect(r.status).toBe(400);
  const body = (await r.json()) as { error: { code: string; category: string; message: string } };
  expect(body.error).toMatchObject({ code: 'setting_required', category: 'validation' });
  expect(body.error.message).toContain('shop_list_orders did not run: the shop plugin\'s setting "region" (Region) is required and not set, one of eu, us.');
  const pending = (await (await fetch(`${srv.url}/approvals`, { headers: srv.auth })).json()) as { approvals: unknown[] };
  expect(pending.approvals).toEqual([]);

  const command = /`([^`]*plugin configure shop region=eu)`/.exec(body.error.message)?.[1];
  expect(command).toBeDefined();
  // The server was given its config dir as an option, not in its environment: the shell names it.
  const proc = Bun.spawn(['sh', '-c', command!], { env: cliEnv(srv.configDir, { PORT: String(srv.port) }), stdout: 'pipe', stderr: 'pipe' });
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  expect(code).toBe(0);
  expect(out).toContain('Saved settings for shop: region="eu"');

  // Set: the call reaches the next step (no extension here, so it is refused for that instead).
  const again = (await (await call()).json()) as { error: { code: string } };
  expect(again.error.code).not.toBe('setting_required');
});
