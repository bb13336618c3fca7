/**
 * Permissions off / ask / auto: plugin defaults, per-tool overrides, confirmation allow / deny /
 * alwaysAllow / timeout, validation before asking, no extension → immediate failure, skip
 * permissions (option and side panel toggle), and config.* requests rebuilding the catalog.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestServer } from '../harness/server.ts';
import { FakeExtension, startPluginServer } from '../harness/fake-extension.ts';

const TOOLS = [
  { name: 'read', inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'], additionalProperties: false } },
  { name: 'write' },
  { name: 'danger' },
];

let srv: TestServer;

const call = (s: TestServer, name: string, args: unknown = {}) =>
  fetch(`${s.url}/tools/${name}/call`, {
    method: 'POST',
    headers: { ...s.auth, 'content-type': 'application/json' },
    body: JSON.stringify({ arguments: args }),
  });

beforeAll(async () => {
  srv = await startPluginServer({
    plugins: [{ name: 'mail', tools: TOOLS }],
    // No plugin default: a new plugin's tools are `ask`. One tool explicitly off.
    permissions: { mail: { tools: { danger: 'off' } } },
    limits: { confirmationTimeoutMs: 300 },
  });
});

afterAll(async () => {
  await srv?.stop();
});

describe('permissions', () => {
  test('plugin tools default to ask; with no extension an ask call fails at once', async () => {
    expect(srv.ctx.catalog.current().get('mail_write')?.permission).toBe('ask');
    const res = await call(srv, 'mail_write');
    expect(res.status).toBe(503);
    expect((await res.json()).error.code).toBe('extension_not_connected');
  });

  test('off: 403 permission_off naming how to enable it, and listed as [Disabled]', async () => {
    const res = await call(srv, 'mail_danger');
    expect(res.status).toBe(403);
    const { error } = await res.json();
    expect(error.code).toBe('permission_off');
    expect(error.message).toContain('side panel');
    expect(error.message).toContain('config set permission.mail_danger ask');
    const listed = srv.ctx.catalog.current().mcpToolsList().tools.find((t) => t.name === 'mail_danger');
    expect(listed?.description).toStartWith('[Disabled]');
  });

  test('ask → allow runs the call; deny → 403 permission_denied', async () => {
    const ext = await FakeExtension.connect(srv.url, srv.secret);
    try {
      ext.onDispatch('mail_write', () => ({ value: 'written' }));
      const pending = call(srv, 'mail_write', {});
      const req = await ext.waitNext((m) => m.method === 'confirmation.request');
      expect(req.params).toMatchObject({ tool: 'mail_write', plugin: 'mail', params: {} });
      expect(req.params.expiresAt).toBeGreaterThan(Date.now() - 1000);
      // Visible in config.getState while pending.
      const state = (await ext.request('config.getState', {})).result;
      expect(state.pendingConfirmations.map((p: { id: string }) => p.id)).toContain(req.params.id);
      expect(ext.sent('tool.dispatch').length).toBe(0);
      ext.confirm(req.params.id, 'allow');
      const res = await pending;
      expect(res.status).toBe(200);
      expect((await res.json()).result).toBe('written');

      const pending2 = call(srv, 'mail_write', {});
      const req2 = await ext.waitNext((m) => m.method === 'confirmation.request');
      ext.confirm(req2.params.id, 'deny');
      const res2 = await pending2;
      expect(res2.status).toBe(403);
      expect((await res2.json()).error.code).toBe('permission_denied');
      expect(ext.sent('tool.dispatch').length).toBe(1);
    } finally {
      await ext.close();
    }
  });

  test('validation happens before asking', async () => {
    const ext = await FakeExtension.connect(srv.url, srv.secret);
    try {
      const res = await call(srv, 'mail_read', { id: 5 });
      expect(res.status).toBe(400);
      const { error } = await res.json();
      expect(error.code).toBe('invalid_arguments');
      expect(error.path).toBe('/id');
      const missing = await call(srv, 'mail_read', {});
      expect((await missing.json()).error.path).toBe('/id');
      expect(ext.sent('confirmation.request').length).toBe(0);
    } finally {
      await ext.close();
    }
  });

  test('nobody answers → "approval timed out" (504) and confirmation.resolved is sent', async () => {
    const ext = await FakeExtension.connect(srv.url, srv.secret);
    try {
      const res = await call(srv, 'mail_write', {});
      expect(res.status).toBe(504);
      const { error } = await res.json();
      expect(error.code).toBe('approval_timeout');
      expect(error.message).toContain('Approval timed out');
      const req = ext.sent('confirmation.request').at(-1)!;
      const resolved = await ext.waitFor('confirmation.resolved', (p) => p.id === req.params.id);
      expect(resolved.outcome).toBe('timeout');
      expect(ext.sent('tool.dispatch').length).toBe(0);
    } finally {
      await ext.close();
    }
  });

  test('alwaysAllow stores auto for that tool: the next call is not asked', async () => {
    const ext = await FakeExtension.connect(srv.url, srv.secret);
    try {
      ext.onDispatch('mail_read', () => ({ value: 'mail' }));
      const pending = call(srv, 'mail_read', { id: 'x' });
      const req = await ext.waitNext((m) => m.method === 'confirmation.request');
      ext.confirm(req.params.id, 'allow', true);
      expect((await pending).status).toBe(200);
      const cfg = JSON.parse(readFileSync(join(srv.configDir, 'config.json'), 'utf8'));
      expect(cfg.permissions.mail.tools.read).toBe('auto');
      expect(srv.ctx.catalog.current().get('mail_read')?.permission).toBe('auto');
      const asked = ext.sent('confirmation.request').length;
      expect((await call(srv, 'mail_read', { id: 'y' })).status).toBe(200);
      expect(ext.sent('confirmation.request').length).toBe(asked);
    } finally {
      await ext.close();
    }
  });

  test('config.* requests change permissions, rebuild the catalog and re-sync', async () => {
    const ext = await FakeExtension.connect(srv.url, srv.secret);
    try {
      const v0 = srv.ctx.catalog.current().version;
      const syncs = ext.sent('sync.full').length;
      expect((await ext.request('config.setPluginPermission', { plugin: 'mail', permission: 'off' })).result).toEqual({ ok: true });
      expect(srv.ctx.catalog.current().version).toBeGreaterThan(v0);
      expect(srv.ctx.catalog.current().get('mail_write')?.permission).toBe('off');
      // Tool override beats the plugin default.
      expect(srv.ctx.catalog.current().get('mail_read')?.permission).toBe('auto');
      for (let i = 0; i < 200 && ext.sent('sync.full').length <= syncs; i++) await Bun.sleep(10);
      expect(ext.sent('sync.full').length).toBeGreaterThan(syncs);
      const sync = ext.sent('sync.full').at(-1)!.params;
      const mail = sync.plugins.find((p: { name: string }) => p.name === 'mail');
      expect(mail.permission).toBe('off');
      expect(mail.tools.find((t: { name: string }) => t.name === 'write').permission).toBe('off');
      expect((await call(srv, 'mail_write')).status).toBe(403);

      // Full names are accepted for plugin tools too.
      await ext.request('config.setToolPermission', { plugin: 'mail', tool: 'mail_write', permission: 'auto' });
      expect(srv.ctx.catalog.current().get('mail_write')?.permission).toBe('auto');

      // Browser tools are keyed by full name under "browser".
      await ext.request('config.setToolPermission', { plugin: 'browser', tool: 'browser_list_tabs', permission: 'off' });
      expect((await call(srv, 'browser_list_tabs')).status).toBe(403);
      await ext.request('config.setToolPermission', { plugin: 'browser', tool: 'browser_list_tabs', permission: 'auto' });
      expect((await call(srv, 'browser_list_tabs')).status).toBe(200);

      const bad = await ext.request('config.setPluginPermission', { plugin: 'ghost', permission: 'auto' });
      expect(bad.error?.data?.code).toBe('unknown_plugin');
      await ext.request('config.setPluginPermission', { plugin: 'mail', permission: 'ask' });
    } finally {
      await ext.close();
    }
  });

  test('skip permissions from the side panel turns ask into auto; off stays off', async () => {
    const ext = await FakeExtension.connect(srv.url, srv.secret);
    try {
      await ext.request('config.setToolPermission', { plugin: 'mail', tool: 'write', permission: 'ask' });
      expect((await ext.request('config.setSkipPermissions', { skip: true })).result).toEqual({ ok: true });
      expect((await ext.request('config.getState', {})).result.skipPermissions).toBe(true);
      expect((await call(srv, 'mail_write')).status).toBe(200);
      expect(ext.sent('confirmation.request').length).toBe(0);
      expect((await call(srv, 'mail_danger')).status).toBe(403);
      await ext.request('config.setSkipPermissions', { skip: false });
    } finally {
      await ext.close();
    }
  });
});

test('OPENTABS_DANGEROUSLY_SKIP_PERMISSIONS (skipPermissions option): ask runs without asking, off stays off', async () => {
  const s = await startPluginServer({
    plugins: [{ name: 'mail', tools: TOOLS }],
    permissions: { mail: { tools: { danger: 'off' } } },
    skipPermissions: true,
  });
  const ext = await FakeExtension.connect(s.url, s.secret);
  try {
    expect((await call(s, 'mail_write')).status).toBe(200);
    expect(ext.sent('confirmation.request').length).toBe(0);
    expect((await call(s, 'mail_danger')).status).toBe(403);
  } finally {
    await ext.close();
    await s.stop();
  }
});
