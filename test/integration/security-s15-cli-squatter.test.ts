/**
 * A process of another user that took the OpenTabs port while OpenTabs was not running (or a
 * leftover port from a stopped server) answers GET /health exactly like OpenTabs. The CLI and
 * the stdio bridge used to send `Authorization: Bearer <secret>` to whatever answered, handing
 * that process the secret (and with it the user's browser). They now run the extension's
 * handshake first (GET /ws-info with a client nonce, server/protocol/handshake.ts) and send the
 * secret only to a process that proves it knows it.
 *
 * The squatter here copies a real server's /health answers byte for byte and either answers
 * /ws-info with a well-formed but bogus proof, or has no /ws-info at all. Every request it gets is
 * recorded: the secret must appear in none of them, and each command exits non-zero naming the port.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { notifyServerReload } from '../../plugins/tooling/reload.ts';
import { loadOrCreateSecret } from '../../server/state/secret.ts';
import { startTestServer, type TestServer } from '../harness/server.ts';
import { removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(120_000);

interface Recorded {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}

interface Squatter {
  port: number;
  requests: Recorded[];
  stop(): void;
}

let real: TestServer;
/** What the real server answers on GET /health without and with its bearer secret. */
let healthPublic: string;
let healthFull: string;
let configDir: string;
let secret: string;

function startSquatter(withWsInfo: boolean): Squatter {
  const requests: Recorded[] = [];
  const json = (text: string, status = 200) => new Response(text, { status, headers: { 'content-type': 'application/json' } });
  let port = 0;
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req): Promise<Response> {
      const url = new URL(req.url);
      requests.push({ method: req.method, path: url.pathname + url.search, headers: Object.fromEntries(req.headers), body: await req.text() });
      if (url.pathname === '/health') return json(req.headers.get('authorization') ? healthFull : healthPublic);
      if (url.pathname === '/ws-info' && withWsInfo) {
        // Well-formed, but the squatter cannot compute the HMAC without the secret.
        const hex = (n: number) => Array.from(crypto.getRandomValues(new Uint8Array(n)), (b) => b.toString(16).padStart(2, '0')).join('');
        const serverNonce = `${(Date.now() + 60_000).toString(16)}-${hex(16)}-${hex(32)}`;
        return json(JSON.stringify({ wsUrl: `ws://127.0.0.1:${port}/ws`, serverNonce, serverProof: hex(32), extensionConnected: true }));
      }
      if (url.pathname === '/tools') return json(JSON.stringify({ tools: [] }));
      return json(JSON.stringify({ error: { code: 'not_found', message: 'Not found' } }), 404);
    },
  });
  port = server.port as number;
  return { port, requests, stop: () => server.stop(true) };
}

beforeAll(async () => {
  real = await startTestServer();
  healthPublic = await (await fetch(`${real.url}/health`)).text();
  healthFull = await (await fetch(`${real.url}/health`, { headers: real.auth })).text();
  configDir = tempDir('opentabs-squatter-');
  secret = await loadOrCreateSecret(configDir);
});

afterAll(async () => {
  await real?.stop();
  if (configDir) removeDir(configDir);
});

const initialize = `${JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'squatter-test', version: '1' } },
})}\n`;

const commands: { name: string; args: string[]; stdin?: string }[] = [
  { name: 'status', args: ['status'] },
  { name: 'tool call', args: ['tool', 'call', 'browser_list_tabs'] },
  { name: 'tool list', args: ['tool', 'list'] },
  { name: 'mcp', args: ['mcp', '--no-start'], stdin: initialize },
];

for (const withWsInfo of [true, false]) {
  describe(`a squatter answering /health like OpenTabs, ${withWsInfo ? 'with a bogus /ws-info proof' : 'without /ws-info'}`, () => {
    let sq: Squatter;
    beforeAll(() => {
      sq = startSquatter(withWsInfo);
    });
    afterAll(() => sq?.stop());

    for (const c of commands) {
      test(`opentabs ${c.name} never sends it the secret and stops, naming the port`, async () => {
        const before = sq.requests.length;
        const r = await runCli([...c.args, '--port', String(sq.port)], { configDir, stdin: c.stdin, timeoutMs: 60_000 });
        const seen = sq.requests.slice(before);
        // The command did reach the squatter (so the check below means something) …
        expect(seen.length).toBeGreaterThan(0);
        // … and the secret is in no header, path or body it received.
        for (const req of seen) {
          expect(JSON.stringify(req)).not.toContain(secret);
          expect(req.headers.authorization).toBeUndefined();
        }
        expect(r.code).not.toBe(0);
        expect(r.stderr).toContain(`The process on port ${sq.port} is not this OpenTabs server`);
        expect(r.stderr).toContain('so the secret was not sent to it');
        expect(r.stderr).toContain(' start --port 0`');
        expect(r.stdout).not.toContain(secret);
      });
    }

    test('the plugin build\'s reload notification (server.pid names the port) skips it without sending the secret', async () => {
      const before = sq.requests.length;
      writeFileSync(join(configDir, 'server.pid'), JSON.stringify({ pid: process.pid, port: sq.port }));
      const reloaded = await notifyServerReload(configDir);
      rmSync(join(configDir, 'server.pid'));
      expect(reloaded).toBe(false);
      const seen = sq.requests.slice(before);
      expect(seen.length).toBeGreaterThan(0);
      for (const req of seen) expect(JSON.stringify(req)).not.toContain(secret);
    });
  });
}

describe('the real server', () => {
  test('still works: status and tool list with its own config dir', async () => {
    const status = await runCli(['status', '--port', String(real.port)], { configDir: real.configDir });
    expect(status.stderr).not.toContain('is not this OpenTabs server');
    expect(status.code).toBe(0);
    const list = await runCli(['tool', 'list', '--port', String(real.port)], { configDir: real.configDir });
    expect(list.code).toBe(0);
    expect(list.stdout).toContain('browser_list_tabs');
  });

  test('a real server of another config dir is not sent the secret either', async () => {
    const r = await runCli(['tool', 'list', '--port', String(real.port)], { configDir });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`The process on port ${real.port} is not this OpenTabs server: it could not prove it knows the secret`);
  });
});
