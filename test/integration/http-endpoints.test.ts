/**
 * The HTTP endpoints of a real server on port 0: middleware order and rejections,
 * /health, /ws-info, /audit, /reload, /extension/reload, 404/405.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startTestServer, type TestServer } from '../harness/server.ts';
import { rawHttp } from './raw-http.ts';
import { BROWSER_TOOL_NAMES } from '../../server/tools/browser-catalog.ts';
import { VERSION } from '../../server/version.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  await srv?.stop();
});

const json = async (r: Response) => ({ status: r.status, body: (await r.json()) as any, headers: r.headers });

describe('host guard', () => {
  test('foreign Host is refused with 403 before auth', async () => {
    for (const host of ['evil.example', 'evil.example:9515', '127.0.0.1.nip.io', 'localhost.evil.example']) {
      const r = await rawHttp(srv.port, 'GET', '/health', { Host: host, Authorization: `Bearer ${srv.secret}` });
      expect(r.status).toBe(403);
      expect(JSON.parse(r.body).error.code).toBe('forbidden_host');
    }
  });

  test('loopback Host names pass', async () => {
    for (const host of ['localhost', `localhost:${srv.port}`, `127.0.0.1:${srv.port}`, '[::1]', `[::1]:${srv.port}`]) {
      const r = await rawHttp(srv.port, 'GET', '/health', { Host: host });
      expect(r.status).toBe(200);
      expect(JSON.parse(r.body)).toEqual({ status: 'ok' });
    }
  });

  test('guards apply to WebSocket upgrades and unknown paths too', async () => {
    const ws = await rawHttp(srv.port, 'GET', '/ws', {
      Host: 'evil.example',
      Upgrade: 'websocket',
      'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
      'Sec-WebSocket-Version': '13',
      'Sec-WebSocket-Protocol': `opentabs, ${srv.secret}`,
    });
    expect(ws.status).toBe(403);
    const unknown = await rawHttp(srv.port, 'GET', '/no-such-thing', { Host: 'evil.example' });
    expect(unknown.status).toBe(403);
  });
});

describe('origin guard', () => {
  test('a web page Origin is refused (403), with no CORS headers', async () => {
    for (const origin of ['https://evil.example', 'http://localhost:3000', 'null', `http://127.0.0.1:${srv.port}`]) {
      const r = await fetch(`${srv.url}/health`, { headers: { Origin: origin, ...srv.auth } });
      expect(r.status).toBe(403);
      expect(((await r.json()) as any).error.code).toBe('forbidden_origin');
      expect(r.headers.get('access-control-allow-origin')).toBeNull();
    }
  });

  test('chrome-extension:// Origin is accepted, still without CORS headers', async () => {
    const r = await fetch(`${srv.url}/health`, { headers: { Origin: 'chrome-extension://abcdefghijklmnopabcdefghijklmnop', ...srv.auth } });
    expect(r.status).toBe(200);
    expect(((await r.json()) as any).version).toBe(VERSION);
    expect(r.headers.get('access-control-allow-origin')).toBeNull();
  });

  test('a CORS preflight gets no permissive answer', async () => {
    const r = await fetch(`${srv.url}/reload`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://evil.example', 'Access-Control-Request-Method': 'POST' },
    });
    expect(r.status).toBe(403);
    expect(r.headers.get('access-control-allow-origin')).toBeNull();
    expect(r.headers.get('access-control-allow-methods')).toBeNull();
  });
});

describe('bearer auth', () => {
  const protectedRoutes: [string, string][] = [
    ['GET', '/ws-info'],
    ['GET', '/audit'],
    ['POST', '/reload'],
    ['POST', '/extension/reload'],
    ['POST', '/plugin-settings'],
  ];

  test('missing token: 401 with WWW-Authenticate: Bearer on every protected route', async () => {
    for (const [method, path] of protectedRoutes) {
      const r = await fetch(`${srv.url}${path}`, { method });
      expect(r.status).toBe(401);
      expect(r.headers.get('www-authenticate')).toBe('Bearer');
      const body = (await r.json()) as any;
      expect(body.error.code).toBe('unauthorized');
      expect(body.error.message).toContain('Authorization');
      // The hint names this server's real auth.json (a temp config dir here), not ~/.opentabs.
      expect(body.error.message).toContain(`${srv.configDir}/extension/auth.json`);
    }
  });

  test('the secret without the word Bearer: the 401 says the header is malformed, not that the secret is wrong, and does not echo it', async () => {
    for (const [path, authorization] of [['/audit', srv.secret], ['/health', srv.secret], ['/audit', `Token ${srv.secret}`], ['/tools', `Bearer:${srv.secret}`]] as const) {
      const r = await fetch(`${srv.url}${path}`, { headers: { Authorization: authorization } });
      expect(r.status).toBe(401);
      const text = await r.text();
      expect(text).not.toContain(srv.secret);
      expect(JSON.parse(text).error.message).toContain('Malformed Authorization header: expected "Authorization: Bearer <secret>"');
    }
    const wrong = await fetch(`${srv.url}/audit`, { headers: { Authorization: `Bearer ${'0'.repeat(64)}` } });
    expect(((await wrong.json()) as any).error.message).toContain('does not match the server secret');
  });

  test('wrong, truncated, longer or non-Bearer tokens: 401', async () => {
    const bad = [`Bearer ${'0'.repeat(64)}`, `Bearer ${srv.secret.slice(1)}`, `Bearer ${srv.secret}0`, `Basic ${srv.secret}`, srv.secret, 'Bearer'];
    for (const authorization of bad) {
      const r = await fetch(`${srv.url}/audit`, { headers: { Authorization: authorization } });
      expect(r.status).toBe(401);
      expect(r.headers.get('www-authenticate')).toBe('Bearer');
    }
  });

  test('auth reads the secret at request time (rotation on reload)', async () => {
    const old = srv.ctx.secret;
    srv.ctx.secret = 'f'.repeat(64);
    try {
      expect((await fetch(`${srv.url}/ws-info`, { headers: srv.auth })).status).toBe(401);
      expect((await fetch(`${srv.url}/ws-info`, { headers: { Authorization: `Bearer ${'f'.repeat(64)}` } })).status).toBe(200);
    } finally {
      srv.ctx.secret = old;
    }
  });
});

describe('/health', () => {
  test('without a token: only the status', async () => {
    const r = await json(await fetch(`${srv.url}/health`));
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: 'ok' });
  });

  test('with a wrong token: 401 (a stale secret is reported, not silently downgraded)', async () => {
    const r = await fetch(`${srv.url}/health`, { headers: { Authorization: `Bearer ${'1'.repeat(64)}` } });
    expect(r.status).toBe(401);
  });

  test('with the token: every reference field, with the right types', async () => {
    const { status, body } = await json(await fetch(`${srv.url}/health`, { headers: srv.auth }));
    expect(status).toBe(200);
    const keys = [
      'status', 'version', 'sdkVersion', 'mode', 'extensionConnected', 'extensionConnections', 'mcpClients', 'plugins',
      'pluginDetails', 'failedPlugins', 'toolCount', 'browserToolCount', 'pluginToolCount', 'browserToolNames',
      'disabledBrowserTools', 'skipPermissions', 'uptime', 'reloadCount', 'lastReloadTimestamp', 'lastReloadDurationMs',
      'stateSchemaVersion', 'discoveryErrors', 'fileWatcher', 'auditSummary',
    ];
    for (const k of keys) expect(body).toHaveProperty(k);
    expect(body.status).toBe('ok');
    expect(body.version).toBe(VERSION);
    expect(body.mode).toBe('production');
    expect(body.extensionConnected).toBe(false);
    expect(body.extensionConnections).toBe(0);
    expect(body.mcpClients).toBe(0);
    expect(body.plugins).toBe(0);
    expect(body.pluginDetails).toEqual([]);
    expect(body.failedPlugins).toEqual([]);
    expect(body.browserToolNames).toEqual(BROWSER_TOOL_NAMES);
    expect(body.browserToolCount).toBe(BROWSER_TOOL_NAMES.length);
    expect(body.pluginToolCount).toBe(0);
    expect(body.toolCount).toBe(body.browserToolCount + body.pluginToolCount);
    expect(Array.isArray(body.disabledBrowserTools)).toBe(true);
    for (const n of body.disabledBrowserTools) expect(BROWSER_TOOL_NAMES).toContain(n);
    expect(typeof body.skipPermissions).toBe('boolean');
    expect(Number.isInteger(body.uptime) && body.uptime >= 0).toBe(true);
    expect(typeof body.stateSchemaVersion).toBe('number');
    expect(body.fileWatcher).toEqual({ watchedPlugins: 0, pendingPlugins: 0, lastPollAt: null, pollDetections: 0 });
    expect(body.auditSummary).toEqual({
      totalInvocations: 0, successCount: 0, failureCount: 0, last24h: { total: 0, success: 0, failure: 0 }, avgDurationMs: 0,
    });
  });

  test('disabledBrowserTools follows config permissions', async () => {
    const name = BROWSER_TOOL_NAMES[0];
    await srv.ctx.config.setToolPermission('browser', name, 'off');
    srv.ctx.catalog.rebuild();
    try {
      const { body } = await json(await fetch(`${srv.url}/health`, { headers: srv.auth }));
      expect(body.disabledBrowserTools).toContain(name);
      expect(body.browserToolNames).toContain(name);
    } finally {
      await srv.ctx.config.update((d) => {
        delete d.permissions.browser;
      });
      srv.ctx.catalog.rebuild();
    }
  });
});

describe('/ws-info', () => {
  test('returns the WebSocket URL on the bound port', async () => {
    const r = await json(await fetch(`${srv.url}/ws-info`, { headers: srv.auth }));
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ wsUrl: `ws://127.0.0.1:${srv.port}/ws` });
  });
});

describe('/audit', () => {
  test('newest first, default limit 50, filters, and the summary in /health', async () => {
    for (let i = 0; i < 60; i++) {
      await srv.ctx.audit.record({
        timestamp: new Date().toISOString(),
        tool: i % 2 ? 'browser_list_tabs' : 'demo_ping',
        plugin: i % 2 ? 'browser' : 'demo',
        success: i % 3 !== 0,
        durationMs: i,
        ...(i % 3 === 0 ? { error: { code: 'tool_error', message: `failed ${i}` } } : {}),
      });
    }
    const all = await json(await fetch(`${srv.url}/audit`, { headers: srv.auth }));
    expect(all.status).toBe(200);
    expect(all.body.length).toBe(50);
    expect(all.body[0].durationMs).toBe(59);
    expect(all.body[49].durationMs).toBe(10);

    const few = await json(await fetch(`${srv.url}/audit?limit=3&plugin=demo&success=false`, { headers: srv.auth }));
    expect(few.body.map((e: any) => e.durationMs)).toEqual([54, 48, 42]);
    expect(few.body[0].error).toEqual({ code: 'tool_error', message: 'failed 54' });

    const byTool = await json(await fetch(`${srv.url}/audit?tool=browser_list_tabs&limit=500`, { headers: srv.auth }));
    expect(byTool.body.length).toBe(30);
    expect(byTool.body.every((e: any) => e.tool === 'browser_list_tabs')).toBe(true);

    const ok = await json(await fetch(`${srv.url}/audit?success=true&limit=500`, { headers: srv.auth }));
    expect(ok.body.length).toBe(40);

    const h = await json(await fetch(`${srv.url}/health`, { headers: srv.auth }));
    expect(h.body.auditSummary.totalInvocations).toBe(60);
    expect(h.body.auditSummary.successCount).toBe(40);
    expect(h.body.auditSummary.failureCount).toBe(20);
    expect(h.body.auditSummary.last24h).toEqual({ total: 60, success: 40, failure: 20 });
  });

  test('bad query values: 400 naming the parameter', async () => {
    const cases: [string, string][] = [
      ['limit=0', 'limit'],
      ['limit=501', 'limit'],
      ['limit=abc', 'limit'],
      ['limit=-1', 'limit'],
      ['limit=1.5', 'limit'],
      ['limit=', 'limit'],
      ['limit=1&limit=2', 'limit'],
      ['success=yes', 'success'],
      ['success=', 'success'],
      ['plugin=', 'plugin'],
      ['tool=', 'tool'],
    ];
    for (const [q, param] of cases) {
      const r = await json(await fetch(`${srv.url}/audit?${q}`, { headers: srv.auth }));
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe('invalid_arguments');
      expect(r.body.error.message).toContain(`"${param}"`);
    }
  });
});

describe('/reload', () => {
  test('rediscovers and reports; concurrent calls share one reload', async () => {
    const before = srv.ctx.reloadCount;
    const [a, b] = await Promise.all([
      json(await fetch(`${srv.url}/reload`, { method: 'POST', headers: srv.auth })),
      json(await fetch(`${srv.url}/reload`, { method: 'POST', headers: srv.auth })),
    ]);
    for (const r of [a, b]) {
      expect(r.status).toBe(200);
      expect(r.body.ok).toBe(true);
      expect(r.body.plugins).toBe(0);
      expect(typeof r.body.durationMs).toBe('number');
    }
    // Either both requests joined one run, or they arrived one after the other.
    expect(srv.ctx.reloadCount - before).toBeGreaterThanOrEqual(1);
    expect(srv.ctx.reloadCount - before).toBeLessThanOrEqual(2);
    const direct = await Promise.all([srv.ctx.reload(), srv.ctx.reload(), srv.ctx.reload()]);
    expect(direct[0]).toBe(direct[1]);
    expect(direct[1]).toBe(direct[2]);
    const h = await json(await fetch(`${srv.url}/health`, { headers: srv.auth }));
    expect(h.body.reloadCount).toBe(srv.ctx.reloadCount);
    expect(h.body.lastReloadTimestamp).toBeGreaterThan(0);
  });
});

describe('/extension/reload', () => {
  test('503 when no extension is connected', async () => {
    const r = await json(await fetch(`${srv.url}/extension/reload`, { method: 'POST', headers: srv.auth }));
    expect(r.status).toBe(503);
    expect(r.body.error.code).toBe('extension_not_connected');
  });
});

describe('unknown paths and wrong methods', () => {
  test('unknown path: JSON 404', async () => {
    for (const path of ['/nope', '/health/', '/audit/x', '/tools/x/y/z/call', '/%2e%2e/etc/passwd']) {
      const r = await fetch(`${srv.url}${path}`, { headers: srv.auth });
      expect(r.status).toBe(404);
      expect(r.headers.get('content-type')).toContain('application/json');
      expect(((await r.json()) as any).error.code).toBe('not_found');
    }
  });

  test('known path, wrong method: JSON 405 with Allow', async () => {
    const cases: [string, string, string][] = [
      ['POST', '/health', 'GET'],
      ['DELETE', '/audit', 'GET'],
      ['GET', '/reload', 'POST'],
      ['PUT', '/plugin-settings', 'POST'],
      ['GET', '/extension/reload', 'POST'],
    ];
    for (const [method, path, allow] of cases) {
      const r = await fetch(`${srv.url}${path}`, { method, headers: srv.auth });
      expect(r.status).toBe(405);
      expect(r.headers.get('allow')?.split(', ')).toContain(allow);
      const body = (await r.json()) as any;
      expect(body.error.code).toBe('method_not_allowed');
    }
  });
});

describe('error bodies', () => {
  test('every error names a category, also where the route gave none (unknown plugin logs, unknown path)', async () => {
    const cases: [string, string, Record<string, string>, string][] = [
      ['GET', '/plugins/no-such-plugin/logs', srv.auth, 'not_found'],
      ['GET', '/no/such/endpoint', srv.auth, 'not_found'],
      ['POST', '/extension/reload', srv.auth, 'internal'],
      ['GET', '/audit', { Authorization: 'Bearer nope' }, 'auth'],
    ];
    for (const [method, path, headers, category] of cases) {
      const r = await fetch(`${srv.url}${path}`, { method, headers });
      expect(r.status).toBeGreaterThanOrEqual(400);
      const body = (await r.json()) as { error: { code: string; category?: string } };
      expect({ path, category: body.error.category }).toEqual({ path, category });
    }
  });
});
