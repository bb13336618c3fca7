/**
 * `opentabs logs --follow --plugin P` reads the plugin's live log lines over an MCP session, and
 * its MCP client reopens the session's event stream by itself when the stream ends: when the server
 * stops, about a second later, to whatever then holds the port. It checked the server once, at the
 * start, and every later request carried the secret of auth.json: another user's process that took
 * the port as the server stopped (`opentabs stop`, a restart) was sent the secret. The follower now
 * checks the process on the port before every request, as the stdio bridge does, and sends the
 * client token (live log lines are MCP, which the client token reaches), never the secret.
 */
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { join } from 'node:path';
import type { Server, Subprocess } from 'bun';
import { startTestServer, type TestServer } from '../harness/server.ts';
import { MAIN, ROOT, cliEnv, removeDir, tempDir } from './cli-support.ts';

setDefaultTimeout(120_000);

let srv: TestServer | undefined;
let follower: Subprocess<'ignore', 'pipe', 'pipe'> | undefined;
let squatter: Server<unknown> | undefined;
const root = tempDir('opentabs-follow-');

afterAll(async () => {
  follower?.kill('SIGKILL');
  await follower?.exited;
  squatter?.stop(true);
  await srv?.stop();
  removeDir(root);
});

async function until(fn: () => boolean, what: string, tries = 1500): Promise<void> {
  for (let i = 0; i < tries && !fn(); i++) await Bun.sleep(20);
  if (!fn()) throw new Error(`timed out waiting for ${what}`);
}

test('a process that takes the port after the server stops is not sent the secret by a follower', async () => {
  // The config dir outlives the server, as the user's does: the follower still reads its files.
  srv = await startTestServer({ configDir: join(root, 'state') });
  const { port, secret, configDir } = srv;
  const requests: { path: string; authorization: string }[] = [];
  follower = Bun.spawn([process.execPath, MAIN, 'logs', '--follow', '--plugin', 'notes', '--port', String(port)], {
    cwd: ROOT,
    env: cliEnv(configDir),
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  // Following: its session's event stream is open.
  await until(() => srv!.ctx.mcp.count === 1, 'the follower to open its MCP session');

  // The server stops; another process takes the port at once and records what it is sent.
  await srv.stop();
  srv = undefined;
  squatter = Bun.serve({
    hostname: '127.0.0.1',
    port,
    fetch(req) {
      requests.push({ path: new URL(req.url).pathname, authorization: req.headers.get('authorization') ?? '' });
      return new Response(JSON.stringify({ error: { code: 'not_found', message: 'Not found' } }), { status: 404, headers: { 'content-type': 'application/json' } });
    },
  });
  // The follower's client tries its stream again (the first retry comes after a second, the
  // second after 1.5 more); the check it runs first (GET /ws-info) comes in its place.
  await until(() => requests.length >= 2, 'the follower to reach the port again');
  for (const r of requests) expect(r.authorization).not.toContain(secret);
  expect(requests.filter((r) => r.path === '/mcp')).toEqual([]);
});
