/**
 * State across restarts of a real server on one config dir: secret file (0600, stable), config
 * keys preserved, audit file + rotation + ring refill, server.pid and server.log.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempConfigDir, removeDir, startTestServer } from '../harness/server.ts';

let dir: string;
beforeAll(() => {
  dir = makeTempConfigDir('opentabs-restart-');
});
afterAll(() => removeDir(dir));

const mode = (p: string) => statSync(p).mode & 0o777;
const ROTATE = 2048;

describe('state across restarts', () => {
  test('secret: created 0600 in a 0700 dir on first start, reused after restart', async () => {
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ fromTheFuture: { keep: true }, permissions: { browser: { tools: { browser_list_tabs: 'off' } } } }));
    const a = await startTestServer({ configDir: dir, limits: { auditRotateBytes: ROTATE } });
    let secretA: string;
    try {
      secretA = a.secret;
      expect(secretA).toMatch(/^[0-9a-f]{64}$/);
      const authPath = join(dir, 'extension', 'auth.json');
      expect(JSON.parse(readFileSync(authPath, 'utf8'))).toEqual({ secret: secretA });
      expect(mode(authPath)).toBe(0o600);
      for (const d of [dir, join(dir, 'extension'), join(dir, 'plugins')]) expect(mode(d)).toBe(0o700);
      expect(mode(join(dir, 'config.json'))).toBe(0o600);

      // server.pid while running.
      const pid = JSON.parse(readFileSync(join(dir, 'server.pid'), 'utf8'));
      expect(pid).toMatchObject({ pid: process.pid, port: a.port });

      // Config written through the store keeps keys this version does not know.
      await a.ctx.config.setPluginPermission('demo', 'auto');
      const cfg = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
      expect(cfg.fromTheFuture).toEqual({ keep: true });
      expect(cfg.permissions.demo.default).toBe('auto');
      expect(cfg.permissions.browser.tools.browser_list_tabs).toBe('off');

      // Audit: enough entries to rotate at least once.
      for (let i = 0; i < 40; i++) {
        await a.ctx.audit.record({ timestamp: new Date().toISOString(), tool: 'demo_ping', plugin: 'demo', success: i % 5 !== 0, durationMs: i });
      }
      expect(existsSync(join(dir, 'audit.log.1'))).toBe(true);
      expect(mode(join(dir, 'audit.log'))).toBe(0o600);
      expect(statSync(join(dir, 'audit.log')).size).toBeLessThanOrEqual(ROTATE);
    } finally {
      await a.stop();
    }
    expect(existsSync(join(dir, 'server.pid'))).toBe(false);

    const b = await startTestServer({ configDir: dir, limits: { auditRotateBytes: ROTATE } });
    try {
      expect(b.secret).toBe(secretA);
      const r = await fetch(`${b.url}/audit?limit=500`, { headers: b.auth });
      const entries = (await r.json()) as any[];
      // The ring refilled from audit.log + audit.log.1: newest first, contiguous, ending at 39.
      expect(entries[0].durationMs).toBe(39);
      expect(entries.length).toBeGreaterThan(10);
      expect(entries.map((e) => e.durationMs)).toEqual(Array.from({ length: entries.length }, (_, i) => 39 - i));
      const failed = (await (await fetch(`${b.url}/audit?limit=500&success=false`, { headers: b.auth })).json()) as any[];
      expect(failed.every((e) => e.durationMs % 5 === 0)).toBe(true);
      const h = (await (await fetch(`${b.url}/health`, { headers: b.auth })).json()) as any;
      expect(h.auditSummary.totalInvocations).toBe(entries.length);
      expect(h.disabledBrowserTools).toContain('browser_list_tabs');
    } finally {
      await b.stop();
    }

    // server.log: lifecycle lines for both runs, and never the secret.
    const log = readFileSync(join(dir, 'server.log'), 'utf8');
    const events = log.trim().split('\n').map((l) => JSON.parse(l).event);
    expect(events.filter((e) => e === 'listening').length).toBe(2);
    expect(events.filter((e) => e === 'stopped').length).toBe(2);
    expect(log).not.toContain(secretA);
    expect(mode(join(dir, 'server.log'))).toBe(0o600);
  });

  test('a request error is logged as one line without the secret', async () => {
    const s = await startTestServer({ configDir: dir });
    try {
      // Make a subsystem throw inside a handler: /reload's error path logs and answers JSON.
      const orig = s.ctx.plugins.discover.bind(s.ctx.plugins);
      (s.ctx.plugins as any).discover = async () => {
        throw new Error(`disk on fire near ${s.secret}`);
      };
      try {
        const r = await fetch(`${s.url}/reload`, { method: 'POST', headers: s.auth });
        expect(r.status).toBe(500);
        const body = (await r.json()) as any;
        expect(body.error.message).toContain('Reload failed');
      } finally {
        (s.ctx.plugins as any).discover = orig;
      }
    } finally {
      await s.stop();
    }
    const lines = readFileSync(join(dir, 'server.log'), 'utf8').trim().split('\n');
    const failure = lines.map((l) => JSON.parse(l)).find((l) => l.event === 'reload_failed');
    expect(failure).toBeDefined();
    expect(failure.error).toContain('disk on fire');
    expect(readFileSync(join(dir, 'server.log'), 'utf8')).not.toContain(JSON.parse(readFileSync(join(dir, 'extension', 'auth.json'), 'utf8')).secret);
  });
});

describe('listening', () => {
  test('a port already in use: a clear error naming the port, and the state stays usable', async () => {
    const a = await startTestServer();
    try {
      const other = makeTempConfigDir('opentabs-busy-');
      try {
        await expect(startTestServer({ configDir: other, port: a.port })).rejects.toThrow(new RegExp(`Port ${a.port} .*already in use`));
        const log = readFileSync(join(other, 'server.log'), 'utf8');
        expect(log).toContain('listen_failed');
        // The failed start released its files: a server on a free port starts on the same dir.
        const b = await startTestServer({ configDir: other });
        await b.stop();
      } finally {
        removeDir(other);
      }
    } finally {
      await a.stop();
    }
  });

  test('an invalid port is refused with a clear error before anything is written', async () => {
    const other = makeTempConfigDir('opentabs-badport-');
    try {
      for (const port of [-1, 65536, 1.5, Number.NaN]) {
        await expect(startTestServer({ configDir: other, port })).rejects.toThrow(/Invalid port/);
      }
      expect(existsSync(join(other, 'config.json'))).toBe(false);
    } finally {
      removeDir(other);
    }
  });
});
