/**
 * A plugin whose patterns cover every site needs the user's consent (--allow-broad-patterns) and
 * runs nowhere without it. Two patterns covered many unrelated sites without asking: a public
 * suffix written with the trailing dot of a fully qualified name (`*.com.`, every .com site as its
 * browser address `bank.com.`), and a wildcard over IP addresses (`*.0.1`: 127.0.0.1, 10.0.0.1,
 * 192.168.0.1 … every local server and router of those numbers). Both now count as broad. So do
 * file patterns over a whole drive or every user's folder (`file:///C:/*`, `file:///home/*`,
 * `file:///Users/*`): only `file:///*` did, though each covers every file a user has.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestServer } from '../harness/server.ts';
import { startPluginServer, writeTestPlugin } from '../harness/fake-extension.ts';
import { runCli } from './cli-support.ts';
import { isBroadPattern } from '../../server/protocol/plugin-manifest.ts';
import { matchesPattern } from '../../server/protocol/match-pattern.ts';

setDefaultTimeout(120_000);

let srv: TestServer;
const work = mkdtempSync(join(tmpdir(), 'opentabs-s23c-broad-'));

beforeAll(async () => {
  srv = await startPluginServer({});
});
afterAll(async () => {
  await srv?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('broad patterns in other spellings', () => {
  test('they match unrelated sites, and each counts as broad; a named site still does not', () => {
    expect(matchesPattern('https://bank.com./login', 'https://*.com./*')).toBe(true);
    expect(matchesPattern('http://192.168.0.1/admin', 'http://*.0.1/*')).toBe(true);
    expect(matchesPattern('http://127.0.0.1:8888/tree', 'http://*.0.1/*')).toBe(true);
    for (const p of ['https://*.com./*', 'https://*.co.uk./*', '*://*.com.:443/*', 'http://*.0.1/*', 'http://*.0.0.1/*', '*://*.1.1:80/*']) {
      expect([p, isBroadPattern(p)]).toEqual([p, true]);
    }
    for (const p of ['https://*.example.com./*', 'https://app.example.com./*', 'http://192.168.0.1/*', 'http://127.0.0.1:9847/*', 'https://*.bbc.co.uk./*']) {
      expect([p, isBroadPattern(p)]).toEqual([p, false]);
    }
  });

  test("file patterns over a drive or every user's folder are broad; one user's folder is not", () => {
    expect(matchesPattern('file:///C:/Users/me/Documents/taxes.html', 'file:///C:/*')).toBe(true);
    expect(matchesPattern('file:///home/me/notes.html', 'file:///home/*')).toBe(true);
    for (const p of ['file:///*', 'file:///C:/*', 'file:///d:/*', 'file:///C:/Users/*', 'file:///home/*', 'file:///Users/*', 'file:///h*', 'file:///home/m*/*']) {
      expect([p, isBroadPattern(p)]).toEqual([p, true]);
    }
    for (const p of ['file:///home/me/*', 'file:///C:/Users/me/*', 'file:///Users/me/notes/*', 'file:///home/me/notes.html', 'file:///tmp/project/*']) {
      expect([p, isBroadPattern(p)]).toEqual([p, false]);
    }
  });

  test('`opentabs plugin add` refuses them without --allow-broad-patterns', async () => {
    const configPath = join(srv.configDir, 'config.json');
    for (const [name, pattern] of [['dotcom', 'https://*.com./*'], ['lan', 'http://*.0.1/*'], ['drive', 'file:///C:/*'], ['homes', 'file:///home/*']] as const) {
      const dir = writeTestPlugin(work, name, [{ name: 'ping' }], undefined, { urlPatterns: [pattern] });
      const before = readFileSync(configPath, 'utf8');
      const refused = await runCli(['plugin', 'add', dir, '--port', String(srv.port)], { configDir: srv.configDir });
      expect([pattern, refused.code]).not.toEqual([pattern, 0]);
      expect(refused.stderr).toContain(pattern);
      expect(refused.stderr).toContain('--allow-broad-patterns');
      expect(readFileSync(configPath, 'utf8')).toBe(before);
    }
  });
});
