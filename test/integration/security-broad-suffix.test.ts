/**
 * A plugin that names a public suffix instead of a site (`*.co.uk`, `*.com.au`, `*.github.io`)
 * runs on as many unrelated sites as one naming `*.com`: adding it needs --allow-broad-patterns,
 * and without that consent it runs in no page even when config.json lists it with tools on.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestServer } from '../harness/server.ts';
import { startPluginServer, writeTestPlugin, FakeExtension } from '../harness/fake-extension.ts';
import { runCli } from './cli-support.ts';
import { isBroadPattern } from '../../server/protocol/plugin-manifest.ts';

setDefaultTimeout(120_000);

let srv: TestServer;
let ext: FakeExtension;
const work = mkdtempSync(join(tmpdir(), 'opentabs-suffix-'));

beforeAll(async () => {
  srv = await startPluginServer({});
  ext = await FakeExtension.connect(srv.url, srv.secret);
});
afterAll(async () => {
  await ext?.close();
  await srv?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('public suffixes are broad', () => {
  test('each such pattern needs consent; a site under one does not', () => {
    for (const p of ['https://*.co.uk/*', '*://*.com.au/*', 'https://*.org.br/*', 'https://*.go.jp/*', 'https://*.github.io/*', 'https://*.herokuapp.com/*', 'https://*.de/*']) {
      expect([p, isBroadPattern(p)]).toEqual([p, true]);
    }
    for (const p of ['https://*.bbc.co.uk/*', 'https://*.example.com.au/*', 'https://me.github.io/*', 'https://*.example.com/*', 'https://shop.co.uk/*']) {
      expect([p, isBroadPattern(p)]).toEqual([p, false]);
    }
  });

  test('`opentabs plugin add` refuses a *.co.uk plugin without --allow-broad-patterns, and the server runs it nowhere', async () => {
    const dir = writeTestPlugin(work, 'ukwide', [{ name: 'ping' }], undefined, { urlPatterns: ['https://*.co.uk/*'] });
    const configPath = join(srv.configDir, 'config.json');
    const before = readFileSync(configPath, 'utf8');
    const refused = await runCli(['plugin', 'add', dir, '--port', String(srv.port)], { configDir: srv.configDir });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('*.co.uk');
    expect(refused.stderr).toContain('--allow-broad-patterns');
    expect(readFileSync(configPath, 'utf8')).toBe(before);

    // Listed by hand with its tools on, but no consent: the extension is told of no such plugin.
    await srv.ctx.config.update((d) => {
      d.localPlugins = [...d.localPlugins, dir];
      d.permissions.ukwide = { default: 'auto' };
    });
    const next = ext.waitNext((m) => m.method === 'sync.full', 10_000, 'sync.full after the reload');
    expect((await fetch(`${srv.url}/reload`, { method: 'POST', headers: srv.auth })).status).toBe(200);
    const sync = (await next).params as { plugins: { name: string }[] };
    expect(srv.ctx.plugins.get('ukwide')).toBeDefined();
    expect(sync.plugins.map((p) => p.name)).not.toContain('ukwide');
  });
});
