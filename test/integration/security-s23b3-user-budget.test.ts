/**
 * An agent holding the client token uses up the clients' share of new MCP sessions (initialize,
 * the legacy /sse) and of subscriptions/listen streams. A request with the secret (the user's CLI)
 * still gets a session and a stream, from a budget of its own; the agent's refusal names the limit
 * and when to retry. `opentabs logs --follow` (the user's command) opens its session from that
 * budget too: its initialize carries the secret, every later request the client token.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { MAX_LISTEN_STREAMS, MCP_SESSION_RATE_LIMIT } from '../../server/limits.ts';
import { startTestServer, type TestServer } from '../harness/server.ts';
import { MAIN, ROOT, cliEnv } from './cli-support.ts';

// Opens 64 streams on a shared machine: room, not a speed assertion.
setDefaultTimeout(120_000);

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  await srv?.stop();
});

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

function initialize(auth: Record<string, string>): Promise<Response> {
  return fetch(`${srv.url}/mcp`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'budget', version: '1' } } }),
  });
}

function listen(auth: Record<string, string>, id: string | number, signal?: AbortSignal): Promise<Response> {
  return fetch(`${srv.url}/mcp`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'subscriptions/listen' },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'subscriptions/listen', params: { _meta: META, notifications: { toolsListChanged: true } } }),
    signal,
  });
}

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1500; i++) {
    if (cond()) return;
    await Bun.sleep(20);
  }
  throw new Error(`never happened: ${what}`);
}

test('the client token uses up the new-session limit; the secret still opens a session', async () => {
  for (let i = 0; i < MCP_SESSION_RATE_LIMIT.max; i++) {
    const res = await initialize(srv.client);
    expect(res.status).toBe(200);
    await res.text();
  }
  const refused = await initialize(srv.client);
  expect(refused.status).toBe(429);
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  const body = await refused.json();
  expect(body.error.message).toContain(`at most ${MCP_SESSION_RATE_LIMIT.max} per 60 s`);
  expect(body.error.message).toMatch(/Retry in \d+ s/);
  // The legacy transport counts against the same limit.
  const legacy = await fetch(`${srv.url}/sse`, { headers: { ...srv.client, accept: 'text/event-stream' } });
  expect(legacy.status).toBe(429);
  await legacy.text();

  const user = await initialize(srv.auth);
  expect(user.status).toBe(200);
  expect(user.headers.get('mcp-session-id')).toBeTruthy();
  await user.text();
  const ac = new AbortController();
  try {
    const userLegacy = await fetch(`${srv.url}/sse`, { headers: { ...srv.auth, accept: 'text/event-stream' }, signal: ac.signal });
    expect(userLegacy.status).toBe(200);
  } finally {
    ac.abort();
  }
});

test('the client token holds every listen stream; the secret still opens one', async () => {
  const acs: AbortController[] = [];
  try {
    for (let i = 0; i < MAX_LISTEN_STREAMS; i++) {
      const ac = new AbortController();
      acs.push(ac);
      expect((await listen(srv.client, i, ac.signal)).status).toBe(200);
    }
    const refused = await listen(srv.client, 'one-more');
    expect(refused.status).toBe(429);
    const body = await refused.json();
    expect(body.error.message).toContain(`at most ${MAX_LISTEN_STREAMS} at once`);
    expect(body.error.message).toContain('Retry once one of them ends');

    const ac = new AbortController();
    acs.push(ac);
    const user = await listen(srv.auth, 'user', ac.signal);
    expect(user.status).toBe(200);
    expect(user.headers.get('content-type')).toContain('text/event-stream');
  } finally {
    for (const ac of acs) ac.abort();
  }
  await until(() => srv.ctx.mcp.listens.count + srv.ctx.mcp.userListens.count === 0, 'every stream closed');
});

test('opentabs logs --follow still opens its session when the client token has used up the limit', async () => {
  const own = await startTestServer();
  let follower: ReturnType<typeof Bun.spawn> | undefined;
  try {
    for (let i = 0; i < MCP_SESSION_RATE_LIMIT.max; i++) {
      const res = await fetch(`${own.url}/mcp`, {
        method: 'POST',
        headers: { ...own.client, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'agent', version: '1' } } }),
      });
      expect(res.status).toBe(200);
      await res.text();
    }
    // The follower's session is the one past the clients' limit; a refused one is printed to stderr.
    follower = Bun.spawn([process.execPath, MAIN, 'logs', '--follow', '--plugin', 'notes', '--port', String(own.port)], {
      cwd: ROOT,
      env: cliEnv(own.configDir),
      stdin: 'ignore',
      stdout: 'ignore',
      stderr: 'pipe',
    });
    let stderr = '';
    void (async () => {
      const decoder = new TextDecoder();
      const reader = (follower.stderr as ReadableStream<Uint8Array>).getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        stderr += decoder.decode(value);
      }
    })();
    const f = follower;
    await until(() => own.ctx.mcp.count > MCP_SESSION_RATE_LIMIT.max || stderr.includes('unavailable') || f.exitCode !== null, 'the follower to open its session or give up');
    expect(stderr).not.toContain('Too many new MCP sessions');
    expect(own.ctx.mcp.count).toBe(MCP_SESSION_RATE_LIMIT.max + 1);
  } finally {
    follower?.kill('SIGKILL');
    await follower?.exited;
    await own.stop();
  }
});
